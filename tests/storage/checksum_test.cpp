// CRC32C against known vectors, hash64 pinned to golden values (both are part of on-disk formats),
// and the record format of the RocksDB store.
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "ss/core/checksum.hpp"
#include "ss/core/hash.hpp"
#include "ss/storage/record_format.hpp"

namespace fmt = ss::storage::format;

TEST_CASE("crc32c matches the known vectors", "[storage]") {
  CHECK(ss::crc32c("123456789", 9) == 0xE3069283u);
  const std::vector<unsigned char> zeros(32, 0);
  CHECK(ss::crc32c(zeros.data(), zeros.size()) == 0x8A9136AAu);
  const std::vector<unsigned char> ones(32, 0xFF);
  CHECK(ss::crc32c(ones.data(), ones.size()) == 0x62A8AB43u);  // RFC 3720 B.4
  CHECK(ss::crc32c("", 0) == 0u);
  std::vector<unsigned char> b(100);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<unsigned char>(i * 7);
  CHECK(ss::crc32c(b.data(), b.size()) == 0xD8AAEAF3u);  // checked with a bitwise reference
}

TEST_CASE("crc32c continuation equals one shot at every split and alignment", "[storage]") {
  std::vector<unsigned char> b(301);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<unsigned char>((i * 131 + 7) & 0xFF);
  for (std::size_t offset = 0; offset < 9; ++offset) {
    const unsigned char* p = b.data() + offset;
    const std::size_t n = b.size() - offset;
    const std::uint32_t whole = ss::crc32c(p, n);
    for (std::size_t split = 0; split <= n; split += 7) {
      INFO("offset " << offset << " split " << split);
      CHECK(ss::crc32c(p + split, n - split, ss::crc32c(p, split)) == whole);
    }
  }
  CHECK(ss::crc32c("56789", 5, ss::crc32c("1234", 4)) == 0xE3069283u);
}

TEST_CASE("hash64 is stable and seeded", "[storage]") {
  CHECK(ss::hash64("", 0) == 0xe220a8397b1dcdafULL);
  CHECK(ss::hash64("123456789", 9) == 0xfea7907adfb9268cULL);
  CHECK(ss::hash64("123456789", 9, 42) == 0xa19c2dfe756852c3ULL);
  std::vector<unsigned char> b(100);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<unsigned char>(i * 7);
  CHECK(ss::hash64(b.data(), b.size(), 7) == 0x51c9cb3f0c19dd47ULL);
  CHECK(ss::hash64(b.data(), b.size(), 7) == ss::hash_bytes(b.data(), b.size(), 7));
  CHECK(ss::hash64(b.data(), b.size(), 8) != ss::hash64(b.data(), b.size(), 7));
  CHECK(ss::hash64(b.data(), 99, 7) != ss::hash64(b.data(), 100, 7));
}

TEST_CASE("row keys are big endian so a table's rows sort by id", "[storage]") {
  char a[fmt::kRowKeySize], b[fmt::kRowKeySize];
  fmt::encode_row_key(0x01020304u, 0x0102030405060708ULL, a);
  const unsigned char want[13] = {'r', 1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 7, 8};
  CHECK(std::memcmp(a, want, 13) == 0);
  fmt::encode_row_key(1, 255, a);
  fmt::encode_row_key(1, 256, b);
  CHECK(std::memcmp(a, b, 13) < 0);
  fmt::encode_row_key(2, 0, b);
  CHECK(std::memcmp(a, b, 13) < 0);
  std::uint32_t t = 0;
  std::uint64_t id = 0;
  REQUIRE(fmt::decode_row_key(b, 13, &t, &id));
  CHECK(t == 2);
  CHECK(id == 0);
  CHECK_FALSE(fmt::decode_row_key(b, 12, &t, &id));
  CHECK(fmt::describe_key(a, 13) == "row (1, 255)");
}

TEST_CASE("a row record detects every flipped bit and a wrong size", "[storage]") {
  const std::uint32_t rf = 3;
  char key[fmt::kRowKeySize];
  fmt::encode_row_key(3, 12345, key);
  const float row[rf] = {1.5f, -2.0f, 1e-3f};
  std::string value(fmt::row_value_size(rf), '\0');
  REQUIRE(value.size() == 16);
  fmt::encode_row_value(key, sizeof key, row, rf, value.data());
  float back[rf] = {};
  std::uint32_t t = 0;
  std::uint64_t id = 0;
  REQUIRE(fmt::check_row(key, sizeof key, value.data(), value.size(), rf, &t, &id, back).is_ok());
  CHECK(t == 3);
  CHECK(id == 12345);
  CHECK(std::memcmp(back, row, sizeof row) == 0);
  float first = 0;
  std::memcpy(&first, value.data(), 4);  // little endian floats on this host
  CHECK(first == 1.5f);

  for (std::size_t byte = 0; byte < value.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = value;
      bad[byte] = static_cast<char>(bad[byte] ^ (1 << bit));
      const ss::status s = fmt::check_row(key, sizeof key, bad.data(), bad.size(), rf, &t, &id, back);
      REQUIRE(s.code() == ss::errc::corrupt);
      REQUIRE(s.message() == "row (3, 12345) fails its checksum");
    }
  }
  // The key is covered too: the same value under another id fails.
  char other[fmt::kRowKeySize];
  fmt::encode_row_key(3, 12346, other);
  CHECK(fmt::check_row(other, sizeof other, value.data(), value.size(), rf, &t, &id, back).code() == ss::errc::corrupt);
  const ss::status torn = fmt::check_row(key, sizeof key, value.data(), value.size() - 4, rf, &t, &id, back);
  CHECK(torn.code() == ss::errc::corrupt);
  CHECK(torn.message() == "row (3, 12345) has 12 bytes, expected 16");
}

TEST_CASE("small records carry a checksum", "[storage]") {
  const std::string k = "mjob";
  const std::string v = fmt::encode_small_value(k, "abc");
  CHECK(v.size() == 7);
  auto back = fmt::decode_small_value(k, v.data(), v.size(), "metadata");
  REQUIRE(back.is_ok());
  CHECK(*back == "abc");
  std::string bad = v;
  bad[1] = 'x';
  CHECK(fmt::decode_small_value(k, bad.data(), bad.size(), "metadata \"job\"").error().message() ==
        "metadata \"job\" fails its checksum");
  CHECK(fmt::decode_small_value(k, v.data(), 2, "m").error().code() == ss::errc::corrupt);
}
