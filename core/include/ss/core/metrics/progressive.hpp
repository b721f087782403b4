// Progressive evaluation: every training example is scored by the model just before the model
// trains on it, and NE, AUC and calibration are reported over a sliding window of those scores
// (of examples, of time, or both). On a stream there is no test file; this is its test.
//
// The window is kept in slices. A slice holds sums (examples, clicks, predictions, log loss) and
// two histograms of its predictions, one for clicks and one for non-clicks, over fixed buckets.
// Slices of several holders (Hogwild workers, trainers) merge by adding, so a window over a
// whole job is exact in its sums: log loss, NE and calibration equal an accumulator's over the
// same examples (up to floating-point summation order). The AUC comes from the histograms: pairs
// in different buckets are ranked as the predictions are, pairs within a bucket count half, so
//   |bucket AUC - exact AUC| <= 0.5 * sum_b clicks_b * non_clicks_b / (clicks * non_clicks),
// the bound every summary carries (auc_error_bound). Buckets are 1/32 wide in logit, so on
// predictions spread over a few units of logit the bound is a few thousandths and the error
// itself far smaller (ties inside a bucket are about as often ordered one way as the other).
//
// Expiry: a slice leaves the window once its newest example is older than `seconds`, or once
// newer slices hold `examples` without it. A window therefore holds at least `examples` (when
// that many were scored) and fewer than `examples` plus one slice per holder; a time window
// reaches back at most `seconds` plus one slice's span (seconds / slices).
//
// Thread-safety: none; a progressive_window is guarded by its holder (the trainer's progress
// mutex). The free functions are pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "ss/core/metrics/metrics.hpp"

namespace ss::metrics {

// Predictions are bucketed by their logit ln(p / (1 - p)): 1024 buckets of width 1/32 over
// [-16, 16] (the log-loss clipping at 1e-7 is a logit of -16.1), the end buckets taking what lies
// beyond. The bucket never decreases as p grows. A NaN prediction goes to bucket 0.
inline constexpr std::uint32_t progressive_buckets = 1024;
inline constexpr double progressive_bucket_width = 1.0 / 32;  // in logit
std::uint32_t prediction_bucket(float prediction) noexcept;

// Below these a window's metrics are noise: a summary says so (enough = false) instead.
inline constexpr std::uint64_t progressive_min_examples = 1000;
inline constexpr std::uint64_t progressive_min_per_class = 10;  // clicks and non-clicks each

// How far back the window reaches: the newest `examples` (0: no limit) and those scored in the
// last `seconds` (0: no limit); at least one of the two is set. Each holder keeps it in about
// `slices` slices (a slice closes at examples / slices examples or seconds / slices seconds).
struct window_spec {
  std::uint64_t examples = 100000;
  double seconds = 0;
  std::uint32_t slices = 8;
};

// One slice: sums over its examples and the histograms of their predictions. Times are seconds
// on one clock (its holder's; the coordinator moves them onto its own).
struct window_slice {
  double start_seconds = 0;  // its first example
  double end_seconds = 0;    // its newest example
  std::uint64_t examples = 0, clicks = 0;
  double prediction_sum = 0, log_loss_sum = 0;
  // Per bucket (progressive_buckets each once an example is in; empty before).
  std::vector<std::uint32_t> click_counts, non_click_counts;

  void add(float prediction, float label);
};

// The sums over a set of slices, from which the metrics are computed.
struct window_totals {
  std::uint64_t examples = 0, clicks = 0;
  double prediction_sum = 0, log_loss_sum = 0;
  std::vector<std::uint64_t> click_counts, non_click_counts;  // progressive_buckets each, once added to
  double oldest_seconds = 0, newest_seconds = 0;              // the slices' first start and last end
  std::size_t slices = 0;

  void add(const window_slice& s);
};

// What a window reports. metrics.ne is against the base click rate the caller passes (the job's
// training click rate, like the test metrics), metrics.auc is the bucket AUC.
struct progressive_summary {
  summary metrics;
  double auc_error_bound = summary::nan;  // |metrics.auc - the window's exact AUC| <= this
  double seconds = 0;                     // from the oldest example in the window to the newest
  bool enough = false;                    // enough examples of each class to mean something

  // "progressive NE 0.81234 AUC 0.7712 (+-0.0013) calibration 0.998 over 100,352 examples" or
  // "progressive: too few examples (312; at least 1000, 10 of each class)".
  std::string to_string() const;
};

// Adds a result line's progressive fields: progressive_examples, progressive_logloss,
// progressive_ne, progressive_auc, progressive_auc_error_bound, progressive_calibration,
// progressive_seconds and progressive_enough; the metrics are null when it is false.
json_object& add_progressive_fields(json_object& j, const progressive_summary& s);

// The AUC of two histograms over the same ordered buckets (NaN without clicks or without
// non-clicks); *bound, when given, gets the bound above.
double bucket_auc(const std::uint64_t* click_counts, const std::uint64_t* non_click_counts, std::size_t buckets,
                  double* bound = nullptr);

progressive_summary summarize(const window_totals& t, double base_click_rate);

// The window over the slices of several holders at `now` (every time on one clock): slices
// ending before now - spec.seconds are out; of the rest, the newest (by end) first, until
// spec.examples are in. Returns the indexes into `slices` of those in the window.
std::vector<std::size_t> select_window(const std::vector<const window_slice*>& slices, const window_spec& spec,
                                       double now);
window_totals merge_window(const std::vector<const window_slice*>& slices, const window_spec& spec, double now);

// One holder's window. Batches are added with the time they were scored (non-decreasing).
class progressive_window {
 public:
  explicit progressive_window(window_spec spec = {});

  void add(double now, const float* predictions, const float* labels, std::size_t count);
  // Drops the slices that fell out of the window by `now`; those left, oldest first (the newest
  // one still open).
  const std::deque<window_slice>& slices(double now);
  progressive_summary summary(double now, double base_click_rate);

  // A new spec starts an empty window.
  void reset(window_spec spec);
  const window_spec& spec() const noexcept { return spec_; }

 private:
  void expire(double now);
  bool full(const window_slice& s, double now) const;

  window_spec spec_;
  std::deque<window_slice> slices_;  // oldest first; the last one open
};

}  // namespace ss::metrics
