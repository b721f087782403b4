// Optimizers for the dense parameters (one flat buffer, see model/dlrm.hpp).
#pragma once

#include <cstddef>
#include <string>

#include "ss/core/status.hpp"

namespace ss::optim {

enum class dense_kind { sgd, adagrad };

result<dense_kind> parse_dense_kind(const std::string& name);  // "sgd", "adagrad"
const char* to_string(dense_kind kind);

struct dense_optimizer {
  dense_kind kind = dense_kind::sgd;
  float learning_rate = 0.1f;  // Default: 0.1 (the DLRM reference)
  float epsilon = 1e-10f;      // Default: 1e-10 (Adagrad only; PyTorch's default)

  // SGD needs no state and is fused into the backward pass (the gradient is never stored).
  bool fused() const { return kind == dense_kind::sgd; }
  // Floats of optimizer state per parameter (Adagrad's accumulator).
  std::size_t state_per_param() const { return kind == dense_kind::adagrad ? 1 : 0; }

  // Applies a materialized gradient: adagrad G += g^2; w -= lr * g / (sqrt(G) + eps).
  // Hogwild: called concurrently on shared params/state by design.
  void apply(float* params, float* state, const float* grad, std::size_t n) const;
};

}  // namespace ss::optim
