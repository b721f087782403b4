// A progressive evaluation window (ss/core/metrics/progressive.hpp) to and from the form a
// heartbeat carries (wire::progressive_window): slice times become ages before the heartbeat, so
// a receiver puts them on its own clock; histograms travel as their nonzero buckets.
#pragma once

#include <deque>
#include <vector>

#include "ss/core/metrics/progressive.hpp"
#include "ss/core/status.hpp"
#include "ss/wire/messages.hpp"

namespace ss::wire {

// At most this many slices in one window (a holder keeps about window_spec::slices + 1).
inline constexpr std::size_t max_progressive_slices = 1024;

// The slices of a window at `now` (the holder's clock).
progressive_window to_wire(const std::deque<metrics::window_slice>& slices, double now);

// The slices back, timed on the receiver's clock: `received` is when the heartbeat arrived.
// Refuses what check_progressive refuses.
result<std::vector<metrics::window_slice>> from_wire(const progressive_window& w, double received);

// Lists of one length per slice, bucket entries adding up to the slices' counts, buckets in range
// and ascending, ages that are times: parse_error naming what is wrong otherwise.
status check_progressive(const progressive_window& w);

}  // namespace ss::wire
