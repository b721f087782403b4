// Optimizers for the dense parameters (one flat buffer, see model/dlrm.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ss/core/status.hpp"

namespace ss::optim {

enum class dense_kind { sgd, adagrad, adam };

result<dense_kind> parse_dense_kind(const std::string& name);  // "sgd", "adagrad", "adam"
const char* to_string(dense_kind kind);

struct dense_optimizer {
  dense_kind kind = dense_kind::sgd;
  float learning_rate = 0.1f;  // Default: 0.1 (the DLRM reference)
  float epsilon = 1e-10f;      // Adagrad: 1e-10; Adam: 1e-8 (default_epsilon; PyTorch's defaults)
  float beta1 = 0.9f;          // Adam's moment decay rates (PyTorch's defaults)
  float beta2 = 0.999f;
  // SGD and Adagrad: an L2 penalty (g += wd * w). Adam: decoupled decay (AdamW: w -= lr * wd * w
  // before the step), which keeps the penalty from being rescaled by the second moment.
  float weight_decay = 0.0f;

  static float default_epsilon(dense_kind kind) { return kind == dense_kind::adam ? 1e-8f : 1e-10f; }

  // The others' updates run per layer inside the backward pass, each as soon as the layer's
  // gradient is known (dlrm.hpp's grad_target::layer_done); false: in one pass after it (the same
  // numbers: the benchmark's baseline and the tests' reference).
  bool per_layer = true;

  // Plain SGD needs no state and is fused into the backward pass (the gradient is never stored).
  bool fused() const { return kind == dense_kind::sgd && weight_decay == 0.0f; }
  // Floats of optimizer state per parameter: Adagrad's accumulator; Adam's first and second
  // moments (state[0, n) and state[n, 2n)).
  std::size_t state_per_param() const {
    return kind == dense_kind::adagrad ? 1 : kind == dense_kind::adam ? 2 : 0;
  }

  // Applies a materialized gradient. `step` is the 1-based count of updates of this replica
  // (Adam's bias correction; ignored otherwise). lr is learning_rate * lr_scale (lr_schedule.hpp).
  //   sgd:     w -= lr * (g + wd * w)
  //   adagrad: g' = g + wd * w; G += g'^2; w -= lr * g' / (sqrt(G) + eps)
  //   adam:    w -= lr * wd * w; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
  //            w -= lr / (1 - b1^t) * m / (sqrt(v / (1 - b2^t)) + eps)
  // Hogwild: called concurrently on shared params/state by design.
  void apply(float* params, float* state, const float* grad, std::size_t n, std::uint64_t step = 1,
             float lr_scale = 1.0f) const;
  // The same update for parameters [from, from + count) of the n: one layer's, per_layer.
  void apply_range(float* params, float* state, const float* grad, std::size_t n, std::size_t from, std::size_t count,
                   std::uint64_t step = 1, float lr_scale = 1.0f) const;
};

}  // namespace ss::optim
