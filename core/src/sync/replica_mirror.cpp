#include "ss/core/sync/replica_mirror.hpp"

#include <algorithm>
#include <string>

#include "quantize_blocks.hpp"
#include "ss/core/multiversion.hpp"

namespace ss::sync {
namespace {

// Each exchange is one fused pass per block over the values it touches, so that a round reads
// the slice once and allocates nothing: one copy per ISA (SS_MULTIVERSION), vectorized at -O2
// (sources.cmake).

// q = quantized(to - from); landed = from + dequantized(q): where `from` lands once the other end
// applies q. A request (replica against the mirror) and a target answer (target against the
// replica) are both this.
SS_MULTIVERSION void encode_difference(const float* __restrict to, const float* __restrict from,
                                       float* __restrict landed, std::size_t n, std::uint32_t block,
                                       quantized_vector& out) {
  detail::quantize_blocks(
      n, block, [=](std::size_t i) { return to[i] - from[i]; },
      [=](std::size_t i, float v) { landed[i] = from[i] + v; }, out);
}

// change = +-dequantized(reply); live += change; mirror = rebuilt + change.
SS_MULTIVERSION void accept_change(const quantized_vector& reply, float sign, const float* __restrict rebuilt,
                                   float* __restrict mirror, float* __restrict live) {
  detail::for_each_dequantized(reply, [=](std::size_t i, float v) {
    const float change = sign * v;
    live[i] += change;
    mirror[i] = rebuilt[i] + change;
  });
}

// replica = mirror + dequantized(q).
SS_MULTIVERSION void rebuild(const quantized_vector& q, const float* __restrict mirror, float* __restrict replica) {
  detail::for_each_dequantized(q, [=](std::size_t i, float v) { replica[i] = mirror[i] + v; });
}

// q = quantized(delta); applied = dequantized(q); mirror = replica - applied.
SS_MULTIVERSION void encode_given(const float* __restrict delta, const float* __restrict replica,
                                  float* __restrict mirror, float* __restrict applied, std::size_t n,
                                  std::uint32_t block, quantized_vector& out) {
  detail::quantize_blocks(
      n, block, [=](std::size_t i) { return delta[i]; },
      [=](std::size_t i, float v) {
        applied[i] = v;
        mirror[i] = replica[i] - v;
      },
      out);
}

}  // namespace

mirror_sender::mirror_sender(std::size_t n, std::uint32_t block) : n_(n), block_(block), mirror_(n), rebuilt_(n) {}

void mirror_sender::encode(const float* replica, quantized_vector& out) {
  encode_difference(replica, mirror_.data(), rebuilt_.data(), n_, block_, out);  // rebuilt: what the server holds
}

void mirror_sender::encode_full(const float* replica) { std::copy(replica, replica + n_, rebuilt_.begin()); }

void mirror_sender::accept(std::uint64_t sequence, const quantized_vector& reply, bool is_delta, float* live) {
  accept_change(reply, is_delta ? -1.0f : 1.0f, rebuilt_.data(), mirror_.data(), live);
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
  replica_.resize(n_);
  rebuild(q, mirror_.data(), replica_.data());
  return {};
}

void mirror_receiver::encode_target(const float* target, std::uint32_t block, quantized_vector& out) {
  mirror_.resize(n_);
  encode_difference(target, replica_.data(), mirror_.data(), n_, block, out);
  ++sequence_;
}

void mirror_receiver::encode_delta(const float* delta, std::uint32_t block, quantized_vector& out, float* applied) {
  mirror_.resize(n_);
  encode_given(delta, replica_.data(), mirror_.data(), applied, n_, block, out);
  ++sequence_;
}

}  // namespace ss::sync
