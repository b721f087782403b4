#include "ss/core/metrics/status_metrics.hpp"

#include <string>

namespace ss::metrics {

const std::vector<status_metric>& status_metrics() {
  using t = metric_type;
  static const std::vector<status_metric> list = {
      // coordinator
      {"service", "job_running", t::gauge, "1 while the job trains (not waiting, draining, done or failed)."},
      {"service", "job_done", t::gauge, "1 once the job finished."},
      {"service", "job_failed", t::gauge, "1 once the job failed."},
      {"service", "examples", t::counter, "Examples trained (trainers: this one; coordinator: the job)."},
      {"service", "examples_committed", t::counter, "Examples trained and acknowledged, each once."},
      {"service", "examples_read", t::counter, "Examples handed out by the readers."},
      {"service", "examples_per_sec", t::gauge, "Training throughput of the job."},
      {"service", "window_ne", t::gauge, "Normalized entropy over the recent window of training examples."},
      {"service", "trainers", t::gauge, "Trainers registered."},
      {"service", "bad_rows", t::counter, "Malformed rows skipped."},
      {"service", "snapshots", t::counter, "Cluster snapshots taken."},
      {"service", "snapshots_failed", t::counter, "Cluster snapshots that failed."},
      {"service", "last_snapshot", t::gauge, "Id of the newest complete snapshot."},
      {"service", "last_snapshot_seconds", t::gauge, "Seconds the newest snapshot took."},
      {"service", "last_snapshot_rows", t::gauge, "Embedding rows in the newest snapshot."},
      {"service", "last_snapshot_bytes", t::gauge, "Bytes of the newest snapshot."},
      {"service", "seconds_since_snapshot", t::gauge, "Age of the newest snapshot (-1: none yet)."},
      {"service", "snapshot_interval", t::gauge, "Seconds between periodic snapshots (0: none)."},
      {"service", "resumed_from_snapshot", t::gauge, "Snapshot the job resumed from (0: none)."},
      {"service", "view_epoch", t::gauge, "Version of the cluster view."},
      // shard
      {"service", "rows", t::gauge, "Embedding rows held."},
      {"service", "bytes", t::gauge, "Bytes of embedding rows held."},
      {"service", "tables", t::gauge, "Embedding tables with rows here."},
      {"service", "lookups", t::counter, "Lookup requests served."},
      {"service", "rows_looked_up", t::counter, "Rows looked up."},
      {"service", "pushes", t::counter, "Gradient pushes applied."},
      {"service", "rows_pushed", t::counter, "Rows updated by pushes."},
      {"service", "refused", t::counter, "Requests refused."},
      {"service", "table_full_refusals", t::counter, "New rows refused because a table is full."},
      {"service", "busy_seconds", t::counter, "Seconds the shard's workers were busy."},
      {"service", "persisted", t::gauge, "1 when rows are written to storage."},
      {"service", "storage_memory_bytes", t::gauge, "Memory the storage engine uses."},
      {"service", "storage_memory_bound_bytes", t::gauge, "The storage engine's memory bound."},
      {"service", "dirty_rows", t::gauge, "Rows changed since they were last written."},
      {"service", "flushes", t::counter, "Writes of changed rows to storage."},
      {"service", "rows_flushed", t::counter, "Rows written to storage."},
      {"service", "flush_seconds", t::counter, "Seconds spent writing rows to storage."},
      {"service", "flush_errors", t::counter, "Writes to storage that failed."},
      {"service", "checkpoints", t::counter, "Storage checkpoints taken."},
      {"service", "last_checkpoint_seconds", t::gauge, "Seconds the newest checkpoint took."},
      {"service", "rows_restored", t::gauge, "Rows restored from storage at start."},
      {"service", "max_rows_in_memory", t::gauge, "Rows the memory budget keeps in RAM (0: no budget; rows then counts those in RAM)."},
      {"service", "rows_stored", t::gauge, "Rows in the shard's storage, with a memory budget (every row)."},
      {"service", "hits", t::counter, "Row lookups and pushes that found the row in RAM (memory budget)."},
      {"service", "misses", t::counter, "Row lookups and pushes that read the row from storage (memory budget)."},
      {"service", "hit_rate", t::gauge, "Hits over hits and misses since the shard started (memory budget)."},
      {"service", "rows_loaded", t::counter, "Rows read back from storage into RAM (memory budget)."},
      {"service", "evictions", t::counter, "Rows evicted from RAM to stay within the memory budget."},
      {"service", "over_budget", t::counter, "New rows let in over the memory budget (nothing evictable yet)."},
      {"service", "storage_reads", t::counter, "Batched row reads from storage (a memory budget's misses)."},
      {"service", "storage_rows_read", t::counter, "Rows those reads found in storage."},
      {"service", "storage_bytes_read", t::counter, "Bytes those reads returned."},
      {"service", "storage_rows_written", t::counter, "Rows written to storage."},
      {"service", "storage_bytes_written", t::counter, "Bytes of rows written to storage."},
      {"service", "storage_read_p50_ms", t::gauge, "Median latency of a batched read from storage."},
      {"service", "storage_read_p99_ms", t::gauge, "99th percentile latency of a batched read from storage."},
      {"service", "admit_after", t::gauge, "Lookups an id needs before it gets a row (--admit-after; 1: no admission)."},
      {"service", "admission_bytes", t::gauge, "Bytes of the admission sketch."},
      {"service", "admissions", t::counter, "Rows made for ids that passed admission."},
      {"service", "admission_refused", t::counter, "Lookups served initial values: the id is not admitted yet."},
      {"service", "gradients_dropped", t::counter, "Row gradients dropped: the id is not admitted yet."},
      // reader
      {"service", "batches_sent", t::counter, "Batches handed to trainers."},
      {"service", "examples_sent", t::counter, "Examples handed to trainers."},
      {"service", "batches_acked", t::counter, "Batches trainers acknowledged."},
      {"service", "examples_acked", t::counter, "Examples trainers acknowledged."},
      {"service", "batches_requeued", t::counter, "Batches handed out again (their trainer went away)."},
      {"service", "examples_requeued", t::counter, "Examples handed out again."},
      {"service", "in_flight", t::gauge, "Batches handed out and not yet acknowledged."},
      {"service", "rows_read", t::counter, "Rows read from the input files."},
      {"service", "bytes_done", t::gauge, "Input bytes read in this epoch."},
      {"service", "bytes_total", t::gauge, "Input bytes of an epoch."},
      {"service", "epoch", t::gauge, "Epoch being read (0-based)."},
      {"service", "committed_examples", t::gauge, "Examples committed at the reader's position."},
      // trainer
      {"service", "workers", t::gauge, "Hogwild workers."},
      {"service", "batches", t::counter, "Batches trained."},
      {"service", "train_logloss", t::gauge, "Mean training log loss so far."},
      {"service", "compute_seconds", t::counter, "Worker-seconds computing."},
      {"service", "wait_seconds", t::counter, "Worker-seconds waiting for lookups or batches."},
      {"service", "lookup_p50_ms", t::gauge, "Median shard lookup latency."},
      {"service", "lookup_p99_ms", t::gauge, "99th percentile shard lookup latency."},
      {"service", "push_p50_ms", t::gauge, "Median gradient push latency."},
      {"service", "push_p99_ms", t::gauge, "99th percentile gradient push latency."},
      {"service", "sync_rounds", t::counter, "Dense sync rounds completed."},
      {"service", "sync_gap", t::gauge, "Batches trained between sync rounds, mean."},
      {"service", "sync_latency_p50_ms", t::gauge, "Median sync round latency."},
      {"service", "sync_latency_p99_ms", t::gauge, "99th percentile sync round latency."},
      {"service", "sync_distance", t::gauge, "Relative distance of the replica to the central model, last round."},
      {"service", "sync_wait_seconds", t::counter, "Worker-seconds stopped for foreground syncs."},
      {"service", "sync_bytes", t::counter, "Bytes sent and received by sync rounds (trainer)."},
      {"service", "finished", t::gauge, "1 once this member finished its part of the job."},
      // sync server
      {"service", "slice", t::gauge, "Slice of the dense parameters served."},
      {"service", "parameters", t::gauge, "Dense parameters in the slice."},
      {"service", "exchanges", t::counter, "Sync requests answered."},
      {"service", "rounds", t::counter, "Sync rounds closed."},
      {"service", "bytes_in", t::counter, "Bytes of sync requests received (sync server)."},
      {"service", "bytes_out", t::counter, "Bytes of sync replies sent (sync server)."},
      {"service", "mirror_misses", t::counter, "Quantized sync requests against a mirror not held (sync server)."},
      {"service", "live_trainers", t::gauge, "Trainers taking part in rounds."},
      // every service: its gateway and transport
      {"transport", "frames_decoded", t::counter, "Frames decoded."},
      {"transport", "frames_refused", t::counter, "Frames refused (garbage, oversized, undecodable)."},
      {"transport", "version_mismatches", t::counter, "Frames of another protocol version."},
      {"transport", "requests_served", t::counter, "Requests answered."},
      {"transport", "requests_unrouted", t::counter, "Requests of a kind this service does not serve."},
      {"transport", "requests_in_flight", t::gauge, "Requests being served."},
      {"transport", "requests_shed", t::counter, "Requests refused at the in-flight bound."},
      {"transport", "control_served", t::counter, "Control requests answered."},
      {"transport", "control_refused", t::counter, "Control requests refused (not an admin key)."},
      {"transport", "max_requests_in_flight", t::gauge, "The in-flight bound."},
      {"transport", "calls", t::counter, "Requests sent to peers."},
      {"transport", "call_timeouts", t::counter, "Requests to peers that timed out."},
      {"transport", "late_replies", t::counter, "Replies that came after their request timed out."},
      {"transport", "send_failures", t::counter, "Frames that could not be sent."},
      {"transport", "pending_calls", t::gauge, "Requests to peers awaiting a reply."},
      {"transport", "frames_in", t::counter, "Frames received."},
      {"transport", "frames_out", t::counter, "Frames sent."},
      {"transport", "bytes_in", t::counter, "Bytes received."},
      {"transport", "bytes_out", t::counter, "Bytes sent."},
      {"transport", "transport_rejected", t::counter, "Frames the transport refused (queue bounds)."},
      {"transport", "queue_depth", t::gauge, "Frames queued for sending."},
      {"transport", "queue_high_water", t::gauge, "Most frames queued at once."},
      {"transport", "auth_refused", t::counter, "Connections refused by CURVE authentication."},
      {"transport", "handshakes_failed", t::counter, "Connections that failed their handshake."},
      {"transport", "connections_open", t::gauge, "Connections open."},
      {"transport", "connections_refused", t::counter, "Connections refused at the connection bound."},
      {"transport", "max_connections", t::gauge, "The connection bound."},
      {"transport", "links_refused", t::counter, "Links to peers refused."},
      {"transport", "max_frame_bytes", t::gauge, "The largest frame accepted."},
  };
  return list;
}

void append_status_metrics(prometheus_text& out, const json_value& status, const prometheus_labels& labels) {
  for (const auto& m : status_metrics()) {
    const json_value& v = status[m.section][m.field];
    if (v.type() != json_value::kind::number && v.type() != json_value::kind::boolean) continue;
    const double value = v.type() == json_value::kind::boolean ? (v.boolean() ? 1.0 : 0.0) : v.number();
    const std::string name = std::string("shadowsync_") + m.section + "_" + m.field;
    if (m.type == metric_type::counter) out.counter(name, m.help, value, labels);
    else out.gauge(name, m.help, value, labels);
  }
}

}  // namespace ss::metrics
