// The gateway: the one actor of a service that turns frames into actor messages and back.
//
//   inbound request (a frame on the listening socket)  -> the actor routed for its message type
//                                                          (serve_atom); its reply goes back
//                                                          to the sender with the request's id
//   outbound request (call_atom from any actor)         -> a frame on a link; the reply frame,
//                                                          matched by request id, answers the
//                                                          caller, or an error at the deadline
//
// The transport's thread decodes frames (hostile input is refused there, answered with an
// error_reply, counted, and logged at most once a minute per sender) and hands envelopes to the
// gateway, so actors only ever see decoded messages. Control requests are checked against the
// authority policy (authority.hpp) before they are routed. Its messages: gateway_actor in
// actors.hpp.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>

#include "ss/actors/actors.hpp"
#include "ss/actors/authority.hpp"
#include "ss/actors/transport.hpp"
#include "ss/core/metrics/counter_set.hpp"
#include "ss/wire/codec.hpp"
#include "ss/wire/messages.hpp"

namespace ss::actors {

struct gateway_options {
  std::string name = "service";  // for logs and stats
  wire::decode_limits limits;
  // Requests this service may be serving at once (handed to its actors, not yet answered). One
  // beyond it is answered at once with errc::unavailable ("overloaded"), which every caller
  // treats as "ask again shortly", so a flood queues in the callers instead of in this service's
  // mailboxes. One-way messages are not bounded here. 0: no bound.
  // Default: 4096 (a cluster's callers keep a few requests each outstanding)
  std::uint32_t max_requests_in_flight = 4096;
  // Who may send control requests (authority.hpp). Default: plain, control from this host only.
  authority_policy authority;
};

// Counters the transport thread and the gateway update, each declared once: its status key ("transport"
// section of every service's status), help and type (see ss/core/metrics/counter_set.hpp).
struct gateway_counters : metrics::counter_set {
  using counter = metrics::counter;
  counter frames_decoded{*this, "frames_decoded", "Frames decoded."};
  counter frames_refused{*this, "frames_refused", "Frames refused (garbage, oversized, undecodable)."};
  counter version_mismatches{*this, "version_mismatches", "Frames of another protocol version."};
  counter requests_served{*this, "requests_served", "Requests answered."};
  counter requests_unrouted{*this, "requests_unrouted", "Requests of a kind this service does not serve."};
  counter requests_in_flight{*this, "requests_in_flight", "Requests being served.", metrics::metric_type::gauge};
  counter requests_shed{*this, "requests_shed", "Requests refused at the in-flight bound."};
  counter control_served{*this, "control_served", "Control requests answered."};  // let through (authority.hpp)
  counter control_refused{*this, "control_refused", "Control requests refused (not an admin key)."};
  counter calls{*this, "calls", "Requests sent to peers."};
  counter call_timeouts{*this, "call_timeouts", "Requests to peers that timed out."};
  counter late_replies{*this, "late_replies", "Replies that came after their request timed out."};
  // Shown added to the transport's own, as the table's send_failures.
  std::atomic<std::uint64_t> send_failures{0};
};

// The index of message type T in wire::body, the key of routing.
template <class T>
constexpr std::size_t kind_of() {
  return wire::body(T{}).index();
}

// Spawns the gateway and makes it the transport's frame handler. The transport must outlive
// the gateway (stop the transport first, then the actor system).
gateway_actor spawn_gateway(caf::actor_system& sys, transport& t, const gateway_options& options,
                            std::shared_ptr<gateway_counters> counters);

}  // namespace ss::actors
