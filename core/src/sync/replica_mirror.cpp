#include "ss/core/sync/replica_mirror.hpp"

#include <algorithm>
#include <string>

namespace ss::sync {

mirror_sender::mirror_sender(std::size_t n, std::uint32_t block) : n_(n), block_(block), mirror_(n), rebuilt_(n) {}

void mirror_sender::encode(const float* replica, quantized_vector& out) {
  for (std::size_t i = 0; i < n_; ++i) rebuilt_[i] = replica[i] - mirror_[i];
  quantize(rebuilt_.data(), n_, block_, out);
  std::copy(mirror_.begin(), mirror_.end(), rebuilt_.begin());
  add_dequantized(out, rebuilt_.data());
}

void mirror_sender::encode_full(const float* replica) { std::copy(replica, replica + n_, rebuilt_.begin()); }

void mirror_sender::accept(std::uint64_t sequence, const quantized_vector& reply, bool is_delta, float* change) {
  dequantize(reply, change);
  if (is_delta)
    for (std::size_t i = 0; i < n_; ++i) change[i] = -change[i];
  for (std::size_t i = 0; i < n_; ++i) mirror_[i] = rebuilt_[i] + change[i];
  base_ = sequence;
}

void mirror_receiver::decode_full(const float* replica) {
  replica_.assign(replica, replica + n_);
  if (mirror_.size() != n_) mirror_.assign(n_, 0.0f);
}

status mirror_receiver::decode(std::uint64_t base, const quantized_vector& q) {
  if (auto s = check(q, n_); !s.is_ok()) return s;
  if (sequence_ == 0 || base != sequence_)
    return status(errc::not_found, "no mirror of exchange " + std::to_string(base) + " (" +
                                       (sequence_ == 0 ? std::string("none held")
                                                       : "exchange " + std::to_string(sequence_) + " held") +
                                       "): send the full slice");
  replica_ = mirror_;
  add_dequantized(q, replica_.data());
  return {};
}

void mirror_receiver::encode_target(const float* target, std::uint32_t block, quantized_vector& out) {
  std::vector<float> change(n_);
  for (std::size_t i = 0; i < n_; ++i) change[i] = target[i] - replica_[i];
  quantize(change.data(), n_, block, out);
  mirror_ = replica_;
  add_dequantized(out, mirror_.data());
  ++sequence_;
}

void mirror_receiver::encode_delta(const float* delta, std::uint32_t block, quantized_vector& out, float* applied) {
  quantize(delta, n_, block, out);
  dequantize(out, applied);
  mirror_.resize(n_);
  for (std::size_t i = 0; i < n_; ++i) mirror_[i] = replica_[i] - applied[i];
  ++sequence_;
}

}  // namespace ss::sync
