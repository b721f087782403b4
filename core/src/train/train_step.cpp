#include "ss/core/train/train_step.hpp"

#include <algorithm>
#include <string>

namespace ss::train {

worker_scratch::worker_scratch(const model::dlrm_config& config, int max_batch) : ws(config, max_batch) {}

status check_batch(const model::dlrm_config& config, const data::example_batch& batch) {
  if (batch.num_dense != config.num_dense || batch.num_sparse != config.num_sparse)
    return {errc::invalid_argument, "batch has " + std::to_string(batch.num_dense) + " dense and " +
                                        std::to_string(batch.num_sparse) +
                                        " categorical features, the model expects " +
                                        std::to_string(config.num_dense) + " and " +
                                        std::to_string(config.num_sparse)};
  const std::size_t n = batch.size();
  if (batch.dense.size() != n * batch.num_dense || batch.offsets.size() != n * batch.num_sparse + 1 ||
      batch.offsets.back() != batch.ids.size())
    return {errc::invalid_argument, "batch arrays are inconsistent with its size"};
  for (std::size_t i = 1; i < batch.offsets.size(); ++i)
    if (batch.offsets[i] < batch.offsets[i - 1])
      return {errc::invalid_argument, "batch offsets decrease at " + std::to_string(i)};
  return status::ok();
}

namespace {
// A stateful optimizer's update of one layer, called by the backward pass as soon as that layer's
// gradient is in `grads`.
struct layer_update {
  const optim::dense_optimizer* opt;
  float* params;
  float* state;
  const float* grads;
  std::size_t n;
  std::uint64_t step;
  float lr_scale;

  static void run(void* self, std::size_t offset, std::size_t count) {
    const auto& u = *static_cast<const layer_update*>(self);
    u.opt->apply_range(u.params, u.state, u.grads, u.n, offset, count, u.step, u.lr_scale);
  }
};

void ensure_capacity(const model::dlrm_config& config, int batch, worker_scratch& scratch) {
  if (batch > scratch.ws.capacity) scratch.ws.reserve(config, batch);
}
}  // namespace

void prepare_rows(const model::dlrm_config& config, const data::example_batch& batch,
                  const std::vector<std::uint64_t>& buckets, worker_scratch& scratch) {
  scratch.rows.build(batch, buckets, config.embedding_dim);
}

double train_batch(dense_model& model, const data::example_batch& batch, embedding::batch_rows& rows,
                   worker_scratch& scratch, float lr_scale) {
  const auto& config = model.config();
  const int n = static_cast<int>(batch.size());
  ensure_capacity(config, n, scratch);
  auto& ws = scratch.ws;
  const std::size_t example_stride = static_cast<std::size_t>(ws.vectors) * ws.dim;
  rows.pool(batch, ws.embedding_slot(0, 0), example_stride);
  model::dlrm_forward(config, model.layout(), model.params(), batch.dense.data(), n, ws);
  const auto& opt = model.optimizer();
  double loss;
  if (opt.fused()) {
    loss = model::dlrm_backward(config, model.layout(), model.params(), batch.dense.data(),
                                batch.labels.data(), n, {model.params(), -opt.learning_rate * lr_scale, 1.0f}, ws);
  } else {
    // The gradient materialized, and applied per layer as backward writes it, or after it.
    if (scratch.dense_grads.size() != model.size()) scratch.dense_grads.resize(model.size());
    layer_update update{&opt, model.params(), model.optimizer_state(), scratch.dense_grads.data(),
                        model.size(), model.next_step(), lr_scale};
    model::grad_target<float> target{scratch.dense_grads.data(), 1.0f, 0.0f};
    if (opt.per_layer) {
      target.layer_done = &layer_update::run;
      target.context = &update;
    }
    loss = model::dlrm_backward(config, model.layout(), model.params(), batch.dense.data(), batch.labels.data(), n,
                                target, ws);
    if (!opt.per_layer) layer_update::run(&update, 0, model.size());
  }
  rows.accumulate_grads(batch, ws.embedding_grad(0, 0), example_stride);
  return loss;
}

void predict_batch(const dense_model& model, const data::example_batch& batch, const embedding::batch_rows& rows,
                   worker_scratch& scratch) {
  const auto& config = model.config();
  const int n = static_cast<int>(batch.size());
  const int computed = std::max(n, min_scoring_rows);
  ensure_capacity(config, computed, scratch);
  auto& ws = scratch.ws;
  const std::size_t example_stride = static_cast<std::size_t>(ws.vectors) * ws.dim;
  rows.pool(batch, ws.embedding_slot(0, 0), example_stride);
  const float* dense_in = batch.dense.data();
  if (computed > n) {
    // Zero rows after the batch's: their results are not read, and zeros keep them cheap.
    const std::size_t used = static_cast<std::size_t>(n) * example_stride;
    std::fill(ws.inter.data() + used, ws.inter.data() + static_cast<std::size_t>(computed) * example_stride, 0.0f);
    const std::size_t dense_floats = static_cast<std::size_t>(computed) * config.num_dense;
    if (scratch.padded_dense.size() != dense_floats) scratch.padded_dense.resize(dense_floats);
    std::copy(batch.dense.begin(), batch.dense.end(), scratch.padded_dense.data());
    std::fill(scratch.padded_dense.data() + batch.dense.size(), scratch.padded_dense.data() + dense_floats, 0.0f);
    dense_in = scratch.padded_dense.data();
  }
  model::dlrm_forward(config, model.layout(), model.params(), dense_in, computed, ws);
}

}  // namespace ss::train
