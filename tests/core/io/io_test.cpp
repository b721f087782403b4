// Durable files and the on-disk byte order.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "ss/core/io/byte_order.hpp"
#include "ss/core/io/durable_file.hpp"
#include "ss/core/job/snapshot.hpp"
#include "support/process.hpp"

using namespace ss;
namespace fs = std::filesystem;

TEST_CASE("byte order: integers and floats are little-endian whatever the host", "[core][io]") {
  std::string out;
  io::append_le(out, std::uint32_t{0x01020304});
  io::append_le(out, std::uint64_t{0x1122334455667788ULL});
  CHECK(out == std::string("\x04\x03\x02\x01\x88\x77\x66\x55\x44\x33\x22\x11", 12));
  const auto* p = reinterpret_cast<const unsigned char*>(out.data());
  CHECK(io::get_le<std::uint32_t>(p) == 0x01020304u);
  CHECK(io::get_le<std::uint64_t>(p + 4) == 0x1122334455667788ULL);
  const float values[2] = {1.0f, -2.5f};
  unsigned char bytes[8];
  io::encode_floats_le(values, 2, bytes);
  // IEEE 754: 1.0f = 0x3f800000, -2.5f = 0xc0200000, least significant byte first.
  CHECK(std::string(reinterpret_cast<char*>(bytes), 8) == std::string("\x00\x00\x80\x3f\x00\x00\x20\xc0", 8));
  float back[2] = {};
  io::decode_floats_le(bytes, 2, back);
  CHECK(back[0] == 1.0f);
  CHECK(back[1] == -2.5f);
}

TEST_CASE("byte order: a snapshot's dense.bin is little-endian", "[core][io][snapshot]") {
  const std::string bytes = job::encode_dense(job::dense_state{{1.0f}, {}});
  // magic (8), count 1 (8, LE), 1.0f (4, LE), count 0 (8), crc (4)
  REQUIRE(bytes.size() == 32);
  CHECK(bytes.substr(8, 8) == std::string("\x01\0\0\0\0\0\0\0", 8));
  CHECK(bytes.substr(16, 4) == std::string("\x00\x00\x80\x3f", 4));
}

TEST_CASE("durable files: replace_file swaps the content and leaves no temporary", "[core][io]") {
  ss::test::temp_dir dir;
  const fs::path target = dir.path() / "MANIFEST";
  REQUIRE(io::replace_file(target, "one\n").is_ok());
  REQUIRE(io::replace_file(target, "two\n").is_ok());
  auto text = io::read_file(target);
  REQUIRE(text.is_ok());
  CHECK(*text == "two\n");
  CHECK_FALSE(fs::exists(dir.path() / "MANIFEST.tmp"));
  REQUIRE(io::write_file_synced(dir.path() / "plain", "x").is_ok());
  CHECK(io::sync_file(dir.path() / "plain").is_ok());
  CHECK(io::sync_directory(dir.path()).is_ok());
}

TEST_CASE("durable files: failures name the file and the reason", "[core][io]") {
  ss::test::temp_dir dir;
  auto missing = io::read_file(dir.path() / "nothing");
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.error().code() == errc::not_found);
  CHECK(missing.error().message().find("nothing is missing") != std::string::npos);
  const auto st = io::replace_file(dir.path() / "no-such-dir" / "file", "x");
  REQUIRE_FALSE(st.is_ok());
  CHECK(st.code() == errc::io_error);
  CHECK(st.message().find("no-such-dir/file.tmp: No such file or directory") != std::string::npos);
  CHECK(io::sync_directory(dir.path() / "no-such-dir").code() == errc::io_error);
  CHECK(io::sync_file(dir.path() / "nothing").code() == errc::io_error);
}
