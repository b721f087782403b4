#include "ss/core/sync/quantize.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <string>

namespace ss::sync {
namespace {

constexpr float levels = 127.0f;  // symmetric: -128 is never used, so -x quantizes to -q(x)

// Quantizes one block of x into scale and values.
void quantize_block(const float* x, std::size_t n, float& scale, std::int8_t* values) {
  float max_abs = 0.0f;
  bool finite = true;
  for (std::size_t i = 0; i < n; ++i) {
    finite = finite && std::isfinite(x[i]);
    max_abs = std::max(max_abs, std::fabs(x[i]));
  }
  scale = finite ? max_abs / levels : std::numeric_limits<float>::quiet_NaN();
  if (scale == 0.0f || !finite) {  // all zero; or garbage, which check() refuses
    std::fill(values, values + n, std::int8_t{0});
    return;
  }
  const float inverse = 1.0f / scale;
  for (std::size_t i = 0; i < n; ++i) {
    const float q = std::nearbyint(x[i] * inverse);
    values[i] = static_cast<std::int8_t>(std::clamp(q, -levels, levels));
  }
}

template <class Combine>
void for_each_dequantized(const quantized_vector& q, float* out, Combine&& combine) {
  const std::size_t n = q.values.size();
  for (std::size_t b = 0, begin = 0; begin < n; ++b, begin += q.block) {
    const std::size_t end = std::min(n, begin + q.block);
    const float scale = q.scales[b];
    for (std::size_t i = begin; i < end; ++i) combine(out[i], static_cast<float>(q.values[i]) * scale);
  }
}

}  // namespace

std::size_t quantization_blocks(std::size_t n, std::uint32_t block) {
  assert(block > 0);
  return (n + block - 1) / block;
}

void quantize(const float* x, std::size_t n, std::uint32_t block, quantized_vector& out) {
  assert(block > 0);
  out.block = block;
  out.values.resize(n);
  out.scales.resize(quantization_blocks(n, block));
  for (std::size_t b = 0, begin = 0; begin < n; ++b, begin += block)
    quantize_block(x + begin, std::min<std::size_t>(block, n - begin), out.scales[b], out.values.data() + begin);
}

void quantize_with_feedback(const float* delta, float* residual, std::size_t n, std::uint32_t block,
                            quantized_vector& out) {
  // residual <- delta + residual: what is meant to go now, then what rounding keeps back of it.
  for (std::size_t i = 0; i < n; ++i) residual[i] += delta[i];
  quantize(residual, n, block, out);
  for_each_dequantized(out, residual, [](float& r, float sent) { r -= sent; });
}

status check(const quantized_vector& q, std::size_t n) {
  if (q.block == 0) return status(errc::invalid_argument, "a quantized vector with a block of 0 values");
  if (q.values.size() != n)
    return status(errc::invalid_argument, "a quantized vector of " + std::to_string(q.values.size()) +
                                              " values where " + std::to_string(n) + " were expected");
  const std::size_t blocks = quantization_blocks(n, q.block);
  if (q.scales.size() != blocks)
    return status(errc::invalid_argument, "a quantized vector with " + std::to_string(q.scales.size()) +
                                              " scales for " + std::to_string(blocks) + " blocks of " +
                                              std::to_string(q.block));
  for (std::size_t b = 0; b < blocks; ++b) {
    const float s = q.scales[b];
    if (!std::isfinite(s) || s < 0.0f || s > max_quantization_scale)
      return status(errc::out_of_range, "block " + std::to_string(b) + " of a quantized vector has the scale " +
                                            std::to_string(s) + " (finite, 0 to " +
                                            std::to_string(max_quantization_scale) + " expected)");
  }
  return status::ok();
}

void dequantize(const quantized_vector& q, float* out) {
  for_each_dequantized(q, out, [](float& o, float v) { o = v; });
}

void add_dequantized(const quantized_vector& q, float* out) {
  for_each_dequantized(q, out, [](float& o, float v) { o += v; });
}

}  // namespace ss::sync
