// The trainer's actors. One dense replica (train::dense_model) is shared by `workers` Hogwild
// worker actors; a feeder pulls batches from every reader with bounded credits and hands them
// to workers; each worker looks up its batch's rows on the shards (one request per shard, with
// the next batch's lookups in flight while it computes), trains, pushes the row gradients, and
// acks the batch to its reader once the shards applied them. The trainer actor ties it
// together: it follows the cluster view (reader and shard endpoints), starts from the central
// dense copy, and reports its replica when the input is exhausted.
#pragma once

#include <caf/fwd.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ss/actors/actors.hpp"
#include "ss/core/job/job_options.hpp"
#include "ss/core/metrics/progressive.hpp"
#include "ss/core/optim/lr_schedule.hpp"
#include "ss/core/train/dense_model.hpp"
#include "ss/wire/messages.hpp"

namespace ss::actors {

struct trainer_options {
  std::string name = "trainer";
  int workers = 1;                 // Hogwild worker actors
  bool detached_workers = true;    // own threads (production); false on the test scheduler
  std::uint64_t incarnation = 0;   // this trainer process: names it to readers, sync servers, the coordinator
  std::string coordinator;         // endpoint, for dense_request / dense_report
  // Hint each batch's rows to the shards while it waits for a worker (warm_request), so that a
  // shard with a memory budget reads them from storage ahead of the lookup. A shard that keeps
  // every row in RAM says so, and gets no more hints. Off by default: measured on a machine whose
  // cores the whole job shares, reading ahead cost more than it saved (docs/embeddings.md).
  bool prefetch = false;
  // The learning-rate schedule; a batch's place in the job is its reader's examples before it
  // times the readers (readers go at about the same pace), the same after any restart.
  optim::lr_schedule schedule;
  // The job's row precision: gradients are pushed at it (bf16 and fp16: half the bytes).
  embedding::row_precision row_precision = embedding::row_precision::fp32;
};

// Progress counters shared by the workers and read by the membership agent.
class trainer_progress {
 public:
  // A trained batch: its loss and clicks, and (unless simulated: null) the predictions the
  // training step scored it with before it updated the model, for progressive evaluation.
  void add_batch(std::uint64_t examples, double loss_sum, std::uint64_t clicks, const float* predictions = nullptr,
                 const float* labels = nullptr);
  // The job's progressive window (--progressive-window...); starts it afresh.
  void set_window(const metrics::window_spec& spec);
  // Everything a heartbeat reports, the progressive window included.
  wire::member_progress snapshot() const;
  void set_finished() { finished_.store(true); }
  bool finished() const { return finished_.load(); }
  // The newest view the trainer applied (a live reshard waits for it).
  void set_view_epoch(std::uint64_t epoch) { view_epoch_.store(epoch); }
  void set_error(std::string e);
  std::string error() const;

  // Where the workers' time goes: computing, or waiting (for lookups or batches); and how long
  // shard lookups and pushes take from request to answer.
  void add_compute(std::chrono::nanoseconds d);
  void add_wait(std::chrono::nanoseconds d);
  void add_lookup_latency(std::chrono::nanoseconds d);
  void add_push_latency(std::chrono::nanoseconds d);
  // Sync: one completed round of slice k, the batches trained since that slice's previous one and
  // its replica's distance from the sync server's model. A trainer's sync rounds are those every
  // slice completed (the fewest of any slice); its sync gap is the mean over the slices' rounds.
  void add_sync_round(std::uint32_t slice, std::chrono::nanoseconds latency, std::uint64_t gap, double distance);
  void set_sync_slices(std::uint32_t slices);
  std::vector<std::uint64_t> slice_rounds() const;  // per slice
  void add_sync_wait(std::chrono::nanoseconds worker_time);
  void add_sync_bytes(std::uint64_t bytes);  // sent or received by a sync round
  std::uint64_t batches() const;

  struct timing {
    double compute_seconds = 0, wait_seconds = 0;
    std::uint64_t lookups = 0, pushes = 0;
    double lookup_p50_ms = 0, lookup_p99_ms = 0, push_p50_ms = 0, push_p99_ms = 0;
  };
  timing timings() const;

 private:
  mutable std::mutex mu_;
  std::uint64_t examples_ = 0, batches_ = 0, clicks_ = 0;
  std::chrono::steady_clock::time_point first_batch_, last_batch_;
  double loss_sum_ = 0;
  mutable metrics::progressive_window window_;  // slices expire as it is read
  std::atomic<bool> finished_{false};
  std::atomic<std::uint64_t> view_epoch_{0};
  std::string error_;
  // Latency histograms: bucket b counts latencies in [2^b, 2^(b+1)) microseconds.
  static constexpr int buckets = 32;
  std::uint64_t lookup_hist_[buckets] = {};
  std::uint64_t push_hist_[buckets] = {};
  std::int64_t compute_ns_ = 0, wait_ns_ = 0;
  std::uint64_t sync_hist_[buckets] = {};
  std::vector<std::uint64_t> slice_rounds_;  // per slice
  std::vector<double> slice_distance_;       // per slice, its latest round's
  std::uint64_t slice_rounds_sum_ = 0, sync_gap_sum_ = 0;
  std::int64_t sync_wait_ns_ = 0;
  std::uint64_t sync_bytes_ = 0;
};

// Spawns the trainer (feeder, workers) for a registered member. `subscribe_to` is the membership
// agent: the trainer subscribes to its view and state updates.
trainer_actor spawn_trainer(caf::actor_system& sys, const gateway_actor& gateway, const member_agent_actor& member_agent,
                           const job::job_options& job, std::shared_ptr<train::dense_model> model,
                           std::vector<std::uint64_t> buckets, const trainer_options& options,
                           std::shared_ptr<trainer_progress> progress);

}  // namespace ss::actors
