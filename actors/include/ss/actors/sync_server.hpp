// A sync server: it holds one slice of the dense parameters' synchronization state and serves
// the trainers' sync_request for that slice.
//   EASGD     each request is one elastic exchange with the central copy, served at once:
//             d = alpha (w_i - w~), w~ += d, reply d (the trainer subtracts it)
//   MA, BMUF  requests join the open round; the round closes when every live trainer has sent
//             its slice, or sync-round-timeout after the first one arrived (a dead or slow trainer
//             never holds the others; it joins a later round); every participant gets the round's
//             target: the mean (MA), or BMUF's block-momentum model
//   -nesterov  (S-EASGD, S-MA) once every live trainer has synced since the sweep began, the
//             center's move over the sweep is applied with Nesterov momentum (the outer optimizer)
//   int8      (--sync-quantize) a request is the replica's change since the mirror both ends hold
//             of it, 8 bits per value; the server rebuilds the replica in FP32 and runs the round
//             on it; the reply is quantized too (sync/replica_mirror.hpp). A request against a
//             mirror it does not hold is refused (not_found): the trainer sends the full slice.
//   closing   a request with `closing` = g > 0 joins closing round g (the input is exhausted, or a
//             scored epoch ended): it waits for every live trainer's final replica (bounded by
//             sync-round-timeout), folds those that trained since their last closing round into
//             the slice by one synchronous round of the algorithm, and answers every participant
//             with the resulting model. Regular rounds stop waiting for trainers that closed.
// The coordinator hosts slice 0; more slices run in sync-server instances (the job's sync
// capacity). Messages (typed as sync_server_actor in actors.hpp):
//   (serve_atom, envelope_ptr)            sync_request -> sync_reply; dense_request -> its slice
//                                         (and BMUF's or the outer optimizer's momentum)
//   (view_atom, cluster_view)             the live trainers (how many a round waits for)
//   (central_atom) -> std::vector<float>  its slice of the central model (EASGD: the center,
//                                         BMUF: the global model); empty if never synced
#pragma once

#include <caf/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <string>

#include "ss/actors/actors.hpp"
#include "ss/core/sync/sync_algorithms.hpp"

namespace ss::actors {

struct sync_server_options {
  std::string name = "sync-0";
  std::uint32_t slice = 0;
  std::uint64_t offset = 0;  // first parameter of the slice
  std::uint64_t length = 0;  // parameters in the slice
  sync::sync_spec spec;
  double easgd_alpha = 0;    // 0: 0.9 / live trainers
  double bmuf_momentum = -1; // -1: 1 - 1 / live trainers
  double bmuf_block_lr = 1;
  bool bmuf_nesterov = true;
  double outer_momentum = -1; // -nesterov: -1: 1 - 1 / live trainers
  double outer_lr = 1;
  std::chrono::milliseconds round_timeout{5000};
  // Quantized rounds (--sync-quantize int8): requests are 8-bit changes against a mirror of each
  // trainer's replica (or the full slice, which starts one), replies quantized the same way.
  bool quantize = false;
  std::uint32_t quantization_block = 256;
  // A job resuming from a snapshot: the coordinator sends the snapshot's state (sync_restore).
  // Until it comes, or restore_wait passed, sync requests are answered `unavailable` (trainers
  // retry), so that no round starts the slice from a replica instead and loses the snapshot's
  // momentum and central copy.
  bool awaits_restore = false;
  std::chrono::milliseconds restore_wait{10000};
};

// The slice [offset, offset + length) of sync server `slice` of `slices` over `total` parameters.
inline std::pair<std::uint64_t, std::uint64_t> slice_bounds(std::uint64_t total, std::uint32_t slice,
                                                            std::uint32_t slices) {
  const std::uint64_t begin = total * slice / slices, end = total * (slice + 1) / slices;
  return {begin, end - begin};
}

sync_server_actor spawn_sync_server(caf::actor_system& sys, const gateway_actor& gateway,
                                    const sync_server_options& options);

}  // namespace ss::actors
