#include "ss/storage/record_format.hpp"

#include <cstring>

#include "ss/core/checksum.hpp"

namespace ss::storage::format {
namespace {

void put_be32(std::uint32_t v, char* out) {
  for (int i = 3; i >= 0; --i) {
    out[i] = static_cast<char>(v & 0xFFu);
    v >>= 8;
  }
}

void put_be64(std::uint64_t v, char* out) {
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<char>(v & 0xFFu);
    v >>= 8;
  }
}

std::uint64_t get_be(const char* p, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void put_le32(std::uint32_t v, char* out) {
  for (int i = 0; i < 4; ++i) {
    out[i] = static_cast<char>(v & 0xFFu);
    v >>= 8;
  }
}

std::uint32_t get_le32(const char* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

constexpr bool host_is_little_endian() {
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)
  return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
#else
  return true;
#endif
}

void floats_to_le(const float* src, std::uint32_t n, char* out) {
  if constexpr (host_is_little_endian()) {
    std::memcpy(out, src, std::size_t{n} * 4);
  } else {
    for (std::uint32_t i = 0; i < n; ++i) {
      std::uint32_t bits = 0;
      std::memcpy(&bits, &src[i], 4);
      put_le32(bits, out + std::size_t{i} * 4);
    }
  }
}

void le_to_floats(const char* src, std::uint32_t n, float* out) {
  if constexpr (host_is_little_endian()) {
    std::memcpy(out, src, std::size_t{n} * 4);
  } else {
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t bits = get_le32(src + std::size_t{i} * 4);
      std::memcpy(&out[i], &bits, 4);
    }
  }
}

constexpr std::uint64_t kRecordHashSeed = 0x5353'434b'5054'0001ULL;  // "SSCKPT" v1

}  // namespace

void encode_row_key(std::uint32_t table, std::uint64_t id, char* out) {
  out[0] = kRowPrefix;
  put_be32(table, out + 1);
  put_be64(id, out + 5);
}

bool decode_row_key(const char* key, std::size_t n, std::uint32_t* table, std::uint64_t* id) {
  if (n != kRowKeySize || key[0] != kRowPrefix) return false;
  *table = static_cast<std::uint32_t>(get_be(key + 1, 4));
  *id = get_be(key + 5, 8);
  return true;
}

void encode_row_value(const char* key, std::size_t key_size, const float* row, std::uint32_t row_floats,
                      char* out) {
  const std::size_t payload = std::size_t{row_floats} * 4;
  floats_to_le(row, row_floats, out);
  const std::uint32_t crc = crc32c(out, payload, crc32c(key, key_size));
  put_le32(crc, out + payload);
}

status check_row(const char* key, std::size_t key_size, const char* value, std::size_t value_size,
                 std::uint32_t row_floats, std::uint32_t* table, std::uint64_t* id, float* row) {
  if (!decode_row_key(key, key_size, table, id)) {
    return {errc::corrupt, "a row key has " + std::to_string(key_size) + " bytes, expected " +
                               std::to_string(kRowKeySize)};
  }
  const std::size_t expected = row_value_size(row_floats);
  if (value_size != expected) {
    return {errc::corrupt, describe_key(key, key_size) + " has " + std::to_string(value_size) +
                               " bytes, expected " + std::to_string(expected)};
  }
  const std::size_t payload = std::size_t{row_floats} * 4;
  const std::uint32_t crc = crc32c(value, payload, crc32c(key, key_size));
  if (crc != get_le32(value + payload)) {
    return {errc::corrupt, describe_key(key, key_size) + " fails its checksum"};
  }
  if (row != nullptr) le_to_floats(value, row_floats, row);
  return status::ok();
}

std::string encode_small_value(const std::string& key, const std::string& value) {
  std::string out = value;
  out.resize(value.size() + kCrcSize);
  const std::uint32_t crc = crc32c(value.data(), value.size(), crc32c(key.data(), key.size()));
  put_le32(crc, &out[value.size()]);
  return out;
}

result<std::string> decode_small_value(const std::string& key, const char* value, std::size_t n,
                                       const std::string& what) {
  if (n < kCrcSize) return {errc::corrupt, what + " is truncated (" + std::to_string(n) + " bytes)"};
  const std::size_t payload = n - kCrcSize;
  const std::uint32_t crc = crc32c(value, payload, crc32c(key.data(), key.size()));
  if (crc != get_le32(value + payload)) return {errc::corrupt, what + " fails its checksum"};
  return std::string(value, payload);
}

std::uint64_t record_hash(const char* key, std::size_t key_size, const char* value, std::size_t value_size) {
  return hash64(value, value_size, hash64(key, key_size, kRecordHashSeed));
}

std::string describe_key(const char* key, std::size_t n) {
  std::uint32_t table = 0;
  std::uint64_t id = 0;
  if (decode_row_key(key, n, &table, &id)) {
    return "row (" + std::to_string(table) + ", " + std::to_string(id) + ")";
  }
  if (n >= 1 && key[0] == kMetaPrefix) return "metadata \"" + std::string(key + 1, n - 1) + "\"";
  if (n >= 1 && key[0] == kFormatPrefix) return "format setting \"" + std::string(key + 1, n - 1) + "\"";
  return "a record with an unknown key of " + std::to_string(n) + " bytes";
}

}  // namespace ss::storage::format
