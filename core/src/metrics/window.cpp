#include "ss/core/metrics/window.hpp"

#include <algorithm>
#include <string>

#include "sorted_keys.hpp"

namespace ss::metrics {

window::window(std::size_t capacity)
    : predictions_(std::max<std::size_t>(capacity, 1)), clicks_(predictions_.size()) {}

void window::add(float prediction, float label) noexcept {
  predictions_[next_] = prediction;
  clicks_[next_] = is_click(label) ? 1 : 0;
  if (++next_ == predictions_.size()) next_ = 0;
  if (size_ < predictions_.size()) ++size_;
  ++total_added_;
}

void window::add(const float* predictions, const float* labels, std::size_t count) noexcept {
  // Only the last capacity() examples can survive, so skip the rest.
  const std::size_t skip = count > capacity() ? count - capacity() : 0;
  total_added_ += skip;
  for (std::size_t i = skip; i < count; ++i) add(predictions[i], labels[i]);
}

status window::add(const std::vector<float>& predictions, const std::vector<float>& labels) {
  SS_RETURN_IF_ERROR(internal::check_same_size(predictions, labels));
  add(predictions.data(), labels.data(), predictions.size());
  return status::ok();
}

void window::clear() noexcept {
  next_ = 0;
  size_ = 0;
  total_added_ = 0;
}

summary window::compute(double base_click_rate) const {
  // The held examples are slots [0, size_) whether or not the ring has wrapped: before it wraps
  // they are the prefix, after it they are all slots.
  std::vector<std::uint32_t> pos;
  std::vector<std::uint32_t> neg;
  detail::compensated_sum prediction_sum;
  detail::compensated_sum log_loss_sum;
  for (std::size_t i = 0; i < size_; ++i) {
    const float p = predictions_[i];
    const bool click = clicks_[i] != 0;
    (click ? pos : neg).push_back(internal::float_key(p));
    prediction_sum.add(p);
    log_loss_sum.add(log_loss(p, click));
  }
  const std::uint64_t positives = pos.size();
  const double auc = internal::auc_from_keys(pos, neg);
  return detail::make_summary(size_, positives, prediction_sum.value(), log_loss_sum.value(), auc,
                              base_click_rate);
}

}  // namespace ss::metrics
