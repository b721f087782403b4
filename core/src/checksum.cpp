#include "ss/core/checksum.hpp"

#include <array>
#include <cstring>

#include "ss/core/hash.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define SS_CRC32C_HAVE_SSE42 1
#endif

namespace ss {
namespace {

constexpr std::uint32_t kPoly = 0x82F63B78u;  // 0x1EDC6F41 reflected

struct crc_tables {
  std::uint32_t t[8][256];
};

constexpr crc_tables make_tables() {
  crc_tables tb{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1u) ? kPoly : 0u);
    tb.t[0][i] = c;
  }
  for (std::uint32_t i = 0; i < 256; ++i) {
    for (int s = 1; s < 8; ++s) tb.t[s][i] = (tb.t[s - 1][i] >> 8) ^ tb.t[0][tb.t[s - 1][i] & 0xFFu];
  }
  return tb;
}

constexpr crc_tables kTables = make_tables();

inline std::uint64_t load_le64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Operates on the raw (already inverted) register.
std::uint32_t crc_sliced(std::uint32_t c, const unsigned char* p, std::size_t n) {
  const auto& t = kTables.t;
  while (n >= 8) {
    const std::uint64_t w = load_le64(p) ^ c;
    c = t[7][w & 0xFF] ^ t[6][(w >> 8) & 0xFF] ^ t[5][(w >> 16) & 0xFF] ^ t[4][(w >> 24) & 0xFF] ^
        t[3][(w >> 32) & 0xFF] ^ t[2][(w >> 40) & 0xFF] ^ t[1][(w >> 48) & 0xFF] ^ t[0][w >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = (c >> 8) ^ t[0][(c ^ *p++) & 0xFF];
  return c;
}

#ifdef SS_CRC32C_HAVE_SSE42
__attribute__((target("sse4.2"))) std::uint32_t crc_sse42(std::uint32_t c, const unsigned char* p,
                                                          std::size_t n) {
  std::uint64_t c64 = c;
  while (n >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);  // x86 is little-endian
    c64 = _mm_crc32_u64(c64, w);
    p += 8;
    n -= 8;
  }
  auto c32 = static_cast<std::uint32_t>(c64);
  while (n-- > 0) c32 = _mm_crc32_u8(c32, *p++);
  return c32;
}

bool have_sse42() {
  static const bool yes = __builtin_cpu_supports("sse4.2") != 0;
  return yes;
}
#endif

}  // namespace

std::uint32_t crc32c(const void* data, std::size_t n, std::uint32_t crc) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t c = ~crc;
#ifdef SS_CRC32C_HAVE_SSE42
  if (have_sse42()) return ~crc_sse42(c, p, n);
#endif
  return ~crc_sliced(c, p, n);
}

std::uint64_t hash64(const void* data, std::size_t n, std::uint64_t seed) {
  return hash_bytes(data, n, seed);
}

}  // namespace ss
