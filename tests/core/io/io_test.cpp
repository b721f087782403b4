// Durable files, the on-disk byte order, hex digits and the manifests' keyed text.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "ss/core/io/byte_order.hpp"
#include "ss/core/io/durable_file.hpp"
#include "ss/core/io/keyed_text.hpp"
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
  const std::string bytes = job::encode_dense(job::dense_state{{1.0f}, {}, {-2.5f}, 258});
  // magic (8), count 1 (8, LE), 1.0f (4, LE), count 0 (8), steps 258 (8, LE), count 1 (8),
  // -2.5f (4, LE), crc (4)
  REQUIRE(bytes.size() == 52);
  CHECK(bytes.substr(8, 8) == std::string("\x01\0\0\0\0\0\0\0", 8));
  CHECK(bytes.substr(16, 4) == std::string("\x00\x00\x80\x3f", 4));
  CHECK(bytes.substr(28, 8) == std::string("\x02\x01\0\0\0\0\0\0", 8));
  CHECK(bytes.substr(44, 4) == std::string("\x00\x00\x20\xc0", 4));
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

TEST_CASE("hex: zero-padded lowercase digits, wider values kept whole", "[core][io]") {
  CHECK(ss::io::hex(0, 8) == "00000000");
  CHECK(ss::io::hex(0xdeadbeef, 8) == "deadbeef");
  CHECK(ss::io::hex(0x1f, 16) == "000000000000001f");
  CHECK(ss::io::hex(~0ULL, 16) == "ffffffffffffffff");
  CHECK(ss::io::hex(0x12345, 2) == "12345");
}

TEST_CASE("keyed text: written, checked and read back field by field", "[core][io]") {
  ss::io::keyed_text_writer w("a test manifest");
  w.add("format", "3").add("counts", "1 0x10 -7 0.1").add("hash", ss::io::hex(0xabcdef, 16)).add("path", "/a b/c");
  const std::string text = w.finish();
  CHECK(text.rfind("# a test manifest\nformat = 3\n", 0) == 0);
  CHECK(text.find("\ncrc32c = ") != std::string::npos);

  auto k = ss::io::keyed_text::parse(text, "T");
  REQUIRE(k.is_ok());
  std::uint32_t format = 0;
  REQUIRE(k->one("format", format).is_ok());
  CHECK(format == 3);
  std::uint64_t hash = 0;
  REQUIRE(k->one_hex("hash", hash).is_ok());
  CHECK(hash == 0xabcdef);
  auto f = k->fields("counts");
  REQUIRE(f.is_ok());
  std::uint64_t a = 0, b = 0;
  std::int64_t c = 0;
  double d = 0;
  CHECK((f->next(a) && f->next(b) && f->next(c) && f->next(d) && f->done()));
  CHECK(a == 1);
  CHECK(b == 16);
  CHECK(c == -7);
  CHECK(d == 0.1);
  auto p = k->fields("path");
  REQUIRE(p.is_ok());
  std::string path;
  CHECK(p->rest(path));
  CHECK(path == "/a b/c");
  CHECK(ss::io::exact(0.1) == "0.10000000000000001");
}

TEST_CASE("keyed text: every malformed part is named", "[core][io]") {
  const auto with = [](const std::string& body) { return ss::io::with_crc_line(body); };
  auto message = [](const std::string& text) {
    auto k = ss::io::keyed_text::parse(text, "T");
    return k.is_ok() ? std::string("ok") : k.error().message();
  };
  CHECK(message("format = 1\n") == "T has no crc32c line (cut short?)");
  std::string flipped = with("format = 1\n");
  flipped[9] = '2';
  CHECK(message(flipped).rfind("T fails its checksum (stored ", 0) == 0);
  CHECK(message(with("# c\nformat 1\n")) == "T line 2 is not 'key = value'");
  CHECK(message(with("a = 1\na = 2\n")) == "T names 'a' twice");

  auto k = ss::io::keyed_text::parse(with("n = 12x\nbig = 4294967296\nh = 0xz\ntwo = 1 2\nneg = -1\n"), "T");
  REQUIRE(k.is_ok());
  std::uint32_t u32 = 0;
  std::uint64_t u64 = 0;
  CHECK(k->one("missing", u64).message() == "T has no 'missing'");
  CHECK(k->one("n", u64).message() == "T: n has '12x' where a number belongs");
  CHECK(k->one("big", u32).message() == "T: big has 4294967296, beyond 32 bits");
  CHECK(k->one_hex("h", u64).message() == "T: h has '0xz' where hex digits belong");
  CHECK(k->one("two", u64).message() == "T: two has an unexpected field '2'");
  CHECK(k->one("neg", u64).message() == "T: neg has '-1' where a number belongs");
  CHECK(k->one("n", u64).code() == ss::errc::corrupt);
}
