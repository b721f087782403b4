// Following the training input as it grows (--follow): a job over a stream, not a fixed set of
// files. Each reader follows one --train input (a file, tail -F; or a directory of files read in
// name order: data::follow_reader) and the job runs until it is stopped or a limit ends it.
#pragma once

#include <cstdint>
#include <string>

#include "ss/core/config/option_set.hpp"

namespace ss::job {

struct follow_options {
  bool enabled = false;
  std::string pattern = "*";  // a directory input: the file names read
  // A partial batch (fewer rows there than a batch) is handed out once its first row has waited
  // this long: 0.2 s, the trainers' pace of asking again when a reader has nothing (their retry
  // delay), so a row waits at most about two of those before it trains, and a slow stream still
  // makes batches of a fifth of a second's rows rather than of one row each.
  double batch_wait = 0.2;
  std::uint64_t limit_examples = 0;  // the job ends after this many examples (0: no limit)
  double for_seconds = 0;            // the job ends this long after training starts (0: no limit)
};

void add_follow_options(config::option_set& opts, follow_options& o);

}  // namespace ss::job
