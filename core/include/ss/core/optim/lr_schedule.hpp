// Learning-rate schedules: a multiplier of both learning rates (dense and embedding) as a function
// of the examples trained so far in the job (every epoch counted), so that it means the same in
// `train` and in the cluster, and after a restart.
//
//   warmup:  scale rises linearly from 1/warmup to 1 over the first warmup_examples
//   then, over the examples after the warmup (t of them):
//     constant: 1
//     linear:   from 1 to min_ratio at decay_examples, then min_ratio
//     cosine:   min_ratio + (1 - min_ratio) * (1 + cos(pi * t / decay_examples)) / 2, then min_ratio
//     step:     step_gamma ^ floor(t / decay_examples)
#pragma once

#include <cstdint>
#include <string>

#include "ss/core/status.hpp"

namespace ss::optim {

enum class decay_kind { constant, linear, cosine, step };

result<decay_kind> parse_decay_kind(const std::string& name);  // "none", "linear", "cosine", "step"
const char* to_string(decay_kind kind);

struct lr_schedule {
  std::uint64_t warmup_examples = 0;
  decay_kind decay = decay_kind::constant;
  std::uint64_t decay_examples = 0;  // linear, cosine: the decay's length; step: the step's
  double min_ratio = 0.0;            // linear, cosine: the multiplier at the end of the decay
  double step_gamma = 0.5;           // step: the factor at each step

  bool constant() const noexcept { return warmup_examples == 0 && decay == decay_kind::constant; }
  // The multiplier of the learning rates after `examples` examples were trained.
  float scale(std::uint64_t examples) const noexcept;
  // A schedule whose flags contradict each other (a decay without its length, a ratio outside
  // [0, 1]) is an error naming the flags.
  status check() const;
};

}  // namespace ss::optim
