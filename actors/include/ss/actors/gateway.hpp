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
// authority policy (authority.hpp) before they are routed. Messages:
//   (route_atom, size_t kind, actor)                    serve requests of body index `kind`
//   (open_atom)                                         the service serves: every route is in
//   (link_atom, std::string endpoint) -> uint32_t       open or reuse a link
//   (call_atom, uint32_t link, body_ptr, timespan)      -> envelope_ptr (the reply), or
//                                                          caf::sec::request_timeout
//   (tell_atom, uint32_t link, body_ptr)                one-way message on a link
//   (stats_atom) -> std::string                         counters as a JSON object
#pragma once

#include <caf/fwd.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>

#include "ss/actors/authority.hpp"
#include "ss/actors/transport.hpp"
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

// Counters the transport thread and the gateway update; read by status and metrics.
struct gateway_counters {
  std::atomic<std::uint64_t> frames_decoded{0};
  std::atomic<std::uint64_t> frames_refused{0};       // garbage, truncated, oversized
  std::atomic<std::uint64_t> version_mismatches{0};
  std::atomic<std::uint64_t> requests_served{0};
  std::atomic<std::uint64_t> requests_unrouted{0};    // no actor serves that message type
  std::atomic<std::uint64_t> requests_shed{0};        // refused at max_requests_in_flight
  std::atomic<std::uint64_t> control_served{0};       // control requests let through (authority.hpp)
  std::atomic<std::uint64_t> control_refused{0};      // control requests refused: the sender may not
  std::atomic<std::uint64_t> requests_in_flight{0};   // being served now
  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::uint64_t> call_timeouts{0};
  std::atomic<std::uint64_t> late_replies{0};         // arrived after their deadline
  std::atomic<std::uint64_t> send_failures{0};
};

// The index of message type T in wire::body, the key of routing.
template <class T>
constexpr std::size_t kind_of() {
  return wire::body(T{}).index();
}

// Spawns the gateway and makes it the transport's frame handler. The transport must outlive
// the gateway (stop the transport first, then the actor system).
caf::actor spawn_gateway(caf::actor_system& sys, transport& t, const gateway_options& options,
                         std::shared_ptr<gateway_counters> counters);

}  // namespace ss::actors
