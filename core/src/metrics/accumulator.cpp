#include "ss/core/metrics/accumulator.hpp"

#include <algorithm>
#include <string>

#include "sorted_keys.hpp"

namespace ss::metrics {

void accumulator::add(float prediction, float label) {
  const bool click = is_click(label);
  (click ? positive_predictions_ : negative_predictions_).push_back(prediction);
  prediction_sum_.add(prediction);
  log_loss_sum_.add(log_loss(prediction, click));
}

void accumulator::add(const float* predictions, const float* labels, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) add(predictions[i], labels[i]);
}

status accumulator::add(const std::vector<float>& predictions, const std::vector<float>& labels) {
  SS_RETURN_IF_ERROR(internal::check_same_size(predictions, labels));
  add(predictions.data(), labels.data(), predictions.size());
  return status::ok();
}

namespace {
// insert() may not take iterators into the vector it grows, so self-appends go through a copy.
void append(std::vector<float>& to, const std::vector<float>& from) {
  if (&to == &from) {
    std::vector<float> copy(from);
    to.insert(to.end(), copy.begin(), copy.end());
  } else {
    to.insert(to.end(), from.begin(), from.end());
  }
}
}  // namespace

void accumulator::merge(const accumulator& other) {
  append(positive_predictions_, other.positive_predictions_);
  append(negative_predictions_, other.negative_predictions_);
  const detail::compensated_sum prediction_sum = other.prediction_sum_;  // copies: other may be *this
  const detail::compensated_sum log_loss_sum = other.log_loss_sum_;
  prediction_sum_.add(prediction_sum);
  log_loss_sum_.add(log_loss_sum);
}

void accumulator::reserve(std::size_t examples) {
  // The click rate is unknown up front; CTR data is mostly negatives.
  negative_predictions_.reserve(examples);
}

void accumulator::clear() noexcept {
  positive_predictions_.clear();
  negative_predictions_.clear();
  prediction_sum_.clear();
  log_loss_sum_.clear();
}

summary accumulator::compute(double base_click_rate) const {
  const double auc = auc_from_groups(positive_predictions_, negative_predictions_);
  return detail::make_summary(examples(), positives(), prediction_sum_.value(),
                              log_loss_sum_.value(), auc, base_click_rate);
}

}  // namespace ss::metrics
