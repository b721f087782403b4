#include "ss/core/job/job_report.hpp"

#include <cstdarg>
#include <cstdio>

#include "ss/core/json.hpp"
#include "ss/core/json_value.hpp"
#include "ss/core/job/progressive_options.hpp"

namespace ss::job {
namespace {

metrics::summary validation_of(const json_value& v) {
  metrics::summary m;
  m.log_loss = v["validation_logloss"].number(metrics::summary::nan);
  m.ne = v["validation_ne"].number(metrics::summary::nan);
  m.auc = v["validation_auc"].number(metrics::summary::nan);
  return m;
}

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

const char* plural(std::uint64_t n) { return n == 1 ? "" : "s"; }

}  // namespace

int job_report::exit_status() const {
  if (!ok) return 1;
  return snapshot_error.empty() && publish_error.empty() ? 0 : 3;
}

std::string job_report::to_json() const {
  std::vector<std::string> scores, trainer_lines;
  for (const auto& e : epoch_scores) {
    json_object score;
    metrics::add_validation_fields(score.add("epoch", e.epoch), e.validation);
    scores.push_back(score.str());
  }
  for (const auto& t : per_trainer)
    trainer_lines.push_back(json_object()
                           .add("name", t.name)
                           .add("examples", t.examples)
                           .add("seconds", t.seconds)
                           .add("sync_rounds", t.sync_rounds)
                           .add("sync_gap", t.sync_gap)
                           .add("sync_latency_p50_ms", t.sync_latency_p50_ms)
                           .add("sync_latency_p99_ms", t.sync_latency_p99_ms)
                           .add("sync_distance", t.sync_distance)
                           .add("sync_wait_seconds", t.sync_wait_seconds)
                           .add("sync_bytes", t.sync_bytes)
                           .add("left", t.left)
                           .str());
  json_object j;
  j.add("command", "cluster")
      .add("ok", ok)
      .add("error", error)
      .add("examples", examples)
      .add("examples_committed", examples_committed)
      .add("examples_read", examples_read)
      .add("epochs", epochs)
      .add("epochs_run", epochs_run)
      .add("best_epoch", best_epoch)
      .add("stopped_early", stopped_early)
      .add("follow_ended", follow_ended)
      .add_raw("epoch_scores", json_array(scores))
      .add("validation_bad_rows", validation_bad_rows)
      .add_raw("evaluations", evaluations_json(evaluations))
      .add("seconds", seconds)
      .add("examples_per_sec", examples_per_sec())
      .add("trainers", trainers)
      .add("shards", shards)
      .add("readers", readers)
      .add("batch_size", batch_size)
      .add("train_logloss", train_logloss)
      .add("train_ne", train_ne)
      .add("train_click_rate", train_click_rate)
      .add("progressive_window", progressive_window)
      .add("progressive_window_seconds", progressive_window_seconds);
  metrics::add_progressive_fields(j, progressive).add("tested", tested);
  return metrics::add_test_fields(j, test)
      .add("bad_rows", bad_rows)
      .add("sync", sync)
      .add("sync_servers", sync_servers)
      .add("simulated", simulate_step_ms > 0)
      .add("simulate_step_ms", simulate_step_ms)
      .add("sync_rounds", sync_rounds)
      .add("sync_gap", sync_gap)
      .add("sync_latency_p50_ms", sync_latency_p50_ms)
      .add("sync_distance", sync_distance)
      .add("sync_wait_seconds", sync_wait_seconds)
      .add("sync_quantize", sync_quantize)
      .add("sync_bytes", sync_bytes)
      .add("job_id", job_id)
      .add("resumed_from_snapshot", resumed_from_snapshot)
      .add("snapshots", snapshots)
      .add("snapshots_failed", snapshots_failed)
      .add("last_snapshot_id", last_snapshot_id)
      .add("snapshot_error", snapshot_error)
      .add("last_snapshot_seconds", last_snapshot_seconds)
      .add("export_path", export_path)
      .add("export_rows", export_rows)
      .add("export_bytes", export_bytes)
      .add("export_error", export_error)
      .add("publish_dir", publish_dir)
      .add("publications", publications)
      .add("publications_failed", publications_failed)
      .add("last_publication", last_publication)
      .add("publish_error", publish_error)
      .add_raw("trainer_stats", json_array(trainer_lines))
      .str();
}

result<job_report> job_report::from_json(std::string_view json) {
  auto doc = json_value::parse(json);
  if (!doc.is_ok()) return doc.error().with_context("a job result line");
  const json_value& j = *doc;
  if (j["command"].string() != "cluster")
    return status(errc::parse_error, "a job result line: not a cluster result (\"command\" is '" +
                                         j["command"].string() + "')");
  job_report r;
  r.ok = j["ok"].boolean();
  r.error = j["error"].string();
  r.examples = j["examples"].uint64();
  r.examples_committed = j["examples_committed"].uint64();
  r.examples_read = j["examples_read"].uint64();
  r.epochs = static_cast<int>(j["epochs"].int64(1));
  r.epochs_run = static_cast<int>(j["epochs_run"].int64(1));
  r.best_epoch = static_cast<int>(j["best_epoch"].int64());
  r.stopped_early = j["stopped_early"].boolean();
  r.follow_ended = j["follow_ended"].string();
  for (const auto& e : j["epoch_scores"].items())
    r.epoch_scores.push_back({static_cast<int>(e["epoch"].int64()), validation_of(e)});
  r.validation_bad_rows = j["validation_bad_rows"].uint64();
  for (const auto& e : j["evaluations"].items())
    r.evaluations.push_back({static_cast<int>(e["epoch"].int64()), e["examples"].uint64(), validation_of(e)});
  r.seconds = j["seconds"].number();
  r.shards = static_cast<int>(j["shards"].int64());
  r.readers = static_cast<int>(j["readers"].int64());
  r.batch_size = static_cast<int>(j["batch_size"].int64());
  r.train_logloss = j["train_logloss"].number(metrics::summary::nan);
  r.train_ne = j["train_ne"].number(metrics::summary::nan);
  r.train_click_rate = j["train_click_rate"].number(metrics::summary::nan);
  r.progressive_window = j["progressive_window"].uint64();
  r.progressive_window_seconds = j["progressive_window_seconds"].number();
  auto& p = r.progressive;
  p.metrics.examples = j["progressive_examples"].uint64();
  p.metrics.log_loss = j["progressive_logloss"].number(metrics::summary::nan);
  p.metrics.ne = j["progressive_ne"].number(metrics::summary::nan);
  p.metrics.auc = j["progressive_auc"].number(metrics::summary::nan);
  p.metrics.calibration = j["progressive_calibration"].number(metrics::summary::nan);
  p.auc_error_bound = j["progressive_auc_error_bound"].number(metrics::summary::nan);
  p.seconds = j["progressive_seconds"].number();
  p.enough = j["progressive_enough"].boolean();
  r.test.examples = j["test_examples"].uint64();
  r.tested = j["tested"].boolean(r.test.examples > 0);
  r.test.log_loss = j["test_logloss"].number(metrics::summary::nan);
  r.test.ne = j["test_ne"].number(metrics::summary::nan);
  r.test.auc = j["test_auc"].number(metrics::summary::nan);
  r.test.calibration = j["test_calibration"].number(metrics::summary::nan);
  r.bad_rows = j["bad_rows"].uint64();
  r.sync = j["sync"].string();
  r.sync_servers = static_cast<int>(j["sync_servers"].int64());
  r.simulate_step_ms = j["simulate_step_ms"].number();
  r.sync_rounds = j["sync_rounds"].uint64();
  r.sync_gap = j["sync_gap"].number();
  r.sync_latency_p50_ms = j["sync_latency_p50_ms"].number();
  r.sync_distance = j["sync_distance"].number();
  r.sync_wait_seconds = j["sync_wait_seconds"].number();
  r.sync_quantize = j["sync_quantize"].string("none");
  r.sync_bytes = j["sync_bytes"].uint64();
  r.job_id = j["job_id"].uint64();
  r.resumed_from_snapshot = j["resumed_from_snapshot"].uint64();
  r.snapshots = j["snapshots"].uint64();
  r.snapshots_failed = j["snapshots_failed"].uint64();
  r.last_snapshot_id = j["last_snapshot_id"].uint64();
  r.snapshot_error = j["snapshot_error"].string();
  r.last_snapshot_seconds = j["last_snapshot_seconds"].number();
  r.export_path = j["export_path"].string();
  r.export_rows = j["export_rows"].uint64();
  r.export_bytes = j["export_bytes"].uint64();
  r.export_error = j["export_error"].string();
  r.publish_dir = j["publish_dir"].string();
  r.publications = j["publications"].uint64();
  r.publications_failed = j["publications_failed"].uint64();
  r.last_publication = j["last_publication"].uint64();
  r.publish_error = j["publish_error"].string();
  for (const auto& t : j["trainer_stats"].items()) {
    trainer_stats s;
    s.name = t["name"].string();
    s.examples = t["examples"].uint64();
    s.seconds = t["seconds"].number();
    s.sync_rounds = t["sync_rounds"].uint64();
    s.sync_gap = t["sync_gap"].number();
    s.sync_latency_p50_ms = t["sync_latency_p50_ms"].number();
    s.sync_latency_p99_ms = t["sync_latency_p99_ms"].number();
    s.sync_distance = t["sync_distance"].number();
    s.sync_wait_seconds = t["sync_wait_seconds"].number();
    s.sync_bytes = t["sync_bytes"].uint64();
    s.left = t["left"].boolean();
    r.per_trainer.push_back(std::move(s));
  }
  r.trainers = j["trainers"].uint64(r.per_trainer.size());
  return r;
}

std::string job_report::summary() const {
  std::string out = format("shadowsync cluster: %llu examples in %.1fs (%.0f examples/s) on %llu trainer%s, %d shard%s, "
                           "%d reader%s%s\n",
                           static_cast<unsigned long long>(examples), seconds, examples_per_sec(),
                           static_cast<unsigned long long>(trainers), plural(trainers), shards,
                           plural(static_cast<std::uint64_t>(shards)), readers,
                           plural(static_cast<std::uint64_t>(readers)), ok ? "" : " [FAILED]");
  if (!ok) out += "  error   " + error + "\n";
  out += format("  train   log loss %.5f  NE %.5f (%s)  click rate %.4f\n", train_logloss, train_ne,
                epochs_run == 1 ? "progressive" : "over every epoch; progressive only in the first", train_click_rate);
  if (progressive.metrics.examples > 0 || progressive.enough) {
    job::progressive_options window{progressive_window, progressive_window_seconds};
    out += "  window  " + progressive.to_string() + "; window: " + describe_window(window) +
           (epochs_run == 1 ? "" : " (not progressive after the first epoch: examples seen before)") + "\n";
  }
  for (const auto& e : epoch_scores)
    if (e.epoch == best_epoch)
      out += format("  valid   best epoch %d of %d%s: log loss %.5f  NE %.5f  AUC %.5f\n", best_epoch, epochs_run,
                    stopped_early ? " (stopped early)" : "", e.validation.log_loss, e.validation.ne, e.validation.auc);
  if (tested)
    out += format("  test    %llu examples  log loss %.5f  NE %.5f  AUC %.5f  calibration %.4f%s\n",
                  static_cast<unsigned long long>(test.examples), test.log_loss, test.ne, test.auc, test.calibration,
                  best_epoch > 0 ? (" (the model of epoch " + std::to_string(best_epoch) + ")").c_str() : "");
  if (sync != "none")
    out += format("  sync    %s over %d server%s: %llu rounds, sync gap %.1f batches, round p50 %.2f ms, replica "
                  "distance %.2g, workers stopped %.1f worker-s; %.1f MB moved (%s, %.0f KB per round)\n",
                  sync.c_str(), sync_servers, plural(static_cast<std::uint64_t>(sync_servers)),
                  static_cast<unsigned long long>(sync_rounds), sync_gap, sync_latency_p50_ms, sync_distance,
                  sync_wait_seconds, static_cast<double>(sync_bytes) / 1e6, sync_quantize == "int8" ? "8-bit" : "FP32",
                  sync_rounds > 0 ? static_cast<double>(sync_bytes) / 1e3 / static_cast<double>(sync_rounds) : 0.0);
  if (!follow_ended.empty()) out += "  input   followed until " + follow_ended + "\n";
  if (simulate_step_ms > 0)
    out += format("  SIMULATED compute: every step waited %.1f ms instead of training the model\n", simulate_step_ms);
  out += format("  data    %llu examples committed (trained and acknowledged, each once%s), %llu trainings reported, "
                "%llu bad rows skipped\n",
                static_cast<unsigned long long>(examples_committed),
                epochs_run == 1 ? "" : (" per epoch, " + std::to_string(epochs_run) + " epochs").c_str(),
                static_cast<unsigned long long>(examples), static_cast<unsigned long long>(bad_rows));
  if (snapshots > 0 || resumed_from_snapshot > 0)
    out += format("  state   %llu snapshot%s taken (%llu failed)%s\n", static_cast<unsigned long long>(snapshots),
                  plural(snapshots), static_cast<unsigned long long>(snapshots_failed),
                  resumed_from_snapshot > 0
                      ? (", resumed from snapshot " + std::to_string(resumed_from_snapshot)).c_str()
                      : "");
  if (!snapshot_error.empty())
    out += "  state   the last snapshot FAILED (" + snapshot_error + "): the newest complete one is " +
           (last_snapshot_id > 0 ? "snapshot " + std::to_string(last_snapshot_id) : std::string("none")) +
           "; exit status 3\n";
  if (!export_path.empty())
    out += format("  model   %s: %llu embedding rows, %.1f MB (shadowsync predict --model ...)\n", export_path.c_str(),
                  static_cast<unsigned long long>(export_rows), static_cast<double>(export_bytes) / 1e6);
  else if (!export_error.empty())
    out += "  model   NOT written: " + export_error + "\n";
  if (!publish_dir.empty())
    out += format("  publish %llu publication%s to %s (%llu failed), the newest %llu\n",
                  static_cast<unsigned long long>(publications), plural(publications), publish_dir.c_str(),
                  static_cast<unsigned long long>(publications_failed),
                  static_cast<unsigned long long>(last_publication));
  if (!publish_error.empty())
    out += "  publish the final publication FAILED (" + publish_error + "): serving has an older model; exit status 3\n";
  return out;
}

}  // namespace ss::job
