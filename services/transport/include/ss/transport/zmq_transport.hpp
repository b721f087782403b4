// The ZeroMQ implementation of the actors' transport port (ss/actors/transport.hpp): a ROUTER
// for listen(), one DEALER per connect(), all owned by ONE poll thread per transport.
//
// Threads. The constructor starts exactly one thread (named after options.name). It owns every
// socket of this transport, runs zmq::poll over them, executes listen/connect/close_link posted by
// other threads, sends the queued outbound frames and calls the frame handler. send() only
// enqueues and wakes it. Several transports in one process (one per service in the in-process
// cluster) share one zmq::context_t, which inproc:// endpoints require; each has its own thread.
//
// Lifetime. Each transport holds a shared_ptr to its context, so the context is terminated only
// after every transport using it was stopped and destroyed: its sockets are closed (linger 0 by
// default) on the poll thread before stop() returns.
//
// Security. With options.security.mode == curve every tcp/ipc socket speaks CURVE: the ROUTER is
// a CURVE server whose clients are checked by a ZAP handler (one per context, on a thread of its
// own, shared by the context's transports); every DEALER is a CURVE client pinning the cluster's
// server key. A refused peer never delivers a frame; its refusal is logged through options.warn
// and counted (auth_refused, handshakes_failed). The threat model is in ss/transport/curve.hpp.
// In plain mode, listen() on an address beyond loopback warns loudly once.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "ss/actors/transport.hpp"
#include "ss/transport/curve.hpp"

namespace zmq {
class context_t;
}

namespace ss::transport {

// One ZeroMQ context for the whole process; share it between every transport (and any raw
// socket) that must reach inproc:// endpoints of the others. `io_threads` are libzmq's own I/O
// threads (tcp); 1 is enough below about 1 GB/s.
std::shared_ptr<zmq::context_t> make_zmq_context(int io_threads = 1);

struct zmq_transport_options {
  // Names this transport in error messages ("shard-0: cannot bind ..."), in the routing ids of
  // its outbound links and in the poll thread's name.
  // Default: "transport"
  std::string name = "transport";

  // The largest frame, in bytes. send() refuses a bigger one (errc::out_of_range). Every socket
  // sets ZMQ_MAXMSGSIZE to it, so over tcp/ipc libzmq refuses an oversized inbound message from
  // its size header, before allocating, by dropping that peer's connection (the peer reconnects
  // and its later frames flow again; counted in zmq_transport_counters::peers_disconnected, since
  // libzmq reports no reason). inproc bypasses libzmq's decoder: there the poll thread checks the
  // size and counts the frame in transport_stats::frames_rejected.
  // Default: 64 MiB (the Cap'n Proto reader's default traversal limit)
  std::size_t max_frame_bytes = std::size_t{64} << 20;

  // ZMQ_SNDHWM of every socket: frames libzmq buffers per peer connection before a send would
  // block. Beyond it frames wait in this transport's outbound queue (below).
  // Default: 1000
  int send_high_water_mark = 1000;

  // ZMQ_RCVHWM of every socket: inbound frames libzmq buffers per peer before it stops reading
  // that peer's connection (tcp flow control then pushes back on the sender).
  // Default: 1000
  int receive_high_water_mark = 1000;

  // Bound of the outbound queue: frames accepted by send() and not yet handed to libzmq, summed
  // over every link and route. send() beyond it returns errc::resource_exhausted.
  // Default: 65536
  std::size_t max_queued_frames = 65536;

  // The same bound in payload bytes. A frame is always accepted into an empty queue, so a frame
  // bigger than this bound (but within max_frame_bytes) can still be sent.
  // Default: 256 MiB
  std::size_t max_queued_bytes = std::size_t{256} << 20;

  // The most connections the listening socket keeps open (tcp/ipc; inproc peers do not count).
  // A connection beyond it is refused at its handshake through the ZAP hook (so plain sockets
  // get a ZAP domain too) and closed by libzmq; the client redials every reconnect_interval and
  // gets in once a connection closes. Refusals are logged (once a minute per address) and
  // counted (transport_stats::connections_refused); 0: no bound. See connection_limit.hpp.
  // Default: 1024 (a shard serves every trainer's workers and the readers, a coordinator every
  // member: far below it)
  std::size_t max_connections = 1024;

  // (A peer that refuses one of this transport's outbound handshakes — a key it does not
  // authorize, or its own connection bound — ends that connection for good in libzmq; the
  // transport then dials again after 0.5 s, doubling up to 10 s while refusals go on, logs it
  // once a minute and counts it in links_refused. Frames libzmq already held for that connection
  // are lost; callers' requests time out and are retried.)

  // ZMQ_LINGER of every socket: how long closing a socket (close_link, stop) keeps trying to
  // deliver frames libzmq already holds. 0 drops them at once, so stop() never waits on a peer.
  // Default: 0 ms
  std::chrono::milliseconds linger{0};

  // ZMQ_RECONNECT_IVL of outbound links: the wait before redialling a peer that is not (or no
  // longer) reachable. Frames queue meanwhile.
  // Default: 100 ms
  std::chrono::milliseconds reconnect_interval{100};

  // ZMQ_RECONNECT_IVL_MAX: the redial interval doubles up to this while the peer stays away;
  // 0 keeps it fixed at reconnect_interval.
  // Default: 0 ms (fixed)
  std::chrono::milliseconds reconnect_interval_max{0};

  // Frames of at least this many bytes are handed to libzmq without a copy (zmq_msg_init_data
  // with a heap-allocated reference to the frame, dropped by libzmq's free function once it has
  // written the bytes); smaller ones are copied into the message. Measured between two
  // transports over tcp loopback: zero-copy moves 256 KiB - 16 MiB frames 30-55% faster, is even
  // at 64 KiB, and 100 B frames pipeline 10-40% slower (an allocation more per frame).
  // Default: 64 KiB
  std::size_t zero_copy_min_bytes = std::size_t{64} << 10;

  // plain, or CURVE with the cluster's server key, this service's client key and the authorized
  // client keys (ss/transport/curve.hpp). The constructor throws std::invalid_argument when
  // check_security() refuses it (CURVE unavailable, a malformed key); listen() in CURVE mode
  // fails without the server secret key or authorized keys.
  // Default: plain
  transport_security security;

  // Where the transport's warnings go: refused peers (at most one line per peer and key a
  // minute), and plain mode bound beyond loopback. Called from the poll thread or the ZAP thread.
  // Default: spdlog::warn
  std::function<void(const std::string& message)> warn;
};

// Counters specific to ZeroMQ, next to the port's transport_stats.
struct zmq_transport_counters {
  std::uint64_t peers_accepted = 0;      // connections accepted by the listening socket
  std::uint64_t peers_disconnected = 0;  // of those, closed by the peer or dropped by libzmq
                                         // (a message over max_frame_bytes, a protocol error)
  std::uint64_t unroutable = 0;          // replies to a route no peer has (peer gone): dropped
  std::uint64_t handler_exceptions = 0;  // exceptions the frame handler let escape (swallowed)
  std::uint64_t auth_refused = 0;        // CURVE clients with a key not in authorized_clients
  std::uint64_t handshakes_failed = 0;   // inbound handshakes that failed before ZAP: a plain
                                         // client, a client pinning another server key, garbage
  std::uint64_t connections_open = 0;     // accepted and not yet closed, now
  std::uint64_t connections_refused = 0;  // refused because max_connections were open
  std::uint64_t links_refused = 0;        // our outbound handshakes a peer refused (each redialled)
};

class zmq_transport final : public actors::transport {
 public:
  // Starts the poll thread. `context` must be non-null; the transport keeps it alive.
  explicit zmq_transport(std::shared_ptr<zmq::context_t> context,
                         zmq_transport_options options = {});
  // Calls stop(). Must not run on the poll thread (that is, not inside the frame handler).
  ~zmq_transport() override;

  zmq_transport(const zmq_transport&) = delete;
  zmq_transport& operator=(const zmq_transport&) = delete;

  // The handler runs on the poll thread; it may call send(), connect(), listen() and close_link()
  // of this transport (they run inline there), but must not block.
  void on_frame(frame_handler handler) override;

  // Binds the ROUTER. May be called more than once to listen on several endpoints at once
  // (tcp and inproc, say); every bind shares the one listening socket and its routes. Errors:
  // invalid_argument for a malformed or unsupported endpoint, unavailable when the address is
  // in use or not local, cancelled after stop(). The message names the endpoint and the cause:
  // "shard-0: cannot bind tcp://127.0.0.1:5555: Address already in use".
  result<std::string> listen(const std::string& endpoint) override;

  // Opens a DEALER with a routing id unique to this transport and link, and dials `endpoint`
  // (asynchronously: libzmq keeps redialling). Errors: invalid_argument, cancelled.
  result<std::uint32_t> connect(const std::string& endpoint) override;

  // Closes the link's DEALER; frames still queued for it are dropped (counted in
  // send_failures). Unknown links are ignored.
  void close_link(std::uint32_t link) override;

  // Enqueues a frame; thread-safe, never blocks. Errors: invalid_argument (null or empty frame),
  // out_of_range (over max_frame_bytes), not_found (unknown or closed link; a route while not
  // listening), resource_exhausted (queue bound), cancelled (after stop()). A reply to a route
  // whose peer is gone is accepted here, then dropped by the poll thread and counted
  // (send_failures, unroutable): the requester handles that with its timeout.
  status send(const actors::peer_address& to, wire::frame f) override;

  actors::transport_stats stats() const override;
  zmq_transport_counters counters() const;

  // Stops the poll thread and closes every socket; idempotent and thread-safe. Called on the poll
  // thread (from the handler) it only requests the stop, which happens once the handler returns.
  // After it returns no handler runs and every call above fails with errc::cancelled.
  void stop() override;

  const zmq_transport_options& options() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace ss::transport
