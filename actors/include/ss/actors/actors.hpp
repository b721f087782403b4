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
// Every service actor is typed: the gateway, the member agent, the coordinator, the shard's
// actors, the reader, the trainer, the sync server, the evaluator and the exporter. The trainer's
// inner actors are typed in actors/src/trainer/parts.hpp, private to it (docs/developer-guide.md).
//
// Only actors/ headers include it (services/cli gets it through service.hpp and coordinator.hpp):
// CAF's typed-actor templates cost compile time in every unit that includes it.
#pragma once

#include <caf/replies_to.hpp>
#include <caf/timespan.hpp>
#include <caf/typed_actor.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ss/actors/messages.hpp"

namespace ss::actors {

// What the coordinator asks the publisher to publish, and what came of it (publisher.hpp).
struct publication_request;
struct publication_outcome;
using publication_request_ptr = std::shared_ptr<const publication_request>;
using publication_outcome_ptr = std::shared_ptr<const publication_outcome>;

}  // namespace ss::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ss::actors::publication_request_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ss::actors::publication_outcome_ptr)

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

// --- Gateway (gateway.hpp) ----------------------------------------------------------------------

// The one actor of a service that turns frames into actor messages and back.
using gateway_actor = caf::typed_actor<
    caf::reacts_to<route_atom, std::size_t, request_server_actor>,  // serve requests of body index `kind` there
    caf::reacts_to<open_atom>,  // every route is in: a request nobody serves is refused for good
    caf::replies_to<link_atom, std::string>::with<std::uint32_t>,  // open or reuse a link to an endpoint
    // A request on a link: its reply, or caf::sec::request_timeout past the timespan.
    caf::replies_to<call_atom, std::uint32_t, body_ptr, caf::timespan>::with<envelope_ptr>,
    caf::reacts_to<tell_atom, std::uint32_t, body_ptr>,         // a one-way message on a link
    caf::replies_to<stats_atom>::with<std::string>,             // its counters as a JSON object
    caf::reacts_to<inbound_atom, peer_address, envelope_ptr>,   // (the transport's thread) a decoded frame
    caf::reacts_to<expire_atom, std::uint64_t>,                 // (self) call n is past its deadline
    // What a route answered to a one-way message (CAF returns it even for a send): dropped.
    caf::reacts_to<body_ptr>>;

// --- Member agent (member.hpp) ------------------------------------------------------------------

using member_agent_actor = caf::typed_actor<
    caf::replies_to<await_atom>::with<wire::register_reply>,  // answered once registered
    caf::reacts_to<view_atom, view_subscriber_actor>,          // subscribe: gets every view and state change
    caf::reacts_to<tick_atom>,                                 // (self) register or heartbeat
    caf::reacts_to<stop_atom, std::string>>;                   // leave the job and quit

// --- Reader (reader.hpp) ------------------------------------------------------------------------

// serve: pull_request, batch_ack, position_request, status_request. The view: the live trainers and the
// open epochs.
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

// --- Publisher (publisher.hpp) ------------------------------------------------------------------

using publish_atom = caf::atom_constant<caf::atom("publish")>;      // publish this now
using published_atom = caf::atom_constant<caf::atom("published")>;  // a publication's outcome

// Whoever asks for publications: one outcome per request, in order.
using publisher_listener_actor = caf::typed_actor<caf::reacts_to<published_atom, publication_outcome_ptr>>;

using publisher_actor = exporter_listener_actor::extend<  // a base's model file written (or not)
    caf::reacts_to<publish_atom, publication_request_ptr>>;  // publish the model as it stands

// --- Coordinator (coordinator.hpp) --------------------------------------------------------------

// serve: register_request, heartbeat, leave, dense_request, dense_report, status_request,
// stop_request, snapshot_now, export_request. It answers the view to its evaluators and exporters
// and hears their outcome.
using coordinator_actor =
    request_server_actor::extend_with<view_source_actor, evaluator_listener_actor, exporter_listener_actor,
                                      publisher_listener_actor>::extend<
        caf::replies_to<members_atom>::with<std::uint64_t>,  // members still to see the job's end
        caf::reacts_to<tick_atom, caf::timespan>,             // (self) periodic work, again after the timespan
        caf::reacts_to<end_input_atom, std::string>,          // a following job ends, for this reason (a signal)
        // (self) send sync server slice k (at the endpoint) the snapshot's state again, attempt n
        caf::reacts_to<renew_atom, std::uint32_t, std::string, int>>;

// --- Shard (shard.hpp) ---------------------------------------------------------------------------

using shard_pressure_atom = caf::atom_constant<caf::atom("pressure")>;  // is RAM past the memory budget?
using moved_rows_atom = caf::atom_constant<caf::atom("moved")>;         // store rows that moved to this shard
using claim_atom = caf::atom_constant<caf::atom("claim")>;              // claim the storage for a shard count
using taking_atom = caf::atom_constant<caf::atom("taking")>;            // rows for a shard count start to come

// A request worker; the shard's pool of them has the same interface. serve: lookup_request,
// push_request, dump_request, warm_request, status_request. The view: the trainers whose pushes
// are fenced (any one worker of the pool takes it; they share what it says).
using shard_actor = request_server_actor::extend_with<view_subscriber_actor>;

// With storage: writes changed rows to storage. serve: snapshot_request, drop_rows_request, and
// with a memory budget dump_request (pages from storage). The view: a reshard that took rows here
// and did not happen (rolled back, or forgotten by a restarted coordinator) has them dropped.
using shard_persister_actor = request_server_actor::extend_with<view_subscriber_actor>::extend<
    caf::replies_to<flush_atom>::with<bool>,  // write every changed row now (the drain before exit); true when done
    // (the mover) store a page of rows that moved here (a dump_reply of whole rows): ack or error_reply
    caf::replies_to<moved_rows_atom, body_ptr>::with<body_ptr>,
    // (the mover) every row that moves here is stored: claim the storage as this shard of that many
    caf::replies_to<claim_atom, std::uint32_t>::with<body_ptr>,
    // (the mover) rows the placement over that many shards gives this shard start to come: recorded
    // in storage until they are kept (a drop after the switch) or dropped (the reshard did not happen)
    caf::replies_to<taking_atom, std::uint32_t>::with<body_ptr>,
    caf::reacts_to<tick_atom>,                // (self) the flush interval passed: flush
    caf::reacts_to<shard_pressure_atom>>;     // (self) with a memory budget: write back early when RAM is past it

// While a job takes another shard count: pulls the rows that move to this shard from the others and
// has the persister store them. serve: take_rows_request. A live reshard's copy while the job
// trains is paced, a pause after each page.
using shard_mover_actor = request_server_actor::extend<
    caf::reacts_to<tick_atom, std::uint64_t>>;  // (self) take n's next page, after a pause

// With a memory budget: serves the trainers' prefetch hints. serve: warm_request.
using shard_prefetcher_actor = request_server_actor;

// A row TTL's sweeps, for a shard without storage (the persister sweeps otherwise).
using shard_sweeper_actor = caf::typed_actor<caf::reacts_to<tick_atom>>;  // (self) sweep the expired rows

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
