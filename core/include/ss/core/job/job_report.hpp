// A cluster job's result: built once by the coordinator when the job ends, printed as the human
// summary and the JSON result line, stored with the job's snapshots (a restarted coordinator of a
// finished job reports it again), and read back by clients with from_json(). Nothing decides
// anything by searching the text: `ok`, the snapshot error and the exit status are fields.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ss/core/job/epoch_options.hpp"
#include "ss/core/metrics/metrics.hpp"
#include "ss/core/metrics/progressive.hpp"
#include "ss/core/status.hpp"

namespace ss::job {

// One trainer's share of the job, as its last heartbeat reported it.
struct trainer_stats {
  std::string name;
  std::uint64_t examples = 0;
  double seconds = 0;  // from its first batch to its last
  std::uint64_t sync_rounds = 0;
  double sync_gap = 0;  // batches between rounds, mean
  double sync_latency_p50_ms = 0, sync_latency_p99_ms = 0;
  double sync_distance = 0;      // relative distance of the replica to the central model, last round
  double sync_wait_seconds = 0;  // worker-seconds stopped for foreground syncs
  std::uint64_t sync_bytes = 0;  // sent and received by its sync rounds
  bool left = false;             // it left the job (stopped, dropped or replaced) before the end
};

// The validation metrics of one epoch (--validation).
struct epoch_score {
  int epoch = 0;  // 1-based
  metrics::summary validation;
};

struct job_report {
  bool ok = false;
  std::string error;  // why the job failed; empty when ok
  // Data: trainings reported by trainers, rows committed (trained and acked, each once per
  // epoch), rows handed out by readers.
  std::uint64_t examples = 0, examples_committed = 0, examples_read = 0;
  int epochs = 1, epochs_run = 1, best_epoch = 0;
  bool stopped_early = false;
  // A following job (--follow): why its input ended (stopped, --follow-for, the example limit);
  // empty for a job over fixed files.
  std::string follow_ended;
  std::vector<epoch_score> epoch_scores;
  std::uint64_t validation_bad_rows = 0;
  std::vector<evaluation> evaluations;  // --eval-every
  double seconds = 0;
  std::uint64_t trainers = 0;
  int shards = 0, readers = 0, batch_size = 0;
  double train_logloss = 0, train_ne = 0, train_click_rate = 0;
  // Progressive evaluation (each example scored before it was trained on) over the job's window
  // (--progressive-window, --progressive-window-seconds) as training ended.
  std::uint64_t progressive_window = 0;
  double progressive_window_seconds = 0;
  metrics::progressive_summary progressive;
  bool tested = false;     // the test files were scored (test_* below)
  metrics::summary test;   // of the best epoch's model with --validation, else the final one
  std::uint64_t bad_rows = 0;
  std::string sync;
  int sync_servers = 0;
  double simulate_step_ms = 0;  // > 0: SIMULATED compute, no model was trained
  std::uint64_t sync_rounds = 0;
  double sync_gap = 0, sync_latency_p50_ms = 0, sync_distance = 0, sync_wait_seconds = 0;  // over trainers
  std::string sync_quantize = "none";  // what rounds sent: none (FP32) or int8
  std::uint64_t sync_bytes = 0;        // sent and received by every trainer's sync rounds
  std::uint64_t job_id = 0, resumed_from_snapshot = 0;
  std::uint64_t snapshots = 0, snapshots_failed = 0, last_snapshot_id = 0;
  std::string snapshot_error;  // the last snapshot's failure: the state on disk is older than the job
  double last_snapshot_seconds = 0;
  std::string export_path;  // empty: nothing written
  std::uint64_t export_rows = 0, export_bytes = 0;
  std::string export_error;
  // Delta publishing (--publish-dir): publications written and failed, the newest written, and
  // why the last attempt failed (kept only when the final publication failed: serving then has
  // an older model than the job's).
  std::string publish_dir;  // empty: the job did not publish
  std::uint64_t publications = 0, publications_failed = 0, last_publication = 0;
  std::string publish_error;
  std::vector<trainer_stats> per_trainer;  // "trainer_stats" in the JSON line

  double examples_per_sec() const { return seconds > 0 ? static_cast<double>(examples) / seconds : 0.0; }
  // 0: finished and its last snapshot holds it; 3: finished, but the last snapshot or the final
  // publication failed (what is on disk is older than the job: a full disk); 1: failed.
  int exit_status() const;

  // The JSON result line (one line, no newline); from_json reads it back (missing members keep
  // their defaults, so a line of an older version reads).
  std::string to_json() const;
  static result<job_report> from_json(std::string_view json);
  // The human summary printed before the JSON line: a few lines, each ending in '\n'.
  std::string summary() const;
};

}  // namespace ss::job
