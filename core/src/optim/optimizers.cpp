#include <cmath>

#include "ss/core/optim/dense_optimizer.hpp"
#include "ss/core/optim/sparse_optimizer.hpp"

namespace ss::optim {

result<sparse_kind> parse_sparse_kind(const std::string& name) {
  if (name == "sgd") return sparse_kind::sgd;
  if (name == "rowwise-adagrad" || name == "rowwise_adagrad") return sparse_kind::rowwise_adagrad;
  return {errc::invalid_argument, "unknown sparse optimizer '" + name + "' (sgd, rowwise-adagrad)"};
}

const char* to_string(sparse_kind kind) {
  return kind == sparse_kind::sgd ? "sgd" : "rowwise-adagrad";
}

void sparse_optimizer::apply(float* row, const float* grad, std::uint32_t dim) const {
  const float wd = weight_decay;
  if (kind == sparse_kind::sgd) {
    for (std::uint32_t d = 0; d < dim; ++d) row[d] -= learning_rate * (grad[d] + wd * row[d]);
    return;
  }
  float sum_sq = 0.0f;
  for (std::uint32_t d = 0; d < dim; ++d) {
    const float g = grad[d] + wd * row[d];
    sum_sq += g * g;
  }
  float& accumulator = row[dim];
  accumulator += sum_sq / static_cast<float>(dim);
  const float step = learning_rate / (std::sqrt(accumulator) + epsilon);
  for (std::uint32_t d = 0; d < dim; ++d) row[d] -= step * (grad[d] + wd * row[d]);
}

result<dense_kind> parse_dense_kind(const std::string& name) {
  if (name == "sgd") return dense_kind::sgd;
  if (name == "adagrad") return dense_kind::adagrad;
  if (name == "adam") return dense_kind::adam;
  return {errc::invalid_argument, "unknown dense optimizer '" + name + "' (sgd, adagrad, adam)"};
}

const char* to_string(dense_kind kind) {
  switch (kind) {
    case dense_kind::sgd: return "sgd";
    case dense_kind::adagrad: return "adagrad";
    case dense_kind::adam: return "adam";
  }
  return "?";
}

void dense_optimizer::apply(float* params, float* state, const float* grad, std::size_t n, std::uint64_t step) const {
  const float lr = learning_rate, wd = weight_decay;
  switch (kind) {
    case dense_kind::sgd:
      for (std::size_t i = 0; i < n; ++i) params[i] -= lr * (grad[i] + wd * params[i]);
      return;
    case dense_kind::adagrad:
      for (std::size_t i = 0; i < n; ++i) {
        const float g = grad[i] + wd * params[i];
        state[i] += g * g;
        params[i] -= lr * g / (std::sqrt(state[i]) + epsilon);
      }
      return;
    case dense_kind::adam: {
      const double t = static_cast<double>(step == 0 ? 1 : step);
      const auto step_size = static_cast<float>(lr / (1.0 - std::pow(static_cast<double>(beta1), t)));
      const auto inv_sqrt_correction = static_cast<float>(1.0 / std::sqrt(1.0 - std::pow(static_cast<double>(beta2), t)));
      const float decay = 1.0f - lr * wd;
      float* m = state;
      float* v = state + n;
      for (std::size_t i = 0; i < n; ++i) {
        const float g = grad[i];
        m[i] = beta1 * m[i] + (1.0f - beta1) * g;
        v[i] = beta2 * v[i] + (1.0f - beta2) * g * g;
        params[i] = params[i] * decay - step_size * m[i] / (std::sqrt(v[i]) * inv_sqrt_correction + epsilon);
      }
      return;
    }
  }
}

}  // namespace ss::optim
