#include "ss/core/train/shuffled_source.hpp"

#include <algorithm>
#include <numeric>

namespace ss::train {

shuffled_source::shuffled_source(batch_source& inner, std::size_t window, std::size_t batch_size, std::uint64_t seed)
    : inner_(inner), window_(std::max<std::size_t>(window, 1)), batch_size_(std::max<std::size_t>(batch_size, 1)),
      rng_(seed) {}

status shuffled_source::refill() {
  pool_.reset(carry_.num_dense, carry_.num_sparse);
  auto take_carry = [this] {
    if (pool_.empty()) pool_.reset(carry_.num_dense, carry_.num_sparse);  // the input's feature counts
    while (carry_from_ < carry_.size() && pool_.size() < window_) pool_.append_example(carry_, carry_from_++);
  };
  take_carry();
  while (pool_.size() < window_ && !exhausted_) {
    auto more = inner_.next(carry_);
    if (!more.is_ok()) return more.error();
    if (!*more) {
      exhausted_ = true;
      break;
    }
    carry_from_ = 0;
    take_carry();
  }
  order_.resize(pool_.size());
  std::iota(order_.begin(), order_.end(), 0u);
  ss::shuffle(order_.begin(), order_.end(), rng_);
  emitted_ = 0;
  return status::ok();
}

result<bool> shuffled_source::next(data::example_batch& out) {
  if (emitted_ == order_.size()) {
    if (exhausted_ && carry_from_ >= carry_.size()) return false;
    SS_RETURN_IF_ERROR(refill());
    if (order_.empty()) return false;
  }
  out.reset(pool_.num_dense, pool_.num_sparse);
  out.reserve(std::min(batch_size_, order_.size() - emitted_));
  while (out.size() < batch_size_ && emitted_ < order_.size()) out.append_example(pool_, order_[emitted_++]);
  return true;
}

}  // namespace ss::train
