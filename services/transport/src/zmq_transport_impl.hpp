// The inside of zmq_transport (private to services/transport/src): the impl struct with its
// state, grouped by the threads that touch it, and its member functions, defined in three units:
//   zmq_transport.cpp   the public API, the callers' side (send, posting work to the poll
//                       thread) and the lifecycle (start, run, stop, shut_down);
//   zmq_links.cpp       the sockets: the ROUTER and its security (CURVE, ZAP domain, connection
//                       bound), the DEALERs of outbound links with their redial, the monitors;
//   zmq_poll_loop.cpp   the poll thread's loop: routing and flushing outbound frames, receiving
//                       and delivering inbound ones.
// Everything below "poll thread only" is touched by the poll thread alone; "shared with callers"
// is guarded by mu; the atomics are read by stats() and counters() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <zmq.hpp>

#include "ss/core/log_limiter.hpp"
#include "ss/transport/connection_limit.hpp"
#include "ss/transport/zmq_transport.hpp"
#include "zap_authenticator.hpp"

namespace ss::transport {
namespace detail {

using clock_type = std::chrono::steady_clock;

// Inbound messages read from one socket per poll round, so that one busy peer cannot starve the
// other sockets or the outbound queue.
constexpr int kReceiveBatch = 256;

// A refused peer redials every reconnect interval: one log line per peer and key a minute.
constexpr std::chrono::seconds kRefusalLogInterval{60};
// Distinct refusals remembered for that (a flood of random keys must not grow memory).
constexpr std::size_t kRefusalLogEntries = 1024;

// 64 random bits (random_device mixed with the clock): routing-id prefixes, monitor endpoints.
std::uint64_t random64();

}  // namespace detail

struct zmq_transport::impl {
  using peer_address = actors::peer_address;
  using clock_type = detail::clock_type;

  struct outbound {
    peer_address to;
    wire::frame f;
  };
  // Work posted to the poll thread; `cancel` answers the caller when the thread has stopped.
  struct command {
    std::function<void()> run;
    std::function<void()> cancel;
  };
  struct link_state {
    link_state(zmq::socket_t s, std::string ep) : socket(std::move(s)), endpoint(std::move(ep)) {}
    zmq::socket_t socket;
    std::string endpoint;
    std::deque<wire::frame> pending;  // accepted by send(), not yet taken by libzmq
    bool blocked = false;             // the last send hit the high-water mark
    bool writable = false;            // poll reported POLLOUT since then
    // The peer refusing our handshake (ZAP: an unknown key, or its connection bound) ends the
    // DEALER's session for good in libzmq: no reconnect. The monitor sees that, and the poll
    // thread opens a fresh DEALER at redial_at, backing off while refusals go on.
    std::optional<zmq::socket_t> monitor;
    std::optional<clock_type::time_point> redial_at;
    std::chrono::milliseconds backoff{0};
  };
  struct poll_set;  // one round's zmq::poll items (zmq_poll_loop.cpp)

  impl(std::shared_ptr<zmq::context_t> c, zmq_transport_options o);

  // ---- fixed at construction ----
  std::shared_ptr<zmq::context_t> ctx;
  const zmq_transport_options opts;
  const std::string id_prefix;  // routing ids of outbound links: "<name>#<random>.<link>"
  // The wake-up channel: an eventfd that zmq::poll watches as a raw fd. Not an inproc PAIR: a
  // PAIR socket is not thread-safe, so every thread that sends would need its own socket (or a
  // mutex around a shared one) and a unique inproc name per transport, and a zmq_send per wake-up
  // costs more than a write(2). An eventfd write is thread-safe, never blocks (EFD_NONBLOCK), and
  // coalesces: one read clears any number of wake-ups. Linux-only, like the rest of the project.
  int wake_fd = -1;
  std::thread thread;
  std::thread::id thread_id;

  // ---- shared with callers, guarded by mu ----
  mutable std::mutex mu;
  std::vector<outbound> inbox;
  std::deque<command> commands;
  std::unordered_set<std::uint32_t> open_links;
  bool listening = false;
  bool stopped = false;  // the poll thread is gone (or going): nothing more is accepted
  std::string failure;   // why the poll thread died, when it did not stop on request
  std::uint32_t next_link = 1;
  std::size_t queued_frames = 0;  // accepted by send(), not yet handed to libzmq nor dropped
  std::size_t queued_bytes = 0;
  std::uint64_t queue_high_water = 0;

  std::atomic<bool> stop_requested{false};
  std::atomic<bool> wake_pending{false};
  std::atomic<std::uint64_t> frames_in{0}, frames_out{0}, bytes_in{0}, bytes_out{0};
  std::atomic<std::uint64_t> frames_rejected{0}, send_failures{0};
  std::atomic<std::uint64_t> peers_accepted{0}, peers_disconnected{0}, unroutable{0};
  std::atomic<std::uint64_t> handler_exceptions{0};
  std::atomic<std::uint64_t> auth_refused{0}, handshakes_failed{0};
  std::atomic<std::uint64_t> links_refused{0};  // our outbound handshakes a peer refused
  std::mutex join_mu;

  // ---- security: the ZAP domain is registered on the poll thread, refusals come from the ZAP
  // thread (rate-limited logging under refusal_mu) ----
  std::shared_ptr<detail::zap_authenticator> zap;
  std::string zap_domain;
  connection_limit connections{opts.max_connections};
  bool plain_warned = false;  // poll thread
  std::mutex refusal_mu;
  log_limiter refusals{std::chrono::nanoseconds(detail::kRefusalLogInterval).count(), detail::kRefusalLogEntries};

  // ---- poll thread only ----
  // Shared so that a handler may replace itself (on_frame from inside it) while it runs.
  std::shared_ptr<const frame_handler> handler;
  std::optional<zmq::socket_t> router;
  // PAIR receiving the ROUTER's connection events. With a connection bound it is shared with
  // the ZAP thread, which drains it before each admission (see admit_connection), so it is not
  // polled but drained under monitor_mu on every turn of the loop instead.
  std::optional<zmq::socket_t> monitor;
  std::mutex monitor_mu;
  bool monitor_shared = false;
  std::unordered_map<std::string, std::deque<wire::frame>> router_pending;
  bool router_progress = true;  // the last ROUTER flush sent something
  std::map<std::uint32_t, link_state> links;
  std::size_t released_frames = 0;  // left the queue since the last sync with `queued_*`
  std::size_t released_bytes = 0;

  bool on_poll_thread() const { return std::this_thread::get_id() == thread_id; }

  std::string prefix() const { return opts.name + ": "; }

  bool curve() const { return opts.security.mode == security_mode::curve; }

  // ---- zmq_transport.cpp: callers' side and lifecycle ----
  void warn(const std::string& message) const;
  void wake();
  template <class R, class F>
  R execute(F fn, R when_stopped);
  status stopped_status() const;
  status send(const peer_address& to, wire::frame f);
  // Both stats() and counters() report these; read in this one place.
  template <class Counts>
  void read_admission_counts(Counts& out) const;
  void run();
  void shut_down();
  void stop();

  // ---- zmq_links.cpp: sockets, security, links and monitors ----
  void report_refusal(const std::string& what, const std::string& key);
  void apply_socket_options(zmq::socket_t& s) const;
  status register_zap_domain(zmq::socket_t& r);
  bool admit_connection();
  status secure_router(zmq::socket_t& r);
  status open_router();
  result<std::string> do_listen(const std::string& endpoint);
  void open_dealer(std::uint32_t id, const std::string& endpoint, link_state* existing);
  void close_dealer(link_state& l);
  result<std::uint32_t> do_connect(const std::string& endpoint);
  void receive_link_monitor(std::uint32_t id);
  std::optional<clock_type::duration> redial_due_links();
  void do_close_link(std::uint32_t id);
  void receive_monitor_events();
  void drain_monitor_locked(std::size_t limit);
  void report_handshake_failure(std::uint16_t kind, std::uint32_t value, const std::string& endpoint);

  // ---- zmq_poll_loop.cpp: the poll thread's loop ----
  void loop();
  void release(const wire::frame& f);
  void drop(const wire::frame& f);
  zmq::message_t make_message(const wire::frame& f) const;
  void route_outbound(std::vector<outbound>& batch);
  void flush_link(link_state& l);
  void flush_router();
  void deliver(peer_address from, const zmq::message_t& payload);
  bool acceptable(const zmq::message_t& payload) const;
  static void discard_rest(zmq::socket_t& s, zmq::message_t& last);
  static actors::peer_identity sender_of(zmq::message_t& payload);
  void receive_router();
  void receive_link(std::uint32_t id);
  void drain_wake_fd();
  void sync(std::vector<outbound>& batch, std::deque<command>& cmds);
  void release_sync();
  void build_poll_set(poll_set& ps, std::optional<clock_type::duration> redial);
  void handle_poll_events(const poll_set& ps);
};

}  // namespace ss::transport
