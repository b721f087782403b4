// What each 4-byte slot of a shard's row holds: the values at the row precision, the optimizer's
// FP32 state, and with a row TTL the stamp. Storage keeps a layout in words (describe) with the
// rows and refuses rows of another; a snapshot resumed at another precision has its rows
// converted from the layout they were stored at (convert_row).
#pragma once

#include <cstdint>
#include <string>

#include "ss/core/embedding/row_precision.hpp"
#include "ss/core/status.hpp"

namespace ss::embedding {

struct row_layout {
  std::uint32_t dim = 0;
  row_precision precision = row_precision::fp32;
  std::uint32_t state_floats = 0;  // the optimizer's, at FP32
  bool ttl_stamp = false;

  std::uint32_t slots() const { return value_slots(dim, precision) + state_floats + (ttl_stamp ? 1 : 0); }
  bool operator==(const row_layout& o) const {
    return dim == o.dim && precision == o.precision && state_floats == o.state_floats && ttl_stamp == o.ttl_stamp;
  }
  bool operator!=(const row_layout& o) const { return !(*this == o); }
};

// In words, e.g. "16 bf16 values, 1 fp32 optimizer value, a TTL stamp": what storage keeps.
std::string describe(const row_layout& layout);
// describe()'s words back; errc::parse_error naming them when they are not describe()'s.
result<row_layout> parse_row_layout(const std::string& text);

// Whether rows of `from` can become rows of `to`: the same values, state and stamp, at another
// precision (a change of model or optimizer is not a conversion).
bool converts_to(const row_layout& from, const row_layout& to);

// One row of `from` (from.slots() slots) as a row of `to` (converts_to(from, to)): the values
// decoded to FP32 and rounded to the nearest at to's precision (a conversion rounds once, so the
// nearest is the least error; to FP32 it is exact), the state and the stamp copied. false when a
// finite value lies beyond to's range (overflows(): fp16 ends at 65504): `out` is then not a row.
bool convert_row(const row_layout& from, const row_layout& to, const float* in, float* out);

}  // namespace ss::embedding
