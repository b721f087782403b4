// Passes over the training data, shared by `train` and the cluster's job: how many, how the
// examples are shuffled, and the validation that picks the best pass and may stop early.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ss/core/config/option_set.hpp"
#include "ss/core/metrics/metrics.hpp"
#include "ss/core/status.hpp"

namespace ss::job {

inline constexpr std::int64_t default_shuffle_window = 100000;

struct epoch_options {
  int epochs = 1;
  std::int64_t shuffle_buffer = -1;  // -1: none for one epoch, default_shuffle_window for more
  std::vector<std::string> validation;
  int early_stop_patience = 0;  // 0 = never stop early
  std::uint64_t eval_every = 0;  // also score the validation files every this many examples; 0 = never

  // The examples shuffled together; 0 = the files and their rows in order.
  std::size_t shuffle_window() const noexcept {
    return static_cast<std::size_t>(shuffle_buffer >= 0 ? shuffle_buffer : (epochs > 1 ? default_shuffle_window : 0));
  }
};

void add_epoch_options(config::option_set& opts, epoch_options& o);

// One scoring of the validation files within an epoch (--eval-every).
struct evaluation {
  int epoch = 0;               // 1-based
  std::uint64_t examples = 0;  // trained in the job so far
  metrics::summary validation;
};
// As the result line's "evaluations" array.
std::string evaluations_json(const std::vector<evaluation>& evaluations);

// The combinations single options cannot check (patience without validation, or one that could
// never stop the run), each naming the flags and the fix.
status check_epoch_options(const epoch_options& o);

}  // namespace ss::job
