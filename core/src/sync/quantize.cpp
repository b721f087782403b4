#include "ss/core/sync/quantize.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace ss::sync {
namespace {

constexpr float levels = 127.0f;  // symmetric: -128 is never used, so -x quantizes to -q(x)

// Quantizes one block of x into scale and values. Written so that the compiler vectorizes both
// loops (no early exit, no libm call): a quantized round costs a few milliseconds per million
// values on the trainer and on the server, time taken from training on a small machine.
void quantize_block(const float* x, std::size_t n, float& scale, std::int8_t* values) {
  float max_abs = 0.0f;
  std::uint32_t non_finite = 0;  // a value whose exponent bits are all ones: inf or NaN
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, &x[i], sizeof bits);
    non_finite |= static_cast<std::uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
    const float a = std::fabs(x[i]);
    max_abs = a > max_abs ? a : max_abs;
  }
  const bool finite = non_finite == 0;
  scale = finite ? max_abs / levels : std::numeric_limits<float>::quiet_NaN();
  if (scale == 0.0f || !finite) {  // all zero; or garbage, which check() refuses
    std::fill(values, values + n, std::int8_t{0});
    return;
  }
  const float inverse = 1.0f / scale;
  for (std::size_t i = 0; i < n; ++i) {
    // Round half away from zero by truncation; |x| <= max_abs keeps it within [-127, 127] but for
    // the last bit of the product, which the clamp takes care of.
    const float q = x[i] * inverse;
    const float r = q + (q >= 0.0f ? 0.5f : -0.5f);
    values[i] = static_cast<std::int8_t>(std::clamp(r, -levels, levels));
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
