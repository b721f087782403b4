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
  if (kind == sparse_kind::sgd) {
    for (std::uint32_t d = 0; d < dim; ++d) row[d] -= learning_rate * grad[d];
    return;
  }
  float sum_sq = 0.0f;
  for (std::uint32_t d = 0; d < dim; ++d) sum_sq += grad[d] * grad[d];
  float& accumulator = row[dim];
  accumulator += sum_sq / static_cast<float>(dim);
  const float step = learning_rate / (std::sqrt(accumulator) + epsilon);
  for (std::uint32_t d = 0; d < dim; ++d) row[d] -= step * grad[d];
}

result<dense_kind> parse_dense_kind(const std::string& name) {
  if (name == "sgd") return dense_kind::sgd;
  if (name == "adagrad") return dense_kind::adagrad;
  return {errc::invalid_argument, "unknown dense optimizer '" + name + "' (sgd, adagrad)"};
}

const char* to_string(dense_kind kind) { return kind == dense_kind::sgd ? "sgd" : "adagrad"; }

void dense_optimizer::apply(float* params, float* state, const float* grad, std::size_t n) const {
  if (kind == dense_kind::sgd) {
    for (std::size_t i = 0; i < n; ++i) params[i] -= learning_rate * grad[i];
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    state[i] += grad[i] * grad[i];
    params[i] -= learning_rate * grad[i] / (std::sqrt(state[i]) + epsilon);
  }
}

}  // namespace ss::optim
