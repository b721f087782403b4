// Progressive evaluation's window (metrics/progressive.hpp), declared once for every command that
// trains: `train`, and the jobs of `coordinator` and `local`.
#pragma once

#include <cstdint>

#include "ss/core/config/option_set.hpp"
#include "ss/core/metrics/progressive.hpp"

namespace ss::job {

struct progressive_options {
  std::uint64_t window = 100000;  // the newest examples scored; 0: no limit by count
  double window_seconds = 0;      // those scored in the last seconds; 0: no limit by time
};

void add_progressive_options(config::option_set& opts, progressive_options& o);

metrics::window_spec window_spec_of(const progressive_options& o);

// "the last 100000 examples", "the last 60 s", "the last 100000 examples and 60 s", "every example".
std::string describe_window(const progressive_options& o);

}  // namespace ss::job
