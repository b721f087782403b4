#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "ss/wire/codec.hpp"
#include "wire_samples.hpp"

using namespace ss::wire;
using namespace ss::wire::testing;
using ss::errc;

namespace {

frame encode_body(body b, std::uint64_t request_id = 5) {
  envelope e;
  e.request_id = request_id;
  e.message = std::move(b);
  return encode(e);
}

// Decodes `f` and requires a parse error whose message contains `needle`.
void require_parse_error(const frame& f, const std::string& needle) {
  auto r = decode(*f);
  INFO(error_of(r));
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.error().code() == errc::parse_error);
  CHECK_THAT(r.error().message(), Catch::Contains(needle));
}

frame frame_of(const std::vector<std::uint8_t>& b) { return make_frame(b.data(), b.size()); }

// Makes the 16-bit field at `at`, which holds `current`, hold `value`. Cap'n Proto stores a
// field XOR its schema default, so the default is recovered from the current bits first.
void set_u16_field(std::vector<std::uint8_t>& b, std::size_t at, std::uint16_t current,
                   std::uint16_t value) {
  std::uint16_t raw;
  std::memcpy(&raw, b.data() + at, 2);
  const std::uint16_t stored = static_cast<std::uint16_t>(value ^ raw ^ current);
  std::memcpy(b.data() + at, &stored, 2);
}

// `a` encoded with `value` in the 16-bit field (an enumeration) that holds `current` there and
// is all that differs from `b`'s frame: a value our encoder never writes, which must be refused.
void require_u16_refused(const body& a, const body& b, std::uint16_t current, std::uint16_t value,
                         const std::string& error) {
  const std::size_t at = differing_u16(encode_body(a), encode_body(b));
  auto bytes = bytes_of(encode_body(a));
  set_u16_field(bytes, at, current, value);
  require_parse_error(frame_of(bytes), error);
}

// The list pointer (Cap'n Proto wire encoding) whose element size code and element count are
// given: returns its byte offset.
std::size_t find_list_pointer(const std::vector<std::uint8_t>& b, unsigned size_code,
                              std::uint64_t count) {
  std::size_t found = b.size();
  for (std::size_t at = 8; at < b.size(); at += 8) {
    const std::uint64_t w = get_u64(b, at);
    if ((w & 3) == 1 && ((w >> 32) & 7) == size_code && (w >> 35) == count) {
      REQUIRE(found == b.size());  // exactly one
      found = at;
    }
  }
  REQUIRE(found < b.size());
  return found;
}

}  // namespace

// ---- round trips --------------------------------------------------------------------------------

TEST_CASE("codec: every message type survives a round trip field by field", "[wire]") {
  std::set<std::size_t> types;
  for (const envelope& e : one_of_each()) {
    INFO(message_name(e.message));
    types.insert(e.message.index());
    frame f = encode(e);
    auto r = decode(*f);
    INFO(error_of(r));
    REQUIRE(r.is_ok());
    check_same(e, *r);
    CHECK(std::string(message_name(r->message)) == message_name(e.message));
  }
  CHECK(types.size() == std::variant_size_v<body>);
}

TEST_CASE("codec: default-constructed messages survive a round trip", "[wire]") {
  // Empty texts and lists, zero counters, and the non-zero defaults (index -1, credits 1,
  // known = true, line number 1, the batch's offsets {0}).
  for (std::size_t i = 0; i < std::variant_size_v<body>; ++i) {
    envelope e;
    e.message = one_of_each()[i].message;
    std::visit([](auto& m) { m = std::decay_t<decltype(m)>{}; }, e.message);
    if (auto* er = std::get_if<error_reply>(&e.message)) CHECK(er->code == errc::internal);
    INFO(message_name(e.message));
    auto r = decode(*encode(e));
    INFO(error_of(r));
    REQUIRE(r.is_ok());
    check_same(e, *r);
  }
}

TEST_CASE("codec: re-encoding a decoded envelope gives the same bytes", "[wire]") {
  for (const envelope& e : one_of_each()) {
    INFO(message_name(e.message));
    frame f = encode(e);
    auto r = decode(*f);
    REQUIRE(r.is_ok());
    CHECK(bytes_of(encode(*r)) == bytes_of(f));
  }
}

TEST_CASE("codec: special float values and odd strings survive a round trip", "[wire]") {
  dense_reply d;
  d.params = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
              -std::numeric_limits<float>::infinity(), -0.0f,
              std::numeric_limits<float>::denorm_min()};
  auto r = decode(*encode_body(d));
  REQUIRE(r.is_ok());
  CHECK(same_bits(std::get<dense_reply>(r->message).params, d.params));

  // Embedded NUL, UTF-8, and lengths around the word boundary.
  for (std::string s : {std::string("a\0b", 3), std::string("h\xc3\xa9llo"), std::string(7, 'x'),
                        std::string(8, 'y'), std::string(9, 'z'), std::string(100000, 'q')}) {
    auto s2 = decode(*encode_body(status_reply{s}));
    REQUIRE(s2.is_ok());
    CHECK(std::get<status_reply>(s2->message).json == s);
  }
}

TEST_CASE("codec: frames are word aligned whole words in one segment", "[wire]") {
  for (const envelope& e : one_of_each()) {
    INFO(message_name(e.message));
    frame f = encode(e);
    CHECK(reinterpret_cast<std::uintptr_t>(f->data()) % 8 == 0);
    CHECK(f->size() % 8 == 0);
    // Segment table: count - 1 = 0, then the segment's size: the rest of the frame.
    auto b = bytes_of(f);
    CHECK(get_u32(b, 0) == 0);
    CHECK(get_u32(b, 4) == f->size() / 8 - 1);
  }
}

TEST_CASE("codec: a Criteo batch of 128 examples costs little more than its lists", "[wire]") {
  batch_message m;
  m.batch = criteo_batch(128, 1);
  frame f = encode_body(m);
  const std::size_t lists = 128 * 4 + 128 * 13 * 4 + 128 * 26 * 8 + (128 * 26 + 1) * 4;
  CHECK(f->size() >= lists);
  // Envelope, struct headers, list pointers, the end position with its file check, epoch and
  // followed file (a text pointer, device, inode), its window's end and inherited window, the
  // examples before the batch: under 31 words.
  CHECK(f->size() <= lists + 248);
  auto r = decode(*f);
  REQUIRE(r.is_ok());
  check_same(envelope{protocol_version, 5, m}, *r);
}

TEST_CASE("codec: a misaligned copy of a frame decodes through the pointer and size overload",
          "[wire]") {
  for (const envelope& e : one_of_each()) {
    INFO(message_name(e.message));
    frame f = encode(e);
    for (std::size_t shift = 1; shift < 8; ++shift) {
      std::vector<std::uint8_t> buf(f->size() + 8);
      std::memcpy(buf.data() + shift, f->data(), f->size());
      const std::uint8_t* p = buf.data() + shift;
      REQUIRE(reinterpret_cast<std::uintptr_t>(p) % 8 != 0);
      auto r = decode(p, f->size());
      INFO(error_of(r));
      REQUIRE(r.is_ok());
      check_same(e, *r);
    }
  }
}

TEST_CASE("codec: decode of a 2000-row lookup reply holds exactly its values", "[wire]") {
  frame f = encode_body(lookup_reply_of(2000, 16));
  CHECK(f->size() == 8 + 8 + 24 + 24 + 2000 * 16 * 4);  // table, root, envelope, reply, values
  auto r = decode(*f);
  REQUIRE(r.is_ok());
  const auto& reply = std::get<lookup_reply>(r->message);
  CHECK(reply.dim == 16);
  CHECK(reply.values.size() == 32000);
  CHECK(reply.values.capacity() == 32000);
  CHECK(reply.values[31999] == lookup_reply_of(2000, 16).values[31999]);
}

// ---- frames that are not messages ---------------------------------------------------------------

TEST_CASE("codec: random garbage is refused cleanly", "[wire]") {
  std::mt19937_64 rng(12345);
  for (std::size_t words : {1, 2, 3, 4, 7, 16, 100, 1000}) {
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<std::uint8_t> b(words * 8);
      for (auto& x : b) x = static_cast<std::uint8_t>(rng());
      CHECK_FALSE(decode_bytes(b).is_ok());
      // With a plausible segment table in front, capnp itself has to reject the body.
      put_u32(b, 0, 0);
      put_u32(b, 4, static_cast<std::uint32_t>(words - 1));
      auto r = decode_bytes(b);
      if (r.is_ok()) {
        // Possible in principle (a valid message by chance); then it must be self-consistent.
        CHECK(decode(*encode(*r)).is_ok());
      } else {
        CHECK(
            (r.error().code() == errc::parse_error || r.error().code() == errc::version_mismatch));
      }
    }
  }
}

TEST_CASE("codec: all-0xFF and all-zero frames are refused", "[wire]") {
  for (std::size_t words : {1, 2, 8, 64}) {
    std::vector<std::uint8_t> ones(words * 8, 0xFF);
    auto r = decode_bytes(ones);
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.error().code() == errc::parse_error);
    std::vector<std::uint8_t> zeros(words * 8, 0);
    CHECK_FALSE(decode_bytes(zeros).is_ok());
  }
}

TEST_CASE("codec: an empty frame is refused", "[wire]") {
  auto r = decode(frame_bytes(0));
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.error().code() == errc::parse_error);
  CHECK(r.error().message() == "empty frame");
  CHECK_FALSE(peek_header(frame_bytes(0)).is_ok());
}

TEST_CASE("codec: a huge segment count is refused", "[wire]") {
  auto b = bytes_of(encode(one_of_each()[0]));
  for (std::uint32_t count_minus_one : {512u, 0x7fffffffu, 0xfffffffeu, 0xffffffffu}) {
    put_u32(b, 0, count_minus_one);
    auto r = decode_bytes(b);
    INFO(error_of(r));
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.error().code() == errc::parse_error);
    CHECK_THAT(r.error().message(), Catch::Contains("segments"));
  }
}

TEST_CASE("codec: a segment table that disagrees with the frame size is refused", "[wire]") {
  auto good = bytes_of(encode(one_of_each()[1]));
  const std::uint32_t words = get_u32(good, 4);
  for (std::uint32_t claimed : {words + 1, words + 1000, 0xffffffffu, words - 1, 0u}) {
    auto b = good;
    put_u32(b, 4, claimed);
    auto r = decode_bytes(b);
    INFO(claimed << ": " << error_of(r));
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.error().code() == errc::parse_error);
    CHECK_THAT(r.error().message(), Catch::Contains("segment table claims"));
  }
  // Trailing words after a complete message.
  auto longer = good;
  longer.resize(good.size() + 8, 0);
  CHECK_FALSE(decode_bytes(longer).is_ok());
  // Two segments claimed, the second one larger than what is left.
  auto two = good;
  two.insert(two.begin() + 8, 8, 0);  // room for the second size and padding
  put_u32(two, 0, 1);
  put_u32(two, 8, 1000);
  CHECK_FALSE(decode_bytes(two).is_ok());
}

TEST_CASE("codec: every truncated prefix of a frame is refused", "[wire]") {
  std::vector<envelope> samples = one_of_each();
  batch_message big;
  big.batch = criteo_batch(128, 3);
  samples.push_back(envelope{protocol_version, 1, big});
  for (const envelope& e : samples) {
    INFO(message_name(e.message));
    auto b = bytes_of(encode(e));
    std::size_t refused = 0;
    for (std::size_t n = 0; n < b.size(); ++n) {
      auto r = decode(b.data(), n);
      if (r.is_ok()) FAIL("a prefix of " << n << " of " << b.size() << " bytes decoded");
      if (r.error().code() != errc::parse_error) FAIL(error_of(r));
      ++refused;
    }
    CHECK(refused == b.size());
  }
}

TEST_CASE("codec: a frame cut short with a matching segment table is refused", "[wire]") {
  // Here the table agrees with the shorter frame, so capnp's own bounds checks must catch the
  // pointers into the missing words.
  std::vector<envelope> samples = one_of_each();
  for (const envelope& e : samples) {
    INFO(message_name(e.message));
    auto b = bytes_of(encode(e));
    const std::size_t words = b.size() / 8;
    std::size_t refused = 0;
    for (std::size_t w = 1; w < words; ++w) {
      std::vector<std::uint8_t> cut(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(w * 8));
      put_u32(cut, 4, static_cast<std::uint32_t>(w - 1));
      auto r = decode_bytes(cut);
      // Objects are laid out back to back, so losing any word loses part of one.
      if (r.is_ok()) FAIL("cut to " << w << " of " << words << " words decoded");
      ++refused;
    }
    CHECK(refused == words - 1);
  }
}

TEST_CASE("codec: a frame over max_frame_bytes is refused before its bytes are read", "[wire]") {
  // A null pointer with a huge size: reading a single byte would crash.
  auto r = decode(nullptr, std::size_t{1} << 40);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.error().code() == errc::resource_exhausted);
  CHECK(r.error().message() == "frame of 1099511627776 bytes is over the limit of 67108864 bytes");

  frame f = encode(one_of_each()[2]);
  decode_limits limits;
  limits.max_frame_bytes = f->size() - 8;
  auto small = decode(*f, limits);
  REQUIRE_FALSE(small.is_ok());
  CHECK(small.error().code() == errc::resource_exhausted);
  CHECK_FALSE(peek_header(*f, limits).is_ok());
  limits.max_frame_bytes = f->size();
  CHECK(decode(*f, limits).is_ok());
  CHECK(decode(f->data(), f->size(), limits).is_ok());
}

TEST_CASE("codec: a size that is not a multiple of 8 is refused", "[wire]") {
  auto b = bytes_of(encode(one_of_each()[3]));
  b.push_back(0);
  auto r = decode_bytes(b);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.error().code() == errc::parse_error);
  CHECK_THAT(r.error().message(), Catch::Contains("not a whole number of 8-byte words"));
  frame_bytes odd(b.data(), 13);
  CHECK_FALSE(decode(odd).is_ok());
  CHECK_FALSE(peek_header(odd).is_ok());
}

TEST_CASE("codec: a null pointer with a small size is refused", "[wire]") {
  auto r = decode(nullptr, 16);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.error().code() == errc::parse_error);
}

// ---- versions and headers ---------------------------------------------------------------------

TEST_CASE("codec: another protocol version is refused and peek_header still reads the request id",
          "[wire]") {
  envelope e = one_of_each()[7];  // a batch
  e.version = protocol_version + 1;
  e.request_id = 0xfeedfacecafebeefULL;
  frame f = encode(e);
  auto r = decode(*f);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.error().code() == errc::version_mismatch);
  CHECK(r.error().message() == "peer speaks protocol " + std::to_string(protocol_version + 1) +
                                  ", this build speaks " + std::to_string(protocol_version));
  auto h = peek_header(*f);
  REQUIRE(h.is_ok());
  CHECK(h->version == protocol_version + 1);
  CHECK(h->request_id == 0xfeedfacecafebeefULL);

  e.version = 0;
  auto old = decode(*encode(e));
  REQUIRE_FALSE(old.is_ok());
  CHECK(old.error().message() == "peer speaks protocol 0, this build speaks " + std::to_string(protocol_version));
}

TEST_CASE("codec: peek_header reads version and request id of every message type", "[wire]") {
  for (const envelope& e : one_of_each()) {
    auto h = peek_header(*encode(e));
    REQUIRE(h.is_ok());
    CHECK(h->version == protocol_version);
    CHECK(h->request_id == e.request_id);
  }
}

TEST_CASE("codec: peek_header refuses frames that are not Cap'n Proto messages", "[wire]") {
  std::vector<std::uint8_t> ones(64, 0xFF);
  CHECK_FALSE(peek_header(*frame_of(ones)).is_ok());
  auto b = bytes_of(encode(one_of_each()[0]));
  // The root pointer becomes a far pointer (tag 2) into segment 2^32 - 1.
  put_u64(b, 8, (std::uint64_t{0xFFFFFFFF} << 32) | 2);
  auto h = peek_header(*frame_of(b));
  INFO(h.is_ok());
  CHECK_FALSE(h.is_ok());
}

TEST_CASE("codec: an unknown message type from a newer peer is refused", "[wire]") {
  // status_request and ack are both empty structs: their frames differ only in the union tag.
  frame a = encode_body(status_request{}, 77);
  frame b = encode_body(ack{}, 77);
  const std::size_t tag = differing_u16(a, b);
  // The first tags past this build's messages, and far past.
  const auto known = static_cast<std::uint16_t>(std::variant_size_v<body>);
  for (std::uint16_t t : {known, static_cast<std::uint16_t>(known + 1), std::uint16_t{999}, std::uint16_t{65535}}) {
    auto bytes = bytes_of(b);
    std::memcpy(bytes.data() + tag, &t, 2);
    frame f = frame_of(bytes);
    require_parse_error(f, "unknown message type " + std::to_string(t));
    auto h = peek_header(*f);
    REQUIRE(h.is_ok());
    CHECK(h->request_id == 77);
  }
}

// ---- semantic validation ------------------------------------------------------------------------

TEST_CASE("codec: a role, job state, move pass or error code out of range is refused", "[wire]") {
  SECTION("role") {
    register_request a{role::coordinator, "x", 0, "", 1};
    register_request b = a;
    b.from = role::client;
    require_u16_refused(a, b, 0, 6, "register_request: role 6 is out of range (0-5)");
  }
  SECTION("job state in a register_reply") {
    register_reply b;
    b.state = job_state::failed;
    require_u16_refused(register_reply{}, b, 0, 9, "register_reply: job state 9 is out of range (0-4)");
  }
  SECTION("job state in a heartbeat_reply") {
    heartbeat_reply b;
    b.state = job_state::running;
    require_u16_refused(heartbeat_reply{}, b, 0, 5, "heartbeat_reply: job state 5 is out of range (0-4)");
  }
  SECTION("error code") {
    require_u16_refused(error_reply{errc::invalid_argument, "m"}, error_reply{errc::internal, "m"}, 1, 17,
                        "error_reply: error code 17 is out of range (1-16)");
  }
  SECTION("a move pass in a dump_request and a take_rows_request") {
    dump_request d;
    d.pass = move_pass::changed;
    require_u16_refused(dump_request{}, d, 0, 3, "dump_request: move pass 3 is out of range (0-2)");
    take_rows_request t;
    t.pass = move_pass::copy;
    require_u16_refused(take_rows_request{}, t, 0, 7, "take_rows_request: move pass 7 is out of range (0-2)");
  }
  SECTION("an error reply that says ok") {
    require_parse_error(encode_body(error_reply{errc::ok, "fine"}),
                        "error_reply: error code 0 (ok) is not an error");
  }
}

TEST_CASE("codec: lookup_request tables and ids must have the same length", "[wire]") {
  require_parse_error(encode_body(lookup_request{true, {1, 2, 3}, {4, 5, 6, 7}}),
                      "lookup_request: 3 tables for 4 ids");
  require_parse_error(encode_body(lookup_request{true, {1}, {}}),
                      "lookup_request: 1 tables for 0 ids");
  CHECK(decode(*encode_body(lookup_request{true, {}, {}})).is_ok());
}

TEST_CASE("codec: lookup_reply values must be whole rows of dim", "[wire]") {
  lookup_reply r = lookup_reply_of(3, 4);
  r.values.pop_back();
  require_parse_error(encode_body(r),
                      "lookup_reply: 11 values are not a whole number of rows of dim 4");
  r = lookup_reply_of(3, 4);
  r.dim = 0;
  require_parse_error(encode_body(r), "lookup_reply: 12 values with dim 0");
  r.values.clear();
  CHECK(decode(*encode_body(r)).is_ok());  // no rows: dim does not matter
}

TEST_CASE("codec: values at a 16-bit row precision take half the bytes and come back rounded", "[wire]") {
  lookup_reply wide = lookup_reply_of(2000, 16);
  lookup_reply half = wide;
  half.precision = ss::embedding::row_precision::bf16;
  const frame fw = encode_body(wide), fh = encode_body(half);
  CHECK(fh->size() == 8 + 8 + 24 + 24 + 2000 * 16 * 2);  // the reply struct gains a pointer
  CHECK(fw->size() == 8 + 8 + 24 + 24 + 2000 * 16 * 4);
  auto r = decode(*fh);
  REQUIRE(r.is_ok());
  const auto& back = std::get<lookup_reply>(r->message);
  CHECK(back.precision == ss::embedding::row_precision::bf16);
  REQUIRE(back.values.size() == wide.values.size());
  for (std::size_t i = 0; i < wide.values.size(); ++i)
    REQUIRE(back.values[i] == ss::embedding::float_of_bf16(ss::embedding::bf16_of(wide.values[i])));
  push_request push{{1, 2}, {3, 4}, {0.1f, 0.2f, 0.3f, 0.4f}};
  push.precision = ss::embedding::row_precision::fp16;
  auto p = decode(*encode_body(push));
  REQUIRE(p.is_ok());
  const auto& grads = std::get<push_request>(p->message).grads;
  REQUIRE(grads.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) CHECK(grads[i] == ss::embedding::float_of_fp16(ss::embedding::fp16_of(push.grads[i])));
}

TEST_CASE("codec: a row precision this build does not know is refused", "[wire]") {
  // An unknown enumerant (a newer peer's, or garbage) is refused, never read as another precision.
  lookup_reply r{1, {0.5f}, ss::embedding::row_precision::bf16};
  frame f = encode_body(r);
  auto bytes = std::vector<std::uint8_t>(f->data(), f->data() + f->size());
  // The precision sits in the reply's data word after dim (u32 at +0, u16 at +4): find the bf16
  // code (1) right after dim (1) and make it 9.
  bool patched = false;
  for (std::size_t at = 0; at + 6 <= bytes.size(); at += 8) {
    if (bytes[at] == 1 && bytes[at + 1] == 0 && bytes[at + 2] == 0 && bytes[at + 3] == 0 && bytes[at + 4] == 1 &&
        bytes[at + 5] == 0) {
      bytes[at + 4] = 9;
      patched = true;
      break;
    }
  }
  REQUIRE(patched);
  require_parse_error(frame_of(bytes), "lookup_reply: row precision 9 is out of range (0-2)");
  // 16-bit values under fp32 (the list its precision does not name) are refused too, not read as none.
  for (std::size_t at = 0; at + 6 <= bytes.size(); at += 8)
    if (bytes[at] == 1 && bytes[at + 4] == 9) bytes[at + 4] = 0;
  require_parse_error(frame_of(bytes), "lookup_reply: 1 16-bit values at row precision fp32");
}

TEST_CASE("codec: warm_request tables and ids must have the same length", "[wire]") {
  require_parse_error(encode_body(warm_request{{1, 2}, {4}}), "warm_request: 2 tables for 1 ids");
  CHECK(decode(*encode_body(warm_request{{}, {}})).is_ok());
  CHECK(decode(*encode_body(warm_request{{3}, {9}})).is_ok());
}

TEST_CASE("codec: push_request grads must be a positive multiple of its ids", "[wire]") {
  require_parse_error(encode_body(push_request{{1, 2}, {3, 4}, {1, 2, 3}}),
                      "push_request: 3 grads for 2 ids (not a positive multiple)");
  require_parse_error(encode_body(push_request{{1, 2}, {3, 4}, {}}),
                      "push_request: 0 grads for 2 ids");
  require_parse_error(encode_body(push_request{{}, {}, {1.0f}}), "push_request: 1 grads for 0 ids");
  require_parse_error(encode_body(push_request{{1}, {3, 4}, {1, 2}}),
                      "push_request: 1 tables for 2 ids");
  CHECK(decode(*encode_body(push_request{{}, {}, {}})).is_ok());
  CHECK(decode(*encode_body(push_request{{1, 2}, {3, 4}, {1, 2, 3, 4, 5, 6}})).is_ok());
  // A learning-rate scale outside [0, 1] (or NaN) would let a stray frame blow the rows up.
  require_parse_error(encode_body(push_request{{1}, {3}, {1}, 2.0f}), "push_request: learning-rate scale 2.0");
  require_parse_error(encode_body(push_request{{1}, {3}, {1}, std::nanf("")}), "push_request: learning-rate scale");
  require_parse_error(encode_body(push_request{{1}, {3}, {1}, -0.5f}), "push_request: learning-rate scale -0.5");
}

TEST_CASE("codec: a dump page must hold whole rows and match its checksum; a placement names one of its shards",
          "[wire]") {
  dump_reply ok{{0, 1}, {5, 6}, {1, 2, 3, 4, 5, 6}, 1, 7, false, 3, 0};
  ok.crc32c = dump_page_crc(ok);
  CHECK(decode(*encode_body(ok)).is_ok());
  dump_reply r = ok;
  r.values[4] = 5.5f;  // a value changed after the checksum was taken
  require_parse_error(encode_body(r), "dump_reply: the page fails its checksum");
  r = ok;
  r.row_floats = 2;
  require_parse_error(encode_body(r), "dump_reply: 6 values for 2 rows of 2 floats");
  r = ok;
  r.tables = {0};
  require_parse_error(encode_body(r), "dump_reply: 1 tables for 2 ids");
  // The checksum covers the ids and tables too, not only the values.
  r = ok;
  r.ids = {6, 5};
  CHECK(dump_page_crc(r) != ok.crc32c);
  r = ok;
  r.tables = {1, 0};
  CHECK(dump_page_crc(r) != ok.crc32c);
  // And a live reshard's tombstones: their ids and tables, one table per id.
  dump_reply gone = ok;
  gone.gone_tables = {0, 2};
  gone.gone_ids = {9, 11};
  gone.crc32c = dump_page_crc(gone);
  CHECK(gone.crc32c != ok.crc32c);
  CHECK(decode(*encode_body(gone)).is_ok());
  r = gone;
  r.gone_ids = {9, 12};
  require_parse_error(encode_body(r), "dump_reply: the page fails its checksum");
  r.gone_tables = {0};
  require_parse_error(encode_body(r), "dump_reply: 1 tables for 2 gone ids");
  // An empty page: no rows, any width.
  dump_reply empty{{}, {}, {}, 0, 0, true, 0, 0};
  empty.crc32c = dump_page_crc(empty);
  CHECK(decode(*encode_body(empty)).is_ok());

  CHECK(decode(*encode_body(dump_request{0, 0, 100, 3, 2, true})).is_ok());
  require_parse_error(encode_body(dump_request{0, 0, 100, 3, 3, true}),
                      "dump_request: shard 3 of a placement over 3 shards");
}

TEST_CASE("codec: a register_reply's files' progress is five lists of one length", "[wire]") {
  register_reply files;
  files.file_passes = {1, 0};
  files.file_offsets = {0, 10};
  files.file_lines = {1, 2};
  files.file_crcs = {0, 7};
  files.file_sizes = {0, 50};
  CHECK(decode(*encode_body(files)).is_ok());
  files.file_crcs = {0};
  require_parse_error(encode_body(files),
                      "register_reply: the files' progress has 2 passes, 2 offsets, 2 line numbers, 1 CRCs and 2 sizes");
  // So is a window left's, the old reader's.
  files.file_crcs = {0, 7};
  window_left w;
  w.readers = 2;
  w.handed = 1;
  w.file_passes = {1};
  w.file_offsets = {0};
  w.file_lines = {1};
  w.file_crcs = {0};
  w.file_sizes = {0};
  files.windows_left = {w};
  CHECK(decode(*encode_body(files)).is_ok());
  files.windows_left[0].file_sizes.clear();
  require_parse_error(encode_body(files), "register_reply: a window left: the files' progress has 1 passes, 1 offsets, "
                                          "1 line numbers, 1 CRCs and 0 sizes");
}

TEST_CASE("codec: publish_rows_reply rows and tombstones must pair tables with ids", "[wire]") {
  publish_rows_reply ok;
  ok.tables = {0, 1};
  ok.ids = {5, 6};
  ok.values = {1, 2, 3, 4};
  ok.gone_tables = {1};
  ok.gone_ids = {9};
  CHECK(decode(*encode_body(ok)).is_ok());

  publish_rows_reply r = ok;
  r.gone_tables = {1, 0};
  require_parse_error(encode_body(r), "publish_rows_reply: 2 tables for 1 tombstones");
  r = ok;
  r.gone_ids = {9, 10, 11};
  require_parse_error(encode_body(r), "publish_rows_reply: 1 tables for 3 tombstones");
  r = ok;
  r.tables = {0};
  require_parse_error(encode_body(r), "publish_rows_reply: 1 tables for 2 ids");
  r = ok;
  r.values.pop_back();
  require_parse_error(encode_body(r), "publish_rows_reply: 3 values for 2 ids (not a whole number of rows)");
  r = ok;
  r.ids.clear();
  r.tables.clear();
  require_parse_error(encode_body(r), "publish_rows_reply: 4 values for 0 ids");
  r.values.clear();
  CHECK(decode(*encode_body(r)).is_ok());  // tombstones alone
}

TEST_CASE("codec: batch_message lists must follow from the batch's counts", "[wire]") {
  batch_message m;
  m.batch = criteo_batch(4, 11);
  REQUIRE(decode(*encode_body(m)).is_ok());

  SECTION("labels and the example count") {
    // examples, numDense, numSparse are the first three 32-bit fields of the batch struct.
    auto bytes = bytes_of(encode_body(m));
    std::size_t at = 0;
    for (std::size_t i = 8; i + 12 <= bytes.size(); i += 8) {
      if (get_u32(bytes, i) == 4 && get_u32(bytes, i + 4) == 13 && get_u32(bytes, i + 8) == 26)
        at = i;
    }
    REQUIRE(at != 0);
    put_u32(bytes, at, 3);
    require_parse_error(frame_of(bytes), "batch_message: 4 labels for 3 examples");
  }
  SECTION("dense values") {
    m.batch.dense.pop_back();
    require_parse_error(encode_body(m),
                        "batch_message: 51 dense values for 4 examples x 13 dense features");
  }
  SECTION("the number of offsets") {
    m.batch.num_sparse = 25;
    require_parse_error(
        encode_body(m),
        "batch_message: 105 offsets for 4 examples x 25 sparse features (expected 101)");
  }
  SECTION("no offsets at all") {
    m.batch.offsets.clear();
    require_parse_error(encode_body(m), "batch_message: 0 offsets for 4 examples");
  }
  SECTION("offsets start at 0") {
    for (auto& o : m.batch.offsets) ++o;
    m.batch.ids.push_back(1);
    require_parse_error(encode_body(m), "batch_message: offsets start at 1, not 0");
  }
  SECTION("offsets never decrease") {
    std::swap(m.batch.offsets[10], m.batch.offsets[11]);
    require_parse_error(encode_body(m), "batch_message: offsets decrease at index 11 (11 then 10)");
  }
  SECTION("offsets end at the number of ids") {
    m.batch.ids.push_back(99);
    require_parse_error(encode_body(m),
                        "batch_message: offsets end at 104 but the batch holds 105 ids");
  }
  SECTION("labels are 0 or 1") {
    m.batch.labels[2] = 0.5f;
    require_parse_error(encode_body(m), "batch_message: label of example 2 is 0.5, not 0 or 1");
    m.batch.labels[2] = std::nanf("");
    require_parse_error(encode_body(m), "batch_message: label of example 2 is");
  }
  SECTION("several ids per feature are fine") {
    m.batch.ids.push_back(5);
    m.batch.offsets.back() += 1;
    CHECK(decode(*encode_body(m)).is_ok());
  }
  SECTION("an empty batch is fine") {
    m.batch.reset(13, 26);
    CHECK(decode(*encode_body(m)).is_ok());
  }
}

// ---- hostile pointers and limits ----------------------------------------------------------------

TEST_CASE("codec: a list claiming more elements than the frame holds is refused", "[wire]") {
  auto bytes = bytes_of(encode_body(lookup_reply_of(2000, 16)));
  // Element size code 4: four-byte elements.
  const std::size_t at = find_list_pointer(bytes, 4, 32000);
  const std::uint64_t w = get_u64(bytes, at);
  for (std::uint64_t count : {std::uint64_t{32002}, (std::uint64_t{1} << 29) - 1}) {
    put_u64(bytes, at, (w & 0xFFFFFFFFULL) | (std::uint64_t{4} << 32) | (count << 35));
    auto r = decode_bytes(bytes);
    INFO(error_of(r));
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.error().code() == errc::parse_error);
  }
}

TEST_CASE("codec: a list with wider elements than expected reads element by element", "[wire]") {
  // Cap'n Proto lets a reader take a list of wider elements (a newer sender's upgrade); each
  // value is then the first bytes of its element. Our encoder never writes one, but decode must
  // read it right: 8 floats re-labelled as 4 eight-byte elements read as floats 0, 2, 4 and 6.
  lookup_reply m = lookup_reply_of(2, 4);
  auto bytes = bytes_of(encode_body(m));
  const std::size_t at = find_list_pointer(bytes, 4, 8);
  const std::uint64_t w = get_u64(bytes, at);
  put_u64(bytes, at, (w & 0xFFFFFFFFULL) | (std::uint64_t{5} << 32) | (std::uint64_t{4} << 35));
  auto r = decode_bytes(bytes);
  INFO(error_of(r));
  REQUIRE(r.is_ok());
  const auto& values = std::get<lookup_reply>(r->message).values;
  REQUIRE(values.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) CHECK(values[i] == m.values[2 * i]);
}

TEST_CASE("codec: pointers aliasing one large text cannot multiply what decode copies", "[wire]") {
  // 1,000 shard endpoints; then every element pointer is aimed at the first, 4,000-byte text.
  // Without a traversal limit sized from the frame, a 12 KB frame would decode to 4 MB.
  register_reply m;
  m.view.shards.assign(1000, "a");
  m.view.shards[0] = std::string(4000, 'x');
  auto bytes = bytes_of(encode_body(m));
  const std::size_t first = find_list_pointer(bytes, 2, 4001);  // size code 2: bytes
  const std::int64_t target = static_cast<std::int64_t>(first / 8) + 1 +
                              static_cast<std::int32_t>(get_u32(bytes, first)) / 4;
  for (std::size_t i = 1; i < 1000; ++i) {
    const std::size_t at = first + 8 * i;
    const std::int64_t offset = target - static_cast<std::int64_t>(at / 8) - 1;
    const std::uint64_t ptr =
        (static_cast<std::uint64_t>(static_cast<std::uint32_t>(offset) << 2) | 1) |
        (std::uint64_t{2} << 32) | (std::uint64_t{4001} << 35);
    put_u64(bytes, at, ptr);
  }
  auto r = decode_bytes(bytes);
  INFO(error_of(r));
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.error().code() == errc::parse_error);
  CHECK_THAT(r.error().message(), Catch::Contains("malformed frame"));
}

TEST_CASE("codec: the nesting limit is enforced", "[wire]") {
  frame f = encode(one_of_each()[7]);  // batch: envelope > batch_message > batch > lists
  decode_limits shallow;
  shallow.nesting_limit = 2;
  auto r = decode(*f, shallow);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.error().code() == errc::parse_error);
  decode_limits enough;
  enough.nesting_limit = 4;
  CHECK(decode(*f, enough).is_ok());
  CHECK(decode(*f).is_ok());
}
