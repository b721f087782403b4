// Hex digits for checksums, ids and hashes in files, logs and messages: one spelling everywhere.
#pragma once

#include <cstdint>
#include <string>

namespace ss::io {

// `v` as at least `digits` lowercase hex digits, zero-padded (16 for a 64-bit value, 8 for 32).
inline std::string hex(std::uint64_t v, int digits) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), kDigits[v & 0xf]);
    v >>= 4;
  } while (v != 0);
  if (static_cast<int>(s.size()) < digits) s.insert(0, static_cast<std::size_t>(digits) - s.size(), '0');
  return s;
}

}  // namespace ss::io
