// libFuzzer target: one message body at a time inside a valid envelope, so the fuzzer spends its
// time in the fields of each message rather than in the frame and envelope around it.
//
// Input: byte 0 picks the message kind (its index in ss::wire::body, modulo the count); byte 1
// bit 0 says whether bytes 2 and 3 give the body struct's data words and pointer count (else the
// schema's own sizes are used); bytes 4.. are the body: its struct, then whatever its pointers
// point at. The frame around it (segment table, root pointer, envelope with this build's version,
// a request id and the union tag) is taken from a frame that ss::wire::encode built, so nothing
// here knows the schema's layout.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "fuzz_check.hpp"
#include "ss/wire/codec.hpp"

namespace {

using namespace ss::wire;

constexpr std::size_t kinds = std::variant_size_v<body>;

template <std::size_t... I>
body default_body(std::size_t k, std::index_sequence<I...>) {
  body b;
  ((k == I ? (void)b.emplace<I>() : (void)0), ...);
  return b;
}

// The words of one encoded envelope's only segment up to and including the body pointer, and
// that pointer's struct sizes.
struct envelope_template {
  std::vector<std::uint64_t> head;  // segment words [0, body pointer]
  std::uint16_t data_words = 0;
  std::uint16_t pointers = 0;
};

envelope_template make_template(std::size_t k) {
  envelope e;
  e.request_id = 0x0123456789abcdefULL;
  e.message = default_body(k, std::make_index_sequence<kinds>{});
  const frame f = encode(e);
  const std::uint64_t* w = f->words();
  SS_FUZZ_CHECK((w[0] & 0xffffffffu) == 0, "encode wrote more than one segment");
  const std::uint64_t* seg = w + 1;
  const std::uint64_t root = seg[0];
  SS_FUZZ_CHECK((root & 3) == 0, "the root is not a struct pointer");
  const auto offset = static_cast<std::int32_t>(static_cast<std::uint32_t>(root)) >> 2;
  const auto env_data = static_cast<std::uint16_t>(root >> 32);
  const auto env_ptrs = static_cast<std::uint16_t>(root >> 48);
  SS_FUZZ_CHECK(env_ptrs == 1, "the envelope has one pointer: the body");
  const std::size_t body_ptr = static_cast<std::size_t>(1 + offset) + env_data;
  envelope_template t;
  t.head.assign(seg, seg + body_ptr + 1);
  t.data_words = static_cast<std::uint16_t>(seg[body_ptr] >> 32);
  t.pointers = static_cast<std::uint16_t>(seg[body_ptr] >> 48);
  return t;
}

const std::array<envelope_template, kinds>& templates() {
  static const std::array<envelope_template, kinds> all = [] {
    std::array<envelope_template, kinds> a;
    for (std::size_t k = 0; k < kinds; ++k) a[k] = make_template(k);
    return a;
  }();
  return all;
}

bool same_bytes(const frame& a, const frame& b) {
  return a->size() == b->size() && (a->size() == 0 || std::memcmp(a->data(), b->data(), a->size()) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  const std::size_t k = data[0] % kinds;
  const envelope_template& t = templates()[k];
  std::uint64_t data_words = t.data_words;
  std::uint64_t pointers = t.pointers;
  if (data[1] & 1) {
    data_words = data[2] % 16;
    pointers = data[3] % 16;
  }
  const std::size_t body_bytes = size - 4;
  const std::size_t body_words = (body_bytes + 7) / 8;
  const std::size_t segment_words = t.head.size() + body_words;

  std::vector<std::uint64_t> words(1 + segment_words, 0);
  words[0] = static_cast<std::uint64_t>(segment_words) << 32;  // one segment
  std::memcpy(&words[1], t.head.data(), t.head.size() * 8);
  // The body pointer: a struct right after it (offset 0).
  words[t.head.size()] = (data_words << 32) | (pointers << 48);
  if (body_bytes > 0) std::memcpy(&words[1 + t.head.size()], data + 4, body_bytes);

  const frame_bytes bytes(words.data(), words.size() * 8);
  ss::result<envelope> r = decode(bytes);
  if (!r.is_ok()) {
    SS_FUZZ_CHECK(r.error().code() == ss::errc::parse_error, r.error().to_string().c_str());
    return 0;
  }
  const envelope& e = *r;
  SS_FUZZ_CHECK(e.message.index() == k, "decoded another message kind than the union tag says");
  SS_FUZZ_CHECK(e.request_id == 0x0123456789abcdefULL, "the request id changed");

  frame again = encode(e);
  ss::result<envelope> r2 = decode(*again);
  SS_FUZZ_CHECK(r2.is_ok(), ("an accepted body re-encodes to a refused frame: " + r2.error().to_string()).c_str());
  SS_FUZZ_CHECK(r2->message.index() == k, "the message kind changed in a round trip");
  SS_FUZZ_CHECK(same_bytes(encode(*r2), again), "re-encoding is not stable");
  return 0;
}
