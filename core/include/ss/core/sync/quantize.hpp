// 8-bit block quantization of the vectors a sync round moves, with error feedback.
//
// A vector of n floats is cut into blocks of `block` values; each block keeps one FP32 scale,
// max |x| / 127, and its values as round(x / scale), integers in [-127, 127]. That is
// n + 4 ceil(n / block) bytes instead of 4n: 3.94x fewer at the default block of 256.
//
// Error feedback: the sender keeps what rounding lost (the residual) and adds it to the next
// vector it sends, so nothing is lost for good; the sum of everything received equals the sum of
// everything meant to be sent, less the one residual still held back. The receiver keeps its
// state in FP32 and only ever adds dequantized vectors to it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "ss/core/status.hpp"

namespace ss::sync {

constexpr std::uint32_t default_quantization_block = 256;
// The largest scale whose every value (up to 127 x scale) is a finite float: a received scale
// beyond it overflows, and is refused.
constexpr float max_quantization_scale = std::numeric_limits<float>::max() / 127.0f;

struct quantized_vector {
  std::uint32_t block = default_quantization_block;
  std::vector<float> scales;        // one per block: ceil(size / block)
  std::vector<std::int8_t> values;  // one per element

  std::size_t size() const { return values.size(); }
  // What it takes on the wire (values and scales; not the framing).
  std::size_t bytes() const { return values.size() + scales.size() * sizeof(float); }
};

// Scales of ceil(n / block) blocks for n values.
std::size_t quantization_blocks(std::size_t n, std::uint32_t block);

// out <- quantized(x). block > 0 (asserted). A block with a non-finite value gets a NaN scale,
// which check() refuses: garbage is never rounded into something that looks fine.
void quantize(const float* x, std::size_t n, std::uint32_t block, quantized_vector& out);

// out <- quantized(delta + residual); residual <- (delta + residual) - dequantized(out): the
// error feedback. residual has n values, zero at first.
void quantize_with_feedback(const float* delta, float* residual, std::size_t n, std::uint32_t block,
                            quantized_vector& out);

// Whether q can be a quantized vector of `n` values: a block > 0, n values, one scale per block,
// every scale finite, >= 0 and at most max_quantization_scale. The error names what is wrong.
status check(const quantized_vector& q, std::size_t n);

// out[i] = values[i] * scale of its block, for a q that passed check().
void dequantize(const quantized_vector& q, float* out);
// out[i] += values[i] * scale of its block.
void add_dequantized(const quantized_vector& q, float* out);

}  // namespace ss::sync
