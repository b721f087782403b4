// The trainer's inner actors: their typed interfaces (every message, one line each) and what they
// share. Private to ss_actors; each actor lives in its own unit:
//
//   trainer.cpp          the trainer: follows the cluster view and the job state, starts from the
//                        central dense copy, spawns the others, reports the replica at the end
//   feeder.cpp   pulls batches from every reader (bounded credits), acks trained ones
//   worker.cpp   a Hogwild worker: lookups, compute, pushes, one batch after another
//   syncer.cpp   the shadow: synchronizes the dense replica with the sync servers
//   progress.cpp the counters the workers add to and the membership agent reads
//
// The workers and the syncer share the dense replica (Hogwild), the progress counters and, for
// foreground sync, a foreground_gate; everything else travels as a message below.
#pragma once

#include <caf/all.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "ss/actors/messages.hpp"
#include "ss/actors/trainer.hpp"
#include "ss/core/embedding/sharding.hpp"
#include "ss/core/sync/sync_algorithms.hpp"

namespace ss::actors::trainer_detail {

// One batch on its way through a worker: rows looked up, computed, gradients pushed.
struct job_slot {
  batch_ptr batch;
  embedding::batch_rows rows;
  embedding::shard_split split;
  int pending = 0;  // lookups or pushes outstanding
  bool ready = false;
  std::uint64_t generation = 0;  // guards replies to a recycled slot
  std::uint64_t membership = 0;  // the trainer's membership when the batch was pulled
};
using slot_ptr = std::shared_ptr<job_slot>;
using push_ptr = std::shared_ptr<wire::push_request>;
using links = std::vector<std::uint32_t>;  // a gateway link per peer, 0 while its endpoint is unknown

// A batch the feeder hands to a worker, with the trainer's membership when it was pulled: a batch
// of a membership that is over (the trainer was dropped and came back) went to other trainers,
// and is neither trained nor acked here.
struct fed_batch {
  batch_ptr batch;  // null: the input is over
  std::uint64_t membership = 0;
};

// The trainer's own messages (atoms are at most 10 characters in CAF 0.17).
using start_atom = caf::atom_constant<caf::atom("start")>;
using next_atom = caf::atom_constant<caf::atom("next")>;
using sync_atom = caf::atom_constant<caf::atom("sync")>;
using park_atom = caf::atom_constant<caf::atom("park")>;
using parked_atom = caf::atom_constant<caf::atom("parked")>;
using sim_atom = caf::atom_constant<caf::atom("simstep")>;
using ack_atom = caf::atom_constant<caf::atom("ack")>;
using repoll_atom = caf::atom_constant<caf::atom("repoll")>;
using lookup_atom = caf::atom_constant<caf::atom("lookup")>;
using push_atom = caf::atom_constant<caf::atom("push")>;
using resume_atom = caf::atom_constant<caf::atom("resume")>;
using shards_atom = caf::atom_constant<caf::atom("shards")>;
using workers_atom = caf::atom_constant<caf::atom("workers")>;
using round_atom = caf::atom_constant<caf::atom("round")>;
using slice_atom = caf::atom_constant<caf::atom("slice")>;
using slink_atom = caf::atom_constant<caf::atom("slink")>;
using fetch_atom = caf::atom_constant<caf::atom("fetch")>;
using report_atom = caf::atom_constant<caf::atom("report")>;
using finished_atom = caf::atom_constant<caf::atom("finished")>;
using close_atom = caf::atom_constant<caf::atom("close")>;
using deadline_atom = caf::atom_constant<caf::atom("deadline")>;
using peers_atom = caf::atom_constant<caf::atom("peers")>;
using restarted_atom = caf::atom_constant<caf::atom("restarted")>;

// The generation of the closing round at the job's end (epoch boundaries use the epoch's number).
constexpr std::uint32_t final_closing = 0xffffffffu;

// Feeds the workers of one trainer from every reader. A batch that waits for a worker is hinted
// to the shards (warm_request, with --prefetch): its rows are read from a shard's storage while
// the batches before it compute.
using feeder_actor = caf::typed_actor<
    caf::reacts_to<view_atom, wire::cluster_view>,  // the readers' endpoints and incarnations
    caf::reacts_to<state_atom, wire::job_state>,    // draining: an ended reader is not asked again
    caf::replies_to<next_atom>::with<fed_batch>,    // a worker wants a batch; null: the input is over
    // Batch `sequence` of reader r (that reader's incarnation) is trained: ack it, attempt n.
    caf::reacts_to<ack_atom, std::uint32_t, std::uint64_t, std::uint64_t, int>,
    caf::reacts_to<repoll_atom, std::uint32_t>,    // time to ask reader r again
    caf::reacts_to<shards_atom, links>>;           // the links to the shards (for prefetch hints)

// One Hogwild worker.
using worker_actor = caf::typed_actor<
    caf::reacts_to<start_atom>,                     // begin training
    caf::reacts_to<shards_atom, links>,             // the links to the shards changed (a moved shard: resend)
    caf::reacts_to<restarted_atom, std::uint32_t>,  // shard s restarted at its endpoint: resend to it
    caf::replies_to<park_atom>::with<parked_atom>,  // stop between two batches for a foreground sync
    caf::reacts_to<resume_atom>,                    // the foreground sync is over
    caf::reacts_to<sim_atom>,                       // a simulated step (--simulate-step-ms) is over
    // Send (again) a slot's lookup to a shard; the generation drops it if the slot moved on.
    caf::reacts_to<lookup_atom, slot_ptr, std::uint32_t, std::uint64_t>,
    caf::reacts_to<push_atom, slot_ptr, std::uint32_t, push_ptr>>;  // send (again) a push

// The shadow: keeps the replica in sync with the sync servers, one slice per server, each slice
// with a round loop of its own (shadow mode).
using syncer_actor = caf::typed_actor<
    caf::reacts_to<workers_atom, std::vector<worker_actor>>,  // the workers to park (foreground)
    caf::reacts_to<slink_atom, std::uint32_t, std::uint32_t, bool>,  // slice k's link; true: it restarted
    caf::reacts_to<start_atom>,                     // shadow: start every slice's round loop
    caf::reacts_to<peers_atom, std::uint32_t>,      // the trainers in the view (--sync auto: rounds need 2)
    caf::reacts_to<round_atom, std::uint32_t, std::uint64_t>,  // shadow: slice k's next round (timer n)
    caf::reacts_to<sync_atom>,                      // foreground: a sync is due (parks every worker)
    caf::reacts_to<slice_atom, std::uint32_t, std::uint64_t, int>,  // retry slice k's call, attempt n
    // The workers are idle (input exhausted, or an epoch ended): run closing round g once the
    // round in flight is over; true once it folded, false if given up at its deadline.
    caf::replies_to<close_atom, std::uint32_t>::with<bool>,
    caf::reacts_to<deadline_atom, std::uint64_t>,   // closing round n is past its deadline
    caf::reacts_to<stop_atom>>;                     // the trainer is done: no more rounds

// Foreground sync: once the trainer's batch count reaches the next multiple of k, exactly one
// worker claims the sync and every worker stops at its next batch until the syncer resumes them.
// (Shared because a worker may compute several batches in one turn, between mailbox reads.)
class foreground_gate {
 public:
  explicit foreground_gate(std::uint64_t every) : every_(every), next_at_(every) {}
  // True for exactly one caller once `batches` reaches the next multiple; the gate is then closed.
  bool claim(std::uint64_t batches) {
    std::uint64_t due = next_at_.load();
    while (batches >= due)
      if (next_at_.compare_exchange_weak(due, due + every_)) {
        closed_.store(true);
        return true;
      }
    return false;
  }
  bool closed() const { return closed_.load(); }
  void open() { closed_.store(false); }

 private:
  std::uint64_t every_;
  std::atomic<std::uint64_t> next_at_;
  std::atomic<bool> closed_{false};
};

// What the trainer's actors share: set up once, then read concurrently.
struct trainer_context {
  gateway_actor gateway;
  job::job_options job;
  std::shared_ptr<train::dense_model> model;  // the replica: the workers train it, the syncer syncs it
  std::vector<std::uint64_t> buckets;
  trainer_options options;
  std::shared_ptr<trainer_progress> progress;
  caf::timespan timeout;
  sync::sync_spec sync;
  // The shard count rows are routed over: the job's, until a live reshard's view changes it
  // (while the input is held, so no batch is split under the old one meanwhile).
  std::atomic<std::uint32_t> shards{0};
  std::uint32_t slices = 0;
  std::unique_ptr<foreground_gate> gate;         // foreground sync only
  std::atomic<std::int64_t> simulated_left{0};   // simulated mode: steps the trainer has left
  // The trainer's membership, as the coordinator gave it (job/membership_fence.hpp); what it sends
  // under an older one is refused. Set by the trainer from the view.
  std::atomic<std::uint64_t> membership{0};
  std::atomic<std::uint64_t> pushes{0};  // push numbers handed out (a shard applies each once)
};
using context_ptr = std::shared_ptr<trainer_context>;

// The membership `view` gives trainer `incarnation` (0: not in it).
inline std::uint64_t membership_in(const wire::cluster_view& view, std::uint64_t incarnation) {
  for (std::size_t i = 0; i < view.trainer_incarnations.size() && i < view.trainer_memberships.size(); ++i)
    if (view.trainer_incarnations[i] == incarnation) return view.trainer_memberships[i];
  return 0;
}

constexpr auto retry_delay = std::chrono::milliseconds(200);

// Each spawned linked to `parent` (the trainer): when the trainer goes, they go with it.
feeder_actor spawn_feeder(caf::local_actor* parent, context_ptr ctx);
worker_actor spawn_worker(caf::local_actor* parent, context_ptr ctx, feeder_actor feeder, syncer_actor syncer);
syncer_actor spawn_syncer(caf::local_actor* parent, context_ptr ctx);

}  // namespace ss::actors::trainer_detail

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ss::actors::trainer_detail::slot_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ss::actors::trainer_detail::push_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ss::actors::trainer_detail::fed_batch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<ss::actors::trainer_detail::worker_actor>)
