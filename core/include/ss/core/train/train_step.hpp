// One training step on one batch, split at the points where a trainer talks to its embedding
// store: collect the batch's rows (prepare), fetch their values (the caller: locally or from
// shards), compute (forward, backward, in-place dense update, row gradients), push the row
// gradients (the caller). The single-process trainer and the cluster trainer share these.
#pragma once

#include <cstdint>
#include <vector>

#include "ss/core/aligned_buffer.hpp"
#include "ss/core/data/example_batch.hpp"
#include "ss/core/embedding/batch_rows.hpp"
#include "ss/core/model/dlrm.hpp"
#include "ss/core/status.hpp"
#include "ss/core/train/dense_model.hpp"

namespace ss::train {

// A worker's reusable buffers. Not shared between threads.
struct worker_scratch {
  worker_scratch(const model::dlrm_config& config, int max_batch);

  model::dlrm_workspace<float> ws;
  embedding::batch_rows rows;
  aligned_buffer<float> dense_grads;  // only for optimizers that need a materialized gradient
  aligned_buffer<float> padded_dense;  // predict_batch: a short batch's dense inputs, padded
};

// Checks that a batch fits the model (feature counts), so a stray input never indexes out of range.
status check_batch(const model::dlrm_config& config, const data::example_batch& batch);

// Collects the distinct embedding rows of `batch` into scratch.rows (buckets: per-table bucket
// counts, empty = unbounded). The caller then fills scratch.rows.values().
void prepare_rows(const model::dlrm_config& config, const data::example_batch& batch,
                  const std::vector<std::uint64_t>& buckets, worker_scratch& scratch);

// Forward + backward on a prepared batch whose rows are fetched (rows.row_pointers() set).
// Updates the dense parameters in place (Hogwild), leaves the row gradients in rows.grads() and
// the click probabilities in scratch.ws.probs. Returns the batch's mean log loss. The dense
// learning rate is scaled by lr_scale (the schedule's multiplier, lr_schedule.hpp).
double train_batch(dense_model& model, const data::example_batch& batch, embedding::batch_rows& rows,
                   worker_scratch& scratch, float lr_scale = 1.0f);
inline double train_batch(dense_model& model, const data::example_batch& batch, worker_scratch& scratch,
                          float lr_scale = 1.0f) {
  return train_batch(model, batch, scratch.rows, scratch, lr_scale);
}

// The fewest rows a scoring forward pass computes. oneDNN's sgemm takes other kernels for fewer
// rows (below 16 on AVX-512), whose sums round differently, so a row alone would score a few ulps
// off the same row among many. Padding a short batch with zero rows makes a row's probability the
// same bits whatever batch it comes in: predict, evaluate, the cluster's evaluator and serve agree.
inline constexpr int min_scoring_rows = 32;

// Forward only: click probabilities in scratch.ws.probs (the first batch.size() of them). A batch
// of fewer than min_scoring_rows examples is computed padded to that many.
void predict_batch(const dense_model& model, const data::example_batch& batch, const embedding::batch_rows& rows,
                   worker_scratch& scratch);
inline void predict_batch(const dense_model& model, const data::example_batch& batch, worker_scratch& scratch) {
  predict_batch(model, batch, scratch.rows, scratch);
}

}  // namespace ss::train
