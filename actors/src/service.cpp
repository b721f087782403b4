#include "ss/actors/service.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <array>
#include <condition_variable>
#include <mutex>
#include <random>
#include <tuple>
#include <thread>

#include "ss/actors/gateway.hpp"
#include "ss/actors/member.hpp"
#include "ss/actors/messages.hpp"
#include "ss/actors/reader.hpp"
#include "ss/actors/shard.hpp"
#include "ss/actors/sync_server.hpp"
#include "ss/actors/trainer.hpp"
#include "ss/core/embedding/shard_store.hpp"
#include "ss/core/hash.hpp"
#include "ss/core/json.hpp"

namespace ss::actors {
namespace {

// CAF keeps a reference to the actor system's logger in a thread-local of every thread that
// spawns an actor or opens a scoped actor, and ~actor_system waits until every reference is gone.
// A thread that is not CAF's and outlives the actor system (the signal thread, which runs stop(),
// an ops server thread that asks status()) must drop it before it leaves the service's code, or
// the process hangs on exit.
class foreign_thread_scope {
 public:
  foreign_thread_scope() = default;
  foreign_thread_scope(const foreign_thread_scope&) = delete;
  foreign_thread_scope& operator=(const foreign_thread_scope&) = delete;
  ~foreign_thread_scope() { caf::logger::set_current_actor_system(nullptr); }
};

std::uint64_t random_incarnation() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

// The end of a service's job, settled once: 1 finished, -1 failed or stopped.
class job_end {
 public:
  void settle(int outcome) {
    std::lock_guard<std::mutex> lock(mu_);
    if (settled_) return;
    settled_ = true;
    outcome_ = outcome;
    cv_.notify_all();
  }
  int wait_for(std::chrono::milliseconds d) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, d, [this] { return settled_; });
    return settled_ ? outcome_ : 0;
  }
  bool wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return settled_; });
    return outcome_ > 0;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool settled_ = false;
  int outcome_ = 0;
};

// Answers the requests a service will serve once it is ready (a shard loading its rows) with
// `unavailable`, so peers retry instead of failing.
caf::behavior not_ready(caf::event_based_actor*, std::string why) {
  return {
      [why](serve_atom, const envelope_ptr&) -> body_ptr {
        return make_body(wire::error_reply{errc::unavailable, why});
      },
  };
}

// The requests a shard serves from its rows: refused while it loads them and while it stops.
std::array<std::size_t, 4> shard_request_kinds() {
  return {kind_of<wire::lookup_request>(), kind_of<wire::push_request>(), kind_of<wire::dump_request>(),
          kind_of<wire::snapshot_request>()};
}

// Follows the membership agent's job state and settles the service's end.
caf::behavior state_watcher(caf::event_based_actor* self, std::shared_ptr<job_end> end, std::string name) {
  (void)self;
  return {
      [](view_atom, const wire::cluster_view&) {},
      [end, name](state_atom, wire::job_state s) {
        if (s == wire::job_state::done) end->settle(1);
        if (s == wire::job_state::failed) {
          spdlog::warn("{}: the coordinator reports that the job failed", name);
          end->settle(-1);
        }
      },
  };
}

class service_impl final : public running_service {
 public:
  service_impl(caf::actor_system& sys, std::unique_ptr<transport> t, service_options options)
      : sys_(sys), transport_(std::move(t)), options_(std::move(options)),
        counters_(std::make_shared<gateway_counters>()), end_(std::make_shared<job_end>()) {}

  ~service_impl() override { stop("shutdown"); }

  const std::string& name() const override { return options_.name; }
  std::string endpoint() const override { return endpoint_; }
  bool wait() override { return end_->wait(); }
  int wait_for(std::chrono::milliseconds d) override { return end_->wait_for(d); }

  std::string status() override {
    foreign_thread_scope thread_scope;
    caf::scoped_actor self{sys_};
    std::string role_status = "{}", gateway_status = "{}";
    auto env = std::make_shared<const wire::envelope>(wire::envelope{wire::protocol_version, 1, wire::status_request{}});
    if (role_) {
      self->request(role_, std::chrono::seconds(5), serve_atom::value, env)
          .receive([&](const body_ptr& b) {
                     if (const auto* r = std::get_if<wire::status_reply>(b.get())) role_status = r->json;
                   },
                   [&](const caf::error&) {});
    }
    self->request(gateway_, std::chrono::seconds(5), stats_atom::value)
        .receive([&](const std::string& s) { gateway_status = s; }, [&](const caf::error&) {});
    return json_object().add("name", options_.name).add_raw("service", role_status).add_raw("transport", gateway_status).str();
  }

  bool wait_for_members_to_leave(std::chrono::milliseconds limit) override {
    if (!is_coordinator_) return true;
    foreign_thread_scope thread_scope;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    caf::scoped_actor self{sys_};
    while (std::chrono::steady_clock::now() < deadline) {
      std::uint64_t members = 1;
      self->request(role_, std::chrono::seconds(1), members_atom::value)
          .receive([&](std::uint64_t n) { members = n; }, [](const caf::error&) {});
      if (members == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  void interrupt() override { end_->settle(-1); }

  void stop(const std::string& reason) override {
    // A second caller waits for the first: whoever returns from stop() may destroy the service.
    std::lock_guard<std::mutex> stop_lock(stop_mu_);
    if (stopped_.exchange(true)) return;
    foreign_thread_scope thread_scope;
    if (is_coordinator_ && role_) {
      // Stopped while the job runs (SIGTERM: an upgrade, an eviction): leave a fresh snapshot for
      // the successor to resume from. Refused at once when there is no snapshot store or the job
      // is not running; bounded so a stop never outlasts a grace period.
      caf::scoped_actor self{sys_};
      auto env = std::make_shared<const wire::envelope>(wire::envelope{wire::protocol_version, 1, wire::snapshot_now{}});
      self->request(role_, std::chrono::seconds(60), serve_atom::value, env)
          .receive(
              [this](const body_ptr& b) {
                if (const auto* r = std::get_if<wire::snapshot_reply>(b.get()))
                  spdlog::info("{}: snapshot {} taken before stopping", options_.name, r->snapshot_id);
                else if (const auto* e = std::get_if<wire::error_reply>(b.get()); e != nullptr && e->code != errc::unavailable &&
                                                                               e->code != errc::invalid_argument)
                  spdlog::warn("{}: no snapshot before stopping: {}", options_.name, e->message);
              },
              [this](const caf::error& err) {
                spdlog::warn("{}: no snapshot before stopping: {}", options_.name, sys_.render(err));
              });
    }
    if (persister_) {
      // Drain: refuse new row requests (`unavailable`: peers send them again, to the successor),
      // let those already taken finish, then write every changed row to storage before leaving.
      // A push applied after the last write would be lost with the process.
      caf::scoped_actor self{sys_};
      auto refuser = sys_.spawn(not_ready, options_.name + " is stopping; its successor will serve");
      for (std::size_t kind : shard_request_kinds()) self->send(gateway_, route_atom::value, kind, refuser);
      // Same sender: the gateway has taken the new routes once it answers this.
      self->request(gateway_, std::chrono::seconds(5), stats_atom::value).receive([](const std::string&) {}, [](const caf::error&) {});
      const auto drain_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (counters_->requests_in_flight.load() > 0 && std::chrono::steady_clock::now() < drain_deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      if (counters_->requests_in_flight.load() > 0)
        spdlog::warn("{}: {} requests still in flight after 10 s; writing the rows anyway", options_.name,
                     counters_->requests_in_flight.load());
      self->request(persister_, std::chrono::seconds(60), flush_atom::value)
          .receive(
              [this](bool ok) {
                if (ok)
                  spdlog::info("{}: all {} rows written to storage before stopping", options_.name,
                               store_ ? store_->stats().rows : 0);
                else
                  spdlog::error("{}: could not write changed rows before stopping (see the storage error above)",
                                options_.name);
              },
              [this](const caf::error& err) {
                spdlog::error("{}: could not write changed rows before stopping: {}", options_.name, sys_.render(err));
              });
      stopping_ = refuser;  // answers until the transport stops
    }
    if (member_) {
      // Leave politely (one-way) and give the frame a moment to go out before the transport stops.
      caf::anon_send(member_, stop_atom::value, reason);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    for (auto& a : {watcher_, role_, member_, sync_, persister_, not_ready_, stopping_}) {
      if (a) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    }
    transport_->stop();
    if (gateway_) {
      // The gateway sends through the transport this service owns: it must be gone before the
      // transport is destroyed with the service (a call it was still handling used freed memory).
      caf::scoped_actor self{sys_};
      self->monitor(gateway_);
      caf::anon_send_exit(gateway_, caf::exit_reason::user_shutdown);
      bool down = false;
      self->receive([&down](const caf::down_msg&) { down = true; },
                    caf::after(std::chrono::seconds(10)) >> [] {});
      if (!down) spdlog::error("{}: the gateway did not stop within 10 s", options_.name);
    }
    end_->settle(-1);
  }

  // ---- start-up steps shared by the roles ----

  ss::status start_gateway() {
    gateway_options go;
    go.name = options_.name;
    go.limits.max_frame_bytes = options_.max_frame_bytes;
    go.max_requests_in_flight = options_.max_requests_in_flight;
    go.authority = options_.authority;
    gateway_ = spawn_gateway(sys_, *transport_, go, counters_);
    if (!options_.listen.empty()) {
      auto bound = transport_->listen(options_.listen);
      if (!bound.is_ok()) return bound.error().with_context(options_.name);
      endpoint_ = options_.advertise.empty() ? *bound : options_.advertise;
    }
    return ss::status::ok();
  }

  // Registers with the coordinator and returns its reply (the job configuration).
  result<wire::register_reply> join(wire::role role, std::function<wire::member_progress()> progress) {
    member_options mo;
    mo.identity.from = role;
    mo.identity.name = options_.name;
    mo.identity.index = options_.index;
    mo.identity.endpoint = endpoint_;
    mo.identity.incarnation = incarnation_;
    mo.coordinator = options_.coordinator;
    mo.heartbeat_interval = options_.heartbeat_interval;
    mo.request_timeout = options_.request_timeout;
    mo.progress = std::move(progress);
    member_ = spawn_member_agent(sys_, gateway_, std::move(mo));
    result<wire::register_reply> out(errc::timeout, options_.name + ": the coordinator at " + options_.coordinator +
                                                        " did not accept the registration in time");
    caf::scoped_actor self{sys_};
    // Wait in short steps, so a signal (options_.cancel) can end the wait.
    const auto deadline = std::chrono::steady_clock::now() + options_.register_timeout;
    bool waiting = true;
    while (waiting && std::chrono::steady_clock::now() < deadline) {
      if (options_.cancel != nullptr && options_.cancel->load()) {
        out = result<wire::register_reply>(errc::cancelled, options_.name + ": stopped before joining the job");
        break;
      }
      self->request(member_, std::chrono::milliseconds(200), await_atom::value)
          .receive([&](const wire::register_reply& r) {
                     out = r;
                     waiting = false;
                   },
                   [&](const caf::error& err) {
                     if (err != caf::sec::request_timeout) {
                       out = result<wire::register_reply>(errc::unavailable, options_.name + ": " + sys_.render(err));
                       waiting = false;
                     }
                   });
    }
    if (out.is_ok()) {
      watcher_ = sys_.spawn(state_watcher, end_, options_.name);
      caf::anon_send(member_, view_atom::value, watcher_);
    }
    return out;
  }

  caf::actor_system& sys_;
  std::unique_ptr<transport> transport_;
  service_options options_;
  std::shared_ptr<gateway_counters> counters_;
  std::shared_ptr<job_end> end_;
  std::string endpoint_;
  caf::actor gateway_, member_, role_, watcher_, sync_, persister_, not_ready_, stopping_;
  std::mutex stop_mu_;
  std::atomic<bool> stopped_{false};
  const std::uint64_t incarnation_ = random_incarnation();
  bool is_coordinator_ = false;
  // Role state the progress callbacks read.
  std::shared_ptr<embedding::shard_store> store_;
  std::shared_ptr<shard_counters> shard_counters_;
  std::mutex shard_error_mu_;
  std::string shard_error_;  // a loss that ends the job, reported with the heartbeats
  std::shared_ptr<reader_counters> reader_counters_;
  std::shared_ptr<trainer_progress> trainer_progress_;
};

result<job::job_options> job_of(const wire::register_reply& reply, const std::string& name) {
  auto job = job::parse_job_config(reply.job_config);
  if (!job.is_ok()) return job.error().with_context(name + ": the coordinator's job configuration");
  return job;
}

// A sync server for slice `k` of the job's dense parameters.
result<caf::actor> make_sync_server(caf::actor_system& sys, const caf::actor& gateway, const job::job_options& job,
                                    std::uint32_t k, const std::string& name) {
  auto spec = sync::parse_sync(job.sync);
  if (!spec.is_ok()) return spec.error();
  auto setup = job::resolve_model(job.model, static_cast<std::uint32_t>(std::max(0, job.dense_features)),
                                  static_cast<std::uint32_t>(std::max(1, job.categorical_features)));
  if (!setup.is_ok()) return setup.error().with_context(name);
  const model::dense_layout layout(setup->dlrm);
  sync_server_options o;
  o.name = name;
  o.slice = k;
  std::tie(o.offset, o.length) = slice_bounds(layout.size(), k, static_cast<std::uint32_t>(job.sync_servers));
  o.spec = *spec;
  o.easgd_alpha = job.easgd_alpha;
  o.bmuf_momentum = job.bmuf_momentum;
  o.bmuf_block_lr = job.bmuf_block_lr;
  o.bmuf_nesterov = job.bmuf_nesterov;
  o.round_timeout = std::chrono::milliseconds(static_cast<long>(job.sync_round_timeout * 1000));
  return spawn_sync_server(sys, gateway, o);
}

// A coordinator with a snapshot store continues the job stored there: it reports the stored
// result of a finished job, or resumes from the newest snapshot that verifies.
ss::status find_snapshot_to_resume(coordinator_options& co) {
  if (!co.snapshots) {
    if (co.require_resume) return {errc::invalid_argument, "--resume needs --snapshot-dir"};
    return ss::status::ok();
  }
  auto& store = *co.snapshots;
  if (auto removed = store.remove_incomplete(); removed.is_ok() && *removed > 0)
    spdlog::warn("{}: removed {} half-made snapshot(s) from {}", co.name, *removed, store.location());
  if (auto finished = store.read_result(); finished.is_ok()) {
    // The result answers only the job it belongs to: other training files or settings are a
    // new job, which needs a state of its own.
    auto saved = job::parse_job_config(finished->job_text);
    if (!saved.is_ok())
      return {errc::corrupt, store.location() + ": the finished job's settings cannot be read (" +
                                 saved.error().message() + "); give another --snapshot-dir (--state-dir)"};
    if (const auto conflicts = job::resume_conflicts(*saved, co.job); !conflicts.empty()) {
      std::string why;
      for (const auto& c : conflicts) why += "\n  " + c;
      return {errc::invalid_argument, "the job in " + store.location() + " finished already, with another "
                                      "configuration:" + why + "\n(a new job needs another --snapshot-dir or --state-dir)"};
    }
    auto report = job::job_report::from_json(finished->json);
    if (!report.is_ok())
      return {errc::corrupt, store.location() + ": the finished job's result cannot be read (" +
                                 report.error().message() + "); move it away to run the job again"};
    co.finished_result = std::move(*report);
    return ss::status::ok();
  } else if (finished.error().code() != errc::not_found) {
    return {errc::corrupt, finished.error().message() + ": the job finished, but its result cannot be read; move it "
                                                         "away to run the job again"};
  }
  std::vector<std::string> skipped;
  auto latest = job::latest_valid_snapshot(store, &skipped);
  for (const auto& s : skipped) spdlog::error("{}: {}", co.name, s);
  if (!latest.is_ok()) {
    if (latest.error().code() != errc::not_found) return latest.error();
    if (!skipped.empty())
      return {errc::corrupt, "every snapshot in " + store.location() + " is unusable (see above); to start the job "
                             "over, give another --snapshot-dir"};
    if (co.require_resume) return {errc::not_found, "--resume: there is no snapshot in " + store.location()};
    return ss::status::ok();
  }
  auto saved = job::parse_job_config(latest->job_text);
  if (!saved.is_ok()) return saved.error().with_context("the job.ini of snapshot " + std::to_string(latest->manifest.snapshot_id));
  const auto conflicts = job::resume_conflicts(*saved, co.job);
  if (!conflicts.empty()) {
    std::string why;
    for (const auto& c : conflicts) why += "\n  " + c;
    return {errc::invalid_argument, "cannot resume the job in " + store.location() + " (snapshot " +
                                        std::to_string(latest->manifest.snapshot_id) + ") with this configuration:" + why +
                                        "\n(a new job needs another --snapshot-dir)"};
  }
  co.resume = std::move(*latest);
  return ss::status::ok();
}

}  // namespace

result<std::unique_ptr<running_service>> start_coordinator(caf::actor_system& sys, std::unique_ptr<transport> t,
                                                           const service_options& options,
                                                           coordinator_options coordinator) {
  auto svc = std::make_unique<service_impl>(sys, std::move(t), options);
  if (auto st = job::resolve_feature_counts(coordinator.job); !st.is_ok()) return st;
  SS_RETURN_IF_ERROR(svc->start_gateway());
  auto end = svc->end_;
  auto on_result = coordinator.on_result;
  coordinator.on_result = [end, on_result](const job::job_report& report, const std::string& preface) {
    if (on_result) on_result(report, preface);
    end->settle(report.ok ? 1 : -1);
  };
  coordinator.detached_evaluator = options.detached;
  coordinator.name = options.name;
  coordinator.endpoint = svc->endpoint_;
  coordinator.incarnation = svc->incarnation_;
  // High bits from this process's incarnation: ids of an earlier coordinator process never match.
  coordinator.first_member_id = (svc->incarnation_ & 0xffffffff00000000ULL) | 1;
  if (auto st = job::check_job(coordinator.job); !st.is_ok()) return st;
  SS_RETURN_IF_ERROR(find_snapshot_to_resume(coordinator));
  if (coordinator.resume) {
    coordinator.job_id = coordinator.resume->manifest.job_id;
  } else if (coordinator.snapshots) {
    // Keep the job's id across restarts that come before the first snapshot.
    if (auto stored = coordinator.snapshots->read_job_id(); stored.is_ok()) coordinator.job_id = *stored;
  }
  if (coordinator.job_id == 0) coordinator.job_id = random_incarnation();
  if (coordinator.snapshots) SS_RETURN_IF_ERROR(coordinator.snapshots->write_job_id(coordinator.job_id));
  // Slice 0 of the sync state lives here.
  auto sync0 = make_sync_server(sys, svc->gateway_, coordinator.job, 0, options.name + "/sync-0");
  if (!sync0.is_ok()) return sync0.error();
  coordinator.local_sync = *sync0;
  svc->sync_ = *sync0;
  svc->role_ = spawn_coordinator(sys, svc->gateway_, std::move(coordinator));
  svc->is_coordinator_ = true;
  return std::unique_ptr<running_service>(std::move(svc));
}

result<std::unique_ptr<running_service>> start_shard(caf::actor_system& sys, std::unique_ptr<transport> t,
                                                     const service_options& options) {
  auto svc = std::make_unique<service_impl>(sys, std::move(t), options);
  SS_RETURN_IF_ERROR(svc->start_gateway());
  svc->shard_counters_ = std::make_shared<shard_counters>();
  // Until its rows are loaded, the shard asks peers to come back.
  svc->not_ready_ = sys.spawn(not_ready, options.name + " is loading its rows; retry shortly");
  for (std::size_t kind : shard_request_kinds())
    caf::anon_send(svc->gateway_, route_atom::value, kind, svc->not_ready_);
  auto* raw = svc.get();
  auto reply = svc->join(wire::role::shard, [raw] {
    wire::member_progress p;
    if (raw->store_) {
      const auto s = raw->store_->stats();
      p.rows = s.rows;
      p.row_bytes = s.bytes;
    }
    p.examples = raw->shard_counters_->rows_looked_up.load();
    std::lock_guard<std::mutex> lock(raw->shard_error_mu_);
    p.error = raw->shard_error_;
    return p;
  });
  if (!reply.is_ok()) return reply.error();
  auto job = job_of(*reply, options.name);
  if (!job.is_ok()) return job.error();
  auto setup = job::resolve_model(job->model, static_cast<std::uint32_t>(std::max(0, job->dense_features)),
                                  static_cast<std::uint32_t>(std::max(1, job->categorical_features)));
  if (!setup.is_ok()) return setup.error().with_context(options.name);
  embedding::shard_store_options so;
  so.dim = setup->embeddings.dim;
  so.init_scale = setup->embeddings.init_scale;
  so.seed = setup->embeddings.seed;
  so.max_rows_per_table = setup->embeddings.max_rows_per_table;
  so.optimizer = setup->embeddings.optimizer;
  svc->store_ = std::make_shared<embedding::shard_store>(so);
  shard_options sh;
  sh.name = options.name;
  sh.index = static_cast<std::uint32_t>(options.index);
  sh.shards = static_cast<std::uint32_t>(job->shards);
  sh.workers = options.threads;
  sh.flush_interval = options.flush_interval;
  if (options.open_storage) {
    auto storage = options.open_storage(svc->store_->row_floats());
    if (!storage.is_ok()) return storage.error().with_context(options.name + ": opening its storage");
    sh.storage = std::shared_ptr<embedding::durable_rows>(std::move(*storage));
    const auto start = std::chrono::steady_clock::now();
    auto loaded = restore_rows(*svc->store_, *sh.storage, reply->job_id, reply->restore_snapshot,
                               reply->job_was_running, sh, *svc->shard_counters_);
    if (!loaded.is_ok() && (reply->job_was_running || reply->restore_snapshot > 0)) {
      // Rows a restarted or resuming shard cannot bring back end the job, through the coordinator
      // (a result line with the reason); exiting would only restart the shard into the same loss,
      // or into a registration that no longer asks for the snapshot's rows.
      spdlog::error("{}: {}", options.name, loaded.error().message());
      std::lock_guard<std::mutex> lock(svc->shard_error_mu_);
      svc->shard_error_ = loaded.error().message();
      return std::unique_ptr<running_service>(std::move(svc));
    }
    if (!loaded.is_ok()) return loaded.error().with_context(options.name);
    spdlog::info("{}: loaded {} in {:.2f}s", options.name, *loaded,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  } else {
    spdlog::info("{}: no storage: rows live in memory only (a restart starts empty)", options.name);
  }
  auto actors = spawn_shard(sys, svc->gateway_, svc->store_, sh, svc->shard_counters_);
  svc->role_ = actors.pool;
  svc->persister_ = actors.persister;
  return std::unique_ptr<running_service>(std::move(svc));
}

result<std::unique_ptr<running_service>> start_reader(caf::actor_system& sys, std::unique_ptr<transport> t,
                                                      const service_options& options) {
  auto svc = std::make_unique<service_impl>(sys, std::move(t), options);
  SS_RETURN_IF_ERROR(svc->start_gateway());
  svc->reader_counters_ = std::make_shared<reader_counters>();
  auto counters = svc->reader_counters_;
  auto reply = svc->join(wire::role::reader, [counters] {
    wire::member_progress p;
    // Counted from the start of the data, so a restarted reader does not count its predecessor's twice.
    p.examples = counters->examples_before.load() + counters->examples_sent.load();
    p.batches = counters->batches_sent.load();
    p.bytes_done = counters->bytes_done.load();
    p.bytes_total = counters->bytes_total.load();
    p.bad_rows = counters->bad_rows.load();
    p.epochs_done = counters->epochs_done.load();
    // `finished` before the committed position: once finished, the position is the final one.
    p.finished = counters->finished.load();
    std::lock_guard<std::mutex> lock(counters->mu);
    p.error = counters->error;
    p.has_committed = counters->has_committed;
    p.committed = counters->committed;
    p.committed_examples = counters->committed_examples;
    p.committed_bad_rows = counters->committed_bad_rows;
    return p;
  });
  if (!reply.is_ok()) return reply.error();
  auto job = job_of(*reply, options.name);
  if (!job.is_ok()) return job.error();
  const auto files = job::files_of_reader(*job, options.index);
  reader_options ro;
  ro.name = options.name;
  ro.index = static_cast<std::uint32_t>(options.index);
  ro.incarnation = svc->incarnation_;
  ro.requeue_after = std::chrono::milliseconds(static_cast<long>(job->member_timeout * 1000));
  // A trainer gives a pull up after request_timeout; twice that, and a batch overtaken by a later
  // one was never received.
  ro.lost_after = std::chrono::milliseconds(static_cast<long>(2 * job->request_timeout * 1000));
  ro.lease = std::chrono::milliseconds(static_cast<long>(job->batch_lease * 1000));
  ro.epoch_barrier = !job->passes.validation.empty();
  if (reply->has_resume_position) {
    ro.resume_examples = reply->resume_examples;
    ro.resume_bad_rows = reply->resume_bad_rows;
    // All three now: a reader whose input fails never spawns its actor, and its heartbeats must
    // not report the job's committed rows as none.
    std::lock_guard<std::mutex> lock(counters->mu);
    counters->has_committed = true;
    counters->committed = reply->resume_position;
    counters->committed_examples = reply->resume_examples;
    counters->committed_bad_rows = reply->resume_bad_rows;
  }
  // Input this reader cannot open or resume (a file deleted or cut short since the job began) ends
  // the job: the error goes to the coordinator with the next heartbeat, which fails the job with
  // it and prints the result. Exiting instead would only restart the reader into the same error.
  auto input_failed = [&](const status& st) -> result<std::unique_ptr<running_service>> {
    spdlog::error("{}: {}; the job cannot go on without this input", options.name, st.message());
    {
      std::lock_guard<std::mutex> lock(counters->mu);
      counters->error = st.message();
    }
    return std::unique_ptr<running_service>(std::move(svc));
  };
  std::unique_ptr<data::epoch_reader> input;
  if (files.empty()) {
    // More readers than files: this one has nothing to read and is done at once.
    spdlog::info("{}: no training file falls to this reader (files i, i+{}, ... of {})", options.name, job->readers,
                 job->train.size());
  } else {
    auto ropts = job::reader_options(job->input, files, static_cast<std::size_t>(job->batch_size));
    if (!ropts.is_ok()) return ropts.error().with_context(options.name);
    data::epoch_reader_options eopts;
    eopts.input = std::move(*ropts);
    eopts.epochs = static_cast<std::uint32_t>(job->passes.epochs);
    eopts.shuffle_window = job->passes.shuffle_window();
    eopts.seed = hash_combine(job->model.seed, static_cast<std::uint64_t>(options.index));  // each reader its own order
    auto reader = data::epoch_reader::open(std::move(eopts));
    if (!reader.is_ok()) return input_failed(reader.error());
    input = std::make_unique<data::epoch_reader>(std::move(*reader));
    if (reply->has_resume_position) {
      const auto& p = reply->resume_position;
      const data::epoch_position at{p.epoch,
                                    {p.file_index, p.byte_offset, p.line_number, p.previous_line_crc, p.file_size},
                                    p.window_batches};
      if (auto st = input->seek(at); !st.is_ok())
        return input_failed(st.with_context("resuming at the committed position"));
      spdlog::info("{}: resuming {}at file {} line {} ({} examples before it were trained)", options.name,
                   job->passes.epochs > 1 ? "in epoch " + std::to_string(p.epoch + 1) + " " : std::string(),
                   p.file_index, p.line_number, reply->resume_examples);
    } else {
      spdlog::info("{}: reading {} file(s){}", options.name, files.size(),
                   job->passes.epochs > 1 ? ", " + std::to_string(job->passes.epochs) + " epochs" : std::string());
    }
  }
  svc->role_ = spawn_reader(sys, svc->gateway_, std::move(input), ro, counters);
  // The reader learns the live trainers (whose batches it may hand to others) from the view.
  caf::anon_send(svc->member_, view_atom::value, svc->role_);
  return std::unique_ptr<running_service>(std::move(svc));
}

result<std::unique_ptr<running_service>> start_trainer(caf::actor_system& sys, std::unique_ptr<transport> t,
                                                       const service_options& options) {
  auto svc = std::make_unique<service_impl>(sys, std::move(t), options);
  SS_RETURN_IF_ERROR(svc->start_gateway());
  svc->trainer_progress_ = std::make_shared<trainer_progress>();
  auto progress = svc->trainer_progress_;
  auto window = std::make_shared<std::atomic<std::uint64_t>>(100000);
  auto reply = svc->join(wire::role::trainer, [progress, window] { return progress->snapshot(window->load()); });
  if (!reply.is_ok()) return reply.error();
  auto job = job_of(*reply, options.name);
  if (!job.is_ok()) return job.error();
  window->store(job->window);
  auto setup = job::resolve_model(job->model, static_cast<std::uint32_t>(std::max(0, job->dense_features)),
                                  static_cast<std::uint32_t>(std::max(1, job->categorical_features)));
  if (!setup.is_ok()) return setup.error().with_context(options.name);
  auto model = std::make_shared<train::dense_model>(setup->dlrm, setup->dense, job->model.seed);
  trainer_options to;
  to.name = options.name;
  to.workers = options.threads;
  to.detached_workers = options.detached;
  to.incarnation = svc->incarnation_;
  to.coordinator = options.coordinator;
  to.schedule = setup->schedule;
  svc->role_ = spawn_trainer(sys, svc->gateway_, svc->member_, *job, model, setup->buckets, to, progress);
  return std::unique_ptr<running_service>(std::move(svc));
}

result<std::unique_ptr<running_service>> start_sync_server(caf::actor_system& sys, std::unique_ptr<transport> t,
                                                           const service_options& options) {
  auto svc = std::make_unique<service_impl>(sys, std::move(t), options);
  SS_RETURN_IF_ERROR(svc->start_gateway());
  auto reply = svc->join(wire::role::sync, [] { return wire::member_progress{}; });
  if (!reply.is_ok()) return reply.error();
  auto job = job_of(*reply, options.name);
  if (!job.is_ok()) return job.error();
  auto server = make_sync_server(sys, svc->gateway_, *job, static_cast<std::uint32_t>(options.index), options.name);
  if (!server.is_ok()) return server.error();
  svc->role_ = *server;
  // The server learns the live trainers (how many a round waits for) from the cluster view.
  caf::anon_send(svc->member_, view_atom::value, svc->role_);
  caf::anon_send(svc->gateway_, route_atom::value, kind_of<wire::dense_request>(), svc->role_);
  caf::anon_send(svc->gateway_, route_atom::value, kind_of<wire::status_request>(), svc->role_);
  return std::unique_ptr<running_service>(std::move(svc));
}

}  // namespace ss::actors
