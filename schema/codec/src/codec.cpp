// Envelope <-> frame through the generated Cap'n Proto code (schema/*.capnp). Each message's
// size, writer and reader are its entry in the codec table (table.hpp, entries/*.hpp); this unit
// holds what is the same for all of them: the frame around the message.
//
// Encoding builds the message in place inside the frame it returns: the builder's first segment
// is the frame itself, one word after the segment table, sized exactly from the message (the
// entries' words()). Should that size ever be off, the message spills into more segments (or
// leaves words unused) and is copied once into a frame of the right size: slower, never wrong.
//
// Decoding treats the bytes as hostile. In order: the size limit (before reading a byte), the
// word granularity, our own check of the segment table, then Cap'n Proto with a traversal limit
// sized from the frame (so no list, text or aliased pointer can make us copy more than about
// twice the frame), then the entries' checks of every list length that another field implies.
// Primitive lists are copied with one memcpy each: the host and the wire are little-endian.
#include "ss/wire/codec.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include "table.hpp"

namespace ss::wire {
namespace {

using detail::num;
using detail::parse_error;

void write_u32(std::uint8_t* at, std::uint32_t v) { std::memcpy(at, &v, sizeof v); }
std::uint32_t read_u32(const std::uint8_t* at) {
  std::uint32_t v;
  std::memcpy(&v, at, sizeof v);
  return v;
}

// A MessageBuilder whose first segment is the frame it will return, one word after the segment
// table. Frames are zeroed on allocation, as capnp requires of new segments.
class frame_builder final : public capnp::MessageBuilder {
 public:
  explicit frame_builder(std::size_t words)
      : words_(std::clamp<std::size_t>(words, 1, (std::size_t{1} << 29) - 1)),
        frame_(std::make_shared<frame_bytes>((words_ + 1) * sizeof(capnp::word))) {}

  kj::ArrayPtr<capnp::word> allocateSegment(capnp::uint minimum) override {
    if (!first_taken_ && minimum <= words_) {
      first_taken_ = true;
      return {first(), words_};
    }
    first_taken_ = true;
    const std::size_t n = std::max<std::size_t>({minimum, words_, 1024});
    spill_.push_back(std::make_unique<std::uint64_t[]>(n));  // value-initialized: zeroed
    return {reinterpret_cast<capnp::word*>(spill_.back().get()), n};
  }

  frame finish() {
    auto segments = getSegmentsForOutput();
    if (segments.size() == 1 && segments[0].begin() == first() && segments[0].size() == words_) {
      write_u32(frame_->mutable_data(), 0);  // segment count - 1
      write_u32(frame_->mutable_data() + 4, static_cast<std::uint32_t>(words_));
      return std::move(frame_);
    }
    // The size estimate was off: one copy into a frame of the right size.
    const std::size_t total = capnp::computeSerializedSizeInWords(segments);
    auto out = std::make_shared<frame_bytes>(total * sizeof(capnp::word));
    std::uint8_t* p = out->mutable_data();
    write_u32(p, static_cast<std::uint32_t>(segments.size() - 1));
    for (std::size_t i = 0; i < segments.size(); ++i) {
      write_u32(p + 4 * (i + 1), static_cast<std::uint32_t>(segments[i].size()));
    }
    p += (segments.size() / 2 + 1) * sizeof(capnp::word);
    for (const auto& s : segments) {
      std::memcpy(p, s.begin(), s.size() * sizeof(capnp::word));
      p += s.size() * sizeof(capnp::word);
    }
    return out;
  }

 private:
  capnp::word* first() { return reinterpret_cast<capnp::word*>(frame_->mutable_data()) + 1; }

  std::size_t words_;
  std::shared_ptr<frame_bytes> frame_;
  bool first_taken_ = false;
  std::vector<std::unique_ptr<std::uint64_t[]>> spill_;
};

// ---- decoding: errors -----------------------------------------------------------------------

// "Message ends prematurely in first segment." out of kj's
// "expected array.size() >= offset + segmentSize; Message ends prematurely in first segment."
std::string describe(const kj::Exception& e) {
  std::string d(e.getDescription().cStr());
  if (d.rfind("expected ", 0) == 0) {
    auto semi = d.find("; ");
    if (semi != std::string::npos) d.erase(0, semi + 2);
  }
  return d;
}

// ---- decoding: the frame --------------------------------------------------------------------

constexpr std::uint32_t max_segments = 512;  // what capnp's stream reader accepts

status check_size(std::size_t size, const decode_limits& limits) {
  if (size > limits.max_frame_bytes) {
    return status(errc::resource_exhausted, "frame of " + num(size) +
                                                " bytes is over the limit of " +
                                                num(limits.max_frame_bytes) + " bytes");
  }
  if (size == 0) return parse_error("empty frame");
  if (size % sizeof(capnp::word) != 0) {
    return parse_error("frame of " + num(size) + " bytes is not a whole number of 8-byte words");
  }
  return status::ok();
}

// The segment table must describe exactly the frame: no segment past its end, no trailing bytes.
status check_segment_table(const std::uint8_t* bytes, std::size_t words) {
  const std::uint64_t count = std::uint64_t{read_u32(bytes)} + 1;
  if (count > max_segments) {
    return parse_error("frame claims " + num(count) + " segments (at most " + num(max_segments) +
                       ")");
  }
  const std::uint64_t table_words = count / 2 + 1;
  if (table_words > words) {
    return parse_error("frame of " + num(words) + " words ends inside its table of " + num(count) +
                       " segments");
  }
  std::uint64_t segment_words = 0;
  for (std::uint64_t i = 0; i < count; ++i) segment_words += read_u32(bytes + 4 * (i + 1));
  if (table_words + segment_words != words) {
    return parse_error("segment table claims " + num(table_words + segment_words) +
                       " words, the frame holds " + num(words));
  }
  return status::ok();
}

capnp::ReaderOptions reader_options(std::size_t words, const decode_limits& limits) {
  capnp::ReaderOptions o;
  // Each object of a well-formed message is read once, so the frame's own size would do; twice
  // that plus slack still stops pointers that alias one large list from multiplying our copies.
  o.traversalLimitInWords = std::uint64_t{words} * 2 + 64;
  o.nestingLimit = static_cast<int>(std::min<unsigned>(limits.nesting_limit, INT_MAX));
  return o;
}

std::string version_mismatch_message(std::uint16_t peer) {
  return "peer speaks protocol " + num(peer) + ", this build speaks " + num(protocol_version);
}

// `bytes` is word aligned and its size was checked by check_size.
result<envelope> decode_words(const std::uint8_t* bytes, std::size_t size,
                              const decode_limits& limits) {
  const std::size_t words = size / sizeof(capnp::word);
  SS_RETURN_IF_ERROR(check_segment_table(bytes, words));
  try {
    capnp::FlatArrayMessageReader reader(
        kj::ArrayPtr<const capnp::word>(reinterpret_cast<const capnp::word*>(bytes), words),
        reader_options(words, limits));
    auto root = reader.getRoot<schema::Envelope>();
    envelope e;
    e.version = root.getVersion();
    if (e.version != protocol_version) {
      return status(errc::version_mismatch, version_mismatch_message(e.version));
    }
    e.request_id = root.getRequestId();
    SS_RETURN_IF_ERROR(detail::get_body(root.getBody(), e.message));
    return result<envelope>(std::move(e));
  } catch (const kj::Exception& ex) {
    return parse_error("malformed frame: " + describe(ex));
  } catch (const std::exception& ex) {
    return parse_error(std::string("malformed frame: ") + ex.what());
  }
}

}  // namespace

frame encode(const envelope& e) {
  const std::size_t words = 1 + detail::struct_words<schema::Envelope>() + detail::body_words(e.message);
  try {
    frame_builder builder(words);
    auto root = builder.initRoot<schema::Envelope>();
    root.setVersion(e.version);
    root.setRequestId(e.request_id);
    detail::put_body(e.message, root.initBody());
    return builder.finish();
  } catch (const kj::Exception& ex) {
    throw std::length_error("ss::wire::encode: " + describe(ex));
  }
}

result<envelope> decode(const frame_bytes& bytes, const decode_limits& limits) {
  SS_RETURN_IF_ERROR(check_size(bytes.size(), limits));
  return decode_words(bytes.data(), bytes.size(), limits);
}

result<envelope> decode(const std::uint8_t* data, std::size_t size, const decode_limits& limits) {
  SS_RETURN_IF_ERROR(check_size(size, limits));
  if (data == nullptr) return parse_error("null frame data");
  if (reinterpret_cast<std::uintptr_t>(data) % alignof(capnp::word) == 0) {
    return decode_words(data, size, limits);
  }
  // capnp 0.9 refuses unaligned segments even on x86; ZeroMQ often hands them out.
  std::unique_ptr<std::uint64_t[]> aligned(new (std::nothrow)
                                               std::uint64_t[size / sizeof(std::uint64_t)]);
  if (!aligned) {
    return status(errc::resource_exhausted,
                  "no memory for an aligned copy of a frame of " + num(size) + " bytes");
  }
  std::memcpy(aligned.get(), data, size);
  return decode_words(reinterpret_cast<const std::uint8_t*>(aligned.get()), size, limits);
}

result<envelope_header> peek_header(const frame_bytes& bytes, const decode_limits& limits) {
  SS_RETURN_IF_ERROR(check_size(bytes.size(), limits));
  const std::size_t words = bytes.size() / sizeof(capnp::word);
  SS_RETURN_IF_ERROR(check_segment_table(bytes.data(), words));
  try {
    capnp::FlatArrayMessageReader reader(
        kj::ArrayPtr<const capnp::word>(reinterpret_cast<const capnp::word*>(bytes.data()), words),
        reader_options(words, limits));
    auto root = reader.getRoot<schema::Envelope>();
    return envelope_header{root.getVersion(), root.getRequestId()};
  } catch (const kj::Exception& ex) {
    return parse_error("malformed frame: " + describe(ex));
  } catch (const std::exception& ex) {
    return parse_error(std::string("malformed frame: ") + ex.what());
  }
}

const char* message_name(const body& b) {
  // valueless_by_exception only after a throwing assignment; report it rather than throw here.
  if (b.valueless_by_exception()) return "none";
  return detail::name_at(b.index());
}

}  // namespace ss::wire
