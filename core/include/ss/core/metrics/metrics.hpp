// Click-model quality metrics: log loss, normalized entropy (NE), exact AUC
// and calibration. Predictions are stored as float (that is what the model produces); every sum
// and ratio is computed in double.
//
// Thread-safety: the free functions are pure and may be called from any thread; summary is a
// plain value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ss/core/json.hpp"

namespace ss::metrics {

// Predictions are clipped to [log_loss_eps, 1 - log_loss_eps] before taking logs, so a confident
// wrong answer costs at most -ln(1e-7) ~= 16.1 nats instead of infinity.
inline constexpr double log_loss_eps = 1e-7;

// Labels are 0/1 floats (as in data::example_batch); anything >= 0.5 counts as a click.
inline bool is_click(float label) noexcept { return label >= 0.5f; }

// Binary cross-entropy of one example in nats, with the clipping above. A NaN prediction gives NaN.
double log_loss(double prediction, bool click) noexcept;

// H(p) = -(p ln p + (1-p) ln(1-p)) in nats; 0 at p = 0 or 1, NaN outside [0, 1].
double entropy(double p) noexcept;

// NE = mean_log_loss / H(base_click_rate). base_click_rate is the *training* set's click rate,
// passed by the caller. NE is undefined (NaN) when the base rate is 0, 1, outside [0, 1] or NaN,
// since H is then 0 or meaningless. 1.0 is the constant predictor; lower is better.
double normalized_entropy(double mean_log_loss, double base_click_rate) noexcept;

// Exact ROC AUC (Mann-Whitney U with average ranks: a positive and a negative with equal
// predictions count half). O(n log n) time, O(n) extra memory. NaN when either class is absent.
double auc(const float* predictions, const float* labels, std::size_t count);
// Sizes should match; only the common prefix is used otherwise.
double auc(const std::vector<float>& predictions, const std::vector<float>& labels);
// The same, with the examples already split by class.
double auc_from_groups(const std::vector<float>& positive_predictions,
                       const std::vector<float>& negative_predictions);

// What accumulator and window report. Every ratio is NaN when its denominator is zero (no
// examples, no clicks), never infinity, so a progress line shows "nan" instead of lying.
struct summary {
  static constexpr double nan = std::numeric_limits<double>::quiet_NaN();

  std::uint64_t examples = 0;
  std::uint64_t positives = 0;
  double click_rate = nan;       // positives / examples
  double mean_prediction = nan;  // raw (unclipped) predictions
  double log_loss = nan;         // mean, nats
  double ne = nan;               // log_loss / H(base click rate)
  double auc = nan;
  double calibration = nan;      // mean_prediction / click_rate

  // "examples=1000 ne=0.91234 auc=0.77123 log_loss=0.45123 ctr=0.25 mean_pred=0.249 calibration=0.996"
  std::string to_string() const;
};

// Adds a result line's test fields: test_examples, test_logloss, test_ne, test_auc,
// test_calibration (null where not a number).
json_object& add_test_fields(json_object& j, const summary& m);
// Adds validation_logloss, validation_ne, validation_auc (an epoch's or an evaluation's).
json_object& add_validation_fields(json_object& j, const summary& m);

namespace detail {

// Neumaier-compensated sum: tens of millions of terms stay accurate to ~1e-16 relative, so a
// merged accumulator matches a single one.
class compensated_sum {
 public:
  void add(double x) noexcept {
    double t = sum_ + x;
    if (abs_(sum_) >= abs_(x)) {
      comp_ += (sum_ - t) + x;
    } else {
      comp_ += (x - t) + sum_;
    }
    sum_ = t;
  }
  void add(const compensated_sum& other) noexcept {
    add(other.sum_);
    add(other.comp_);
  }
  double value() const noexcept { return sum_ + comp_; }
  void clear() noexcept { sum_ = comp_ = 0.0; }

 private:
  static double abs_(double x) noexcept { return x < 0 ? -x : x; }
  double sum_ = 0.0;
  double comp_ = 0.0;
};

// Fills in the ratios of a summary from counts and sums.
summary make_summary(std::uint64_t examples, std::uint64_t positives, double prediction_sum,
                     double log_loss_sum, double auc, double base_click_rate) noexcept;

}  // namespace detail
}  // namespace ss::metrics
