// Metrics over every example seen (an evaluation pass, or a whole training epoch).
//
// Thread-safety: an accumulator is NOT thread-safe. Give each worker thread its own, then merge()
// them into one on a single thread; compute() is const and may run concurrently with other const
// calls only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ss/core/metrics/metrics.hpp"
#include "ss/core/status.hpp"

namespace ss::metrics {

class accumulator {
 public:
  accumulator() = default;

  // Labels are 0/1 floats; >= 0.5 is a click (see is_click).
  void add(float prediction, float label);
  void add(const float* predictions, const float* labels, std::size_t count);
  // invalid_argument (and nothing added) when the sizes differ.
  status add(const std::vector<float>& predictions, const std::vector<float>& labels);

  // Adds every example of `other`; the result equals one accumulator fed both streams (up to
  // floating-point summation order, ~1e-15 relative). Merging an accumulator into itself doubles it.
  void merge(const accumulator& other);

  void reserve(std::size_t examples);
  void clear() noexcept;

  std::uint64_t examples() const noexcept {
    return positive_predictions_.size() + negative_predictions_.size();
  }
  std::uint64_t positives() const noexcept { return positive_predictions_.size(); }

  // All metrics; base_click_rate is the training set's click rate, used for NE. The AUC sorts a
  // copy of the predictions: O(n log n), about 8 bytes of scratch per example.
  summary compute(double base_click_rate) const;

 private:
  // The label is implied by which vector holds a prediction: 4 bytes per example, so tens of
  // millions of examples fit in a few hundred MB.
  std::vector<float> positive_predictions_;
  std::vector<float> negative_predictions_;
  detail::compensated_sum prediction_sum_;
  detail::compensated_sum log_loss_sum_;
};

}  // namespace ss::metrics
