#include "ss/core/job/progressive_options.hpp"

#include <cstdio>
#include <string>

namespace ss::job {

void add_progressive_options(config::option_set& opts, progressive_options& o) {
  opts.add("progressive-window", &o.window,
           "Progressive evaluation (each batch scored before it is trained on): NE, AUC and calibration over the "
           "newest this many examples; 0 = no limit by count (see --progressive-window-seconds; both 0: every "
           "example since the start).");
  opts.add("progressive-window-seconds", &o.window_seconds,
           "Progressive evaluation over the examples scored in the last this many seconds; 0 = no limit by time. "
           "With --progressive-window too, an example must be within both.")
      .range(0.0, 1e9);
}

metrics::window_spec window_spec_of(const progressive_options& o) {
  metrics::window_spec s;
  s.examples = o.window;
  s.seconds = o.window_seconds;
  return s;
}

std::string describe_window(const progressive_options& o) {
  char seconds[48];
  std::snprintf(seconds, sizeof seconds, "%g s", o.window_seconds);
  if (o.window > 0 && o.window_seconds > 0)
    return "the last " + std::to_string(o.window) + " examples and " + seconds;
  if (o.window > 0) return "the last " + std::to_string(o.window) + " examples";
  if (o.window_seconds > 0) return std::string("the last ") + seconds;
  return "every example";
}

}  // namespace ss::job
