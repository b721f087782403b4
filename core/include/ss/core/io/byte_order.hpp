// Little-endian encoding, the one byte order of every file shadowsync writes (model files,
// snapshots' dense.bin), whatever the host's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace ss::io {

inline constexpr bool host_is_little_endian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

template <class T>
void put_le(unsigned char* p, T v) {
  static_assert(std::is_unsigned_v<T>);
  for (std::size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

template <class T>
T get_le(const unsigned char* p) {
  static_assert(std::is_unsigned_v<T>);
  T v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v = static_cast<T>(v | (static_cast<T>(p[i]) << (8 * i)));
  return v;
}

template <class T>
void append_le(std::string& out, T v) {
  unsigned char b[sizeof(T)];
  put_le(b, v);
  out.append(reinterpret_cast<const char*>(b), sizeof(T));
}

// n floats to 4n little-endian bytes at dst, and back.
inline void encode_floats_le(const float* src, std::size_t n, unsigned char* dst) {
  if (n == 0) return;  // memcpy's pointers must not be null, even for 0 bytes; an empty vector's may be
  if constexpr (host_is_little_endian) {
    std::memcpy(dst, src, n * sizeof(float));
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      std::uint32_t u;
      std::memcpy(&u, src + i, sizeof u);
      put_le(dst + 4 * i, u);
    }
  }
}

inline void decode_floats_le(const unsigned char* src, std::size_t n, float* dst) {
  if (n == 0) return;
  if constexpr (host_is_little_endian) {
    std::memcpy(dst, src, n * sizeof(float));
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t u = get_le<std::uint32_t>(src + 4 * i);
      std::memcpy(dst + i, &u, sizeof u);
    }
  }
}

}  // namespace ss::io
