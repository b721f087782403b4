#include "ss/core/train/dense_model.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace ss::train {

dense_model::dense_model(const model::dlrm_config& config, const optim::dense_optimizer& optimizer,
                         std::uint64_t seed)
    : config_(config), layout_(config), optimizer_(optimizer), params_(layout_.size()) {
  assert(config.validate().is_ok());
  model::init_dense_parameters(layout_, seed, params_.data());
  if (optimizer.state_per_param() > 0) state_.resize(layout_.size() * optimizer.state_per_param());
}

dense_model::dense_model(const model::dlrm_config& config, const optim::dense_optimizer& optimizer,
                         const float* params)
    : config_(config), layout_(config), optimizer_(optimizer), params_(layout_.size()) {
  assert(config.validate().is_ok());
  std::copy(params, params + layout_.size(), params_.data());
  if (optimizer.state_per_param() > 0) state_.resize(layout_.size() * optimizer.state_per_param());
}

void dense_model::restore_optimizer(const float* state, std::uint64_t steps) {
  std::copy(state, state + state_.size(), state_.data());
  steps_.store(steps, std::memory_order_relaxed);
}

std::size_t non_finite_count(const float* v, std::size_t n) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) bad += std::isfinite(v[i]) ? 0 : 1;
  return bad;
}

}  // namespace ss::train
