#include "ss/core/sync/sync_algorithms.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "ss/core/multiversion.hpp"

namespace ss::sync {

namespace {
constexpr const char* nesterov_suffix = "-nesterov";
}

result<sync_spec> parse_sync(const std::string& name) {
  if (name == "none") return sync_spec{algorithm::none, mode::none};
  if (name == "auto") return sync_spec{algorithm::easgd, mode::shadow, false, false};
  const std::string suffix = nesterov_suffix;
  if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    auto inner = parse_sync(name.substr(0, name.size() - suffix.size()));
    if (inner.is_ok() && inner->when == mode::shadow && !inner->outer_nesterov &&
        (inner->algo == algorithm::easgd || inner->algo == algorithm::ma)) {
      inner->outer_nesterov = true;
      return inner;
    }
  }
  const auto dash = name.find('-');
  if (dash != std::string::npos) {
    const std::string when = name.substr(0, dash), what = name.substr(dash + 1);
    sync_spec s;
    if (when == "s") s.when = mode::shadow;
    else if (when == "fr") s.when = mode::foreground;
    if (what == "easgd") s.algo = algorithm::easgd;
    else if (what == "ma") s.algo = algorithm::ma;
    else if (what == "bmuf") s.algo = algorithm::bmuf;
    if (s.when != mode::none && s.algo != algorithm::none) return s;
  }
  return {errc::invalid_argument,
          "unknown sync '" + name +
              "' (auto, none, s-easgd, s-ma, s-bmuf, fr-easgd, fr-ma, fr-bmuf, s-easgd-nesterov, s-ma-nesterov)"};
}

const char* to_string(algorithm a) {
  switch (a) {
    case algorithm::none: return "none";
    case algorithm::easgd: return "easgd";
    case algorithm::ma: return "ma";
    case algorithm::bmuf: return "bmuf";
  }
  return "none";
}

std::string to_string(const sync_spec& spec) {
  if (spec.algo == algorithm::none || spec.when == mode::none) return "none";
  return std::string(spec.when == mode::shadow ? "s-" : "fr-") + to_string(spec.algo) +
         (spec.outer_nesterov ? nesterov_suffix : "");
}

SS_MULTIVERSION void easgd_step(const float* __restrict replica, float* __restrict central, float alpha,
                                float* __restrict delta, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const float d = alpha * (replica[i] - central[i]);
    delta[i] = d;
    central[i] += d;
  }
}

SS_MULTIVERSION void easgd_delta(const float* __restrict replica, const float* __restrict central, float alpha,
                                 float* __restrict delta, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) delta[i] = alpha * (replica[i] - central[i]);
}

SS_MULTIVERSION void add(float* __restrict x, const float* __restrict y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] += y[i];
}

SS_MULTIVERSION void apply_target(float* __restrict live, const float* __restrict snapshot,
                                  const float* __restrict target, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) live[i] += target[i] - snapshot[i];
}

SS_MULTIVERSION void subtract(float* __restrict live, const float* __restrict delta, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) live[i] -= delta[i];
}

void replica_mean::reset(std::size_t n) {
  sum_.assign(n, 0.0);
  count_ = 0;
}

void replica_mean::add(const float* replica) {
  for (std::size_t i = 0; i < sum_.size(); ++i) sum_[i] += replica[i];
  ++count_;
}

void replica_mean::mean(float* out) const {
  assert(count_ > 0);
  const double inv = 1.0 / static_cast<double>(count_);
  for (std::size_t i = 0; i < sum_.size(); ++i) out[i] = static_cast<float>(sum_[i] * inv);
}

void bmuf_state::init(const float* initial, std::size_t n) {
  global_.assign(initial, initial + n);
  start_ = global_;
  delta_.assign(n, 0.0f);
}

void bmuf_state::restore(const float* global, const float* momentum, std::size_t n) {
  global_.assign(global, global + n);
  start_ = global_;
  if (momentum != nullptr) delta_.assign(momentum, momentum + n);
  else delta_.assign(n, 0.0f);
}

void bmuf_state::step(const float* mean, const bmuf_options& o, float* target) {
  for (std::size_t i = 0; i < global_.size(); ++i) {
    const float g = mean[i] - start_[i];
    delta_[i] = o.momentum * delta_[i] + o.block_lr * g;
    global_[i] += delta_[i];
    target[i] = o.nesterov ? global_[i] + o.momentum * delta_[i] : global_[i];
    start_[i] = target[i];
  }
}

SS_MULTIVERSION void easgd_fold(const float* __restrict mean, std::size_t replicas, float alpha,
                                float* __restrict central, std::size_t n) {
  const float rate = std::min(1.0f, alpha * static_cast<float>(replicas));
  for (std::size_t i = 0; i < n; ++i) central[i] += rate * (mean[i] - central[i]);
}

void outer_nesterov::init(const float* model, std::size_t n) { restore(model, nullptr, n); }

void outer_nesterov::restore(const float* model, const float* momentum, std::size_t n) {
  anchor_.assign(model, model + n);
  if (momentum != nullptr) velocity_.assign(momentum, momentum + n);
  else velocity_.assign(n, 0.0f);
}

void outer_nesterov::sweep_done(float* model, const outer_options& o, bool lookahead) {
  for (std::size_t i = 0; i < anchor_.size(); ++i) {
    const float delta = model[i] - anchor_[i];
    velocity_[i] = o.momentum * velocity_[i] + delta;
    model[i] = anchor_[i] + o.lr * (lookahead ? delta + o.momentum * velocity_[i] : delta);
    anchor_[i] = model[i];
  }
}

void sweep_tracker::saw(std::uint64_t trainer) {
  if (std::find(seen_.begin(), seen_.end(), trainer) == seen_.end()) seen_.push_back(trainer);
}

bool sweep_tracker::complete(const std::vector<std::uint64_t>& live, std::size_t live_count) {
  const bool done =
      live.empty() ? seen_.size() >= std::max<std::size_t>(1, live_count)
                   : std::all_of(live.begin(), live.end(), [this](std::uint64_t t) {
                       return std::find(seen_.begin(), seen_.end(), t) != seen_.end();
                     });
  if (done) seen_.clear();
  return done;
}

// Lanes of double sums, so that the loop vectorizes without reassociating one sum (-O2 would not).
SS_MULTIVERSION double relative_distance(const float* __restrict a, const float* __restrict b, std::size_t n) {
  constexpr std::size_t lanes = 8;
  double diff[lanes] = {}, norm[lanes] = {};
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes)
    for (std::size_t j = 0; j < lanes; ++j) {
      const double d = static_cast<double>(a[i + j]) - b[i + j];
      diff[j] += d * d;
      norm[j] += static_cast<double>(b[i + j]) * b[i + j];
    }
  for (std::size_t j = 0; i < n; ++i, ++j) {
    const double d = static_cast<double>(a[i]) - b[i];
    diff[j] += d * d;
    norm[j] += static_cast<double>(b[i]) * b[i];
  }
  double diff_sum = 0, norm_sum = 0;
  for (std::size_t j = 0; j < lanes; ++j) {
    diff_sum += diff[j];
    norm_sum += norm[j];
  }
  return std::sqrt(diff_sum) / std::max(std::sqrt(norm_sum), 1e-12);
}

std::vector<float> average_by_examples(const std::vector<weighted_replica>& replicas) {
  if (replicas.empty()) return {};
  double total = 0;
  for (const auto& r : replicas) total += static_cast<double>(r.examples);
  std::vector<double> sum(replicas.front().params->size(), 0.0);
  for (const auto& r : replicas) {
    const double w = total > 0 ? static_cast<double>(r.examples) / total : 1.0 / static_cast<double>(replicas.size());
    if (w == 0) continue;
    for (std::size_t i = 0; i < sum.size() && i < r.params->size(); ++i) sum[i] += w * (*r.params)[i];
  }
  return std::vector<float>(sum.begin(), sum.end());
}

}  // namespace ss::sync
