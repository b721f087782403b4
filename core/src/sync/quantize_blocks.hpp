// The one quantization loop every quantized exchange runs, inlined into each caller's own
// multiversioned kernel (quantize.cpp, replica_mirror.cpp) so that a round reads its inputs once
// per block and allocates nothing: `source(i)` is the value to quantize, `sink(i, v)` receives
// its dequantized value v. Private to ss_core.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "ss/core/sync/quantize.hpp"

namespace ss::sync::detail {

constexpr float quantization_levels = 127.0f;  // symmetric: -128 is never used, so -x quantizes to -q(x)

// |x| as bits. Non-negative floats order as their bits do, and inf or NaN (exponent all ones)
// above every finite value: one integer max finds a block's largest magnitude and whether it
// holds a non-finite value, and vectorizes (a float max with NaN semantics does not).
[[gnu::always_inline]] inline std::uint32_t magnitude_bits(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits & 0x7fffffffu;
}

template <class Source, class Sink>
[[gnu::always_inline]] inline void quantize_blocks(std::size_t n, std::uint32_t block, Source&& source, Sink&& sink,
                                                   quantized_vector& out) {
  out.block = block;
  out.values.resize(n);
  out.scales.resize(quantization_blocks(n, block));
  std::int8_t* __restrict values = out.values.data();  // int8 may alias anything: say it does not
  for (std::size_t b = 0, begin = 0; begin < n; ++b, begin += block) {
    const std::size_t end = std::min<std::size_t>(n, begin + block);
    std::uint32_t max_bits = 0;
    for (std::size_t i = begin; i < end; ++i) max_bits = std::max(max_bits, magnitude_bits(source(i)));
    float max_abs;
    std::memcpy(&max_abs, &max_bits, sizeof max_abs);
    const bool finite = max_bits < 0x7f800000u;
    const float scale = finite ? max_abs / quantization_levels : std::numeric_limits<float>::quiet_NaN();
    out.scales[b] = scale;
    if (scale == 0.0f || !finite) {  // all zero; or garbage, which check() refuses
      for (std::size_t i = begin; i < end; ++i) {
        values[i] = 0;
        sink(i, 0.0f * scale);
      }
      continue;
    }
    const float inverse = 1.0f / scale;
    for (std::size_t i = begin; i < end; ++i) {
      // Round half away from zero by truncation; |x| <= max_abs keeps it within [-127, 127] but for
      // the last bit of the product, which the clamp takes care of.
      // (Branch-free, so that it vectorizes: copysign for the half, min and max for the clamp.)
      const float q = source(i) * inverse;
      const float r = std::min(std::max(q + std::copysign(0.5f, q), -quantization_levels), quantization_levels);
      const auto v = static_cast<std::int8_t>(static_cast<std::int32_t>(r));
      values[i] = v;
      sink(i, static_cast<float>(v) * scale);
    }
  }
}

// Calls f(i, v) with the dequantized value v of every element of q.
template <class F>
[[gnu::always_inline]] inline void for_each_dequantized(const quantized_vector& q, F&& f) {
  const std::size_t n = q.values.size();
  const std::int8_t* __restrict values = q.values.data();
  for (std::size_t b = 0, begin = 0; begin < n; ++b, begin += q.block) {
    const std::size_t end = std::min<std::size_t>(n, begin + q.block);
    const float scale = q.scales[b];
    for (std::size_t i = begin; i < end; ++i) f(i, static_cast<float>(values[i]) * scale);
  }
}

}  // namespace ss::sync::detail
