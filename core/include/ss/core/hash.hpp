// Stable 64-bit hashing. Feature ids must be identical across runs, processes, machines and
// versions of this program (they key embedding rows, checkpoints and shard placement), so this
// is our own fixed algorithm, never std::hash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace ss {

// The splitmix64 finalizer: a bijective 64-bit mixer with full avalanche.
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

namespace detail {
inline std::uint64_t load_le64(const unsigned char* p) noexcept {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
}  // namespace detail

// Hash of a byte string. Little-endian by definition, so the value is the same on every host.
inline std::uint64_t hash_bytes(const void* data, std::size_t n, std::uint64_t seed) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t h = mix64(seed ^ (0x9e3779b97f4a7c15ULL * (n + 1)));
  while (n >= 8) {
    h = mix64(h ^ detail::load_le64(p));
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    unsigned char tail[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    std::memcpy(tail, p, n);
    tail[7] = static_cast<unsigned char>(0x80 | n);  // length marker: "ab" != "ab\0"
    h = mix64(h ^ detail::load_le64(tail));
  }
  return h;
}

// The id of categorical value `value` of feature `feature` (0-based column among the
// categorical features). The empty string is a value like any other: "missing" gets a row.
inline std::uint64_t feature_id(std::uint32_t feature, std::string_view value) noexcept {
  return hash_bytes(value.data(), value.size(), mix64(0x5353ULL + feature));
}

// Combines several 64-bit values into one hash (counter-based randomness, placement).
constexpr std::uint64_t hash_combine(std::uint64_t a, std::uint64_t b) noexcept {
  return mix64(a ^ (mix64(b) + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2)));
}

}  // namespace ss
