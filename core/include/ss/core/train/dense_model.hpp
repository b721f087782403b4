// The dense half of a DLRM: its shape, one flat parameter buffer and the optimizer state that
// goes with it. A trainer process holds exactly one, shared by all its Hogwild workers.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "ss/core/aligned_buffer.hpp"
#include "ss/core/model/dlrm.hpp"
#include "ss/core/optim/dense_optimizer.hpp"

namespace ss::train {

class dense_model {
 public:
  // Parameters initialized from `seed` (model::init_dense_parameters). config must be valid.
  dense_model(const model::dlrm_config& config, const optim::dense_optimizer& optimizer,
              std::uint64_t seed);
  // Parameters copied from `params` (size() floats, model::dense_layout order): a model that is
  // only scored with (a served version), without the seed's initialization.
  dense_model(const model::dlrm_config& config, const optim::dense_optimizer& optimizer, const float* params);

  const model::dlrm_config& config() const { return config_; }
  const model::dense_layout& layout() const { return layout_; }
  const optim::dense_optimizer& optimizer() const { return optimizer_; }

  // The shared replica. Written concurrently by Hogwild workers and read by the shadow sync.
  float* params() { return params_.data(); }
  const float* params() const { return params_.data(); }
  std::size_t size() const { return params_.size(); }
  // Optimizer state parallel to params (Adagrad's accumulators); nullptr for SGD.
  float* optimizer_state() { return state_.empty() ? nullptr : state_.data(); }
  const float* optimizer_state() const { return state_.empty() ? nullptr : state_.data(); }
  // Its floats: optimizer().state_per_param() x size(); 0 for SGD.
  std::size_t optimizer_state_size() const { return state_.size(); }
  // Updates applied so far.
  std::uint64_t steps() const { return steps_.load(std::memory_order_relaxed); }
  // A resumed replica takes back a snapshot's optimizer state (optimizer_state_size() floats) and
  // update count instead of starting afresh. Before its workers start: nothing else writes.
  void restore_optimizer(const float* state, std::uint64_t steps);
  // The 1-based number of the update about to be applied (Adam's bias correction); shared by the
  // Hogwild workers.
  std::uint64_t next_step() { return steps_.fetch_add(1, std::memory_order_relaxed) + 1; }

 private:
  model::dlrm_config config_;
  model::dense_layout layout_;
  optim::dense_optimizer optimizer_;
  aligned_buffer<float> params_;
  aligned_buffer<float> state_;
  std::atomic<std::uint64_t> steps_{0};
};

// How many values of `v` (n floats) are NaN or infinite: a diverged model, which is an error.
std::size_t non_finite_count(const float* v, std::size_t n);
inline std::size_t non_finite_params(const dense_model& m) { return non_finite_count(m.params(), m.size()); }

}  // namespace ss::train
