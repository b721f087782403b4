#include "ss/core/metrics/metrics.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "sorted_keys.hpp"

namespace ss::metrics {

double log_loss(double prediction, bool click) noexcept {
  if (std::isnan(prediction)) return prediction;
  double p = std::clamp(prediction, log_loss_eps, 1.0 - log_loss_eps);
  return click ? -std::log(p) : -std::log1p(-p);
}

double entropy(double p) noexcept {
  if (!(p >= 0.0 && p <= 1.0)) return summary::nan;  // also catches NaN
  if (p == 0.0 || p == 1.0) return 0.0;
  return -(p * std::log(p) + (1.0 - p) * std::log1p(-p));
}

double normalized_entropy(double mean_log_loss, double base_click_rate) noexcept {
  if (!(base_click_rate > 0.0 && base_click_rate < 1.0)) return summary::nan;
  return mean_log_loss / entropy(base_click_rate);
}

double auc(const float* predictions, const float* labels, std::size_t count) {
  std::vector<std::uint32_t> pos;
  std::vector<std::uint32_t> neg;
  for (std::size_t i = 0; i < count; ++i) {
    (is_click(labels[i]) ? pos : neg).push_back(internal::float_key(predictions[i]));
  }
  return internal::auc_from_keys(pos, neg);
}

double auc(const std::vector<float>& predictions, const std::vector<float>& labels) {
  return auc(predictions.data(), labels.data(), std::min(predictions.size(), labels.size()));
}

double auc_from_groups(const std::vector<float>& positive_predictions,
                       const std::vector<float>& negative_predictions) {
  std::vector<std::uint32_t> pos(positive_predictions.size());
  std::vector<std::uint32_t> neg(negative_predictions.size());
  std::transform(positive_predictions.begin(), positive_predictions.end(), pos.begin(),
                 internal::float_key);
  std::transform(negative_predictions.begin(), negative_predictions.end(), neg.begin(),
                 internal::float_key);
  return internal::auc_from_keys(pos, neg);
}

std::string summary::to_string() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "examples=%llu ne=%.5f auc=%.5f log_loss=%.5f ctr=%.5f mean_pred=%.5f "
                "calibration=%.4f",
                static_cast<unsigned long long>(examples), ne, auc, log_loss, click_rate,
                mean_prediction, calibration);
  return buf;
}

namespace detail {

summary make_summary(std::uint64_t examples, std::uint64_t positives, double prediction_sum,
                     double log_loss_sum, double auc, double base_click_rate) noexcept {
  summary s;
  s.examples = examples;
  s.positives = positives;
  s.auc = auc;
  if (examples == 0) return s;  // every ratio stays NaN
  const double n = static_cast<double>(examples);
  s.click_rate = static_cast<double>(positives) / n;
  s.mean_prediction = prediction_sum / n;
  s.log_loss = log_loss_sum / n;
  s.ne = normalized_entropy(s.log_loss, base_click_rate);
  if (positives > 0) s.calibration = s.mean_prediction / s.click_rate;
  return s;
}

}  // namespace detail

namespace internal {

std::uint32_t float_key(float x) noexcept {
  if (x == 0.0f) x = 0.0f;  // fold -0 into +0
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  // Negative floats: flip all bits (larger magnitude sorts lower); positive: set the sign bit.
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

void radix_sort(std::vector<std::uint32_t>& keys, std::vector<std::uint32_t>& scratch) {
  const std::size_t n = keys.size();
  if (n < 256) {
    std::sort(keys.begin(), keys.end());
    return;
  }
  // One pass to count all four byte histograms.
  std::array<std::array<std::size_t, 256>, 4> counts{};
  for (std::uint32_t k : keys) {
    ++counts[0][k & 0xff];
    ++counts[1][(k >> 8) & 0xff];
    ++counts[2][(k >> 16) & 0xff];
    ++counts[3][k >> 24];
  }
  scratch.resize(n);
  for (int pass = 0; pass < 4; ++pass) {
    auto& count = counts[static_cast<std::size_t>(pass)];
    const int shift = pass * 8;
    // Predictions in [0, 1] share their top byte: a pass where one bucket holds everything is a no-op.
    if (count[(keys[0] >> shift) & 0xff] == n) continue;
    std::size_t offset = 0;
    for (auto& c : count) {
      std::size_t next = offset + c;
      c = offset;
      offset = next;
    }
    for (std::uint32_t k : keys) scratch[count[(k >> shift) & 0xff]++] = k;
    keys.swap(scratch);
  }
}

double auc_from_keys(std::vector<std::uint32_t>& positive_keys,
                     std::vector<std::uint32_t>& negative_keys) {
  const std::size_t num_pos = positive_keys.size();
  const std::size_t num_neg = negative_keys.size();
  if (num_pos == 0 || num_neg == 0) return summary::nan;
  std::vector<std::uint32_t> scratch;
  radix_sort(positive_keys, scratch);
  radix_sort(negative_keys, scratch);

  // Walk the distinct positive scores in order; each positive earns the negatives strictly below
  // it plus half of those tied with it. `twice_u` is 2U so the half credits stay integral.
  double twice_u = 0.0;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < num_pos) {
    const std::uint32_t key = positive_keys[i];
    std::size_t i_end = i;
    while (i_end < num_pos && positive_keys[i_end] == key) ++i_end;
    while (j < num_neg && negative_keys[j] < key) ++j;
    std::size_t j_end = j;
    while (j_end < num_neg && negative_keys[j_end] == key) ++j_end;
    twice_u += static_cast<double>(i_end - i) * (2.0 * static_cast<double>(j) +
                                                 static_cast<double>(j_end - j));
    i = i_end;
    j = j_end;
  }
  return twice_u / (2.0 * static_cast<double>(num_pos) * static_cast<double>(num_neg));
}

status check_same_size(const std::vector<float>& predictions, const std::vector<float>& labels) {
  if (predictions.size() == labels.size()) return status::ok();
  return status(errc::invalid_argument, "metrics: " + std::to_string(predictions.size()) + " predictions but " +
                                            std::to_string(labels.size()) + " labels");
}

}  // namespace internal
json_object& add_test_fields(json_object& j, const summary& m) {
  return j.add("test_examples", m.examples)
      .add("test_logloss", m.log_loss)
      .add("test_ne", m.ne)
      .add("test_auc", m.auc)
      .add("test_calibration", m.calibration);
}

json_object& add_validation_fields(json_object& j, const summary& m) {
  return j.add("validation_logloss", m.log_loss).add("validation_ne", m.ne).add("validation_auc", m.auc);
}

}  // namespace ss::metrics
