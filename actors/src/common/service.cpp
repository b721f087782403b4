// The start of each service role (service.hpp) on the running service of service_impl.hpp: the
// coordinator (resuming its job from a snapshot), and the members, which share one start
// (start_member) and differ in what they prepare before joining and what they spawn after.
#include "ss/actors/service.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <mutex>

#include "service_impl.hpp"
#include "ss/actors/member.hpp"
#include "ss/actors/messages.hpp"
#include "ss/actors/read_positions.hpp"
#include "ss/actors/reader.hpp"
#include "ss/actors/shard.hpp"
#include "ss/actors/sync_server.hpp"
#include "ss/actors/trainer.hpp"
#include "ss/core/embedding/shard_store.hpp"
#include "ss/core/embedding/sharding.hpp"

namespace ss::actors {
namespace {

// Conflicts (job::resume_conflicts, job::rerun_conflicts), one indented line each; "" when none.
std::string conflict_lines(const std::vector<std::string>& conflicts) {
  std::string lines;
  for (const auto& c : conflicts) lines += "\n  " + c;
  return lines;
}

// A snapshot taken with another reader count: every file's progress becomes the plan the new
// readers start from, none of them with a commit of its own yet.
ss::status plan_readers(const coordinator_options& co, job::loaded_snapshot& snapshot) {
  auto& m = snapshot.manifest;
  const std::string where = "cannot resume the job in " + co.snapshots->location() + " (snapshot " +
                            std::to_string(m.snapshot_id) + ") on " + std::to_string(co.job.readers) +
                            " readers: it ran with " + std::to_string(m.readers.size()) + "; ";
  if (const auto why = job::reader_change_refusal(co.job); !why.empty()) {
    return {errc::invalid_argument, where + why + "; resume it with --readers " + std::to_string(m.readers.size())};
  }
  auto plan = job::replan_readers(co.job, static_cast<int>(m.readers.size()), m.read_plan, m.readers);
  if (!plan.is_ok()) {
    // A snapshot of an earlier build inside a shuffle window resumes on its own count.
    const std::string own = plan.error().code() == errc::version_mismatch
                                ? "; resume it with --readers " + std::to_string(m.readers.size())
                                : std::string();
    return {plan.error().code(), where + plan.error().message() + own};
  }
  std::size_t entered = 0, done = 0;
  for (const auto& p : plan->files) {
    entered += p.at.byte_offset > 0;
    done += p.passes == static_cast<std::uint32_t>(co.job.passes.epochs);
  }
  spdlog::info("{}: the job goes from {} to {} readers: of its {} files {} were read through, {} are entered where "
               "they were left{}; {} examples were committed before",
               co.name, m.readers.size(), co.job.readers, plan->files.size(), done, entered,
               plan->windows.empty() ? std::string()
                                     : ", " + std::to_string(plan->windows.size()) +
                                           " shuffle window(s) left unfinished are finished first",
               plan->examples);
  m.read_plan = std::move(*plan);
  m.readers.assign(static_cast<std::size_t>(co.job.readers), job::reader_commit{});
  return ss::status::ok();
}

// A live reshard's switch stored after the newest snapshot (`latest`, 0: none): the members route
// by its count, and the rows trained since are on their new owners, so the job keeps that count
// (co.switched). One stored before the newest snapshot is spent: that snapshot has the new shape.
ss::status find_reshard_switch(coordinator_options& co, std::uint64_t latest, std::uint64_t job_id) {
  auto& store = *co.snapshots;
  auto sw = store.read_reshard_switch();
  if (!sw.is_ok()) {
    if (sw.error().code() == errc::not_found) return ss::status::ok();
    return {errc::corrupt, sw.error().message() + ": the job was changing its shard count when its coordinator "
                           "stopped, and the record of the change cannot be read; resume with the --shards its shards "
                           "now route by, after moving that file away"};
  }
  // Spent, or another job's (one whose snapshots were moved away).
  if (sw->base_snapshot != latest || (job_id != 0 && sw->job_id != job_id)) {
    if (auto r = store.remove_reshard_switch(); !r.is_ok()) spdlog::warn("{}: {}", co.name, r.message());
    return ss::status::ok();
  }
  if (co.shards_flag == 0) co.shards_flag = co.job.shards;
  spdlog::warn("{}: the job's coordinator stopped while it switched from {} to {} shards ({}): it keeps {} "
               "shards, switches the members again and takes the snapshot of the new shape",
               co.name, sw->from, sw->to,
               latest > 0 ? "after snapshot " + std::to_string(latest) : "before its first snapshot", sw->to);
  co.job.shards = static_cast<int>(sw->to);
  co.switched = *sw;
  return ss::status::ok();
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
    if (const auto why = conflict_lines(job::rerun_conflicts(*saved, co.job)); !why.empty()) {
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
  if (!latest.is_ok() && latest.error().code() != errc::not_found) return latest.error();
  if (latest.is_ok()) {
    SS_RETURN_IF_ERROR(find_reshard_switch(co, latest->manifest.snapshot_id, latest->manifest.job_id));
  } else {
    auto id = store.read_job_id();
    SS_RETURN_IF_ERROR(find_reshard_switch(co, 0, id.is_ok() ? *id : 0));
  }
  if (!latest.is_ok()) {
    if (!skipped.empty())
      return {errc::corrupt, "every snapshot in " + store.location() + " is unusable (see above); to start the job "
                             "over, give another --snapshot-dir"};
    if (co.require_resume && !co.switched) return {errc::not_found, "--resume: there is no snapshot in " + store.location()};
    return ss::status::ok();
  }
  auto saved = job::parse_job_config(latest->job_text);
  if (!saved.is_ok()) return saved.error().with_context("the job.ini of snapshot " + std::to_string(latest->manifest.snapshot_id));
  if (const auto why = conflict_lines(job::resume_conflicts(*saved, co.job)); !why.empty()) {
    return {errc::invalid_argument, "cannot resume the job in " + store.location() + " (snapshot " +
                                        std::to_string(latest->manifest.snapshot_id) + ") with this configuration:" + why +
                                        "\n(a new job needs another --snapshot-dir)"};
  }
  for (const auto& c : job::resume_conversions(*saved, co.job))
    spdlog::warn("{}: resuming the job in {} (snapshot {}): {}", co.name, store.location(),
                 latest->manifest.snapshot_id, c);
  if (latest->manifest.placement != embedding::placement_scheme) {
    // Its shards' checkpoints hold rows placed by another scheme: this build's shards refuse them.
    return {errc::version_mismatch, "cannot resume the job in " + store.location() + " (snapshot " +
                                        std::to_string(latest->manifest.snapshot_id) + "): its rows were placed on the "
                                        "shards by \"" + latest->manifest.placement + "\" (an earlier build), this "
                                        "build places them by \"" + embedding::placement_scheme + "\"; resume it "
                                        "with the build that started it"};
  }
  const auto& m = latest->manifest;
  if (co.switched) {
    // The switch's count, not the snapshot's (below): the snapshot's shape is the one being left.
  } else if (const int keep = job::shards_to_resume_on(m, co.job.shards); keep != co.job.shards) {
    spdlog::warn("{}: the job in {} was resharded from {} to {} shards while it ran (snapshot {}): it keeps {} "
                 "shards; --shards {} is the count it was started with (shadowsync reshard changes the count, and so "
                 "does another --shards on a resume)",
                 co.name, store.location(), co.job.shards, keep, m.snapshot_id, keep, co.job.shards);
    co.shards_flag = co.job.shards;
    co.job.shards = keep;
  }
  if (m.reshaped_from != 0 && m.shards.size() != static_cast<std::size_t>(co.job.shards) && !co.switched) {
    // Its shards' checkpoints still hold the rows that moved away: they are dropped on a resume
    // with its own count, after which another count can be taken.
    return {errc::invalid_argument, "cannot resume the job in " + store.location() + " (snapshot " +
                                        std::to_string(m.snapshot_id) + ") on " + std::to_string(co.job.shards) +
                                        " shards: it is the first snapshot after the job went from " +
                                        std::to_string(m.reshaped_from) + " to " + std::to_string(m.shards.size()) +
                                        " shards; resume it with --shards " + std::to_string(m.shards.size()) +
                                        " until its next snapshot, then with another count"};
  }
  if (m.readers.size() != static_cast<std::size_t>(co.job.readers)) {
    SS_RETURN_IF_ERROR(plan_readers(co, *latest));
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
  // The coordinator hands it the snapshot's state as it resumes, before any trainer can register.
  auto sync0 = make_sync_server(sys, svc->gateway_, coordinator.job, 0, options.name + "/sync-0", false);
  if (!sync0.is_ok()) return sync0.error();
  coordinator.local_sync = *sync0;
  svc->sync_ = *sync0;  // kept only to stop it with the service
  // Always kept (bounded, see history.hpp): a dashboard opened late still shows the whole job.
  if (!coordinator.history) coordinator.history = std::make_shared<metrics::job_history>();
  svc->history_ = coordinator.history;
  svc->coordinator_ = spawn_coordinator(sys, svc->gateway_, std::move(coordinator));
  svc->role_ = svc->coordinator_;
  // The sync slice and the coordinator route their kinds one after another: a member registering
  // in between was told "starting" (it retries), not "does not serve register_request".
  svc->open_gateway();
  svc->is_coordinator_ = true;
  return std::unique_ptr<running_service>(std::move(svc));
}

namespace {

// What a member role adds to the start every member shares: its gateway, then its registration
// with the coordinator, whose reply carries the job.
struct member_start {
  wire::role role;
  // Before it joins: the state its heartbeats report from then on, and how they read it.
  std::function<std::function<wire::member_progress()>(service_impl&)> prepare;
  // Once the job is known: the role's actors.
  std::function<ss::status(service_impl&, const wire::register_reply&, const job::job_options&)> spawn;
};

result<std::unique_ptr<running_service>> start_member(caf::actor_system& sys, std::unique_ptr<transport> t,
                                                      const service_options& options, const member_start& how) {
  auto svc = std::make_unique<service_impl>(sys, std::move(t), options);
  if (svc->options_.name.empty()) {
    // No name given: an identity of this process's own, so that two members started alike (the
    // replicas of one deployment) never take each other for a restart of the same one.
    svc->options_.name = process_name(wire::to_string(how.role), svc->incarnation_);
    spdlog::info("{}: no --name given: this process's own identity (a restart is a new member; give --name to a "
                 "trainer that should restart as itself)",
                 svc->options_.name);
  }
  SS_RETURN_IF_ERROR(svc->start_gateway());
  auto reply = svc->join(how.role, how.prepare(*svc));
  if (!reply.is_ok()) return reply.error();
  auto job = job_of(*reply, svc->options_.name);
  if (!job.is_ok()) return job.error();
  SS_RETURN_IF_ERROR(how.spawn(*svc, *reply, *job));
  // A role that did not spawn (its input or rows are lost: the job ends through the coordinator)
  // keeps answering "starting", or "loading" where a shard routed that.
  if (svc->role_) svc->open_gateway();
  return std::unique_ptr<running_service>(std::move(svc));
}

result<job::model_setup> model_of(const job::job_options& job, const std::string& name) {
  auto setup = job::resolve_model(job.model, static_cast<std::uint32_t>(std::max(0, job.dense_features)),
                                  static_cast<std::uint32_t>(std::max(1, job.categorical_features)));
  if (!setup.is_ok()) return setup.error().with_context(name);
  return setup;
}

// ---- shard ----

std::function<wire::member_progress()> prepare_shard(service_impl& svc) {
  svc.shard_counters_ = std::make_shared<shard_counters>();
  // Until its rows are loaded, the shard asks peers to come back.
  svc.not_ready_ = svc.sys_.spawn(not_ready, svc.options_.name + " is loading its rows; retry shortly");
  for (std::size_t kind : shard_request_kinds()) caf::anon_send(svc.gateway_, route_atom::value, kind, svc.not_ready_);
  return [raw = &svc] {
    wire::member_progress p;
    if (raw->store_) {
      const auto s = raw->store_->stats();
      p.rows = s.rows;
      p.row_bytes = s.bytes;
    }
    p.examples = raw->shard_counters_->rows_looked_up.load();
    p.view_epoch = raw->shard_counters_->view_epoch.load();
    std::lock_guard<std::mutex> lock(raw->shard_counters_->mu);
    p.error = raw->shard_counters_->error;
    return p;
  };
}

// Opens the shard's storage and loads its rows: true when it may serve; false when a loss ends the
// job instead (reported with the heartbeats).
result<bool> load_shard_rows(service_impl& svc, const wire::register_reply& reply, shard_options& sh) {
  const auto& name = svc.options_.name;
  const auto start = std::chrono::steady_clock::now();
  auto loaded = restore_rows(*svc.store_, *sh.storage, reply.job_id, reply.restore_snapshot, reply.restore_shards,
                             reply.job_was_running, sh, *svc.shard_counters_);
  if (!loaded.is_ok() && (reply.job_was_running || reply.restore_snapshot > 0)) {
    // Rows a restarted or resuming shard cannot bring back end the job, through the coordinator
    // (a result line with the reason); exiting would only restart the shard into the same loss,
    // or into a registration that no longer asks for the snapshot's rows.
    spdlog::error("{}: {}", name, loaded.error().message());
    std::lock_guard<std::mutex> lock(svc.shard_counters_->mu);
    svc.shard_counters_->error = loaded.error().message();
    return false;
  }
  if (!loaded.is_ok()) return loaded.error().with_context(name);
  spdlog::info("{}: loaded {} in {:.2f}s", name, *loaded,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return true;
}

// The rows --memory-budget-mb holds, or why it cannot serve: the rows beyond it live in storage,
// and one batch's rows (every table's, should they all hash here) must fit at once.
result<std::uint64_t> memory_budget_rows(const service_options& o, const job::model_setup& setup,
                                         const job::job_options& job, std::uint32_t row_floats, bool has_storage) {
  const std::uint64_t mb = o.memory_budget_bytes >> 20;
  if (!has_storage)
    return ss::status(ss::errc::invalid_argument, o.name + ": --memory-budget-mb " + std::to_string(mb) +
                                              " needs --data-dir: the rows beyond the budget live in the shard's storage");
  const std::uint64_t rows = embedding::rows_in_budget(o.memory_budget_bytes, row_floats);
  const std::uint64_t batch_rows = static_cast<std::uint64_t>(job.batch_size) * setup.dlrm.num_sparse;
  if (rows < batch_rows) {
    const std::uint64_t need = batch_rows * embedding::row_bytes_in_memory(row_floats);
    return ss::status(ss::errc::invalid_argument,
                  o.name + ": --memory-budget-mb " + std::to_string(mb) + " holds " + std::to_string(rows) +
                      " rows of " + std::to_string(row_floats) + " floats; one batch needs up to " +
                      std::to_string(batch_rows) + " (batch size " + std::to_string(job.batch_size) + " x " +
                      std::to_string(setup.dlrm.num_sparse) + " tables): give it at least " +
                      std::to_string((need + (1u << 20) - 1) >> 20) + " MB");
  }
  spdlog::info("{}: memory budget {} MB: {} rows in RAM, the rest in storage", o.name, mb, rows);
  return rows;
}

ss::status spawn_shard_role(service_impl& svc, const wire::register_reply& reply, const job::job_options& job) {
  const auto& options = svc.options_;
  auto setup = model_of(job, options.name);
  if (!setup.is_ok()) return setup.error();
  embedding::shard_store_options so;
  so.dim = setup->embeddings.dim;
  so.precision = setup->embeddings.precision;
  so.init_scale = setup->embeddings.init_scale;
  so.seed = setup->embeddings.seed;
  so.max_rows_per_table = setup->embeddings.max_rows_per_table;
  so.optimizer = setup->embeddings.optimizer;
  so.admit_after = static_cast<std::uint32_t>(job.admit_after);
  auto ttl = embedding::parse_row_ttl(job.row_ttl);
  if (!ttl.is_ok()) return ttl.error();
  so.ttl = *ttl;
  const std::uint32_t row_floats = embedding::shard_row_floats(so);
  std::shared_ptr<embedding::durable_rows> storage;
  if (options.open_storage) {
    // Resuming from a snapshot, its checkpoint replaces the live rows: live rows of another layout
    // (a resume at another --row-precision) are set aside rather than refused.
    auto opened = options.open_storage(row_floats, embedding::shard_row_layout(so), reply.restore_snapshot > 0);
    if (!opened.is_ok()) return opened.error().with_context(options.name + ": opening its storage");
    storage = std::shared_ptr<embedding::durable_rows>(std::move(*opened));
  }
  if (options.memory_budget_bytes > 0) {
    auto budget = memory_budget_rows(options, *setup, job, row_floats, storage != nullptr);
    if (!budget.is_ok()) return budget.error();
    so.max_rows_in_memory = *budget;
    so.cold = storage;
  }
  so.persisted = storage != nullptr;
  svc.store_ = std::make_shared<embedding::shard_store>(so);
  shard_options sh;
  sh.storage = storage;
  sh.name = options.name;
  sh.index = static_cast<std::uint32_t>(options.index);
  sh.shards = static_cast<std::uint32_t>(job.shards);
  sh.workers = options.threads;
  sh.flush_interval = options.flush_interval;
  sh.move_page_rows = options.move_page_rows;
  // Its rows all moved to the other shards (the job took fewer): it leaves the job (no more
  // heartbeats, nor registrations the coordinator would refuse) and the service ends, exit 0.
  sh.on_left_job = [end = svc.end_, member = svc.member_] {
    const std::string why = "its rows moved to the job's other shards";
    caf::anon_send(member, stop_atom::value, why);
    end->settle(1, why);
  };
  if (storage) {
    auto serving = load_shard_rows(svc, reply, sh);
    if (!serving.is_ok()) return serving.error();
    if (!*serving) return ss::status::ok();
  } else {
    spdlog::info("{}: no storage: rows live in memory only (a restart starts empty)", options.name);
  }
  auto actors = spawn_shard(svc.sys_, svc.gateway_, svc.store_, sh, svc.shard_counters_);
  svc.role_ = actors.pool;
  // The shard fences pushes of trainers whose membership is over: it follows the view.
  caf::anon_send(svc.member_, view_atom::value, view_subscriber_actor{actors.pool});
  // ... and the persister settles the rows of a reshard that did not happen.
  if (actors.persister) caf::anon_send(svc.member_, view_atom::value, view_subscriber_actor{actors.persister});
  svc.persister_ = actors.persister;
  svc.bulk_ = actors.bulk;
  svc.prefetcher_ = actors.prefetcher;
  svc.sweeper_ = actors.sweeper;
  svc.mover_ = actors.mover;
  return ss::status::ok();
}

}  // namespace

result<std::unique_ptr<running_service>> start_shard(caf::actor_system& sys, std::unique_ptr<transport> t,
                                                     const service_options& options) {
  return start_member(sys, std::move(t), options, {wire::role::shard, prepare_shard, spawn_shard_role});
}

namespace {

// ---- reader ----

std::function<wire::member_progress()> prepare_reader(service_impl& svc) {
  svc.reader_counters_ = std::make_shared<reader_counters>();
  return [counters = svc.reader_counters_] {
    wire::member_progress p;
    // Counted from the start of the data, so a restarted reader does not count its predecessor's twice.
    p.examples = counters->examples_before.load() + counters->examples_sent.load();
    p.batches = counters->batches_sent.load();
    p.bytes_done = counters->bytes_done.load();
    p.bytes_total = counters->bytes_total.load();
    p.bad_rows = counters->bad_rows.load();
    p.epochs_done = counters->epochs_done.load();
    p.batches_in_flight = counters->batches_in_flight.load();
    p.view_epoch = counters->view_epoch.load();
    // `finished` before the committed position: once finished, the position is the final one.
    p.finished = counters->finished.load();
    const auto now = counters->committed_now();
    p.has_committed = now.has_committed;
    p.committed = now.committed;
    p.committed_examples = now.committed_examples;
    p.committed_bad_rows = now.committed_bad_rows;
    std::lock_guard<std::mutex> lock(counters->mu);
    p.error = counters->error;
    return p;
  };
}

reader_options reader_options_of(const service_impl& svc, const job::job_options& job,
                                 const wire::register_reply& reply) {
  reader_options ro;
  ro.name = svc.options_.name;
  ro.index = static_cast<std::uint32_t>(svc.options_.index);
  ro.incarnation = svc.incarnation_;
  ro.requeue_after = std::chrono::milliseconds(static_cast<long>(job.member_timeout * 1000));
  // A trainer gives a pull up after request_timeout; twice that, and a batch overtaken by a later
  // one was never received.
  ro.lost_after = std::chrono::milliseconds(static_cast<long>(2 * job.request_timeout * 1000));
  ro.lease = std::chrono::milliseconds(static_cast<long>(job.batch_lease * 1000));
  ro.epoch_barrier = !job.passes.validation.empty() && !job.follow.enabled;
  ro.follow_batch_wait = std::chrono::milliseconds(std::max<long>(1, std::lround(job.follow.batch_wait * 1000)));
  ro.follow_limit = job::follow_limit_of_reader(job, svc.options_.index);
  if (reply.has_resume_position) {
    ro.resume_examples = reply.resume_examples;
    ro.resume_bad_rows = reply.resume_bad_rows;
  }
  ro.schedule_examples = reply.schedule_examples;
  return ro;
}

// The reader's input, opened and (when the job resumes) moved to the committed position.
result<std::unique_ptr<data::epoch_reader>> open_reader_input(const std::string& name, data::epoch_reader_options eopts,
                                                              const job::job_options& job,
                                                              const wire::register_reply& reply, std::size_t files) {
  const bool planned = !eopts.progress.empty();
  const std::size_t inherited = eopts.inherited.size();
  auto reader = data::epoch_reader::open(std::move(eopts));
  if (!reader.is_ok()) return reader.error();
  auto input = std::make_unique<data::epoch_reader>(std::move(*reader));
  if (!reply.has_resume_position) {
    spdlog::info("{}: reading {} file(s){}{}{}", name, files,
                 job.passes.epochs > 1 ? ", " + std::to_string(job.passes.epochs) + " epochs" : std::string(),
                 planned ? ", each from where the job's readers before the change of count left it" : "",
                 inherited > 0 ? ", after finishing " + std::to_string(inherited) +
                                     " shuffle window(s) they left, each at the start of its epoch"
                               : "");
    return input;
  }
  const auto& p = reply.resume_position;
  if (auto st = input->seek(epoch_position_of(p)); !st.is_ok()) return st.with_context("resuming at the committed position");
  const std::string where = p.inherited > 0 ? "in the shuffle window " + std::to_string(p.inherited) +
                                                   " it inherited, past its first " + std::to_string(p.window_batches) +
                                                   " batches"
                                             : "at file " + std::to_string(p.file_index) + " line " +
                                                   std::to_string(p.line_number);
  spdlog::info("{}: resuming {}{} ({} examples before it were trained)", name,
               job.passes.epochs > 1 ? "in epoch " + std::to_string(p.epoch + 1) + " " : std::string(), where,
               reply.resume_examples);
  return input;
}

// The followed input of a reader of a --follow job, at the committed position when the job resumes.
result<std::unique_ptr<data::follow_batch_reader>> open_followed_input(const std::string& name,
                                                                       const job::job_options& job,
                                                                       const std::string& input,
                                                                       const wire::register_reply& reply) {
  auto ropts = job::reader_options(job.input, {input}, static_cast<std::size_t>(job.batch_size));
  if (!ropts.is_ok()) return ropts.error();
  data::follow_batch_options fo;
  fo.schema = ropts->schema;
  fo.source = data::follow_source{input, job.follow.pattern};
  fo.batch_size = ropts->batch_size;
  fo.bad_rows = ropts->bad_rows;
  fo.lines = ropts->lines;
  auto opened = data::follow_batch_reader::open(std::move(fo));
  if (!opened.is_ok()) return opened.error();
  auto follow = std::make_unique<data::follow_batch_reader>(std::move(*opened));
  if (!reply.has_resume_position) {
    spdlog::info("{}: following {}", name, input);
    return follow;
  }
  const auto& p = reply.resume_position;
  const data::follow_position at{p.file_name, p.device, p.inode, p.byte_offset, p.line_number, p.previous_line_crc};
  if (auto st = follow->seek(at); !st.is_ok()) return st.with_context("resuming at the committed position");
  for (const auto& text : follow->take_notices()) spdlog::warn("{}: {}", name, text);
  spdlog::info("{}: following {}, resumed in {} at byte {} (line {}; {} examples before it were trained)", name, input,
               p.file_name.empty() ? std::string("its start") : p.file_name, p.byte_offset, p.line_number,
               reply.resume_examples);
  return follow;
}

ss::status spawn_reader_role(service_impl& svc, const wire::register_reply& reply, const job::job_options& job) {
  const auto& options = svc.options_;
  auto counters = svc.reader_counters_;
  if (reply.has_resume_position) {
    // All three now: a reader whose input fails never spawns its actor, and its heartbeats must
    // not report the job's committed rows as none.
    std::lock_guard<std::mutex> lock(counters->mu);
    counters->has_committed = true;
    counters->committed = reply.resume_position;
    counters->committed_examples = reply.resume_examples;
    counters->committed_bad_rows = reply.resume_bad_rows;
  }
  const auto files = job::files_of_reader(job, options.index);
  reader_input input;
  if (job.follow.enabled && files.size() == 1) {
    auto opened = open_followed_input(options.name, job, files.front(), reply);
    if (!opened.is_ok()) {
      spdlog::error("{}: {}; the job cannot go on without this input", options.name, opened.error().message());
      std::lock_guard<std::mutex> lock(counters->mu);
      counters->error = opened.error().message();
      return ss::status::ok();
    }
    input = std::move(*opened);
  } else if (files.empty()) {
    // More readers than files: this one has nothing to read and is done at once.
    spdlog::info("{}: no training file falls to this reader (files i, i+{}, ... of {})", options.name, job.readers,
                 job.train.size());
  } else {
    auto ropts = job::reader_options(job.input, files, static_cast<std::size_t>(job.batch_size));
    if (!ropts.is_ok()) return ropts.error().with_context(options.name);
    data::epoch_reader_options eopts;
    eopts.input = std::move(*ropts);
    eopts.epochs = static_cast<std::uint32_t>(job.passes.epochs);
    eopts.shuffle_window = job.passes.shuffle_window();
    eopts.seed = job::reader_seed(job, options.index);
    eopts.progress = progress_of(reply);
    std::vector<job::window_left> left;
    for (const auto& w : reply.windows_left) left.push_back(window_left_of(w));
    auto inherited = job::inherited_windows(job, left);
    if (!inherited.is_ok()) return inherited.error().with_context(options.name);
    eopts.inherited = std::move(*inherited);
    auto opened = open_reader_input(options.name, std::move(eopts), job, reply, files.size());
    if (!opened.is_ok()) {
      // Input this reader cannot open or resume (a file deleted or cut short since the job began)
      // ends the job: the error goes to the coordinator with the next heartbeat, which fails the
      // job with it and prints the result. Exiting instead would only restart the reader into the
      // same error.
      spdlog::error("{}: {}; the job cannot go on without this input", options.name, opened.error().message());
      std::lock_guard<std::mutex> lock(counters->mu);
      counters->error = opened.error().message();
      return ss::status::ok();
    }
    input.files = std::move(*opened);
  }
  auto reader = spawn_reader(svc.sys_, svc.gateway_, std::move(input), reader_options_of(svc, job, reply), counters);
  svc.role_ = reader;
  // The reader learns the live trainers (whose batches it may hand to others) from the view.
  caf::anon_send(svc.member_, view_atom::value, view_subscriber_actor{reader});
  return ss::status::ok();
}

}  // namespace

result<std::unique_ptr<running_service>> start_reader(caf::actor_system& sys, std::unique_ptr<transport> t,
                                                      const service_options& options) {
  return start_member(sys, std::move(t), options, {wire::role::reader, prepare_reader, spawn_reader_role});
}

namespace {

// ---- trainer ----

std::function<wire::member_progress()> prepare_trainer(service_impl& svc) {
  svc.trainer_progress_ = std::make_shared<trainer_progress>();
  return [progress = svc.trainer_progress_] { return progress->snapshot(); };
}

ss::status spawn_trainer_role(service_impl& svc, const wire::register_reply&, const job::job_options& job) {
  const auto& options = svc.options_;
  svc.trainer_progress_->set_window(job::window_spec_of(job.progressive));
  auto setup = model_of(job, options.name);
  if (!setup.is_ok()) return setup.error();
  auto model = std::make_shared<train::dense_model>(setup->dlrm, setup->dense, job.model.seed);
  trainer_options to;
  to.name = options.name;
  to.workers = options.threads;
  to.detached_workers = options.detached;
  to.prefetch = options.prefetch;
  to.incarnation = svc.incarnation_;
  to.coordinator = options.coordinator;
  to.schedule = setup->schedule;
  to.row_precision = setup->embeddings.precision;
  svc.role_ = spawn_trainer(svc.sys_, svc.gateway_, svc.member_, job, model, setup->buckets, to, svc.trainer_progress_);
  return ss::status::ok();
}

}  // namespace

result<std::unique_ptr<running_service>> start_trainer(caf::actor_system& sys, std::unique_ptr<transport> t,
                                                       const service_options& options) {
  return start_member(sys, std::move(t), options, {wire::role::trainer, prepare_trainer, spawn_trainer_role});
}

namespace {

// ---- sync server ----

// A sync server's heartbeats carry no progress of their own.
std::function<wire::member_progress()> prepare_sync(service_impl&) {
  return [] { return wire::member_progress{}; };
}

ss::status spawn_sync_role(service_impl& svc, const wire::register_reply& reply, const job::job_options& job) {
  // A resumed job's coordinator sends the snapshot's state for this slice (restore_snapshot set).
  auto server = make_sync_server(svc.sys_, svc.gateway_, job, static_cast<std::uint32_t>(svc.options_.index),
                                 svc.options_.name, reply.restore_snapshot > 0);
  if (!server.is_ok()) return server.error();
  svc.role_ = *server;
  // The server learns the live trainers (how many a round waits for) from the cluster view.
  caf::anon_send(svc.member_, view_atom::value, view_subscriber_actor{*server});
  caf::anon_send(svc.gateway_, route_atom::value, kind_of<wire::dense_request>(), svc.role_);
  caf::anon_send(svc.gateway_, route_atom::value, kind_of<wire::status_request>(), svc.role_);
  return ss::status::ok();
}

}  // namespace

result<std::unique_ptr<running_service>> start_sync_server(caf::actor_system& sys, std::unique_ptr<transport> t,
                                                           const service_options& options) {
  return start_member(sys, std::move(t), options, {wire::role::sync, prepare_sync, spawn_sync_role});
}

}  // namespace ss::actors
