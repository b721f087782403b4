// An in-memory implementation of the transport port (ss/actors/transport.hpp) for deterministic
// actor tests: no sockets, no threads. Every memory_transport registers with one memory_network;
// send() only enqueues into the network, and the test delivers frames explicitly, one at a time
// and in the global order they were sent, so handlers run in the test's thread in a reproducible
// order. Faults are injected on purpose: drop or duplicate the next frames, disconnect an
// endpoint, bound each link's queue.
//
// Model (as with ZeroMQ): a transport listen()s on names ("mem://shard-0") and connect()s links
// to other transports' names. A frame sent on a link arrives at the listener with
// from = {0, route}; a reply sent to that route arrives back with from = {link, ""}.
//
// Delivery time decides: a frame is dropped (and counted in memory_network_stats::dropped) when,
// at delivery, its destination name is not bound, disconnected or stopped, its link was closed,
// its sender was stopped, or drop_next() asked for it. Unlike ZeroMQ, frames sent before the
// peer listens are not held back: they are dropped when delivered.
//
// Thread safety: every call may come from any thread (actors send from scheduler threads), but a
// handler runs on the thread that called deliver_one()/deliver_all(). Declare the network before
// its transports so it outlives them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "ss/actors/transport.hpp"

namespace ss::test {

struct memory_network_options {
  // Frames one link (or one reply route) may have waiting in the network; send() beyond it
  // returns errc::resource_exhausted.
  // Default: 1024
  std::size_t link_queue_bound = 1024;
};

struct memory_network_stats {
  std::uint64_t sent = 0;        // frames accepted by send()
  std::uint64_t delivered = 0;   // handler calls (a duplicated frame counts twice)
  std::uint64_t dropped = 0;     // taken from the queue without a handler call, any reason
  std::uint64_t duplicated = 0;  // extra copies made by duplicate_next()
};

class memory_transport;

class memory_network {
 public:
  explicit memory_network(memory_network_options options = {});
  ~memory_network();
  memory_network(const memory_network&) = delete;
  memory_network& operator=(const memory_network&) = delete;

  // Frames waiting for delivery.
  std::size_t pending() const;

  // Takes the oldest pending frame and delivers it (the handler runs now, in this thread) or
  // drops it. False when nothing was pending.
  bool deliver_one();

  // deliver_one() until nothing is pending (frames the handlers send meanwhile included) or
  // `limit` frames were taken; returns how many were taken.
  std::size_t deliver_all(std::size_t limit = 1000000);

  // The next `n` frames taken from the queue are dropped instead of delivered.
  void drop_next(std::size_t n = 1);

  // The next `n` frames delivered are delivered twice in a row.
  void duplicate_next(std::size_t n = 1);

  // Cuts the transport listening on `endpoint` off: frames to it, and replies it sends through
  // routes of that endpoint, are dropped at delivery (and counted in dropped_at()) until
  // reconnect(). Its own outbound links are not affected. Unknown names may be disconnected
  // ahead of time.
  void disconnect(const std::string& endpoint);
  void reconnect(const std::string& endpoint);

  // Frames that the transport named `name` sends on its links arrive with this sender identity
  // (as ZeroMQ's CURVE handshake and peer address would give it). Default: unauthenticated, local.
  void set_identity(const std::string& name, actors::peer_identity identity);

  memory_network_stats stats() const;
  // Frames dropped because `endpoint` was disconnected.
  std::uint64_t dropped_at(const std::string& endpoint) const;

 private:
  friend class memory_transport;

  struct envelope {
    int sender = 0;             // transport id
    std::uint32_t link = 0;     // sender's link (> 0), or 0 for a reply on `route`
    std::string route;          // for replies
    wire::frame frame;
    bool duplicate = false;     // the copy made by duplicate_next()
  };
  struct link_entry {
    std::string endpoint;  // the name it dialled
    std::string route;     // how the listener sees it
  };
  struct route_entry {
    int transport = 0;
    std::uint32_t link = 0;
    std::string endpoint;  // the name the link dialled, i.e. where replies on it come from
  };
  struct transport_entry {
    memory_transport* transport = nullptr;
    std::string name;
    actors::peer_identity identity;
    bool stopped = false;
    std::uint32_t next_link = 1;
    std::map<std::uint32_t, link_entry> links;
    std::uint64_t pending = 0;  // its frames waiting in the network
  };
  using queue_key = std::tuple<int, std::uint32_t, std::string>;  // sender, link, route

  int attach(memory_transport* t, const std::string& name);
  void detach(int id);

  mutable std::mutex mu_;
  const memory_network_options options_;
  std::deque<envelope> queue_;
  std::map<queue_key, std::size_t> per_link_pending_;
  std::map<int, transport_entry> transports_;
  std::map<std::string, int> listeners_;        // name -> transport id
  std::map<std::string, route_entry> routes_;   // route -> the link behind it
  std::set<std::string> disconnected_;
  std::map<std::string, std::uint64_t> dropped_at_;
  std::size_t drop_next_ = 0, duplicate_next_ = 0;
  memory_network_stats stats_;
  int next_transport_ = 1;
};

class memory_transport final : public actors::transport {
 public:
  // `name` appears in routes and error messages.
  explicit memory_transport(memory_network& network, std::string name = "mem");
  ~memory_transport() override;
  memory_transport(const memory_transport&) = delete;
  memory_transport& operator=(const memory_transport&) = delete;

  void on_frame(frame_handler handler) override;
  // Binds `endpoint` (any name; "mem://shard-0" by convention) and returns it unchanged.
  // errc::unavailable when another transport holds it.
  result<std::string> listen(const std::string& endpoint) override;
  // Always succeeds (the name need not be bound yet); errc::cancelled after stop().
  result<std::uint32_t> connect(const std::string& endpoint) override;
  void close_link(std::uint32_t link) override;
  // errc::invalid_argument (null or empty frame), not_found (closed link, unknown route, or a
  // route while not listening), resource_exhausted (link queue bound), cancelled (stopped).
  status send(const actors::peer_address& to, wire::frame f) override;
  actors::transport_stats stats() const override;
  void stop() override;

 private:
  friend class memory_network;

  memory_network& net_;
  const std::string name_;
  int id_ = 0;
  // Guarded by net_.mu_.
  frame_handler handler_;
  actors::transport_stats stats_;
  bool listening_ = false;
};

}  // namespace ss::test
