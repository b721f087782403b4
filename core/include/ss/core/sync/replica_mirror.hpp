// Quantized sync rounds: both ends keep a mirror of the trainer's replica slice, so that a
// request carries only the replica's change since the last exchange, in 8 bits, and a reply only
// the change the round asks for.
//
// The trainer's request is q = quantized(replica - mirror), relative to the mirror of exchange
// `base`; the server rebuilds the replica as mirror + q (FP32 on its side) and runs the round on
// it. Its reply is quantized too: EASGD's delta d as is (the server moves its center by the
// dequantized d, so the center gains exactly what the replica gives up), MA's or BMUF's target
// as target - replica. Both ends then set mirror <- replica + reply and take the next sequence.
// What rounding keeps back of a request stays in the live replica and goes with the next one:
// that is the error feedback, with no residual to keep beside the mirror.
//
// A request whose base the server does not hold (it restarted, or the answer to the last
// exchange was lost) is refused; the trainer then sends its full slice in FP32 (base 0), which
// starts a new mirror. A retried request is decoded again from the same mirror, never twice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ss/core/status.hpp"
#include "ss/core/sync/quantize.hpp"

namespace ss::sync {

// The trainer's end, for one slice of n parameters.
class mirror_sender {
 public:
  mirror_sender(std::size_t n, std::uint32_t block);

  // The exchange the next request is relative to; 0: none, the request carries the full slice.
  std::uint64_t base() const { return base_; }
  // The request for a replica slice as snapshotted: its change since the mirror, quantized (only
  // when base() != 0). Remembers what the server will rebuild, for accept().
  void encode(const float* replica, quantized_vector& out);
  // The same for a full request (base 0): the server rebuilds exactly `replica`.
  void encode_full(const float* replica);
  // The server answered exchange `sequence` with `reply` (a delta when is_delta, else target -
  // replica): adds its dequantized values (-d, or target - replica) to the live replica `live`
  // and moves the mirror to the replica after the round.
  void accept(std::uint64_t sequence, const quantized_vector& reply, bool is_delta, float* live);
  // Forget the mirror: the next request is full.
  void reset() { base_ = 0; }
  const std::vector<float>& mirror() const { return mirror_; }

 private:
  std::size_t n_;
  std::uint32_t block_;
  std::uint64_t base_ = 0;
  std::vector<float> mirror_;   // the replica as the server holds it after exchange base_
  std::vector<float> rebuilt_;  // the replica as the server rebuilds it from the pending request
};

// The server's end, for one trainer and one slice of n parameters.
class mirror_receiver {
 public:
  explicit mirror_receiver(std::size_t n) : n_(n) {}

  // A full request (base 0): the replica is `replica`.
  void decode_full(const float* replica);
  // A quantized request relative to exchange `base`: the replica is mirror + q. Refused (nothing
  // changes) if q is malformed (invalid_argument) or base is not the exchange held (not_found).
  status decode(std::uint64_t base, const quantized_vector& q);
  // The replica the last decode rebuilt.
  const std::vector<float>& replica() const { return replica_; }

  // The answer: `target` as target - replica, quantized; the mirror becomes the replica plus it.
  void encode_target(const float* target, std::uint32_t block, quantized_vector& out);
  // The answer: EASGD's delta, quantized; `applied` gets its dequantized values (what the replica
  // gives up, so what the center gains); the mirror becomes the replica less them.
  void encode_delta(const float* delta, std::uint32_t block, quantized_vector& out, float* applied);
  // The exchange the last encode completed: the base of the trainer's next request.
  std::uint64_t sequence() const { return sequence_; }
  const std::vector<float>& mirror() const { return mirror_; }

 private:
  std::size_t n_;
  std::uint64_t sequence_ = 0;  // 0: no mirror yet
  std::vector<float> mirror_, replica_;
};

}  // namespace ss::sync
