#include "ss/core/sync/quantize.hpp"

#include "quantize_blocks.hpp"
#include "ss/core/multiversion.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace ss::sync {
namespace {

// A quantized round runs these over every value of a slice on the trainer and on the server: one
// copy per ISA (SS_MULTIVERSION), and this file compiled so that -O2 vectorizes (sources.cmake).
SS_MULTIVERSION void quantize_kernel(const float* __restrict x, std::size_t n, std::uint32_t block,
                                     quantized_vector& out) {
  detail::quantize_blocks(n, block, [x](std::size_t i) { return x[i]; }, [](std::size_t, float) {}, out);
}

SS_MULTIVERSION void feedback_kernel(const float* __restrict delta, float* __restrict residual, std::size_t n,
                                     std::uint32_t block, quantized_vector& out) {
  // residual <- delta + residual: what is meant to go now, then what rounding keeps back of it.
  for (std::size_t i = 0; i < n; ++i) residual[i] += delta[i];
  detail::quantize_blocks(
      n, block, [residual](std::size_t i) { return residual[i]; },
      [residual](std::size_t i, float sent) { residual[i] -= sent; }, out);
}

SS_MULTIVERSION void dequantize_kernel(const quantized_vector& q, float* __restrict out) {
  detail::for_each_dequantized(q, [out](std::size_t i, float v) { out[i] = v; });
}

SS_MULTIVERSION void add_dequantized_kernel(const quantized_vector& q, float* __restrict out) {
  detail::for_each_dequantized(q, [out](std::size_t i, float v) { out[i] += v; });
}

}  // namespace

std::size_t quantization_blocks(std::size_t n, std::uint32_t block) {
  assert(block > 0);
  return (n + block - 1) / block;
}

void quantize(const float* x, std::size_t n, std::uint32_t block, quantized_vector& out) {
  assert(block > 0);
  quantize_kernel(x, n, block, out);
}

void quantize_with_feedback(const float* delta, float* residual, std::size_t n, std::uint32_t block,
                            quantized_vector& out) {
  assert(block > 0);
  feedback_kernel(delta, residual, n, block, out);
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

void dequantize(const quantized_vector& q, float* out) { dequantize_kernel(q, out); }

void add_dequantized(const quantized_vector& q, float* out) { add_dequantized_kernel(q, out); }

}  // namespace ss::sync
