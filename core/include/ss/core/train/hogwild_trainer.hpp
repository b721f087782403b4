// Single-process training: one reader thread feeds a bounded queue of batches; T worker threads
// train Hogwild-style on one shared dense replica and one set of embedding tables, without
// locks. With T = 1 the run is deterministic for a given seed and input.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "ss/core/clock.hpp"
#include "ss/core/data/example_batch.hpp"
#include "ss/core/embedding/local_embeddings.hpp"
#include "ss/core/metrics/metrics.hpp"
#include "ss/core/metrics/progressive.hpp"
#include "ss/core/optim/lr_schedule.hpp"
#include "ss/core/status.hpp"
#include "ss/core/train/dense_model.hpp"

namespace ss::train {

// Where batches come from. next() is only ever called from one thread at a time.
class batch_source {
 public:
  virtual ~batch_source() = default;
  // Replaces `out` with the next batch: true, or false when the input is exhausted.
  virtual result<bool> next(data::example_batch& out) = 0;
  // Fraction of the input consumed so far in [0, 1], or negative when unknown.
  virtual double fraction_done() const { return -1.0; }
};

struct hogwild_options {
  int threads = 1;                       // Hogwild workers
  std::size_t queue_batches = 0;         // parsed batches waiting; 0 = 2 * threads + 2
  metrics::window_spec window;           // progressive evaluation: the window of progress lines and the result
  double progress_interval_seconds = 5;  // how often on_progress runs; <= 0: never
  std::vector<std::uint64_t> buckets;    // per-table bucket counts; empty = unbounded tables
  const std::atomic<bool>* cancel = nullptr;  // set from outside to stop early (e.g. SIGINT)
  // The learning-rate schedule, at the examples trained before this call (earlier epochs) plus
  // those this call's workers started before each batch.
  optim::lr_schedule schedule;
  std::uint64_t examples_before = 0;
  // Every pause_every examples (when on_pause is set and more input follows) the workers finish
  // what they hold and on_pause runs, with the examples of this call so far and their click rate,
  // while none trains: the place to score a validation set mid-epoch.
  std::uint64_t pause_every = 0;
  std::function<void(std::uint64_t examples, double train_click_rate)> on_pause;
};

struct train_progress {
  std::uint64_t examples = 0;
  double seconds = 0;
  double examples_per_sec = 0;
  double fraction_done = -1;  // negative when the input size is unknown
  double eta_seconds = -1;    // negative when unknown
  double train_click_rate = 0;
  metrics::progressive_summary window;  // progressive, over options.window; NE against train_click_rate
};

struct train_result {
  std::uint64_t examples = 0;
  std::uint64_t batches = 0;
  double seconds = 0;
  double examples_per_sec = 0;
  double train_log_loss = 0;    // progressive: each example scored just before training on it
  double train_click_rate = 0;  // the base rate for NE
  bool cancelled = false;
  metrics::progressive_summary last_window;  // the progressive window as training ended
};

using progress_callback = std::function<void(const train_progress&)>;

// Trains until `source` is exhausted (or cancel is set). Errors from the source or the store stop
// the run and are returned.
result<train_result> train_hogwild(dense_model& model, embedding::local_embeddings& store,
                                   batch_source& source, const hogwild_options& options,
                                   const clock_source& clock, const progress_callback& on_progress);

struct eval_options {
  int threads = 1;
  std::vector<std::uint64_t> buckets;
};

// Scores every example of `source` and returns the metrics, NE against base_click_rate. Never
// creates rows: an id the model has not seen gets the values its row would start with.
result<metrics::summary> evaluate(const dense_model& model, const embedding::local_embeddings& store,
                                  batch_source& source, double base_click_rate,
                                  const eval_options& options);

}  // namespace ss::train
