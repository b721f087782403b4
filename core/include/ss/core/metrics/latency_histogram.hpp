// Latencies in buckets a quarter of a doubling wide, from 1 us to about an hour: a quantile is
// the upper bound of its bucket, within 19% above the truth. Lock-free: record() and the readers
// may run on any threads at once.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>

namespace ss::metrics {

class latency_histogram {
 public:
  static constexpr int buckets = 128;

  void record(double seconds) {
    const double us = seconds * 1e6;
    const int b = us <= 1.0 ? 0 : std::min(buckets - 1, static_cast<int>(4.0 * std::log2(us)));
    counts_[static_cast<std::size_t>(b)].fetch_add(1, std::memory_order_relaxed);
    sum_ns_.fetch_add(static_cast<std::uint64_t>(std::max(0.0, seconds) * 1e9), std::memory_order_relaxed);
  }

  // The seconds recorded, in total.
  double sum_seconds() const { return static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) * 1e-9; }

  // Records below 2^k microseconds (k >= 1): a Prometheus histogram's cumulative bucket (le =
  // 2^k us; a record of exactly that much counts in the next one).
  std::uint64_t count_below_power_of_two_us(int k) const {
    std::uint64_t n = 0;
    for (int b = 0; b < std::min(buckets, 4 * k); ++b) n += counts_[static_cast<std::size_t>(b)].load(std::memory_order_relaxed);
    return n;
  }

  std::uint64_t count() const {
    std::uint64_t n = 0;
    for (const auto& c : counts_) n += c.load(std::memory_order_relaxed);
    return n;
  }

  // The q-quantile (0 < q <= 1) in milliseconds; 0 before the first record.
  double quantile_ms(double q) const {
    std::array<std::uint64_t, buckets> snapshot{};
    std::uint64_t total = 0;
    for (int b = 0; b < buckets; ++b) total += snapshot[b] = counts_[b].load(std::memory_order_relaxed);
    if (total == 0) return 0;
    std::uint64_t seen = 0;
    for (int b = 0; b < buckets; ++b) {
      seen += snapshot[b];
      if (static_cast<double>(seen) >= q * static_cast<double>(total)) return std::exp2((b + 1) / 4.0) / 1000.0;
    }
    return std::exp2(buckets / 4.0) / 1000.0;
  }

 private:
  std::array<std::atomic<std::uint64_t>, buckets> counts_{};
  std::atomic<std::uint64_t> sum_ns_{0};
};

}  // namespace ss::metrics
