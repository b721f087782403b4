// Metrics over the most recent N examples: the "windowed NE" of training progress lines. add() is
// a store into a ring buffer; all the work happens in compute(), on demand.
//
// Thread-safety: a window is NOT thread-safe. Use one per thread (or guard it with a mutex);
// compute() is const and may run concurrently with other const calls only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ss/core/metrics/metrics.hpp"
#include "ss/core/status.hpp"

namespace ss::metrics {

class window {
 public:
  // Holds the last `capacity` examples (e.g. 100'000); a capacity of 0 is treated as 1. The ring
  // is allocated up front: 5 bytes per example.
  explicit window(std::size_t capacity);

  // Labels are 0/1 floats; >= 0.5 is a click (see is_click). Once full, each add forgets the oldest.
  void add(float prediction, float label) noexcept;
  void add(const float* predictions, const float* labels, std::size_t count) noexcept;
  // invalid_argument (and nothing added) when the sizes differ.
  status add(const std::vector<float>& predictions, const std::vector<float>& labels);

  void clear() noexcept;

  std::size_t size() const noexcept { return size_; }  // examples in the window now
  std::size_t capacity() const noexcept { return predictions_.size(); }
  std::uint64_t total_added() const noexcept { return total_added_; }  // since construction/clear

  // The same summary as accumulator, over the examples in the window: O(N log N) for the AUC.
  summary compute(double base_click_rate) const;

 private:
  std::vector<float> predictions_;
  std::vector<std::uint8_t> clicks_;
  std::size_t next_ = 0;  // slot the next example goes to
  std::size_t size_ = 0;
  std::uint64_t total_added_ = 0;
};

}  // namespace ss::metrics
