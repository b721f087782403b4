#include "ss/core/metrics/progressive.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace ss::metrics {
namespace {

constexpr double logit_range = 16.0;  // buckets cover [-16, 16]
// A slice's counts are 32-bit (the wire sends them so): it closes long before they could wrap.
constexpr std::uint64_t max_slice_examples = std::uint64_t{1} << 31;

std::uint32_t bucket_of_logit(double logit) noexcept {
  const double x = (logit + logit_range) / progressive_bucket_width;
  if (!(x > 0.0)) return 0;
  if (x >= static_cast<double>(progressive_buckets)) return progressive_buckets - 1;
  return static_cast<std::uint32_t>(x);
}

}  // namespace

// The logit of the prediction as log_loss clips it: the clipped ends lie beyond the outer
// buckets' edges anyway, and the two logs are the ones the log loss takes (window_slice::add
// takes them once for both).
std::uint32_t prediction_bucket(float prediction) noexcept {
  if (std::isnan(prediction)) return 0;
  const double q = std::clamp<double>(prediction, log_loss_eps, 1.0 - log_loss_eps);
  return bucket_of_logit(std::log(q) - std::log1p(-q));
}

void window_slice::add(float prediction, float label) {
  if (click_counts.empty()) {
    click_counts.assign(progressive_buckets, 0);
    non_click_counts.assign(progressive_buckets, 0);
  }
  const bool click = is_click(label);
  ++examples;
  clicks += click ? 1 : 0;
  prediction_sum += prediction;
  if (std::isnan(prediction)) {
    log_loss_sum += log_loss(prediction, click);
    ++(click ? click_counts : non_click_counts)[0];
    return;
  }
  // log_loss(prediction, click) and prediction_bucket(prediction), from the same two logs.
  const double q = std::clamp<double>(prediction, log_loss_eps, 1.0 - log_loss_eps);
  const double log_q = std::log(q), log_not_q = std::log1p(-q);
  log_loss_sum += click ? -log_q : -log_not_q;
  ++(click ? click_counts : non_click_counts)[bucket_of_logit(log_q - log_not_q)];
}

void window_totals::add(const window_slice& s) {
  if (s.examples == 0) return;
  if (click_counts.empty()) {
    click_counts.assign(progressive_buckets, 0);
    non_click_counts.assign(progressive_buckets, 0);
  }
  oldest_seconds = slices == 0 ? s.start_seconds : std::min(oldest_seconds, s.start_seconds);
  newest_seconds = slices == 0 ? s.end_seconds : std::max(newest_seconds, s.end_seconds);
  ++slices;
  examples += s.examples;
  clicks += s.clicks;
  prediction_sum += s.prediction_sum;
  log_loss_sum += s.log_loss_sum;
  const std::size_t n = std::min<std::size_t>(progressive_buckets, s.click_counts.size());
  for (std::size_t b = 0; b < n; ++b) {
    click_counts[b] += s.click_counts[b];
    non_click_counts[b] += s.non_click_counts[b];
  }
}

double bucket_auc(const std::uint64_t* click_counts, const std::uint64_t* non_click_counts, std::size_t buckets,
                  double* bound) {
  // 2U over buckets in ascending order: each click beats the non-clicks of lower buckets and ties
  // (half) with those of its own; `same` counts the pairs sharing a bucket.
  double twice_u = 0, same = 0, below = 0, clicks = 0;
  for (std::size_t b = 0; b < buckets; ++b) {
    const auto c = static_cast<double>(click_counts[b]);
    const auto n = static_cast<double>(non_click_counts[b]);
    twice_u += c * (2.0 * below + n);
    same += c * n;
    below += n;
    clicks += c;
  }
  const double pairs = clicks * below;
  if (bound != nullptr) *bound = pairs > 0 ? 0.5 * same / pairs : summary::nan;
  return pairs > 0 ? twice_u / (2.0 * pairs) : summary::nan;
}

progressive_summary summarize(const window_totals& t, double base_click_rate) {
  progressive_summary s;
  double bound = summary::nan;
  const double auc = t.click_counts.empty()
                         ? summary::nan
                         : bucket_auc(t.click_counts.data(), t.non_click_counts.data(), t.click_counts.size(), &bound);
  s.metrics = detail::make_summary(t.examples, t.clicks, t.prediction_sum, t.log_loss_sum, auc, base_click_rate);
  s.auc_error_bound = bound;
  s.seconds = t.slices > 0 ? t.newest_seconds - t.oldest_seconds : 0.0;
  s.enough = t.examples >= progressive_min_examples && t.clicks >= progressive_min_per_class &&
             t.examples - t.clicks >= progressive_min_per_class;
  return s;
}

std::string progressive_summary::to_string() const {
  char buf[256];
  if (!enough) {
    std::snprintf(buf, sizeof buf, "progressive: too few examples (%llu with %llu clicks; at least %llu, %llu of each class)",
                  static_cast<unsigned long long>(metrics.examples), static_cast<unsigned long long>(metrics.positives),
                  static_cast<unsigned long long>(progressive_min_examples),
                  static_cast<unsigned long long>(progressive_min_per_class));
    return buf;
  }
  std::snprintf(buf, sizeof buf, "progressive NE %.5f AUC %.5f (+-%.4f) calibration %.4f over %llu examples (%.0fs)",
                metrics.ne, metrics.auc, auc_error_bound, metrics.calibration,
                static_cast<unsigned long long>(metrics.examples), seconds);
  return buf;
}

json_object& add_progressive_fields(json_object& j, const progressive_summary& s) {
  const auto shown = [&s](double x) { return s.enough ? x : summary::nan; };
  return j.add("progressive_examples", s.metrics.examples)
      .add("progressive_logloss", shown(s.metrics.log_loss))
      .add("progressive_ne", shown(s.metrics.ne))
      .add("progressive_auc", shown(s.metrics.auc))
      .add("progressive_auc_error_bound", shown(s.auc_error_bound))
      .add("progressive_calibration", shown(s.metrics.calibration))
      .add("progressive_seconds", s.seconds)
      .add("progressive_enough", s.enough);
}

std::vector<std::size_t> select_window(const std::vector<const window_slice*>& slices, const window_spec& spec,
                                       double now) {
  std::vector<std::size_t> order(slices.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return slices[a]->end_seconds > slices[b]->end_seconds; });
  std::vector<std::size_t> in;
  std::uint64_t taken = 0;
  for (const std::size_t i : order) {
    const auto& s = *slices[i];
    if (s.examples == 0) continue;
    if (spec.seconds > 0 && s.end_seconds < now - spec.seconds) continue;
    if (spec.examples > 0 && taken >= spec.examples) break;
    taken += s.examples;
    in.push_back(i);
  }
  return in;
}

window_totals merge_window(const std::vector<const window_slice*>& slices, const window_spec& spec, double now) {
  window_totals t;
  for (const std::size_t i : select_window(slices, spec, now)) t.add(*slices[i]);
  return t;
}

progressive_window::progressive_window(window_spec spec) : spec_(spec) {}

void progressive_window::reset(window_spec spec) {
  spec_ = spec;
  slices_.clear();
}

bool progressive_window::full(const window_slice& s, double now) const {
  if (s.examples >= max_slice_examples) return true;
  const std::uint32_t parts = std::max<std::uint32_t>(spec_.slices, 1);
  if (spec_.examples > 0 && s.examples >= std::max<std::uint64_t>(spec_.examples / parts, 1)) return true;
  return spec_.seconds > 0 && now - s.start_seconds >= spec_.seconds / parts;
}

void progressive_window::add(double now, const float* predictions, const float* labels, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    if (slices_.empty() || full(slices_.back(), now)) {
      slices_.emplace_back();
      slices_.back().start_seconds = now;
    }
    slices_.back().add(predictions[i], labels[i]);
    slices_.back().end_seconds = now;
  }
  expire(now);
}

void progressive_window::expire(double now) {
  if (spec_.seconds > 0)
    while (!slices_.empty() && slices_.front().end_seconds < now - spec_.seconds) slices_.pop_front();
  if (spec_.examples == 0) return;
  std::uint64_t held = 0;
  for (const auto& s : slices_) held += s.examples;
  while (slices_.size() > 1 && held - slices_.front().examples >= spec_.examples) {
    held -= slices_.front().examples;
    slices_.pop_front();
  }
}

const std::deque<window_slice>& progressive_window::slices(double now) {
  expire(now);
  return slices_;
}

progressive_summary progressive_window::summary(double now, double base_click_rate) {
  window_totals t;
  for (const auto& s : slices(now)) t.add(s);
  return summarize(t, base_click_rate);
}

}  // namespace ss::metrics
