// The names of the enumerations of messages.hpp, and the checksum of a dump page. message_name()
// is in codec.cpp: the names of messages are their entries in the codec table.
#include "ss/wire/messages.hpp"

#include <cstring>
#include <type_traits>

#include "ss/core/checksum.hpp"
#include "ss/core/io/byte_order.hpp"

namespace ss::wire {

const char* to_string(role r) {
  switch (r) {
    case role::coordinator: return "coordinator";
    case role::shard: return "shard";
    case role::trainer: return "trainer";
    case role::reader: return "reader";
    case role::client: return "client";
    case role::sync: return "sync";
  }
  return "unknown";
}

const char* to_string(job_state s) {
  switch (s) {
    case job_state::waiting: return "waiting";
    case job_state::running: return "running";
    case job_state::draining: return "draining";
    case job_state::done: return "done";
    case job_state::failed: return "failed";
  }
  return "unknown";
}

namespace {
// CRC32C of n values as little-endian bytes: the host's own bytes where it is little-endian.
template <class T>
std::uint32_t crc_le(const std::vector<T>& v, std::uint32_t crc) {
  if constexpr (io::host_is_little_endian) {
    return crc32c(v.data(), v.size() * sizeof(T), crc);
  } else {
    unsigned char bytes[sizeof(T)];
    for (const T& x : v) {
      if constexpr (std::is_same_v<T, float>) {
        std::uint32_t bits = 0;
        std::memcpy(&bits, &x, sizeof bits);
        io::put_le(bytes, bits);
      } else {
        io::put_le(bytes, x);
      }
      crc = crc32c(bytes, sizeof bytes, crc);
    }
    return crc;
  }
}
}  // namespace

std::uint32_t dump_page_crc(const dump_reply& page) {
  return crc_le(page.gone_ids, crc_le(page.gone_tables, crc_le(page.values, crc_le(page.ids, crc_le(page.tables, 0)))));
}

}  // namespace ss::wire
