// Row TTL (--row-ttl): a shard deletes the rows not touched (looked up for training, or pushed)
// for longer than this, from RAM and storage, in a background sweep; such an id comes back with
// its initial values. Measured in examples the shard served (deterministic for a given input,
// whatever the machine's speed) or in seconds of wall-clock time.
//
// A row's last touch is a 32-bit tick kept with the row, in one extra 4-byte slot after its
// optimizer state (touch_of / set_touch), so that RAM, storage, write-backs and checkpoints carry
// it with the row. Ages are computed modulo 2^32, which is exact while a TTL is below 2^31 ticks
// and every row is swept at least once per 2^31 ticks.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "ss/core/status.hpp"

namespace ss::embedding {

enum class ttl_clock { examples, seconds };

struct row_ttl {
  std::uint32_t ticks = 0;  // 0: rows never expire
  ttl_clock clock = ttl_clock::examples;
  bool enabled() const { return ticks > 0; }
};

// The largest TTL: ages modulo 2^32 need it below 2^31.
constexpr std::uint32_t max_ttl_ticks = (std::uint32_t{1} << 31) - 1;

// "0" or "" (off), "<N>ex" (examples, also "<N>examples"), "<N>s", "<N>m", "<N>h", "<N>d"
// (seconds, minutes, hours, days). errc::invalid_argument naming what is wrong otherwise.
result<row_ttl> parse_row_ttl(std::string_view text);
// "off", "2000000 examples", "3600 s".
std::string describe(const row_ttl& ttl);

// The touch slot holds a tick's bits, not a number: copied, never computed with.
inline std::uint32_t touch_of(const float* slot) {
  std::uint32_t tick;
  std::memcpy(&tick, slot, sizeof tick);
  return tick;
}
inline void set_touch(float* slot, std::uint32_t tick) { std::memcpy(slot, &tick, sizeof tick); }

// Whether a row last touched at `touched` has expired at `now` (ages modulo 2^32).
inline bool expired(std::uint32_t touched, std::uint32_t now, std::uint32_t ttl) {
  return static_cast<std::uint32_t>(now - touched) > ttl;
}

// Where a table's rows keep their last touch, if they do: the slot after the values and the
// optimizer state. What embedding_table asks of a row for its TTL.
struct row_touch {
  std::uint32_t at = 0;  // floats before the touch slot
  bool kept = false;     // rows have a touch slot (table_options::touch_slot)

  // Sets the row's last touch to `now`; nothing without a touch slot.
  void touch(float* row, std::uint32_t now) const {
    if (kept) set_touch(row + at, now);
  }
  // Whether the row has expired at `now` under `ttl` (0: never).
  bool expired_at(const float* row, std::uint32_t now, std::uint32_t ttl) const {
    return kept && ttl != 0 && expired(touch_of(row + at), now, ttl);
  }
};

}  // namespace ss::embedding
