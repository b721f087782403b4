#include "ss/core/embedding/row_precision.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ss/core/hash.hpp"
#include "ss/core/multiversion.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace ss::embedding {
namespace {

// The conversions run over every value of every row a shard looks up or updates: each is written
// branch-free over 32-bit lanes (both sides of a choice computed, then selected), so that the
// loops below vectorize, once per ISA (SS_MULTIVERSION).

// Row memory is allocated as floats; its 16-bit values are read and written through this type,
// which may alias them.
using half_word = std::uint16_t __attribute__((may_alias));

inline std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float float_of_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// a if c, else b, by a mask: GCC turns nested conditional expressions into branches that keep
// the loops from vectorizing; this it does not.
inline std::uint32_t pick(bool c, std::uint32_t a, std::uint32_t b) {
  return b ^ ((a ^ b) & (0u - static_cast<std::uint32_t>(c)));
}

constexpr std::uint32_t kInfBits = 0x7F800000u;
// FP32 bit patterns of FP16 landmarks: its largest finite value (65504), the midpoint between it
// and infinity (65520: at and above it, nearest rounding gives infinity), and its smallest normal
// value (2^-14).
constexpr std::uint32_t kFp16MaxBits = 0x477FE000u;
constexpr std::uint32_t kFp16OverflowBits = 0x477FF000u;
constexpr std::uint32_t kFp16MinNormalBits = 0x38800000u;
constexpr std::uint32_t kRebias = (127u - 15u) << 23;  // FP32's exponent bias less FP16's

inline std::uint32_t bf16_nearest(std::uint32_t u) {
  const std::uint32_t nan = (u >> 16) | 0x0040u;  // quiet: a payload only in the dropped bits stays a NaN
  const std::uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  return pick((u & 0x7FFFFFFFu) > kInfBits, nan, rounded);
}

// Sign and magnitude: adding random bits to the magnitude's dropped ones carries into the kept
// ones with the probability of their fraction, away from zero for either sign.
inline std::uint32_t bf16_stochastic(std::uint32_t u, std::uint32_t r16) {
  const std::uint32_t rounded = (u + r16) >> 16;
  const std::uint32_t largest = (u >> 16) | 0x007Fu;  // a finite value does not round up to infinity
  const std::uint32_t finite = pick((rounded & 0x7F80u) == 0x7F80u, largest, rounded);
  return pick((u & kInfBits) == kInfBits, bf16_nearest(u), finite);
}

inline std::uint32_t fp16_nearest(std::uint32_t u) {
  const std::uint32_t sign = (u >> 16) & 0x8000u, magnitude = u & 0x7FFFFFFFu;
  const std::uint32_t rebiased = magnitude - kRebias;
  const std::uint32_t normal = (rebiased + 0xFFFu + ((rebiased >> 13) & 1u)) >> 13;
  // A subnormal is the nearest multiple of 2^-24: added to 0.5 (whose spacing that is), the
  // float addition rounds it so, ties to even.
  const std::uint32_t subnormal = bits_of(float_of_bits(magnitude) + 0.5f) - 0x3F000000u;
  const std::uint32_t out =
      pick(magnitude > kInfBits, 0x7E00u,
           pick(magnitude >= kFp16OverflowBits, 0x7C00u, pick(magnitude < kFp16MinNormalBits, subnormal, normal)));
  return sign | out;
}

inline std::uint32_t fp16_stochastic(std::uint32_t u, std::uint32_t r16) {
  const std::uint32_t sign = (u >> 16) & 0x8000u, magnitude = u & 0x7FFFFFFFu;
  // Normal: drop 13 bits of significand, adding 13 random ones.
  const std::uint32_t normal = (magnitude - kRebias + (r16 >> 3)) >> 13;
  // Subnormal: the value in units of 2^-24 (exact: a power-of-two scaling; clamped, so that the
  // lanes of normal values, infinities and NaNs, discarded below, convert without overflow: the
  // clamp comes first, which std::min returns for a NaN), its fraction decided by the draw (1024
  // units is the smallest normal value, correctly encoded so).
  const float units = std::min(2048.0f, float_of_bits(magnitude) * 0x1p24f);
  const auto whole = static_cast<std::int32_t>(units);
  const float fraction = units - static_cast<float>(whole);
  const std::uint32_t up = static_cast<std::uint32_t>(static_cast<float>(r16) * 0x1p-16f < fraction);
  const std::uint32_t subnormal = static_cast<std::uint32_t>(whole) + up;
  const std::uint32_t special = pick(magnitude > kInfBits, 0x7E00u, 0x7C00u);  // NaN, infinity
  const std::uint32_t out = pick(magnitude >= kInfBits, special,
                                 pick(magnitude >= kFp16MaxBits, 0x7BFFu,  // saturates
                                      pick(magnitude < kFp16MinNormalBits, subnormal, normal)));
  return sign | out;
}

// A normal value's exponent and significand move to FP32's places and rebias; a subnormal is its
// significand times 2^-24, computed from the integer so that no operand is a subnormal float (whose
// arithmetic costs a microcode assist on x86); infinity and NaN keep their significand under an
// all-ones exponent.
inline float fp16_value(std::uint32_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16, shifted = (h & 0x7FFFu) << 13, exponent = h & 0x7C00u;
  const std::uint32_t normal = shifted + kRebias;
  const std::uint32_t subnormal = bits_of(static_cast<float>(static_cast<std::int32_t>(h & 0x3FFu)) * 0x1p-24f);
  const std::uint32_t special = shifted | kInfBits;
  return float_of_bits(sign | pick(exponent == 0x7C00u, special, pick(exponent == 0, subnormal, normal)));
}

// 16 random bits for value i of a stream: a 32-bit integer hash (lowbias32) of the stream's bits
// and i, computed in every lane at once.
inline std::uint32_t draw(std::uint32_t stream_bits, std::uint32_t i) {
  std::uint32_t h = stream_bits ^ (i * 0x9E3779B9u);
  h ^= h >> 16;
  h *= 0x7FEB352Du;
  h ^= h >> 15;
  h *= 0x846CA68Bu;
  h ^= h >> 16;
  return h >> 16;
}

SS_MULTIVERSION void decode_bf16(const half_word* __restrict in, std::size_t n, float* __restrict out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = float_of_bits(std::uint32_t{in[i]} << 16);
}

SS_MULTIVERSION void decode_fp16_portable(const half_word* __restrict in, std::size_t n, float* __restrict out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = fp16_value(in[i]);
}

SS_MULTIVERSION void encode_bf16(const float* __restrict in, std::size_t n, half_word* __restrict out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint16_t>(bf16_nearest(bits_of(in[i])));
}

SS_MULTIVERSION void encode_fp16_portable(const float* __restrict in, std::size_t n, half_word* __restrict out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint16_t>(fp16_nearest(bits_of(in[i])));
}

// Where the CPU converts between FP16 and FP32 itself (F16C: every x86-64 of the last decade),
// eight values an instruction; the same results as the portable loops (IEEE conversions, rounding
// to the nearest, ties to even; a NaN stays a NaN), which do the tails.
#if defined(__x86_64__)
__attribute__((target("avx,f16c"))) void decode_fp16_f16c(const half_word* __restrict in, std::size_t n,
                                                             float* __restrict out) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  decode_fp16_portable(in + i, n - i, out + i);
}

__attribute__((target("avx,f16c"))) void encode_fp16_f16c(const float* __restrict in, std::size_t n,
                                                             half_word* __restrict out) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  encode_fp16_portable(in + i, n - i, out + i);
}

// F16C and AVX in the CPU, and the AVX registers saved by the OS (CPUID leaf 1, XCR0). Asked of
// the CPU itself: not every compiler's __builtin_cpu_supports knows "f16c".
bool cpu_has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
  const unsigned osxsave = 1u << 27, avx = 1u << 28, f16c = 1u << 29;
  if ((ecx & (osxsave | avx | f16c)) != (osxsave | avx | f16c)) return false;
  unsigned xcr0 = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0), "=d"(xcr0_high) : "c"(0));
  return (xcr0 & 6u) == 6u;  // SSE and AVX state
}

const bool has_f16c = cpu_has_f16c();

void decode_fp16(const half_word* in, std::size_t n, float* out) {
  if (has_f16c) decode_fp16_f16c(in, n, out);
  else decode_fp16_portable(in, n, out);
}

void encode_fp16(const float* in, std::size_t n, half_word* out) {
  if (has_f16c) encode_fp16_f16c(in, n, out);
  else encode_fp16_portable(in, n, out);
}
#else
void decode_fp16(const half_word* in, std::size_t n, float* out) { decode_fp16_portable(in, n, out); }
void encode_fp16(const float* in, std::size_t n, half_word* out) { encode_fp16_portable(in, n, out); }
#endif

SS_MULTIVERSION void encode_bf16_stochastic(const float* __restrict in, std::size_t n, std::uint32_t stream,
                                            half_word* __restrict out) {
  for (std::size_t i = 0; i < n; ++i)
    out[i] = static_cast<std::uint16_t>(bf16_stochastic(bits_of(in[i]), draw(stream, static_cast<std::uint32_t>(i))));
}

SS_MULTIVERSION void encode_fp16_stochastic(const float* __restrict in, std::size_t n, std::uint32_t stream,
                                            half_word* __restrict out) {
  for (std::size_t i = 0; i < n; ++i)
    out[i] = static_cast<std::uint16_t>(fp16_stochastic(bits_of(in[i]), draw(stream, static_cast<std::uint32_t>(i))));
}

}  // namespace

result<row_precision> parse_row_precision(const std::string& name) {
  if (name == "fp32") return row_precision::fp32;
  if (name == "bf16") return row_precision::bf16;
  if (name == "fp16") return row_precision::fp16;
  return status(errc::invalid_argument, "unknown row precision '" + name + "' (expected fp32, bf16 or fp16)");
}

const char* to_string(row_precision p) {
  switch (p) {
    case row_precision::fp32: return "fp32";
    case row_precision::bf16: return "bf16";
    case row_precision::fp16: return "fp16";
  }
  return "unknown";
}

result<row_precision> row_precision_of_code(std::uint32_t code, const std::string& what) {
  if (code <= static_cast<std::uint32_t>(row_precision::fp16)) return static_cast<row_precision>(code);
  return status(errc::invalid_argument, what + ": row precision code " + std::to_string(code) +
                                            " is none this build knows (0 fp32, 1 bf16, 2 fp16)");
}

std::uint16_t bf16_of(float value) { return static_cast<std::uint16_t>(bf16_nearest(bits_of(value))); }

float float_of_bf16(std::uint16_t bits) { return float_of_bits(std::uint32_t{bits} << 16); }

std::uint16_t fp16_of(float value) { return static_cast<std::uint16_t>(fp16_nearest(bits_of(value))); }

float float_of_fp16(std::uint16_t bits) { return fp16_value(bits); }

void decode_values(const float* slots, std::uint32_t dim, row_precision p, float* values) {
  if (p == row_precision::fp32) std::memcpy(values, slots, sizeof(float) * dim);
  else from_halves(reinterpret_cast<const std::uint16_t*>(slots), dim, p, values);
}

void encode_values(const float* values, std::uint32_t dim, row_precision p, float* slots) {
  if (p == row_precision::fp32) {
    std::memcpy(slots, values, sizeof(float) * dim);
    return;
  }
  auto* halves = reinterpret_cast<half_word*>(slots);
  if (dim % 2 == 1) halves[dim] = 0;
  to_halves(values, dim, p, reinterpret_cast<std::uint16_t*>(slots));
}

void encode_values_stochastic(const float* values, std::uint32_t dim, row_precision p, std::uint64_t stream,
                              float* slots) {
  if (p == row_precision::fp32) {
    std::memcpy(slots, values, sizeof(float) * dim);
    return;
  }
  auto* halves = reinterpret_cast<half_word*>(slots);
  if (dim % 2 == 1) halves[dim] = 0;
  const auto stream_bits = static_cast<std::uint32_t>(stream ^ (stream >> 32));
  if (p == row_precision::bf16) encode_bf16_stochastic(values, dim, stream_bits, halves);
  else encode_fp16_stochastic(values, dim, stream_bits, halves);
}

std::uint64_t stochastic_update(std::uint64_t seed, std::uint32_t table, std::uint64_t update) {
  return hash_combine(hash_combine(seed ^ 0x5eed5eed5eed5eedULL, table), update);
}

void to_halves(const float* values, std::size_t n, row_precision p, std::uint16_t* halves) {
  auto* out = reinterpret_cast<half_word*>(halves);
  if (p == row_precision::bf16) encode_bf16(values, n, out);
  else encode_fp16(values, n, out);
}

void from_halves(const std::uint16_t* halves, std::size_t n, row_precision p, float* values) {
  const auto* in = reinterpret_cast<const half_word*>(halves);
  if (p == row_precision::bf16) decode_bf16(in, n, values);
  else decode_fp16(in, n, values);
}

void to_halves_le(const float* values, std::size_t n, row_precision p, unsigned char* out) {
  std::uint16_t halves[64];
  for (std::size_t i = 0; i < n; i += 64) {
    const std::size_t k = std::min<std::size_t>(64, n - i);
    to_halves(values + i, k, p, halves);
    for (std::size_t j = 0; j < k; ++j) {
      out[2 * (i + j)] = static_cast<unsigned char>(halves[j] & 0xFFu);
      out[2 * (i + j) + 1] = static_cast<unsigned char>(halves[j] >> 8);
    }
  }
}

void from_halves_le(const unsigned char* in, std::size_t n, row_precision p, float* values) {
  std::uint16_t halves[64];
  for (std::size_t i = 0; i < n; i += 64) {
    const std::size_t k = std::min<std::size_t>(64, n - i);
    for (std::size_t j = 0; j < k; ++j)
      halves[j] = static_cast<std::uint16_t>(in[2 * (i + j)] | (in[2 * (i + j) + 1] << 8));
    from_halves(halves, k, p, values + i);
  }
}

std::size_t overflows(const float* values, std::size_t n, row_precision p) {
  if (p == row_precision::fp32) return 0;
  // The magnitudes from which the nearest 16-bit value is infinity: halfway past the largest.
  const std::uint32_t from = p == row_precision::fp16 ? kFp16OverflowBits : 0x7F7F8000u;
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t magnitude = bits_of(values[i]) & 0x7FFFFFFFu;
    count += magnitude >= from && magnitude < kInfBits;
  }
  return count;
}

void round_to_nearest(float* values, std::size_t n, row_precision p) {
  if (p == row_precision::fp32) return;
  std::uint16_t halves[64];
  for (std::size_t i = 0; i < n; i += 64) {
    const std::size_t k = std::min<std::size_t>(64, n - i);
    to_halves(values + i, k, p, halves);
    from_halves(halves, k, p, values + i);
  }
}

}  // namespace ss::embedding
