#include <cmath>

#include "ss/core/optim/dense_optimizer.hpp"
#include "ss/core/denormals.hpp"
#include "ss/core/multiversion.hpp"
#include "ss/core/optim/sparse_optimizer.hpp"

// The dense updates run over every parameter once per batch, so they are memory-bound loops that
// must vectorize: one copy per ISA (SS_MULTIVERSION), restrict pointers, and this file compiled
// without errno from sqrt (sources.cmake).

namespace ss::optim {
namespace {

SS_MULTIVERSION void sgd_update(float* __restrict w, const float* __restrict g, std::size_t n, float lr,
                                      float wd) {
  for (std::size_t i = 0; i < n; ++i) w[i] -= lr * (g[i] + wd * w[i]);
}

SS_MULTIVERSION void adagrad_update(float* __restrict w, float* __restrict acc, const float* __restrict g,
                                          std::size_t n, float lr, float wd, float eps) {
  for (std::size_t i = 0; i < n; ++i) {
    const float gi = g[i] + wd * w[i];
    const float a = acc[i] + gi * gi;
    acc[i] = a;
    w[i] -= lr * gi / (std::sqrt(a) + eps);
  }
}

SS_MULTIVERSION void adam_update(float* __restrict w, float* __restrict m, float* __restrict v,
                                       const float* __restrict g, std::size_t n, float beta1, float beta2,
                                       float step_size, float inv_sqrt_correction, float eps, float decay) {
  for (std::size_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float mi = beta1 * m[i] + (1.0f - beta1) * gi;
    const float vi = beta2 * v[i] + (1.0f - beta2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    w[i] = w[i] * decay - step_size * mi / (std::sqrt(vi) * inv_sqrt_correction + eps);
  }
}

}  // namespace

result<sparse_kind> parse_sparse_kind(const std::string& name) {
  if (name == "sgd") return sparse_kind::sgd;
  if (name == "rowwise-adagrad" || name == "rowwise_adagrad") return sparse_kind::rowwise_adagrad;
  return {errc::invalid_argument, "unknown sparse optimizer '" + name + "' (sgd, rowwise-adagrad)"};
}

const char* to_string(sparse_kind kind) {
  return kind == sparse_kind::sgd ? "sgd" : "rowwise-adagrad";
}

void sparse_optimizer::apply(float* values, float* state, const float* grad, std::uint32_t dim,
                             float lr_scale) const {
  const float wd = weight_decay;
  const float lr = learning_rate * lr_scale;
  if (kind == sparse_kind::sgd) {
    for (std::uint32_t d = 0; d < dim; ++d) values[d] -= lr * (grad[d] + wd * values[d]);
    return;
  }
  float sum_sq = 0.0f;
  for (std::uint32_t d = 0; d < dim; ++d) {
    const float g = grad[d] + wd * values[d];
    sum_sq += g * g;
  }
  float& accumulator = state[0];
  accumulator += sum_sq / static_cast<float>(dim);
  const float step = lr / (std::sqrt(accumulator) + epsilon);
  for (std::uint32_t d = 0; d < dim; ++d) values[d] -= step * (grad[d] + wd * values[d]);
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

void dense_optimizer::apply(float* params, float* state, const float* grad, std::size_t n, std::uint64_t step,
                            float lr_scale) const {
  apply_range(params, state, grad, n, 0, n, step, lr_scale);
}

void dense_optimizer::apply_range(float* params, float* state, const float* grad, std::size_t n, std::size_t from,
                                  std::size_t count, std::uint64_t step, float lr_scale) const {
  const float lr = learning_rate * lr_scale;
  const flush_denormals fast_floats;  // Adam's moments decay into subnormals (denormals.hpp)
  float* w = params + from;
  const float* g = grad + from;
  switch (kind) {
    case dense_kind::sgd:
      return sgd_update(w, g, count, lr, weight_decay);
    case dense_kind::adagrad:
      return adagrad_update(w, state + from, g, count, lr, weight_decay, epsilon);
    case dense_kind::adam: {
      const double t = static_cast<double>(step == 0 ? 1 : step);
      const auto step_size = static_cast<float>(lr / (1.0 - std::pow(static_cast<double>(beta1), t)));
      const auto inv_sqrt_correction =
          static_cast<float>(1.0 / std::sqrt(1.0 - std::pow(static_cast<double>(beta2), t)));
      return adam_update(w, state + from, state + n + from, g, count, beta1, beta2, step_size, inv_sqrt_correction,
                         epsilon, 1.0f - lr * weight_decay);
    }
  }
}

}  // namespace ss::optim
