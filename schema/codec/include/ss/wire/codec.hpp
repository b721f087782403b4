// Envelope <-> bytes, through Cap'n Proto. The only code that includes generated *.capnp.h.
//
// decode() treats its input as hostile: any byte string gives either a valid envelope or an
// error (never a crash, an unbounded allocation or an exception): frames over the size limit,
// truncated or garbage frames, unknown message types, another protocol version, and lists whose
// lengths disagree (a lookup reply with the wrong number of values, batch offsets that decrease)
// are all refused with a precise message.
#pragma once

#include <cstddef>

#include "ss/core/status.hpp"
#include "ss/wire/frame.hpp"
#include "ss/wire/messages.hpp"

namespace ss::wire {

struct decode_limits {
  std::size_t max_frame_bytes = std::size_t{64} << 20;  // Default: 64 MiB
  unsigned nesting_limit = 16;                            // Default: 16 (our deepest message is 4)
};

// Builds the message in place in the frame it returns: no copy of the message afterwards.
// A message over Cap'n Proto's limits (a list of 2^29 elements or more) is a bug in the caller:
// std::length_error.
frame encode(const envelope& e);

// Errors: errc::resource_exhausted (over max_frame_bytes), errc::version_mismatch (another
// protocol version; the message names both), errc::parse_error (everything else).
result<envelope> decode(const frame_bytes& bytes, const decode_limits& limits = {});
result<envelope> decode(const std::uint8_t* data, std::size_t size, const decode_limits& limits = {});

// The version and request id a frame claims, read without decoding the body, so a refusal
// (another version, a garbage body) can still be answered to the right request. Errors only for
// frames that are not Cap'n Proto messages at all.
struct envelope_header {
  std::uint16_t version = 0;
  std::uint64_t request_id = 0;
};
result<envelope_header> peek_header(const frame_bytes& bytes, const decode_limits& limits = {});

}  // namespace ss::wire
