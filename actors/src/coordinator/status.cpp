// The coordinator's status (what `shadowsync status` shows, /metrics exports and the dashboard
// draws), declared once: its table, and the tables of the members it lists.
#include <cmath>
#include <string>
#include <vector>

#include "state.hpp"
#include "ss/actors/status_metrics.hpp"
#include "ss/core/json.hpp"
#include "ss/core/metrics/counter_set.hpp"
#include "ss/core/metrics/metrics.hpp"
#include "ss/core/metrics/status_metrics.hpp"

namespace ss::actors::coordinator_detail {
namespace {

// One member as the coordinator's status lists it: who it is, its health (ok; late: no heartbeat
// for three intervals; failed: it reported an error) and its role's own numbers, from its
// heartbeats.
struct member_view {
  std::uint64_t id;
  const member_info& m;
  const wire::member_progress& p;
  double silent;  // seconds since its last heartbeat
  const char* health;
};

// Every member's fields; the dashboard charts a member's examples per second.
const metrics::status_table<member_view>& member_fields() {
  using v = const member_view&;
  using t = metrics::metric_type;
  static const metrics::status_table<member_view> table = {
      {"id", t::status_only, "The member's id in the cluster view.", [](v x) { return x.id; }},
      {"name", t::status_only, "The member's name.", [](v x) { return x.m.name; }},
      {"role", t::status_only, "The member's role.", [](v x) { return wire::to_string(x.m.role); }},
      {"index", t::status_only, "The member's index (shards and readers; -1: none).",
       [](v x) { return static_cast<std::int64_t>(x.m.index); }},
      {"endpoint", t::status_only, "Where the member serves.", [](v x) { return x.m.endpoint; }},
      {"examples", t::status_only, "Examples it trained (trainers), handed out (readers) or rows it looked up (shards).",
       [](v x) { return x.p.examples; }, metrics::chart::rate},
      {"finished", t::status_only, "Whether it finished its part of the job.", [](v x) { return x.p.finished; }},
      {"seconds_since_heartbeat", t::status_only, "Seconds since its last heartbeat.", [](v x) { return x.silent; }},
      {"health", t::status_only, "ok; late: no heartbeat for three intervals; failed: it reported an error.",
       [](v x) { return x.health; }},
  };
  return table;
}

const metrics::status_table<member_view>& trainer_member_fields() {
  using v = const member_view&;
  using t = metrics::metric_type;
  using c = metrics::chart;
  static const metrics::status_table<member_view> table = {
      {"sync_rounds", t::status_only, "Sync rounds it took part in.", [](v x) { return x.p.sync_rounds; }},
      {"sync_gap", t::status_only, "Batches between its syncs (mean).", [](v x) { return x.p.sync_gap; }, c::value},
      {"sync_latency_p50_ms", t::status_only, "Median latency of its sync rounds.",
       [](v x) { return x.p.sync_latency_p50_ms; }, c::value},
      {"sync_latency_p99_ms", t::status_only, "99th percentile latency of its sync rounds.",
       [](v x) { return x.p.sync_latency_p99_ms; }},
      {"sync_distance", t::status_only, "Distance of its replica from the central copy at its last sync.",
       [](v x) { return x.p.sync_distance; }, c::value},
      {"sync_bytes", t::status_only, "Bytes its sync rounds sent and received.", [](v x) { return x.p.sync_bytes; },
       c::rate},
  };
  return table;
}

const metrics::status_table<member_view>& shard_member_fields() {
  using v = const member_view&;
  using t = metrics::metric_type;
  static const metrics::status_table<member_view> table = {
      {"rows", t::status_only, "Embedding rows it holds.", [](v x) { return x.p.rows; }, metrics::chart::value},
      {"row_bytes", t::status_only, "Bytes of the embedding rows it holds.", [](v x) { return x.p.row_bytes; }},
      {"rows_looked_up", t::status_only, "Rows it looked up.", [](v x) { return x.p.examples; }},
  };
  return table;
}

const metrics::status_table<member_view>& reader_member_fields() {
  using v = const member_view&;
  using t = metrics::metric_type;
  static const metrics::status_table<member_view> table = {
      {"bytes_done", t::status_only, "Bytes of its input read in this pass.", [](v x) { return x.p.bytes_done; }},
      {"bytes_total", t::status_only, "Bytes of its input.", [](v x) { return x.p.bytes_total; }},
  };
  return table;
}

// The fields of a member of `role` beyond every member's: null for a role with none.
const metrics::status_table<member_view>* role_member_fields(wire::role role) {
  switch (role) {
    case wire::role::trainer: return &trainer_member_fields();
    case wire::role::shard: return &shard_member_fields();
    case wire::role::reader: return &reader_member_fields();
    default: return nullptr;
  }
}

std::string member_status(const coordinator_state& st, std::uint64_t id, const member_info& m,
                          clock_type::time_point now) {
  const auto& p = m.progress;
  const double silent = seconds_between(m.last_seen, now);
  const char* health = !p.error.empty() ? "failed" : silent > 3 * st.options.job.heartbeat_interval ? "late" : "ok";
  const member_view view{id, m, p, silent, health};
  json_object o;
  metrics::add_fields(o, member_fields(), view);
  if (const auto* more = role_member_fields(m.role)) metrics::add_fields(o, *more, view);
  return o.str();
}

// The newest validation score (between epochs or every --eval-every examples), if any.
const metrics::summary* latest_validation(const coordinator_state& st) {
  if (!st.evaluations.empty()) return &st.evaluations.back().validation;
  if (!st.epoch_scores.empty()) return &st.epoch_scores.back().validation;
  return nullptr;
}

// What the coordinator's status reads its fields from: its state and the numbers status_json
// derives from it once.
struct coordinator_view {
  const coordinator_state& st;
  const totals& t;
  clock_type::time_point now;
  double train_logloss, base, running, progress, eta;
  const metrics::progressive_summary& progressive;  // the job's window (progressive.cpp)
  const metrics::summary* validation;
  int late;
  const std::vector<std::string>& members;  // each member's status, by its table

  double shown(double progressive_metric) const { return progressive.enough ? progressive_metric : std::nan(""); }
};

// The coordinator's status (what `shadowsync status` shows, and the dashboard draws), declared
// once: its JSON key, type and help on /metrics, and how it is read.
const metrics::status_table<coordinator_view>& coordinator_fields() {
  using v = const coordinator_view&;
  using t = metrics::metric_type;
  using c = metrics::chart;
  static const metrics::status_table<coordinator_view> table = metrics::concat<coordinator_view>({
      {
        {"role", t::status_only, "The service's role.", [](v) { return "coordinator"; }},
        // A restart changes it: clients ask again.
        {"incarnation", t::status_only, "This coordinator process's incarnation.",
         [](v x) { return x.st.options.incarnation; }},
        {"state", t::status_only, "The job's state: waiting, running, draining, done or failed.",
         [](v x) { return wire::to_string(x.st.state); }},
        // The state as numbers, for Prometheus rules (running: training, not draining or scoring).
        {"job_running", t::gauge, "1 while the job trains (not waiting, draining, done or failed).",
         [](v x) { return x.st.state == wire::job_state::running; }},
        {"job_done", t::gauge, "1 once the job finished.", [](v x) { return x.st.state == wire::job_state::done; }},
        {"job_failed", t::gauge, "1 once the job failed.", [](v x) { return x.st.state == wire::job_state::failed; }},
        {"error", t::status_only, "Why the job failed, if it did.", [](v x) { return x.st.failure; }},
        {"follow_ended", t::status_only, "A following job (--follow): why its input ended; empty while followed.",
         [](v x) { return x.st.input_closed_why; }},
        {"examples", t::counter, "Examples trained (trainers: this one; coordinator: the job).",
         [](v x) { return x.t.examples; }, c::value_and_rate},
        {"examples_committed", t::counter, "Examples trained and acknowledged, each once.",
         [](v x) { return x.t.committed; }, c::value},
        {"examples_read", t::counter, "Examples handed out by the readers.", [](v x) { return x.t.sent; }},
        // Over the last --progress-interval.
        {"examples_per_sec", t::gauge, "Training throughput of the job.", [](v x) { return x.st.recent_eps; }},
        {"trainers", t::gauge, "Trainers registered.", [](v x) { return x.t.trainers; }, c::value},
        {"bad_rows", t::counter, "Malformed rows skipped.", [](v x) { return x.t.bad_rows; }},
        {"job_id", t::status_only, "The job's id.", [](v x) { return x.st.job_id; }},
        {"resumed_from_snapshot", t::gauge, "Snapshot the job resumed from (0: none).",
         [](v x) { return x.st.resumed_from; }},
        // While a resumed job moves its rows to another shard count, both counts' shards take part.
        {"shards", t::gauge, "Shards in the job (while it takes another shard count: those of both).",
         [](v x) { return x.st.shard_slots.size(); }},
        {"reshaping", t::status_only, "A change of the shard count under way (a job resumed on another, before it "
                                      "trains; or shadowsync reshard): what it does (\"2 -> 3 shards: moving "
                                      "rows\"); empty otherwise.",
         [](v x) { return reshape_status(x.st); }},
        {"reshard_error", t::status_only, "Why the last shadowsync reshard was refused or rolled back (empty: none).",
         [](v x) { return x.st.last_reshape_error; }},
      },
      metrics::counter_fields<coordinator_counters, coordinator_view>(
          [](v x) -> const coordinator_counters& { return x.st.counters; }),
      {
        {"last_snapshot", t::gauge, "Id of the newest complete snapshot.", [](v x) { return x.st.last_snapshot_id; }},
        {"last_snapshot_seconds", t::gauge, "Seconds the newest snapshot took.",
         [](v x) { return x.st.last_snapshot_seconds; }},
        {"last_snapshot_rows", t::gauge, "Embedding rows in the newest snapshot.",
         [](v x) { return x.st.last_snapshot_rows; }},
        {"last_snapshot_bytes", t::gauge, "Bytes of the newest snapshot.", [](v x) { return x.st.last_snapshot_bytes; }},
        {"seconds_since_snapshot", t::gauge, "Age of the newest snapshot (-1: none yet).",
         [](v x) { return x.st.last_snapshot_id > 0 ? seconds_between(x.st.last_snapshot_at, x.now) : -1.0; }, c::known},
        {"snapshot_interval", t::gauge, "Seconds between periodic snapshots (0: none).",
         [](v x) { return x.st.options.snapshots ? x.st.options.snapshot_interval : 0.0; }},
        {"last_publication", t::gauge, "Sequence number of the newest publication written (0: none).",
         [](v x) { return x.st.last_publication ? x.st.last_publication->sequence : 0; }},
        {"last_publication_examples", t::gauge, "Examples trained when the newest publication was taken.",
         [](v x) { return x.st.last_publication ? x.st.last_publication->examples_trained : 0; }},
        {"last_publication_seconds", t::gauge, "Seconds the newest publication took to write.",
         [](v x) { return x.st.last_publication ? x.st.last_publication->seconds : 0.0; }, c::value},
        {"publish_error", t::status_only, "Why the newest publication failed (empty once one is written).",
         [](v x) { return x.st.publish_error; }},
        // Progressive evaluation: each example scored before it was trained on, over the job's
        // window; null (NaN) while the window holds too few examples to mean anything.
        {"progressive_ne", t::gauge, "Normalized entropy over the progressive window (each example scored before "
                                     "training on it).",
         [](v x) { return x.shown(x.progressive.metrics.ne); }, c::value},
        {"progressive_auc", t::gauge, "AUC over the progressive window (from prediction histograms, within "
                                      "progressive_auc_error_bound).",
         [](v x) { return x.shown(x.progressive.metrics.auc); }, c::value},
        {"progressive_calibration", t::gauge, "Mean prediction over click rate in the progressive window.",
         [](v x) { return x.shown(x.progressive.metrics.calibration); }, c::value},
        {"progressive_logloss", t::status_only, "Log loss over the progressive window.",
         [](v x) { return x.shown(x.progressive.metrics.log_loss); }, c::value},
        {"progressive_auc_error_bound", t::status_only, "Bound on the progressive AUC's distance from the exact AUC.",
         [](v x) { return x.shown(x.progressive.auc_error_bound); }},
        {"progressive_examples", t::gauge, "Examples in the progressive window.",
         [](v x) { return x.progressive.metrics.examples; }},
        {"progressive_seconds", t::status_only, "Seconds from the oldest example in the progressive window to the newest.",
         [](v x) { return x.progressive.seconds; }},
        {"progressive_enough", t::gauge, "1 once the progressive window holds enough examples of each class to report.",
         [](v x) { return x.progressive.enough; }},
        {"train_logloss", t::gauge, "Mean training log loss so far.", [](v x) { return x.train_logloss; }, c::value},
        {"validation_ne", t::status_only, "Normalized entropy of the newest validation score.",
         [](v x) { return x.validation != nullptr ? x.validation->ne : std::nan(""); }, c::value},
        {"validation_logloss", t::status_only, "Log loss of the newest validation score.",
         [](v x) { return x.validation != nullptr ? x.validation->log_loss : std::nan(""); }, c::value},
        {"seconds_running", t::status_only, "Seconds the job has trained.", [](v x) { return x.running; }},
        {"progress", t::status_only, "Share of the current pass over the input read, by bytes.",
         [](v x) { return x.progress; }, c::value},
        {"eta_seconds", t::status_only, "Seconds until the current pass ends, at the rate so far.",
         [](v x) { return x.eta; }},
        {"members_late", t::status_only, "Members with no heartbeat for three heartbeat intervals.",
         [](v x) { return x.late; }, c::value},
        {"view_epoch", t::gauge,
         "Version of the cluster view: one more per change, from the coordinator's start time in Unix microseconds.",
         [](v x) { return x.st.view.epoch; }},
        {"members", t::status_only, "Every member: who it is, its health and its role's numbers.",
         [](v x) { return metrics::raw_json{json_array(x.members)}; }},
        {"result", t::status_only, "The job's result line, once it ended.",
         [](v x) { return x.st.result ? x.st.result->to_json() : std::string(); }},
      },
  });
  return table;
}

}  // namespace

std::string status_json(const coordinator_state& st, clock_type::time_point now) {
  const totals t = sum_up(st);
  std::vector<std::string> members;
  int late = 0;
  for (const auto& [id, m] : st.members) {
    members.push_back(member_status(st, id, m, now));
    if (seconds_between(m.last_seen, now) > 3 * st.options.job.heartbeat_interval) ++late;
  }
  const double base = t.examples > 0 ? static_cast<double>(t.clicks) / static_cast<double>(t.examples) : 0.0;
  const double train_logloss = t.examples > 0 ? t.loss / static_cast<double>(t.examples) : std::nan("");
  const double running = st.running_seen ? seconds_between(st.running_at, st.drained_seen ? st.drained_at : now) : 0.0;
  const double progress = t.bytes_total > 0 ? static_cast<double>(t.bytes_done) / static_cast<double>(t.bytes_total)
                                            : std::nan("");
  const double eta = progress > 0 && st.running_seen ? running * (1 - progress) / progress : std::nan("");
  const metrics::summary* validation = latest_validation(st);
  const auto progressive = job_progressive(st, now, base);
  return metrics::to_json(coordinator_fields(), coordinator_view{st, t, now, train_logloss, base, running, progress, eta,
                                                                 progressive, validation, late, members});
}


}  // namespace ss::actors::coordinator_detail

namespace ss::actors {

metrics::field_list coordinator_field_list() { return metrics::describe(coordinator_detail::coordinator_fields()); }

metrics::field_list member_field_list() { return metrics::describe(coordinator_detail::member_fields()); }

metrics::field_list member_field_list(std::string_view role) {
  for (auto r : {wire::role::trainer, wire::role::shard, wire::role::reader})
    if (role == wire::to_string(r)) return metrics::describe(*coordinator_detail::role_member_fields(r));
  return {};
}

}  // namespace ss::actors
