// The port through which a service's actors reach other services. Implementations: ZeroMQ
// (services/transport: tcp between hosts, inproc within a process) and, for deterministic actor
// tests, an in-memory one (tests/support). Actors never touch sockets.
//
// Model: each service listens on one endpoint (a ROUTER in ZeroMQ terms) where requests arrive,
// and opens outbound links to the endpoints of the peers it calls (DEALERs). A reply to an
// inbound frame goes back through `from` of that frame.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "ss/core/status.hpp"
#include "ss/wire/frame.hpp"

namespace ss::actors {

// What the sender of an inbound frame may ask for, as its transport established it (never
// what the frame claims). Under CURVE a client key is listed in `authorized_keys` with a role;
// a plain transport authenticates nobody.
enum class peer_role : std::uint8_t {
  unauthenticated,  // plain transport: anyone who can reach the port
  member,           // an authorized key without a higher role (shards, readers, trainers)
  coordinator,      // the coordinator's key: it drives snapshots, dumps and sync restores
  admin,            // an operator's key: stop, snapshot and export on request
};

inline const char* to_string(peer_role r) noexcept {
  switch (r) {
    case peer_role::unauthenticated: return "unauthenticated";
    case peer_role::member: return "member";
    case peer_role::coordinator: return "coordinator";
    case peer_role::admin: return "admin";
  }
  return "unknown";
}

struct peer_identity {
  peer_role role = peer_role::unauthenticated;
  std::string name;     // the key's name in authorized_keys (CURVE); "" otherwise
  std::string address;  // the remote IP for tcp; "" for inproc and ipc
  bool local = true;    // inproc, ipc, or tcp from a loopback address

  // For logs: "admin key 'ops' at 10.0.0.7", "an unauthenticated client at 127.0.0.1".
  std::string describe() const {
    std::string who = role == peer_role::unauthenticated ? std::string("an unauthenticated client")
                                                         : std::string(to_string(role)) + " key '" + name + "'";
    return who + (address.empty() ? std::string(" in this host") : " at " + address);
  }
};

// Where a frame came from, or where it goes.
struct peer_address {
  // An outbound link opened with connect() (> 0), or 0 for the listening socket.
  std::uint32_t link = 0;
  // For the listening socket: the identity of the peer that sent the frame.
  std::string route;
  // For the listening socket: who sent it (not part of the address: replies go by route).
  peer_identity sender;

  bool operator==(const peer_address& o) const { return link == o.link && route == o.route; }
};

struct transport_stats {
  std::uint64_t frames_in = 0, frames_out = 0;
  std::uint64_t bytes_in = 0, bytes_out = 0;
  std::uint64_t frames_rejected = 0;   // malformed or oversized at the transport level
  std::uint64_t send_failures = 0;     // queue full, unknown link, peer gone
  std::uint64_t queue_depth = 0;       // outbound frames waiting now
  std::uint64_t queue_high_water = 0;
  std::uint64_t auth_refused = 0;       // CURVE clients with a key not in the authorized list
  std::uint64_t handshakes_failed = 0;  // connections that failed the security handshake
  std::uint64_t connections_open = 0;     // inbound connections open now (tcp/ipc)
  std::uint64_t connections_refused = 0;  // refused at the connection bound
  std::uint64_t max_connections = 0;      // that bound (0: none)
  std::uint64_t links_refused = 0;        // outbound handshakes a peer refused
};

class transport {
 public:
  // Called on the transport's own thread for every inbound frame; must not block (hand the
  // frame to an actor and return).
  using frame_handler = std::function<void(const peer_address& from, wire::frame f)>;

  virtual ~transport() = default;

  // Where inbound frames go. Set once, before listen() and connect().
  virtual void on_frame(frame_handler handler) = 0;

  // Binds the listening socket ("tcp://0.0.0.0:5555", "tcp://127.0.0.1:0" for a free port,
  // "inproc://shard-0"). Returns the endpoint peers should dial (the real port for :0).
  virtual result<std::string> listen(const std::string& endpoint) = 0;

  // Opens an outbound link to a peer's listening endpoint; frames the peer sends back on it
  // arrive with from.link == the returned id. Connecting is asynchronous: frames queue until the
  // peer is reachable (up to the queue bound).
  virtual result<std::uint32_t> connect(const std::string& endpoint) = 0;
  virtual void close_link(std::uint32_t link) = 0;

  // Queues one frame. Thread-safe and non-blocking: errc::resource_exhausted when the outbound
  // queue is full, errc::not_found for a closed link.
  virtual status send(const peer_address& to, wire::frame f) = 0;

  virtual transport_stats stats() const = 0;

  // Stops the transport thread and closes every socket; idempotent. No handler runs afterwards.
  virtual void stop() = 0;
};

}  // namespace ss::actors
