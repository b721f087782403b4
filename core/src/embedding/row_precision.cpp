#include "ss/core/embedding/row_precision.hpp"

#include <cmath>

#include "ss/core/hash.hpp"

namespace ss::embedding {
namespace {

std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float float_of_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

constexpr std::uint32_t kInfBits = 0x7F800000u;
// FP32 bit patterns of FP16 landmarks: its largest finite value (65504), the midpoint between it
// and infinity (65520: at and above it, nearest rounding gives infinity), and its smallest normal
// value (2^-14).
constexpr std::uint32_t kFp16MaxBits = 0x477FE000u;
constexpr std::uint32_t kFp16OverflowBits = 0x477FF000u;
constexpr std::uint32_t kFp16MinNormalBits = 0x38800000u;

// 16 random bits per value: one 64-bit draw serves four values.
struct draws {
  std::uint64_t stream;
  std::uint64_t word = 0;
  std::uint32_t left = 0;
  std::uint32_t index = 0;
  std::uint32_t next() {
    if (left == 0) {
      word = mix64(stream + 0x9e3779b97f4a7c15ULL * ++index);
      left = 4;
    }
    const auto r = static_cast<std::uint32_t>(word & 0xFFFFu);
    word >>= 16;
    --left;
    return r;
  }
};

std::uint16_t bf16_stochastic(float value, std::uint32_t r16) {
  const std::uint32_t u = bits_of(value);
  if ((u & kInfBits) == kInfBits) return bf16_of(value);  // infinity, NaN
  // Sign and magnitude: adding to the magnitude's dropped bits carries into the kept ones with
  // the probability of their fraction, away from zero for either sign.
  const std::uint32_t rounded = (u + r16) >> 16;
  // The largest finite value does not round up to infinity.
  if ((rounded & 0x7F80u) == 0x7F80u) return static_cast<std::uint16_t>((u >> 16) | 0x007Fu);
  return static_cast<std::uint16_t>(rounded);
}

std::uint16_t fp16_stochastic(float value, std::uint32_t r16) {
  const std::uint32_t u = bits_of(value), sign = (u >> 16) & 0x8000u, magnitude = u & 0x7FFFFFFFu;
  if (magnitude >= kInfBits) return fp16_of(value);             // infinity, NaN
  if (magnitude >= kFp16MaxBits) return static_cast<std::uint16_t>(sign | 0x7BFFu);  // saturates
  if (magnitude < kFp16MinNormalBits) {
    // FP16's subnormals are multiples of 2^-24: the value in those units, its fraction decided
    // by the draw.
    const float units = float_of_bits(magnitude) * 0x1p24f;
    const float whole = std::floor(units);
    const auto q = static_cast<std::uint32_t>(whole) + (static_cast<float>(r16) * 0x1p-16f < units - whole ? 1u : 0u);
    return static_cast<std::uint16_t>(sign | q);  // q = 1024 is the smallest normal, correctly
  }
  // Normal: rebias the exponent (127 -> 15) and drop 13 bits of significand, adding 13 random ones.
  const std::uint32_t rebiased = magnitude - ((127u - 15u) << 23);
  return static_cast<std::uint16_t>(sign | ((rebiased + (r16 >> 3)) >> 13));
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

std::uint16_t bf16_of(float value) {
  const std::uint32_t u = bits_of(value);
  if ((u & 0x7FFFFFFFu) > kInfBits) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);  // a quiet NaN
  return static_cast<std::uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

float float_of_bf16(std::uint16_t bits) { return float_of_bits(std::uint32_t{bits} << 16); }

std::uint16_t fp16_of(float value) {
  const std::uint32_t u = bits_of(value), sign = (u >> 16) & 0x8000u, magnitude = u & 0x7FFFFFFFu;
  if (magnitude > kInfBits) return static_cast<std::uint16_t>(sign | 0x7E00u);  // a quiet NaN
  if (magnitude >= kFp16OverflowBits) return static_cast<std::uint16_t>(sign | 0x7C00u);
  if (magnitude < kFp16MinNormalBits) {
    // A subnormal: the nearest multiple of 2^-24 (nearbyint rounds ties to even).
    const auto q = static_cast<std::uint32_t>(std::nearbyint(float_of_bits(magnitude) * 0x1p24f));
    return static_cast<std::uint16_t>(sign | q);
  }
  const std::uint32_t rebiased = magnitude - ((127u - 15u) << 23);
  return static_cast<std::uint16_t>(sign | ((rebiased + 0xFFFu + ((rebiased >> 13) & 1u)) >> 13));
}

float float_of_fp16(std::uint16_t bits) {
  const std::uint32_t sign = std::uint32_t{bits & 0x8000u} << 16, exponent = (bits >> 10) & 0x1Fu,
                      significand = bits & 0x3FFu;
  if (exponent == 0) {
    const float magnitude = static_cast<float>(significand) * 0x1p-24f;
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 31) return float_of_bits(sign | kInfBits | (significand << 13));
  return float_of_bits(sign | ((exponent + 127u - 15u) << 23) | (significand << 13));
}

void decode_values(const float* slots, std::uint32_t dim, row_precision p, float* values) {
  switch (p) {
    case row_precision::fp32: std::memcpy(values, slots, sizeof(float) * dim); return;
    case row_precision::bf16:
      for (std::uint32_t d = 0; d < dim; ++d) values[d] = float_of_bf16(half_at(slots, d));
      return;
    case row_precision::fp16:
      for (std::uint32_t d = 0; d < dim; ++d) values[d] = float_of_fp16(half_at(slots, d));
      return;
  }
}

void encode_values(const float* values, std::uint32_t dim, row_precision p, float* slots) {
  if (p == row_precision::fp32) {
    std::memcpy(slots, values, sizeof(float) * dim);
    return;
  }
  if (dim % 2 == 1) set_half_at(slots, dim, 0);
  for (std::uint32_t d = 0; d < dim; ++d)
    set_half_at(slots, d, p == row_precision::bf16 ? bf16_of(values[d]) : fp16_of(values[d]));
}

void encode_values_stochastic(const float* values, std::uint32_t dim, row_precision p, std::uint64_t stream,
                              float* slots) {
  if (p == row_precision::fp32) {
    std::memcpy(slots, values, sizeof(float) * dim);
    return;
  }
  if (dim % 2 == 1) set_half_at(slots, dim, 0);
  draws r{stream};
  for (std::uint32_t d = 0; d < dim; ++d)
    set_half_at(slots, d,
                p == row_precision::bf16 ? bf16_stochastic(values[d], r.next()) : fp16_stochastic(values[d], r.next()));
}

std::uint64_t stochastic_stream(std::uint64_t seed, std::uint32_t table, std::uint64_t id, std::uint64_t update) {
  return hash_combine(hash_combine(hash_combine(seed ^ 0x5eed5eed5eed5eedULL, table), id), update);
}

void to_halves(const float* values, std::size_t n, row_precision p, std::uint16_t* halves) {
  if (p == row_precision::bf16) {
    for (std::size_t i = 0; i < n; ++i) halves[i] = bf16_of(values[i]);
  } else {
    for (std::size_t i = 0; i < n; ++i) halves[i] = fp16_of(values[i]);
  }
}

void from_halves(const std::uint16_t* halves, std::size_t n, row_precision p, float* values) {
  if (p == row_precision::bf16) {
    for (std::size_t i = 0; i < n; ++i) values[i] = float_of_bf16(halves[i]);
  } else {
    for (std::size_t i = 0; i < n; ++i) values[i] = float_of_fp16(halves[i]);
  }
}

}  // namespace ss::embedding
