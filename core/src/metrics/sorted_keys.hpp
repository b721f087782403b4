// Internal to the metrics area: exact AUC over float predictions via order-preserving uint32 keys
// and an LSD radix sort (4 bytes of scratch per example, linear time); the argument check the
// accumulators share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ss/core/status.hpp"

namespace ss::metrics::internal {

// Maps a float to a uint32 whose unsigned order is the float order; -0 and +0 share a key so they
// tie, as they compare equal.
std::uint32_t float_key(float x) noexcept;

// Sorts ascending; `scratch` is reused between calls to avoid reallocating.
void radix_sort(std::vector<std::uint32_t>& keys, std::vector<std::uint32_t>& scratch);

// AUC from the keys of the positives and of the negatives (sorted in place). NaN if either is empty.
double auc_from_keys(std::vector<std::uint32_t>& positive_keys,
                     std::vector<std::uint32_t>& negative_keys);

// invalid_argument "metrics: N predictions but M labels" unless the sizes agree.
status check_same_size(const std::vector<float>& predictions, const std::vector<float>& labels);

}  // namespace ss::metrics::internal
