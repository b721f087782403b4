#include "ss/core/job/follow_options.hpp"

namespace ss::job {

void add_follow_options(config::option_set& opts, follow_options& o) {
  opts.add("follow", &o.enabled,
           "Follow the --train inputs as they grow (tail -F: appends, rotation, truncation; a directory: its files "
           "matching --follow-pattern, in name order), one reader per input. The job runs until `shadowsync stop`, "
           "SIGTERM to `local`, or a --follow-limit-examples / --follow-for limit; then it ends as at the end of its "
           "data (docs/online.md).");
  opts.add("follow-pattern", &o.pattern,
           "--follow with a directory input: the names of the files read (a shell pattern; names starting with '.' "
           "never match).");
  opts.add("follow-batch-wait", &o.batch_wait,
           "--follow: seconds a partial batch (fewer new rows than --batch-size) waits for more before it is handed "
           "out anyway: freshness against batch size.")
      .range(0.001, 60.0);
  opts.add("follow-limit-examples", &o.limit_examples,
           "--follow: end the job after this many examples (split over the readers); 0: no limit.");
  opts.add("follow-for", &o.for_seconds, "--follow: end the job this many seconds after training starts; 0: no limit.")
      .range(0.0, 1e9);
}

}  // namespace ss::job
