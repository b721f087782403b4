// The sync coordinator's actors: membership (registration, heartbeats, timeouts, the cluster
// view), the job's life cycle (waiting -> running -> draining -> done, or failed), cluster
// progress and status, the central dense copy, cluster snapshots and resuming from them, and the
// final evaluation on the test files. Its messages: coordinator_actor in actors.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ss/actors/actors.hpp"
#include "ss/core/job/job_report.hpp"
#include "ss/core/job/job_options.hpp"
#include "ss/core/job/snapshot.hpp"
#include "ss/core/metrics/history.hpp"

namespace ss::actors {

struct coordinator_options {
  std::string name = "coordinator";
  job::job_options job;
  bool detached_evaluator = true;  // false on the deterministic test scheduler
  // Called with each progress line and with the final human summary (the service prints them).
  std::function<void(const std::string&)> on_progress;
  // Called once with the job's result (its summary() and to_json() are what the service prints);
  // `preface` is a line to print before them, or "".
  std::function<void(const job::job_report& report, const std::string& preface)> on_result;
  // Slice 0 of the sync state lives in the coordinator's process: the sync server actor and
  // the endpoint trainers reach it at (the coordinator's own).
  sync_server_actor local_sync;
  std::string endpoint;
  std::uint64_t incarnation = 0;  // this process's: slice 0's in the cluster view
  // The job's id: the resumed snapshot's, else a fresh random one (the service draws it).
  std::uint64_t job_id = 0;
  // Cluster snapshots (core/job/snapshot.hpp); none without a store.
  std::shared_ptr<job::snapshot_store> snapshots;
  double snapshot_interval = 60;  // seconds between periodic snapshots; 0 = only on request
  int snapshot_retain = 3;        // complete snapshots kept (and shard checkpoints)
  double snapshot_timeout = 300;  // seconds a snapshot may take before it is abandoned
  // The snapshot the job resumes from (loaded and verified by start_coordinator: the newest valid
  // one in the store), if any; require_resume makes its absence an error (--resume).
  std::optional<job::loaded_snapshot> resume;
  bool require_resume = false;
  // The --shards the coordinator was started with, when the job keeps another count (a live reshard
  // changed it: job::shards_to_resume_on); 0: job.shards. Later snapshots record it.
  int shards_flag = 0;
  // A live reshard that switched the members to job.shards (from the snapshot's count) after
  // `resume`, or before any snapshot, and was cut short before the snapshot of the new shape: the
  // coordinator switches the members again and takes that snapshot (job::reshard_switch).
  std::optional<job::reshard_switch> switched;
  // A shard that registers beyond the job's count (an orchestrator scaled the shards up) makes the
  // job grow to include it, as `shadowsync reshard --shards index+1` would; off: it is refused.
  bool grow_shards = false;
  // A finished job's stored result: the coordinator reports it instead of training again.
  std::optional<job::job_report> finished_result;
  // Where to write the final model (a model file: `shadowsync predict` scores with it) when the job
  // ends; "" = none. `shadowsync export` writes one on demand too.
  std::string export_path;
  // Where an export on request may write (job::resolve_export_request): relative paths land here,
  // absolute ones must lie inside it, never inside `protected_dirs` (the job's state). "" = none.
  std::string export_dir;
  std::vector<std::string> protected_dirs;
  // Delta publishing for serving (publisher.hpp, docs/online.md): every publish_interval seconds
  // while the job trains, and once at its end, the model goes to publish_dir; "" = none.
  std::string publish_dir;
  double publish_interval = 1;
  int publish_base_every = 100;
  int publish_retain = 50;
  // exact (the rows' --row-precision), or one of publish::parse_row_encoding's words
  std::string publish_rows = "exact";
  // Member ids start here. A restarted coordinator must not reuse its predecessor's ids, or a
  // member still heartbeating under an old id would be taken for another (the service draws it).
  std::uint64_t first_member_id = 1;
  // Wall-clock milliseconds since the epoch, for snapshot timestamps (injected for tests).
  std::function<std::int64_t()> wall_clock_ms;
  // The status recorded every history_interval seconds (of the actor clock) from the start, for
  // the dashboard (/api/history); none when null. Shared: the ops endpoint's thread reads it.
  std::shared_ptr<metrics::job_history> history;
  double history_interval = 1;
};

// Spawns the coordinator and routes the requests it serves to it through `gateway`.
coordinator_actor spawn_coordinator(caf::actor_system& sys, const gateway_actor& gateway, coordinator_options options);

}  // namespace ss::actors
