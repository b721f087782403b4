// The precision embedding rows are kept at (--row-precision): FP32, or one of the two 16-bit
// floats, bfloat16 (FP32's exponent, 8 bits of significand) and IEEE half (5 bits of exponent,
// 11 of significand, finite up to 65504). A row is an array of 4-byte slots: its `dim` values,
// packed two to a slot at 16 bits (the last slot half empty for an odd dim), then the optimizer
// state and the TTL stamp at FP32, so that storage, moves and checkpoints handle rows of any
// precision as slots they never look into.
//
// Values are written to a row rounded to the nearest (new rows) or stochastically (updates):
// rounded up with a probability equal to how far the exact value lies towards the next
// representable one, so that the expected row is the exact one and a step smaller than half the
// spacing of 16-bit floats near the value (about 0.4% of it for bf16) still moves the row on
// average instead of being lost. The draws come from a counter-based stream the caller names, so
// a run with the same seed and order of updates gives the same rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ss/core/hash.hpp"
#include "ss/core/status.hpp"

namespace ss::embedding {

// The codes are what files and the wire carry: never renumber.
enum class row_precision : std::uint8_t { fp32 = 0, bf16 = 1, fp16 = 2 };

result<row_precision> parse_row_precision(const std::string& name);  // "fp32", "bf16", "fp16"
const char* to_string(row_precision p);
// A code read from a file or a message: an unknown one is refused (`what` says where it came from),
// never taken for another precision.
result<row_precision> row_precision_of_code(std::uint32_t code, const std::string& what);

constexpr std::uint32_t bytes_per_value(row_precision p) { return p == row_precision::fp32 ? 4 : 2; }

// The 4-byte slots that hold `dim` values at precision p.
constexpr std::uint32_t value_slots(std::uint32_t dim, row_precision p) {
  return (dim * bytes_per_value(p) + 3) / 4;
}

// Scalar conversions. To 16 bits: rounded to the nearest, ties to even; NaN stays a NaN, and a
// value beyond FP16's range becomes infinity.
std::uint16_t bf16_of(float value);
float float_of_bf16(std::uint16_t bits);
std::uint16_t fp16_of(float value);
float float_of_fp16(std::uint16_t bits);

// A row's values: `slots` (value_slots(dim, p) of them) to and from `dim` floats.
void decode_values(const float* slots, std::uint32_t dim, row_precision p, float* values);
// Rounded to the nearest. An odd dim's unused half slot is zeroed, so equal rows are equal bytes.
void encode_values(const float* values, std::uint32_t dim, row_precision p, float* slots);
// Rounded stochastically, with draws fixed by `stream` (stochastic_stream); FP32 copies.
void encode_values_stochastic(const float* values, std::uint32_t dim, row_precision p, std::uint64_t stream,
                              float* slots);
// The stream of one update of one row: (seed, table, id) name the row, `update` counts the updates
// (a shard's push count), so that a row pushed the same step twice draws anew. In two parts, so
// that an update of many rows mixes its own part once: stochastic_update(seed, table, update),
// then per row stochastic_stream(that, id), one 64-bit mix.
std::uint64_t stochastic_update(std::uint64_t seed, std::uint32_t table, std::uint64_t update);
constexpr std::uint64_t stochastic_stream(std::uint64_t update_stream, std::uint64_t id) {
  return mix64(update_stream ^ (id * 0x9e3779b97f4a7c15ULL));
}

// n values as 16-bit words (p is bf16 or fp16), for the wire and the model file: rounded to the
// nearest, which is exact for values read from rows of that precision.
void to_halves(const float* values, std::size_t n, row_precision p, std::uint16_t* halves);
void from_halves(const std::uint16_t* halves, std::size_t n, row_precision p, float* values);
// n values as 2 n bytes of 16-bit little-endian words (p is bf16 or fp16; the byte order of the
// model file and the delta file), rounded to the nearest; and back.
void to_halves_le(const float* values, std::size_t n, row_precision p, unsigned char* out);
void from_halves_le(const unsigned char* in, std::size_t n, row_precision p, float* values);
// How many of n values are finite but round to infinity at precision p (beyond fp16's 65504, or
// bf16's largest, near FP32's): what a writer of 16-bit values refuses rather than write infinity.
std::size_t overflows(const float* values, std::size_t n, row_precision p);
// n values replaced, in place, by their nearest at precision p (what a round trip through a row,
// the wire or a model file of that precision gives back); nothing at fp32.
void round_to_nearest(float* values, std::size_t n, row_precision p);

}  // namespace ss::embedding
