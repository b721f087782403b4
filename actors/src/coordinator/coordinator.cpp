#include "ss/actors/coordinator.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "state.hpp"
#include "ss/actors/evaluator.hpp"
#include "ss/actors/gateway.hpp"
#include "ss/actors/messages.hpp"
#include "ss/actors/status_metrics.hpp"
#include "ss/actors/sync_server.hpp"
#include "ss/core/json.hpp"
#include "ss/core/sync/sync_algorithms.hpp"
#include "ss/core/metrics/metrics.hpp"
#include "ss/core/metrics/status_metrics.hpp"

namespace ss::actors::coordinator_detail {

double seconds_between(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

void call_endpoint(coordinator_actor* self, const std::string& endpoint, body_ptr body, caf::timespan timeout,
                   std::function<void(const envelope_ptr&)> on_reply, std::function<void(const std::string&)> on_error) {
  if (endpoint.empty()) return on_error("no endpoint");
  self->request(self->state.gateway, caf::infinite, link_atom::value, endpoint)
      .then(
          [self, body, timeout, on_reply, on_error](std::uint32_t link) {
            self->request(self->state.gateway, caf::infinite, call_atom::value, link, body, timeout)
                .then([on_reply](const envelope_ptr& env) { on_reply(env); },
                      [self, on_error](const caf::error& err) { on_error(self->system().render(err)); });
          },
          [self, on_error](const caf::error& err) { on_error(self->system().render(err)); });
}

double click_rate_of(const totals& t) {
  return t.examples > 0 ? static_cast<double>(t.clicks) / static_cast<double>(t.examples) : 0.0;
}

totals sum_up(const coordinator_state& st) {
  totals t;
  job::trainer_counters trained = st.departed;
  for (const auto& [inc, g] : st.ghosts) {
    trained.examples += g.examples;
    trained.clicks += g.clicks;
    trained.loss_sum += g.loss_sum;
    trained.active_seconds = std::max(trained.active_seconds, g.active_seconds);
  }
  t.committed = st.read_plan.examples;
  t.committed_bad_rows = st.read_plan.bad_rows;
  for (const auto& c : st.reader_commits) {
    t.committed += c.examples;
    t.committed_bad_rows += c.bad_rows;
  }
  int readers_done = 0, trainers_done = 0;
  for (const auto& [id, m] : st.members) {
    const auto& p = m.progress;
    if (m.role == wire::role::trainer) {
      ++t.trainers;
      add_counters(trained, p);
      if (p.finished && m.reported_replica) ++trainers_done;
    } else if (m.role == wire::role::reader) {
      t.bytes_done += p.bytes_done;
      t.bytes_total += p.bytes_total;
      t.bad_rows += p.bad_rows;
      t.sent += p.examples;
      if (p.finished) ++readers_done;
    }
    if (!p.error.empty() && t.error.empty()) t.error = m.name + ": " + p.error;
  }
  t.examples = trained.examples;
  t.clicks = trained.clicks;
  t.loss = trained.loss_sum;
  t.active_seconds = trained.active_seconds;
  t.readers_finished = readers_done == st.options.job.readers;
  t.trainers_finished = t.trainers > 0 && trainers_done == static_cast<int>(t.trainers);
  return t;
}

void set_state(coordinator_actor* self, wire::job_state s) {
  auto& st = self->state;
  if (st.state == s) return;
  spdlog::info("{}: job {} -> {}", st.options.name, wire::to_string(st.state), wire::to_string(s));
  st.state = s;
  if (s == wire::job_state::running && !st.running_seen) {
    st.running_seen = true;
    st.running_at = self->clock().now();
    st.last_progress = st.running_at;
  }
  if (s == wire::job_state::draining && !st.drained_seen) {
    st.drained_seen = true;
    st.drained_at = self->clock().now();
  }
}

// The job's result from the coordinator's counters, the members' last progress and the test
// metrics (null: the test files were not scored).
job::job_report build_report(coordinator_actor* self, const metrics::summary* test, std::uint64_t test_bad_rows) {
  auto& st = self->state;
  const totals t = sum_up(st);
  // The job's training time: the longest a trainer trained (first batch to last), which the
  // trainers measure themselves; the coordinator's own view lags by up to a heartbeat.
  const auto end = st.drained_seen ? st.drained_at : self->clock().now();
  const double seconds = t.active_seconds > 0 ? t.active_seconds
                                              : (st.running_seen ? seconds_between(st.running_at, end) : 0.0);
  const double base = t.examples > 0 ? static_cast<double>(t.clicks) / static_cast<double>(t.examples) : 0.0;
  const double train_logloss = t.examples > 0 ? t.loss / static_cast<double>(t.examples) : 0.0;
  const bool failed = st.state == wire::job_state::failed;
  job::job_report r;
  r.ok = !failed;
  r.error = st.failure;
  r.examples = t.examples;
  r.examples_committed = t.committed;
  r.examples_read = t.sent;
  r.epochs = st.options.job.passes.epochs;
  r.epochs_run = st.view.epochs_stop > 0 ? static_cast<int>(st.view.epochs_stop) : st.options.job.passes.epochs;
  r.best_epoch = st.best_epoch;
  r.stopped_early = st.stopped_early;
  r.epoch_scores = st.epoch_scores;
  r.validation_bad_rows = st.validation_bad_rows;
  r.evaluations = st.evaluations;
  r.seconds = seconds;
  r.trainers = st.replicas.size();
  r.shards = st.options.job.shards;
  r.readers = st.options.job.readers;
  r.batch_size = st.options.job.batch_size;
  r.train_logloss = train_logloss;
  r.train_ne = metrics::normalized_entropy(train_logloss, base);
  r.train_click_rate = base;
  // The window as training ended (a time window would empty while the test files are scored).
  r.progressive_window = st.options.job.progressive.window;
  r.progressive_window_seconds = st.options.job.progressive.window_seconds;
  r.progressive = job_progressive(st, end, base);
  r.tested = test != nullptr;
  if (test != nullptr) r.test = *test;
  r.bad_rows = t.committed_bad_rows + test_bad_rows;
  // What ran: auto is reported as the algorithm it is (S-EASGD).
  const auto spec = sync::parse_sync(st.options.job.sync);
  r.sync = spec.is_ok() ? sync::to_string(*spec) : st.options.job.sync;
  r.sync_servers = st.options.job.sync_servers;
  r.sync_quantize = st.options.job.sync_quantize;
  r.simulate_step_ms = st.options.job.simulate_step_ms;
  // Per-trainer sync figures, and their means over the trainers that synced: the trainers in the
  // job at its end, then those that left it (as their last heartbeat reported them).
  int with_rounds = 0;
  auto add_trainer = [&r, &with_rounds](const std::string& name, const wire::member_progress& p, bool left) {
    r.per_trainer.push_back({name, p.examples, p.active_seconds, p.sync_rounds, p.sync_gap, p.sync_latency_p50_ms,
                             p.sync_latency_p99_ms, p.sync_distance, p.sync_wait_seconds, p.sync_bytes, left});
    r.sync_rounds += p.sync_rounds;
    r.sync_bytes += p.sync_bytes;
    r.sync_wait_seconds += p.sync_wait_seconds;
    if (p.sync_rounds > 0) {
      ++with_rounds;
      r.sync_gap += p.sync_gap;
      r.sync_latency_p50_ms += p.sync_latency_p50_ms;
      r.sync_distance += p.sync_distance;
    }
  };
  for (const auto& [id, mi] : st.members)
    if (mi.role == wire::role::trainer) add_trainer(mi.name, mi.progress, false);
  for (const auto& [incarnation, gone] : st.retired_trainers) add_trainer(gone.name, gone.progress, true);
  if (with_rounds > 0) {
    r.sync_gap /= with_rounds;
    r.sync_latency_p50_ms /= with_rounds;
    r.sync_distance /= with_rounds;
  }
  r.job_id = st.job_id;
  r.resumed_from_snapshot = st.resumed_from;
  r.snapshots = st.counters.snapshots_taken.load();
  r.snapshots_failed = st.counters.snapshots_failed.load();
  r.last_snapshot_id = st.last_snapshot_id;
  r.snapshot_error = st.last_snapshot_error;
  r.last_snapshot_seconds = st.last_snapshot_seconds;
  if (st.exported) {
    r.export_path = st.exported->path;
    r.export_rows = st.exported->rows;
    r.export_bytes = st.exported->bytes;
  }
  r.export_error = st.export_error;
  if (!st.options.publish_dir.empty()) {
    r.publish_dir = st.options.publish_dir;
    r.publications = st.counters.publications.load();
    r.publications_failed = st.counters.publications_failed.load();
    if (st.last_publication) r.last_publication = st.last_publication->sequence;
    r.publish_error = st.publish_error;  // cleared by every publication written: the final one failed
  }
  if (st.options.job.follow.enabled)
    r.follow_ended = !st.input_closed_why.empty() ? st.input_closed_why
                                                  : "--follow-limit-examples " +
                                                        std::to_string(st.options.job.follow.limit_examples) +
                                                        " reached";
  return r;
}

void finish(coordinator_actor* self, const metrics::summary* test, std::uint64_t test_bad_rows) {
  auto& st = self->state;
  if (st.state != wire::job_state::failed && !st.options.export_path.empty() && st.export_stage == 0 &&
      !st.central.empty()) {
    // The model file first; the result (and the members' release) waits for it.
    st.export_stage = 1;
    if (test != nullptr) st.final_test = *test;
    st.final_test_bad_rows = test_bad_rows;
    const totals so_far = sum_up(st);
    return start_export(self, st.central, click_rate_of(so_far), so_far.examples);
  }
  if (publish_final(self, sum_up(st))) {
    // The last publication of the final model; the result waits for it.
    if (test != nullptr) st.final_test = *test;
    st.final_test_bad_rows = test_bad_rows;
    return;
  }
  job::job_report r = build_report(self, test, test_bad_rows);
  if (r.ok) set_state(self, wire::job_state::done);
  if (r.ok && st.options.snapshots) {
    // A restarted coordinator of a finished job reports this instead of training again.
    if (auto w = st.options.snapshots->write_result(job::stored_result{r.to_json(), st.job_text}); !w.is_ok())
      spdlog::warn("{}: cannot store the job's result: {}", st.options.name, w.message());
  }
  st.result = std::move(r);
  record_history(self, self->clock().now());  // the final state, before anyone hears of the end
  if (st.options.on_result) st.options.on_result(*st.result, "");
}

void fail_job(coordinator_actor* self, const std::string& why) {
  auto& st = self->state;
  if (st.state == wire::job_state::failed || st.state == wire::job_state::done) return;
  spdlog::error("{}: the job failed: {}", st.options.name, why);
  st.failure = why;
  set_state(self, wire::job_state::failed);
  finish(self, nullptr, 0);
}

// The final model for MA and none (with sync, the replicas agree closely; without, it is the
// model-averaging baseline), each replica weighted by the examples it trained. A replica that
// trained nothing (a trainer restarted while the job drained) is left out: it holds a copy of
// the others, not training.
std::vector<float> average_replicas(const coordinator_state& st) {
  std::vector<sync::weighted_replica> replicas;
  for (const auto& [id, r] : st.replicas) replicas.push_back({&r.first, r.second});
  for (const auto& [id, r] : st.last_seen_replicas)
    if (st.replicas.count(id) == 0) replicas.push_back({&r.params, r.examples});
  return sync::average_by_examples(replicas);
}

void evaluate_final_model(coordinator_actor* self);

// The final model. EASGD: the central copy; BMUF: the global model (both gathered slice by slice
// from the sync servers). MA and none: the average of the trainers' replicas. A slice a sync
// server never initialized (no sync happened) falls back to the replicas' average.
void start_evaluation(coordinator_actor* self) {
  auto& st = self->state;
  st.evaluating = true;
  auto spec = sync::parse_sync(st.options.job.sync);
  const bool from_servers = spec.is_ok() && (spec->algo == sync::algorithm::easgd || spec->algo == sync::algorithm::bmuf);
  // Snapshots gather every job's replicas (with their optimizer state); only a job without a
  // central copy builds its final model from them.
  if (!from_servers)
    for (const auto& [id, r] : st.last_seen_replicas)
      if (st.replicas.count(id) == 0 && r.examples > 0)
        spdlog::info("{}: the final model counts {}'s replica as last gathered, after {} examples: that incarnation "
                     "never reported its own (killed first)",
                     st.options.name, r.trainer, r.examples);
  st.central = average_replicas(st);
  if (!from_servers || st.central.empty()) return evaluate_final_model(self);
  const auto slices = static_cast<std::uint32_t>(st.options.job.sync_servers);
  auto remaining = std::make_shared<std::uint32_t>(slices);
  auto adopt = [self, remaining, slices](std::uint32_t k, const std::vector<float>& values) {
    auto& s = self->state;
    const auto [offset, length] = slice_bounds(s.central.size(), k, slices);
    if (values.size() == length) std::copy(values.begin(), values.end(), s.central.begin() + static_cast<std::ptrdiff_t>(offset));
    if (--*remaining == 0) evaluate_final_model(self);
  };
  self->request(st.options.local_sync, std::chrono::seconds(30), central_atom::value)
      .then([adopt](const std::vector<float>& v) { adopt(0, v); }, [adopt](const caf::error&) { adopt(0, {}); });
  for (std::uint32_t k = 1; k < slices; ++k) {
    const std::string endpoint = k < st.view.syncs.size() ? st.view.syncs[k] : std::string();
    call_endpoint(
        self, endpoint, make_body(wire::dense_request{}), caf::timespan{std::chrono::seconds(30)},
        [adopt, k](const envelope_ptr& env) {
          const auto* r = std::get_if<wire::dense_reply>(&env->message);
          adopt(k, r != nullptr ? r->params : std::vector<float>{});
        },
        [adopt, k](const std::string&) { adopt(k, {}); });
  }
}

void evaluate_final_model(coordinator_actor* self) {
  auto& st = self->state;
  if (const std::size_t bad = train::non_finite_count(st.central.data(), st.central.size()); bad > 0)
    return fail_job(self, "training diverged: " + std::to_string(bad) + " of " + std::to_string(st.central.size()) +
                              " dense parameters of the final model are NaN or infinite; lower --learning-rate or "
                              "--embedding-learning-rate. No model is scored or exported");
  if (validates(st)) return finish_validated(self);
  if (st.options.job.test.empty()) {
    finish(self, nullptr, 0);
    return;
  }
  st.scoring = scoring_stage::test;
  if (score_model(self, st.central, st.options.job.test, "test data"))
    spdlog::info("{}: training finished; scoring {} test file(s)", st.options.name, st.options.job.test.size());
}

bool score_model(coordinator_actor* self, const std::vector<float>& dense, const std::vector<std::string>& files,
                 const std::string& what) {
  auto& st = self->state;
  // The model's shape comes from the files' schema and the job's model options.
  auto ropts = job::reader_options(st.options.job.input, files, 16);
  auto reader = ropts.is_ok() ? data::batch_reader::open(*ropts) : result<data::batch_reader>(ropts.error());
  if (!reader.is_ok()) {
    fail_job(self, what + ": " + reader.error().message());
    return false;
  }
  auto setup = job::resolve_model(st.options.job.model, reader->schema().num_dense(), reader->schema().num_categorical());
  if (!setup.is_ok()) {
    fail_job(self, setup.error().message());
    return false;
  }
  auto model = std::make_shared<train::dense_model>(setup->dlrm, setup->dense, st.options.job.model.seed);
  if (dense.size() != model->size()) {
    fail_job(self, "trainers reported " + std::to_string(dense.size()) + " dense parameters, the model of the " +
                       what + " has " + std::to_string(model->size()));
    return false;
  }
  std::copy(dense.begin(), dense.end(), model->params());
  evaluator_input in;
  in.job = st.options.job;
  in.files = files;
  in.what = what;
  in.model = model;
  in.buckets = setup->buckets;
  in.shard_endpoints = st.view.shards;
  in.shard_wait = std::chrono::milliseconds(static_cast<long>(st.options.job.peer_wait * 1000));
  in.base_click_rate = click_rate_of(sum_up(st));
  spawn_evaluator(self->system(), st.gateway, std::move(in), evaluator_listener_actor{self}, view_source_actor{self},
                  st.options.detached_evaluator);
  return true;
}

namespace {

void log_progress(coordinator_actor* self) {
  auto& st = self->state;
  const auto now = self->clock().now();
  const totals t = sum_up(st);
  const double dt = seconds_between(st.last_progress, now);
  const double eps = dt > 0 ? static_cast<double>(t.examples - std::min(t.examples, st.last_examples)) / dt : 0.0;
  st.last_progress = now;
  st.last_examples = t.examples;
  st.recent_eps = eps;
  const auto progressive = job_progressive(st, now, click_rate_of(t));
  std::string eta;
  if (t.bytes_total > 0 && t.bytes_done > 0) {
    const double frac = static_cast<double>(t.bytes_done) / static_cast<double>(t.bytes_total);
    const double elapsed = seconds_between(st.running_at, now);
    char buf[64];
    std::snprintf(buf, sizeof buf, " (%.1f%%, ETA %.0fs)", 100 * frac, frac > 0 ? elapsed * (1 - frac) / frac : 0.0);
    eta = buf;
  }
  char line[512];
  std::snprintf(line, sizeof line, "%llu examples%s, %.0f ex/s, %llu trainer%s, %s",
                static_cast<unsigned long long>(t.examples), eta.c_str(), eps,
                static_cast<unsigned long long>(t.trainers), t.trainers == 1 ? "" : "s",
                progressive.to_string().c_str());
  if (st.options.on_progress) st.options.on_progress(line);
  else spdlog::info("{}", line);
}

// A trainer that finished but whose replica the coordinator never received (it reported to an
// earlier incarnation of the coordinator, or the report was lost) is asked for it.
void collect_replicas(coordinator_actor* self) {
  auto& st = self->state;
  for (auto& [id, m] : st.members) {
    if (m.role != wire::role::trainer || !m.progress.finished || m.reported_replica || m.replica_asked) continue;
    m.replica_asked = true;
    const std::uint64_t member = id;
    const std::uint64_t incarnation = m.incarnation;
    call_endpoint(
        self, m.endpoint, make_body(wire::dense_request{}), caf::timespan{std::chrono::seconds(30)},
        [self, member, incarnation](const envelope_ptr& env) {
          auto& s = self->state;
          auto it = s.members.find(member);
          if (it == s.members.end()) return;
          const auto* r = std::get_if<wire::dense_reply>(&env->message);
          if (r == nullptr || r->params.empty()) {
            it->second.replica_asked = false;  // ask again on a later tick
            return;
          }
          s.replicas[incarnation] = {r->params, it->second.progress.examples};
          it->second.reported_replica = true;
        },
        [self, member](const std::string&) {
          auto it = self->state.members.find(member);
          if (it != self->state.members.end()) it->second.replica_asked = false;
        });
  }
}

// Training is over: one last snapshot writes every shard's rows before the scoring. True while it
// is under way or must wait (a shard absent or restarting); false once it is complete or given up.
bool take_final_snapshot(coordinator_actor* self) {
  constexpr int kFinalSnapshotAttempts = 10;  // a second apart: a restarted shard has time to load
  auto& st = self->state;
  if (!st.options.snapshots) return false;
  if (st.snapshot) return true;  // under way (a periodic one still finishing is waited for too)
  if (st.final_snapshot_id != 0 && st.last_snapshot_id == st.final_snapshot_id) return false;  // complete
  if (st.final_snapshot_attempts >= kFinalSnapshotAttempts) return false;  // failed: said in the result
  for (auto id : st.shard_slots)
    if (id == 0) return true;  // a shard is away: wait for it (bounded by --peer-wait)
  if (st.final_snapshot_attempts > 0 && seconds_between(st.last_snapshot_at, self->clock().now()) < 1.0) return true;
  ++st.final_snapshot_attempts;
  if (st.final_snapshot_attempts == 1) {
    spdlog::info("{}: training finished; a last snapshot before the scoring", st.options.name);
  } else {
    spdlog::info("{}: the last snapshot before the scoring, again (attempt {} of {}): {}", st.options.name,
                 st.final_snapshot_attempts, kFinalSnapshotAttempts, st.last_snapshot_error);
  }
  begin_snapshot(self, std::nullopt);
  if (!st.snapshot) return st.final_snapshot_attempts < kFinalSnapshotAttempts;  // refused: try again next tick
  st.final_snapshot_id = st.snapshot->id;
  return true;
}

body_ptr on_status(coordinator_actor* self) {
  return make_body(wire::status_reply{status_json(self->state, self->clock().now())});
}

// Every request the coordinator serves (spawn_coordinator routes these kinds to it).
caf::result<body_ptr> serve(coordinator_actor* self, const envelope_ptr& env) {
  const auto& m = env->message;
  if (const auto* r = std::get_if<wire::register_request>(&m)) return on_register(self, *r);
  if (const auto* hb = std::get_if<wire::heartbeat>(&m)) return on_heartbeat(self, *hb);
  if (const auto* l = std::get_if<wire::leave>(&m)) return on_leave(self, *l);
  if (std::holds_alternative<wire::dense_request>(m)) return serve_dense_request(self);
  if (const auto* rep = std::get_if<wire::dense_report>(&m)) return on_dense_report(self, *rep);
  if (std::holds_alternative<wire::snapshot_now>(m)) {
    auto p = self->make_response_promise<body_ptr>();
    begin_snapshot(self, p);
    return p;
  }
  if (std::holds_alternative<wire::status_request>(m)) return on_status(self);
  if (const auto* rs = std::get_if<wire::reshard_request>(&m)) return make_body(request_reshard(self, rs->shards));
  if (const auto* ex = std::get_if<wire::export_request>(&m)) {
    if (live_reshape(self->state))
      return make_body(wire::error_reply{errc::unavailable, "the job is changing its shard count (" +
                                                                reshape_status(self->state) +
                                                                "): ask for the export once it is done"});
    const totals t = sum_up(self->state);
    return serve_export(self, *ex, click_rate_of(t), t.examples);
  }
  if (const auto* stop = std::get_if<wire::stop_request>(&m)) {
    // A following job ends as at the end of its data; one over fixed files is stopped, failed.
    if (self->state.options.job.follow.enabled) {
      close_input(self, "stopped: " + stop->reason);
    } else {
      fail_job(self, "stopped: " + stop->reason);
    }
    return make_body(wire::ack{});
  }
  return make_body(wire::error_reply{errc::invalid_argument, std::string("the coordinator does not serve ") +
                                                                 wire::message_name(m)});
}

// The exporter of the final model reports: the job ends, failed when the model is not there.
void on_final_exported(coordinator_actor* self, const body_ptr& b) {
  auto& st = self->state;
  if (st.exporting_epoch) return on_epoch_exported(self, b);
  if (st.export_stage != 1) return;
  st.export_stage = 2;
  if (const auto* r = std::get_if<wire::export_reply>(b.get())) st.exported = *r;
  else if (const auto* e = std::get_if<wire::error_reply>(b.get())) st.export_error = e->message;
  if (!st.exported) {
    // The job stores no result then, so running it again resumes from its newest snapshot and
    // exports.
    if (st.export_error.empty()) st.export_error = "the exporter reported nothing";
    st.failure = "the model was not written: " + st.export_error;
    spdlog::error("{}: the job failed: {}", st.options.name, st.failure);
    set_state(self, wire::job_state::failed);
  }
  finish(self, st.final_test ? &*st.final_test : nullptr, st.final_test_bad_rows);
}

// The state of a coordinator that starts: slots for the job's members, the snapshot it resumes
// from, or the stored result of a job that finished before.
void start(coordinator_actor* self, coordinator_options options, gateway_actor gateway) {
  auto& st = self->state;
  st.options = std::move(options);
  st.next_member_id = std::max<std::uint64_t>(1, st.options.first_member_id);
  st.gateway = std::move(gateway);
  st.job_text = job::job_config_text(st.options.job);
  st.shard_slots.assign(static_cast<std::size_t>(st.options.job.shards), 0);
  st.shards_flag = static_cast<std::uint32_t>(st.options.shards_flag != 0 ? st.options.shards_flag : st.options.job.shards);
  st.reader_slots.assign(static_cast<std::size_t>(st.options.job.readers), 0);
  st.sync_slots.assign(static_cast<std::size_t>(st.options.job.sync_servers), 0);
  st.reader_commits.assign(static_cast<std::size_t>(st.options.job.readers), job::reader_commit{});
  // With validation, readers hand out the first epoch and wait for its scoring.
  if (validates(st)) st.view.epochs_open = 1;
  st.started_at = self->clock().now();
  st.last_progress = st.started_at;
  st.last_snapshot_at = st.started_at;
  st.job_id = st.options.job_id;
  // Views number on from a restarted coordinator's predecessor's: members report the epoch of the
  // view they applied, and a stage that waits for every member to apply one of this coordinator's
  // (a live reshard's switch) must not count an older view. Unix time in microseconds: no
  // coordinator changes its view a million times a second.
  st.view.epoch = static_cast<std::uint64_t>(std::max<std::int64_t>(0, wall_ms(st))) * 1000;
  if (st.options.resume) adopt_snapshot(self, *st.options.resume);
  if (st.options.switched) resume_switch(self, *st.options.switched);
  if (!st.options.finished_result)
    spdlog::info("{}: the job has {} shard(s), {} reader(s) and {} sync server(s) (the coordinator the first); "
                 "trainers: at least {}",
                 st.options.name, st.options.job.shards, st.options.job.readers, st.options.job.sync_servers,
                 st.options.job.min_trainers);
  change_view(self);
  if (!st.options.finished_result && !start_publishing(self)) return;
  if (st.options.finished_result) {
    // This job finished before (a restarted coordinator): report the stored result.
    spdlog::info("{}: the job finished before; reporting its stored result", st.options.name);
    st.result = st.options.finished_result;
    set_state(self, wire::job_state::done);
    if (st.options.on_result)
      st.options.on_result(*st.result, "shadowsync cluster: the job had finished before this coordinator started; its result:");
  }
}

::ss::actors::coordinator_actor::behavior_type coordinator(coordinator_actor* self, coordinator_options options,
                                                           gateway_actor gateway) {
  start(self, std::move(options), std::move(gateway));
  const auto interval = std::chrono::duration_cast<caf::timespan>(
      std::chrono::duration<double>(std::min(0.25, self->state.options.job.heartbeat_interval)));
  self->send(self, tick_atom::value, interval);
  return {
      // The snapshot's state for a sync server whose role was still starting: send it again.
      [self](renew_atom, std::uint32_t slice, const std::string& endpoint, int attempt) {
        restore_sync_server(self, slice, endpoint, attempt);
      },
      [self](tick_atom, caf::timespan every) {
        tick(self);
        self->delayed_send(self, every, tick_atom::value, every);
      },
      [self](end_input_atom, const std::string& why) { close_input(self, why); },
      [self](serve_atom, const envelope_ptr& env) -> caf::result<body_ptr> { return serve(self, env); },
      [self](scored_atom, const metrics::summary& m, std::uint64_t bad_rows) { on_scored(self, m, bad_rows); },
      [self](unscored_atom, const std::string& error) { fail_job(self, error); },
      [self](exported_atom, const body_ptr& b) { on_final_exported(self, b); },
      [self](published_atom, const publication_outcome_ptr& out) { on_published(self, *out); },
      // Members still to see the job's end, before the coordinator goes: the registered ones, and
      // those dropped for silence (cut off, they come back to learn it).
      [self](members_atom) -> std::uint64_t { return self->state.members.size() + self->state.dropped.size(); },
      // The cluster view, for the coordinator's own helpers (the exporter) that follow restarts.
      [self](view_atom) -> wire::cluster_view { return self->state.view; },
  };
}

}  // namespace

void tick(coordinator_actor* self) {
  auto& st = self->state;
  const auto now = self->clock().now();
  drop_silent_members(self, now);
  record_history(self, now);
  if (st.state == wire::job_state::done || st.state == wire::job_state::failed) return;
  snapshot_tick(self);
  collect_replicas(self);
  const totals t = sum_up(st);
  if (!t.error.empty()) return fail_job(self, t.error);
  if (auto gone = vacant_too_long(st, now); !gone.empty()) return fail_job(self, gone);
  // A job resumed on another shard count trains once its rows have moved (a live reshard's
  // switch that a restarted coordinator finishes goes on once the job runs).
  if (st.state == wire::job_state::waiting && (live_reshape(st) || !reshape_tick(self))) {
    if (t.trainers >= static_cast<std::uint64_t>(st.options.job.min_trainers) && every_slot_taken(st))
      set_state(self, wire::job_state::running);
  }
  // `shadowsync reshard`, training or draining (its snapshot and drop come before the final path).
  if (live_reshape(st) && (st.state == wire::job_state::running || st.state == wire::job_state::draining))
    reshape_tick(self);
  if (st.state == wire::job_state::running) {
    epochs_tick(self, t);
    expire_departed_windows(st, now);
  }
  publish_tick(self, t);
  follow_tick(self, now);
  if (st.state == wire::job_state::running && t.readers_finished) set_state(self, wire::job_state::draining);
  if (st.state == wire::job_state::draining && t.committed == 0 && t.sent == 0 && t.examples == 0 &&
      st.options.job.simulate_step_ms <= 0)
    return fail_job(self, st.options.job.follow.enabled
                              ? "the followed input gave no examples before the job ended (" +
                                    std::to_string(t.committed_bad_rows) + " bad rows skipped); check --train"
                              : "the training files held no examples: every reader reached the end of its input "
                                "with nothing trained (" + std::to_string(t.committed_bad_rows) +
                                    " bad rows skipped); check --train");
  if (st.state == wire::job_state::draining && t.trainers_finished && !st.evaluating &&
      st.scoring == scoring_stage::none && !live_reshape(st)) {  // (a mid-epoch scoring finishes first)
    if (take_final_snapshot(self)) return;   // the last snapshot is under way, or waits for a shard
    if (!st.snapshot) start_evaluation(self);  // once the last snapshot is complete or given up
  }
  if (st.state == wire::job_state::running && st.options.job.progress_interval > 0 &&
      seconds_between(st.last_progress, now) >= st.options.job.progress_interval)
    log_progress(self);
}

}  // namespace ss::actors::coordinator_detail

namespace ss::actors {

coordinator_actor spawn_coordinator(caf::actor_system& sys, const gateway_actor& gateway, coordinator_options options) {
  auto a = sys.spawn(coordinator_detail::coordinator, std::move(options), gateway);
  for (std::size_t kind : {kind_of<wire::register_request>(), kind_of<wire::heartbeat>(), kind_of<wire::leave>(),
                           kind_of<wire::dense_request>(), kind_of<wire::dense_report>(),
                           kind_of<wire::status_request>(), kind_of<wire::stop_request>(),
                           kind_of<wire::snapshot_now>(), kind_of<wire::export_request>(),
                           kind_of<wire::reshard_request>()})
    caf::anon_send(gateway, route_atom::value, kind, request_server_actor{a});
  return a;
}

}  // namespace ss::actors
