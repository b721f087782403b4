// Optimizers for embedding rows. A row is `dim` values followed by `state_floats()` floats of
// optimizer state, stored together so a row moves (lookups, shards, checkpoints) as one unit.
#pragma once

#include <cstdint>
#include <string>

#include "ss/core/status.hpp"

namespace ss::optim {

enum class sparse_kind { sgd, rowwise_adagrad };

result<sparse_kind> parse_sparse_kind(const std::string& name);  // "sgd", "rowwise-adagrad"
const char* to_string(sparse_kind kind);

struct sparse_optimizer {
  sparse_kind kind = sparse_kind::sgd;
  float learning_rate = 0.1f;  // Default: 0.1 (the DLRM reference)
  float epsilon = 1e-8f;       // Default: 1e-8 (row-wise Adagrad only)
  // L2 penalty on the rows a batch touches (g += wd * row): rows no batch touches are left alone,
  // as in every sparse trainer, so a row decays only while it is in use.
  float weight_decay = 0.0f;

  std::uint32_t state_floats() const { return kind == sparse_kind::rowwise_adagrad ? 1 : 0; }

  // One update of `row` (dim values, then the state) with gradient `grad` (dim values), at
  // learning rate learning_rate * lr_scale (lr_schedule.hpp).
  //   sgd:             row -= lr * g
  //   rowwise_adagrad: G += mean(g^2); row -= lr * g / (sqrt(G) + eps)   (one G per row)
  // with g = grad + weight_decay * row.
  // Hogwild: concurrent calls on the same row race benignly on floats, by design.
  void apply(float* row, const float* grad, std::uint32_t dim, float lr_scale = 1.0f) const {
    apply(row, row + dim, grad, dim, lr_scale);
  }
  // The same, with the values and the state apart: a row of 16-bit values (row_precision.hpp) is
  // updated in FP32 copies of its values, its state in place.
  void apply(float* values, float* state, const float* grad, std::uint32_t dim, float lr_scale = 1.0f) const;
};

}  // namespace ss::optim
