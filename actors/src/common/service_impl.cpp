#include "service_impl.hpp"

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <random>
#include <thread>
#include <tuple>

#include "ss/actors/member.hpp"
#include "ss/actors/messages.hpp"
#include "ss/actors/sync_server.hpp"
#include "ss/core/job/member_name.hpp"
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

// Follows the membership agent's job state and settles the service's end.
view_subscriber_actor::behavior_type state_watcher(view_subscriber_actor::pointer self, std::shared_ptr<job_end> end,
                                                  std::string name) {
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

}  // namespace

std::uint64_t random_incarnation() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

std::string host_name() {
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) return "";
  return host;
}

std::string process_name(const std::string& role, std::uint64_t incarnation) {
  return job::default_member_name(role, host_name(), incarnation);
}

void job_end::settle(int outcome, std::string why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (settled_) return;
  settled_ = true;
  outcome_ = outcome;
  why_ = std::move(why);
  cv_.notify_all();
}

std::string job_end::why() const {
  std::lock_guard<std::mutex> lock(mu_);
  return why_;
}

int job_end::wait_for(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, d, [this] { return settled_; });
  return settled_ ? outcome_ : 0;
}

bool job_end::wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return settled_; });
  return outcome_ > 0;
}

request_server_actor::behavior_type not_ready(request_server_actor::pointer, std::string why) {
  return {
      [why](serve_atom, const envelope_ptr&) -> body_ptr {
        return make_body(wire::error_reply{errc::unavailable, why});
      },
  };
}

std::array<std::size_t, 5> shard_request_kinds() {
  return {kind_of<wire::lookup_request>(), kind_of<wire::push_request>(), kind_of<wire::dump_request>(),
          kind_of<wire::snapshot_request>(), kind_of<wire::warm_request>()};
}

std::string service_impl::status() {
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

bool service_impl::wait_for_members_to_leave(std::chrono::milliseconds limit) {
  if (!is_coordinator_) return true;
  foreign_thread_scope thread_scope;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  caf::scoped_actor self{sys_};
  while (std::chrono::steady_clock::now() < deadline) {
    std::uint64_t members = 1;
    self->request(coordinator_, std::chrono::seconds(1), members_atom::value)
        .receive([&](std::uint64_t n) { members = n; }, [](const caf::error&) {});
    if (members == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

void service_impl::stop(const std::string& reason) {
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
              if (!ok) {
                spdlog::error("{}: could not write changed rows before stopping (see the storage error above)",
                              options_.name);
                return;
              }
              const auto s = store_ ? store_->stats() : embedding::shard_store_stats{};
              const auto io = store_ && store_->options().cold ? store_->options().cold->io() : embedding::storage_io{};
              if (store_ && store_->tiered())
                spdlog::info("{}: all rows written to storage before stopping: {} stored, {} in RAM (budget {}, peak {}); "
                             "hit rate {:.3f} ({} misses), {} evictions, {} rows read back, {} read ahead by hints, "
                             "{} over budget, {} waits for a flush ({:.1f} s); {} storage reads (p50 {:.3f} ms, "
                             "p99 {:.3f} ms), {:.1f} MB read, {:.1f} MB written",
                             options_.name, s.rows_held, s.rows, s.max_rows_in_memory, s.peak_rows_in_memory,
                             s.hit_rate(), s.misses, s.evictions, s.loaded, s.warmed, s.over_budget, s.flush_waits,
                             s.flush_wait_seconds, io.reads, io.read_p50_ms, io.read_p99_ms,
                             static_cast<double>(io.bytes_read) / 1e6, static_cast<double>(io.bytes_written) / 1e6);
              else
                spdlog::info("{}: all {} rows written to storage before stopping", options_.name, s.rows);
              if (s.admit_after > 1)
                spdlog::info("{}: admission after {} sightings: {} rows admitted, {} lookups served without a row, "
                             "{} gradients dropped",
                             options_.name, s.admit_after, s.admissions, s.admission_refused, s.gradients_dropped);
            },
            [this](const caf::error& err) {
              spdlog::error("{}: could not write changed rows before stopping: {}", options_.name, sys_.render(err));
            });
    stopping_ = refuser;  // answers until the transport stops
  }
  if (store_ && (store_->options().ttl.enabled() || store_->options().max_rows_per_table > 0)) {
    const auto s = store_->stats();
    const auto& o = store_->options();
    if (o.ttl.enabled())
      spdlog::info("{}: row TTL {}: {} rows expired; clock at {}", options_.name, embedding::describe(o.ttl),
                   s.rows_expired, s.ttl_clock_now);
    if (o.max_rows_per_table > 0)
      spdlog::info("{}: full tables (--max-rows-per-table {}) evicted {} rows for good; {} rows held in {} tables",
                   options_.name, o.max_rows_per_table, s.table_evictions, s.rows_held, s.tables);
  }
  if (member_) {
    // Leave politely (one-way) and give the frame a moment to go out before the transport stops.
    caf::anon_send(member_, stop_atom::value, reason);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // Each of its own type: one call each, in this order (role_ is also coordinator_).
  const auto stop_actor = [](const auto& a) {
    if (a) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  };
  stop_actor(watcher_);
  stop_actor(role_);
  stop_actor(member_);
  stop_actor(sync_);
  stop_actor(persister_);
  stop_actor(bulk_);
  stop_actor(prefetcher_);
  stop_actor(mover_);
  stop_actor(sweeper_);
  stop_actor(not_ready_);
  stop_actor(stopping_);
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

ss::status service_impl::start_gateway() {
  gateway_options go;
  go.name = options_.name;
  go.limits.max_frame_bytes = options_.max_frame_bytes;
  go.max_requests_in_flight = options_.max_requests_in_flight;
  go.authority = options_.authority;
  gateway_ = spawn_gateway(sys_, *transport_, go, counters_);
  if (!options_.listen.empty()) {
    auto bound = transport_->listen(options_.listen);
    if (!bound.is_ok()) return bound.error().with_context(options_.name);
    endpoint_ = advertised_endpoint(options_.advertise, *bound);
  }
  return ss::status::ok();
}

std::string advertised_endpoint(const std::string& advertise, const std::string& bound) {
  if (!advertise.empty()) return advertise;
  // A wildcard address is no address peers can dial: this host's name, with the port bound (the
  // one the system chose for port 0).
  const std::string host = host_name();
  for (const char* wildcard : {"tcp://0.0.0.0:", "tcp://*:", "tcp://[::]:"}) {
    const std::string w = wildcard;
    if (!host.empty() && bound.rfind(w, 0) == 0) return "tcp://" + host + ":" + bound.substr(w.size());
  }
  return bound;
}

void service_impl::open_gateway() {
  // After the routes: sends from one thread to one actor keep their order.
  caf::anon_send(gateway_, open_atom::value);
}

result<wire::register_reply> service_impl::join(wire::role role, std::function<wire::member_progress()> progress) {
  member_options mo;
  mo.identity.from = role;
  mo.identity.name = options_.name;
  mo.identity.index = options_.index;
  mo.identity.endpoint = endpoint_;
  mo.identity.incarnation = incarnation_;
  mo.identity.heartbeat_interval_ms = static_cast<std::uint32_t>(options_.heartbeat_interval.count());
  mo.identity.host = host_name();
  mo.identity.pid = static_cast<std::uint32_t>(getpid());
  mo.coordinator = options_.coordinator;
  mo.heartbeat_interval = options_.heartbeat_interval;
  mo.request_timeout = options_.request_timeout;
  mo.progress = std::move(progress);
  member_ = spawn_member_agent(sys_, gateway_, std::move(mo));
  // A refused registration, first or again (another live process took this one's place while it
  // was cut off), ends the service, failed, instead of letting it go on outside the job.
  struct refusal_box {
    std::mutex mu;
    std::optional<ss::status> why;
  };
  auto refused = std::make_shared<refusal_box>();
  member_->attach_functor([refused, end = end_](const caf::error& reason) {
    auto why = registration_refusal(reason);
    if (!why) return;
    {
      std::lock_guard<std::mutex> lock(refused->mu);
      refused->why = std::move(why);
    }
    end->settle(-1);
  });
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
                   std::optional<ss::status> why = registration_refusal(err);
                   if (!why) {
                     std::lock_guard<std::mutex> lock(refused->mu);
                     why = refused->why;
                   }
                   if (why) {
                     out = result<wire::register_reply>(
                         why->code(), options_.name + ": the coordinator refused the registration: " + why->message());
                     waiting = false;
                   } else if (err != caf::sec::request_timeout) {
                     out = result<wire::register_reply>(errc::unavailable, options_.name + ": " + sys_.render(err));
                     waiting = false;
                   }
                 });
  }
  if (out.is_ok()) {
    watcher_ = sys_.spawn(state_watcher, end_, options_.name);  // kept to stop it with the service
    caf::anon_send(member_, view_atom::value, watcher_);
  }
  return out;
}

result<job::job_options> job_of(const wire::register_reply& reply, const std::string& name) {
  auto job = job::parse_job_config(reply.job_config);
  if (!job.is_ok()) return job.error().with_context(name + ": the coordinator's job configuration");
  return job;
}

// A sync server for slice `k` of the job's dense parameters.
result<sync_server_actor> make_sync_server(caf::actor_system& sys, const gateway_actor& gateway,
                                           const job::job_options& job, std::uint32_t k, const std::string& name,
                                           bool awaits_restore) {
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
  o.outer_momentum = job.outer_momentum;
  o.outer_lr = job.outer_lr;
  o.round_timeout = std::chrono::milliseconds(static_cast<long>(job.sync_round_timeout * 1000));
  o.quantize = job.sync_quantize == "int8";
  o.awaits_restore = awaits_restore;
  return spawn_sync_server(sys, gateway, o);
}

}  // namespace ss::actors
