#include "ss/core/optim/lr_schedule.hpp"

#include <cmath>

namespace ss::optim {

result<decay_kind> parse_decay_kind(const std::string& name) {
  if (name == "none") return decay_kind::constant;
  if (name == "linear") return decay_kind::linear;
  if (name == "cosine") return decay_kind::cosine;
  if (name == "step") return decay_kind::step;
  return status(errc::invalid_argument, "unknown learning-rate decay '" + name + "' (none, linear, cosine, step)");
}

const char* to_string(decay_kind kind) {
  switch (kind) {
    case decay_kind::constant: return "none";
    case decay_kind::linear: return "linear";
    case decay_kind::cosine: return "cosine";
    case decay_kind::step: return "step";
  }
  return "?";
}

float lr_schedule::scale(std::uint64_t examples) const noexcept {
  if (examples < warmup_examples)
    return static_cast<float>(static_cast<double>(examples + 1) / static_cast<double>(warmup_examples));
  const std::uint64_t t = examples - warmup_examples;
  if (decay == decay_kind::constant || decay_examples == 0) return 1.0f;
  if (decay == decay_kind::step)
    return static_cast<float>(std::pow(step_gamma, static_cast<double>(t / decay_examples)));
  if (t >= decay_examples) return static_cast<float>(min_ratio);
  const double progress = static_cast<double>(t) / static_cast<double>(decay_examples);
  const double shape = decay == decay_kind::linear ? 1.0 - progress : 0.5 * (1.0 + std::cos(M_PI * progress));
  return static_cast<float>(min_ratio + (1.0 - min_ratio) * shape);
}

status lr_schedule::check() const {
  if (decay != decay_kind::constant && decay_examples == 0)
    return {errc::invalid_argument, std::string("--lr-decay ") + to_string(decay) +
                                        " needs --lr-decay-examples: the examples over which the learning rate " +
                                        (decay == decay_kind::step ? "steps down once" : "decays")};
  if (min_ratio < 0 || min_ratio > 1)
    return {errc::invalid_argument, "--lr-min-ratio must be in [0, 1]: the decay's end as a fraction of the rate"};
  if (step_gamma <= 0 || step_gamma > 1)
    return {errc::invalid_argument, "--lr-step-gamma must be in (0, 1]: the factor of each step"};
  return status::ok();
}

}  // namespace ss::optim
