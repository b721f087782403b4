// libFuzzer target: whole frames through ss::wire's public entry points (decode of a frame and of
// raw, possibly misaligned bytes; peek_header). Any byte string must give a valid envelope or an
// error (parse_error, resource_exhausted, version_mismatch), never a crash, UB or an exception.
// What is accepted must re-encode to a frame that decodes, and re-encoding that is stable.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "ss/wire/codec.hpp"

namespace {

using namespace ss::wire;

bool same_bytes(const frame& a, const frame& b) {
  return a->size() == b->size() && (a->size() == 0 || std::memcmp(a->data(), b->data(), a->size()) == 0);
}

bool expected_error(ss::errc c) {
  return c == ss::errc::parse_error || c == ss::errc::resource_exhausted || c == ss::errc::version_mismatch;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const frame_bytes bytes(data, size);
  ss::result<envelope> r = decode(bytes);

  // The raw-pointer entry point, through a misaligned copy (ZeroMQ hands those out): same answer.
  std::vector<std::uint8_t> shifted(size + 1);
  if (size > 0) std::memcpy(shifted.data() + 1, data, size);
  ss::result<envelope> r_raw = decode(shifted.data() + 1, size);
  SS_FUZZ_CHECK(r.is_ok() == r_raw.is_ok(), "aligned and misaligned decodes disagree");
  if (!r.is_ok()) {
    SS_FUZZ_CHECK(r.error().code() == r_raw.error().code(), "aligned and misaligned errors differ");
    SS_FUZZ_CHECK(expected_error(r.error().code()), r.error().to_string().c_str());
    SS_FUZZ_CHECK(!r.error().message().empty(), "an error without a message");
  }

  // A limit one byte under the frame refuses it before reading it.
  if (size > 0) {
    decode_limits small;
    small.max_frame_bytes = size - 1;
    ss::result<envelope> r_small = decode(bytes, small);
    SS_FUZZ_CHECK(!r_small.is_ok() && r_small.error().code() == ss::errc::resource_exhausted,
                  "a frame over max_frame_bytes was not refused as resource_exhausted");
  }

  ss::result<envelope_header> h = peek_header(bytes);
  if (r.is_ok() || r.error().code() == ss::errc::version_mismatch) {
    SS_FUZZ_CHECK(h.is_ok(), "decode read the header, peek_header could not");
  }
  if (!r.is_ok()) return 0;

  const envelope& e = *r;
  SS_FUZZ_CHECK(h->version == e.version && h->request_id == e.request_id, "peek_header disagrees with decode");
  SS_FUZZ_CHECK(e.version == protocol_version, "decode accepted another protocol version");
  SS_FUZZ_CHECK(!e.message.valueless_by_exception(), "a valueless body");
  SS_FUZZ_CHECK(message_name(e.message) != nullptr, "a message without a name");

  // Round trip: decode(encode(decode(x))) succeeds, and encoding is then a fixed point.
  frame again = encode(e);
  ss::result<envelope> r2 = decode(*again);
  SS_FUZZ_CHECK(r2.is_ok(), ("an accepted frame re-encodes to a refused one: " + r2.error().to_string()).c_str());
  SS_FUZZ_CHECK(r2->message.index() == e.message.index(), "the message kind changed in a round trip");
  SS_FUZZ_CHECK(r2->request_id == e.request_id, "the request id changed in a round trip");
  SS_FUZZ_CHECK(same_bytes(encode(*r2), again), "re-encoding is not stable");
  return 0;
}
