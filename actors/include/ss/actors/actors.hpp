// The typed interfaces of shadowsync's actors, in one place: what each actor accepts and what it
// answers. A handler missing from an actor's behavior, a message an actor does not accept, or a
// reply of the wrong type is a compile error, not an "unrouted" or a dead actor at run time.
//
// CAF 0.17 spelling: caf::replies_to<atom, args...>::with<reply> (a request) and
// caf::reacts_to<atom, args...> (one-way). The function-signature form of later CAF does not
// compile in 0.17. A handle converts to a handle of a subset of its signatures, so an actor that
// implements a shared interface below can be handed to whoever only needs that interface.
//
// Messages an actor sends itself (timers, retries) are listed too: a typed actor can only
// receive what its interface declares.
//
// Typed so far: evaluator, exporter, sync server, member agent, reader, trainer. The gateway, the
// coordinator and the shard actors still return caf::actor from their spawn functions; their
// messages are listed in their own headers' comments (docs/developer-guide.md).
#pragma once

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "ss/actors/messages.hpp"

namespace ss::actors {

// --- Interfaces several actors share -------------------------------------------------------------

// Answers the current cluster view (the coordinator). The evaluator and the exporter wait for a
// shard that is away through it.
using view_source_actor = caf::typed_actor<caf::replies_to<view_atom>::with<wire::cluster_view>>;

// Serves peers' requests: what the gateway routes a request kind to (route_atom).
using request_server_actor = caf::typed_actor<caf::replies_to<serve_atom, envelope_ptr>::with<body_ptr>>;

// Follows the cluster: what the member agent notifies. Both messages, always: an actor without a
// handler for one of them dies of it (an unhandled state_atom once killed the member agent).
using view_subscriber_actor = caf::typed_actor<
    caf::reacts_to<view_atom, wire::cluster_view>,  // the cluster view changed
    caf::reacts_to<state_atom, wire::job_state>>;   // the job state changed

// --- Member agent (member.hpp) ------------------------------------------------------------------

using member_agent_actor = caf::typed_actor<
    caf::replies_to<await_atom>::with<wire::register_reply>,  // answered once registered
    caf::reacts_to<view_atom, view_subscriber_actor>,          // subscribe: gets every view and state change
    caf::reacts_to<tick_atom>,                                 // (self) register or heartbeat
    caf::reacts_to<stop_atom, std::string>>;                   // leave the job and quit

// --- Reader (reader.hpp) ------------------------------------------------------------------------

// serve: pull_request, batch_ack, status_request. The view: the live trainers and the open epochs.
using reader_actor = request_server_actor::extend_with<view_subscriber_actor>::extend<
    caf::reacts_to<tick_atom>>;  // (self) requeue the batches of trainers gone, and those past the lease

// --- Trainer (trainer.hpp) ----------------------------------------------------------------------

using trainer_fetch_atom = caf::atom_constant<caf::atom("fetch")>;         // fetch the central copy (again)
using trainer_report_atom = caf::atom_constant<caf::atom("report")>;       // report the replica (again)
using trainer_finished_atom = caf::atom_constant<caf::atom("finished")>;  // a worker trained all it took

// serve: sync_close, dense_request, status_request. The view and the job state it follows.
using trainer_actor = request_server_actor::extend_with<view_subscriber_actor>::extend<
    caf::reacts_to<trainer_fetch_atom>,      // (self) retry
    caf::reacts_to<trainer_report_atom>,     // (self) retry
    caf::reacts_to<trainer_finished_atom>>;  // from a worker: once all did, the closing round, then the report

// --- Evaluator (evaluator.hpp) -------------------------------------------------------------------

// Whoever spawned an evaluator: it gets exactly one of these, then the evaluator quits.
using evaluator_listener_actor = caf::typed_actor<
    caf::reacts_to<scored_atom, metrics::summary, std::uint64_t>,  // the metrics, bad rows skipped
    caf::reacts_to<unscored_atom, std::string>>;                   // why it could not score

using evaluator_actor = caf::typed_actor<
    caf::reacts_to<renew_atom, std::uint32_t>>;  // (self) shard s did not answer: find it and ask again

// --- Exporter (exporter.hpp) ---------------------------------------------------------------------

// Whoever spawned an exporter: it gets one export_reply or error_reply, then the exporter quits.
using exporter_listener_actor = caf::typed_actor<caf::reacts_to<exported_atom, body_ptr>>;

using exporter_actor = caf::typed_actor<
    caf::reacts_to<tick_atom, std::uint64_t>,  // (self) retry n: where is the shard now?
    caf::reacts_to<view_atom>>;                // (self) watch the view for the shard being dumped

// --- Sync server (sync_server.hpp) --------------------------------------------------------------

using close_expire_atom = caf::atom_constant<caf::atom("clexpire")>;    // a closing round timed out
using restore_expire_atom = caf::atom_constant<caf::atom("rsexpire")>;  // the snapshot's state did not come

// serve: sync_request, sync_restore, dense_request, status_request. The view: the live trainers.
using sync_server_actor = request_server_actor::extend_with<view_subscriber_actor>::extend<
    caf::replies_to<central_atom>::with<std::vector<float>>,  // its slice of the central model
    caf::reacts_to<expire_atom, std::uint64_t>,                // (self) regular round n timed out
    caf::reacts_to<close_expire_atom, std::uint64_t>,          // (self) closing round instance n timed out
    caf::reacts_to<restore_expire_atom>>;                      // (self) stop waiting for the snapshot

}  // namespace ss::actors
