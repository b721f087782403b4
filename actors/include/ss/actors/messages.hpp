// The CAF-level vocabulary of shadowsync's actors: atoms and the few types messages carry.
// Wire messages travel between actors as shared pointers to immutable envelopes (never copied);
// they are local-only message types (CAF_ALLOW_UNSAFE_MESSAGE_TYPE), which is all we need since
// ZeroMQ, not CAF, carries traffic between processes.
#pragma once

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

#include <memory>
#include <string>

#include "ss/actors/transport.hpp"
#include "ss/core/data/example_batch.hpp"
#include "ss/core/metrics/metrics.hpp"
#include "ss/wire/messages.hpp"

namespace ss::actors {

using envelope_ptr = std::shared_ptr<const wire::envelope>;
using body_ptr = std::shared_ptr<const wire::body>;
using batch_ptr = std::shared_ptr<const wire::batch_message>;

template <class T>
body_ptr make_body(T message) {
  return std::make_shared<const wire::body>(std::move(message));
}

// Atoms are at most 10 characters in CAF 0.17.
using inbound_atom = caf::atom_constant<caf::atom("inbound")>;    // a decoded frame from the transport
using call_atom = caf::atom_constant<caf::atom("call")>;          // request to a peer, reply expected
using tell_atom = caf::atom_constant<caf::atom("tell")>;          // one-way message to a peer
using serve_atom = caf::atom_constant<caf::atom("serve")>;        // serve a peer's request
using expire_atom = caf::atom_constant<caf::atom("expire")>;      // a request's deadline passed
using link_atom = caf::atom_constant<caf::atom("link")>;          // open (or reuse) a link to an endpoint
using route_atom = caf::atom_constant<caf::atom("route")>;        // who serves which message kind
using open_atom = caf::atom_constant<caf::atom("open")>;          // every route is in: serve
using tick_atom = caf::atom_constant<caf::atom("tick")>;          // periodic work
using view_atom = caf::atom_constant<caf::atom("view")>;          // the cluster view changed
using state_atom = caf::atom_constant<caf::atom("state")>;        // the job state changed
using await_atom = caf::atom_constant<caf::atom("await")>;        // wait for registration
using stop_atom = caf::atom_constant<caf::atom("stop")>;          // stop working (a member: leave the job)
using stats_atom = caf::atom_constant<caf::atom("stats")>;        // a transport's counters
using scored_atom = caf::atom_constant<caf::atom("scored")>;      // an evaluator's metrics
using unscored_atom = caf::atom_constant<caf::atom("unscored")>;  // an evaluator could not score
using exported_atom = caf::atom_constant<caf::atom("exported")>;  // an exporter's outcome
using members_atom = caf::atom_constant<caf::atom("members")>;    // how many members are registered
using central_atom = caf::atom_constant<caf::atom("central")>;    // a sync server's slice of the central model
using renew_atom = caf::atom_constant<caf::atom("renew")>;        // a peer restarted: send again what it held
using flush_atom = caf::atom_constant<caf::atom("flush")>;        // write changed rows to storage now
using end_input_atom = caf::atom_constant<caf::atom("endinput")>;  // a following job: stop reading, end as at the end of data

}  // namespace ss::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ss::actors::envelope_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ss::actors::body_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ss::actors::batch_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ss::actors::peer_address)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ss::wire::cluster_view)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ss::wire::job_state)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ss::wire::register_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ss::metrics::summary)
