// Seeded randomness. Nothing in shadowsync draws from a global generator: every consumer gets a
// seed (from config) or a generator passed in, so T=1 training is reproducible.
#pragma once

#include <cmath>
#include <cstdint>
#include <utility>

#include "ss/core/hash.hpp"

namespace ss {

// splitmix64 stream: tiny state, good statistical quality, trivially seedable per purpose.
class rng {
 public:
  explicit rng(std::uint64_t seed) noexcept : state_(seed) {}

  std::uint64_t next_u64() noexcept {
    state_ += 0x9e3779b97f4a7c15ULL;
    return mix64(state_);
  }
  // Uniform in [0, 1) with 24 random bits (exactly representable floats).
  float uniform_float() noexcept { return static_cast<float>(next_u64() >> 40) * 0x1.0p-24f; }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() noexcept { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  float uniform_float(float lo, float hi) noexcept { return lo + (hi - lo) * uniform_float(); }
  // Uniform integer in [0, n); n > 0.
  std::uint64_t below(std::uint64_t n) noexcept { return static_cast<std::uint64_t>(uniform() * static_cast<double>(n)) % n; }
  // Standard normal (Box-Muller; one value per call, simplicity over speed).
  double normal() noexcept {
    double u1 = uniform();
    double u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  bool bernoulli(double p) noexcept { return uniform() < p; }

  std::uint64_t state() const noexcept { return state_; }

 private:
  std::uint64_t state_;
};

// Fisher-Yates: permutes [first, last) uniformly, drawing r.below(n), r.below(n - 1), ...,
// r.below(2) for n elements, so a seed fixes the order.
template <class It>
void shuffle(It first, It last, rng& r) noexcept {
  for (auto n = static_cast<std::uint64_t>(last - first); n > 1; --n) {
    using std::swap;
    swap(first[n - 1], first[r.below(n)]);
  }
}

// Counter-based uniform in [lo, hi): the same (seed, a, b, i) always gives the same value,
// wherever and in whatever order it is computed. Used for first-touch embedding rows.
inline float counter_uniform(std::uint64_t seed, std::uint64_t a, std::uint64_t b,
                             std::uint64_t i, float lo, float hi) noexcept {
  std::uint64_t h = hash_combine(hash_combine(hash_combine(seed, a), b), i);
  float u = static_cast<float>(h >> 40) * 0x1.0p-24f;
  return lo + (hi - lo) * u;
}

}  // namespace ss
