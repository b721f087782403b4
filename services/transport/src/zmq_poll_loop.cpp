// zmq_transport's poll thread: loop() and what it does on each turn. It takes the frames send()
// queued and the commands callers posted (under mu), moves frames to their socket's queue,
// flushes those queues into libzmq without blocking (a full peer waits for POLLOUT), then runs
// zmq::poll over the wake-up eventfd, the ROUTER, every DEALER and the monitors, and receives
// what arrived: frames are checked, copied to word-aligned buffers and handed to the frame
// handler; monitor events go to zmq_links.cpp. All of it runs on the poll thread only; the
// handler is called here, so it must not block.
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "zmq_transport_impl.hpp"

#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace ss::transport {
namespace {

using detail::kReceiveBatch;

// A zero-copy message's buffer crosses threads inside libzmq's own queues (inproc: the sender's
// frame is the receiver's payload), which Debian's libzmq does without ThreadSanitizer's
// instrumentation: these tell TSan about the hand-over it cannot see. Nothing in other builds.
#if defined(__SANITIZE_THREAD__)
void handed_to_zmq(const void* p) { __tsan_release(const_cast<void*>(p)); }
void taken_from_zmq(const void* p) { __tsan_acquire(const_cast<void*>(p)); }
#else
void handed_to_zmq(const void*) {}
void taken_from_zmq(const void*) {}
#endif

// How long the poll thread waits before retrying ROUTER sends whose peers were full when a
// POLLOUT wake-up brought no progress (another peer's pipe had room, not theirs).
constexpr std::chrono::milliseconds kRouterRetry{1};
// How often the poll thread drains a monitor it shares with the ZAP thread (disconnections,
// failed handshakes): it cannot wait on a socket another thread reads.
constexpr std::chrono::milliseconds kSharedMonitorInterval{100};

// libzmq's free function for zero-copy messages: drops the reference that kept the frame alive
// while libzmq held its bytes (runs on a libzmq I/O thread, or the receiver's thread for inproc).
void release_frame(void* /*data*/, void* hint) { delete static_cast<wire::frame*>(hint); }

}  // namespace

// One round's zmq::poll items: [0] the wake-up eventfd, [1] the monitor (if any), [2] the ROUTER
// (if any), then DEALERs and their monitors.
struct zmq_transport::impl::poll_set {
  std::vector<zmq::pollitem_t> items;
  std::vector<std::uint32_t> item_links;     // link id of items[first_link + i]
  std::vector<std::uint32_t> monitor_links;  // link id of items[first_link_monitor + i]
  std::size_t monitor_item = SIZE_MAX;
  std::size_t router_item = SIZE_MAX;
  std::size_t first_link = 0;
  std::size_t first_link_monitor = 0;
  std::chrono::milliseconds timeout{-1};
};

void zmq_transport::impl::loop() {
  std::vector<outbound> batch;
  std::deque<command> cmds;
  poll_set ps;
  for (;;) {
    wake_pending.store(false);
    sync(batch, cmds);
    route_outbound(batch);
    while (!cmds.empty()) {
      cmds.front().run();
      cmds.pop_front();
    }
    if (stop_requested.load()) return;
    for (auto& [id, l] : links) flush_link(l);
    flush_router();
    release_sync();

    // Before the poll items are built: a redial replaces a link's socket.
    const auto redial = redial_due_links();
    build_poll_set(ps, redial);

    try {
      zmq::poll(ps.items.data(), ps.items.size(), ps.timeout);
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;
      throw;
    }
    handle_poll_events(ps);
  }
}

// The items and timeout of the next zmq::poll. A monitor shared with the ZAP thread is not
// polled: it is drained here, and the timeout bounds how long it waits.
void zmq_transport::impl::build_poll_set(poll_set& ps, std::optional<clock_type::duration> redial) {
  ps.items.clear();
  ps.item_links.clear();
  ps.items.push_back({nullptr, wake_fd, ZMQ_POLLIN, 0});
  ps.monitor_item = monitor && !monitor_shared ? ps.items.size() : SIZE_MAX;
  if (ps.monitor_item != SIZE_MAX) ps.items.push_back({monitor->handle(), 0, ZMQ_POLLIN, 0});
  ps.timeout = std::chrono::milliseconds(-1);
  if (monitor && monitor_shared) {
    receive_monitor_events();
    ps.timeout = kSharedMonitorInterval;
  }
  ps.router_item = router ? ps.items.size() : SIZE_MAX;
  if (router) {
    short events = ZMQ_POLLIN;
    if (!router_pending.empty()) {
      // ROUTER's POLLOUT means "some peer has room", not necessarily the blocked one: after
      // a POLLOUT that brought nothing, retry on a short timer instead of spinning.
      if (router_progress) {
        events |= ZMQ_POLLOUT;
      } else {
        ps.timeout = kRouterRetry;
      }
    }
    ps.items.push_back({router->handle(), 0, events, 0});
  }
  ps.first_link = ps.items.size();
  for (auto& [id, l] : links) {
    short events = ZMQ_POLLIN;
    if (!l.pending.empty()) events |= ZMQ_POLLOUT;  // DEALER's POLLOUT is exact
    ps.items.push_back({l.socket.handle(), 0, events, 0});
    ps.item_links.push_back(id);
  }
  ps.first_link_monitor = ps.items.size();
  ps.monitor_links.clear();
  for (auto& [id, l] : links) {
    if (!l.monitor) continue;
    ps.items.push_back({l.monitor->handle(), 0, ZMQ_POLLIN, 0});
    ps.monitor_links.push_back(id);
  }
  if (redial) {
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(*redial);
    if (ps.timeout.count() < 0 || ms < ps.timeout) ps.timeout = ms;
  }
}

void zmq_transport::impl::handle_poll_events(const poll_set& ps) {
  const auto& items = ps.items;
  if (items[0].revents & ZMQ_POLLIN) drain_wake_fd();
  if (ps.monitor_item != SIZE_MAX && (items[ps.monitor_item].revents & ZMQ_POLLIN)) {
    receive_monitor_events();
  }
  if (ps.router_item != SIZE_MAX && (items[ps.router_item].revents & ZMQ_POLLIN)) {
    receive_router();
  }
  for (std::size_t i = 0; i < ps.item_links.size(); ++i) {
    const short revents = items[ps.first_link + i].revents;
    if (revents & ZMQ_POLLOUT) {
      if (auto it = links.find(ps.item_links[i]); it != links.end()) it->second.writable = true;
    }
    if (revents & ZMQ_POLLIN) receive_link(ps.item_links[i]);
  }
  for (std::size_t i = 0; i < ps.monitor_links.size(); ++i) {
    if (items[ps.first_link_monitor + i].revents & ZMQ_POLLIN) receive_link_monitor(ps.monitor_links[i]);
  }
}

// ---------------------------------------------------------------- the queues shared with callers

void zmq_transport::impl::drain_wake_fd() {
  std::uint64_t n;
  if (::read(wake_fd, &n, sizeof n) < 0) {
    // EAGAIN: already drained.
  }
}

// Takes posted work and frees the queue space of frames that left it.
void zmq_transport::impl::sync(std::vector<outbound>& batch, std::deque<command>& cmds) {
  std::lock_guard<std::mutex> lock(mu);
  batch.swap(inbox);
  cmds.swap(commands);
  queued_frames -= released_frames;
  queued_bytes -= released_bytes;
  released_frames = released_bytes = 0;
}

void zmq_transport::impl::release_sync() {
  if (released_frames == 0) return;
  std::lock_guard<std::mutex> lock(mu);
  queued_frames -= released_frames;
  queued_bytes -= released_bytes;
  released_frames = released_bytes = 0;
}

// ---------------------------------------------------------------- outbound

void zmq_transport::impl::release(const wire::frame& f) {
  ++released_frames;
  released_bytes += f->size();
}

void zmq_transport::impl::drop(const wire::frame& f) {
  release(f);
  send_failures.fetch_add(1, std::memory_order_relaxed);
}

zmq::message_t zmq_transport::impl::make_message(const wire::frame& f) const {
  if (f->size() >= opts.zero_copy_min_bytes) {
    auto ref = std::make_unique<wire::frame>(f);
    zmq::message_t m(const_cast<std::uint8_t*>(f->data()), f->size(), &release_frame, ref.get());
    ref.release();  // owned by libzmq now, freed by release_frame
    handed_to_zmq(m.data());
    return m;
  }
  zmq::message_t m(f->data(), f->size());
  handed_to_zmq(m.data());
  return m;
}

// Moves frames taken from the shared inbox to their socket's queue, in order.
void zmq_transport::impl::route_outbound(std::vector<outbound>& batch) {
  for (auto& o : batch) {
    if (o.to.link == 0) {
      if (router) {
        router_pending[o.to.route].push_back(std::move(o.f));
      } else {
        drop(o.f);
      }
    } else if (auto it = links.find(o.to.link); it != links.end()) {
      it->second.pending.push_back(std::move(o.f));
    } else {
      drop(o.f);  // the link was closed after send() accepted the frame
    }
  }
  batch.clear();
}

void zmq_transport::impl::flush_link(link_state& l) {
  if (l.pending.empty() || (l.blocked && !l.writable)) return;
  l.writable = false;
  while (!l.pending.empty()) {
    const wire::frame& f = l.pending.front();
    try {
      zmq::message_t m = make_message(f);
      if (!l.socket.send(m, zmq::send_flags::dontwait)) {
        l.blocked = true;  // high-water mark: wait for POLLOUT
        return;
      }
      frames_out.fetch_add(1, std::memory_order_relaxed);
      bytes_out.fetch_add(f->size(), std::memory_order_relaxed);
      release(f);
    } catch (const zmq::error_t&) {
      drop(f);
    }
    l.pending.pop_front();
  }
  l.blocked = false;
}

// Sends queued replies route by route, so a peer that does not read blocks only itself.
void zmq_transport::impl::flush_router() {
  if (!router || router_pending.empty()) return;
  bool progress = false;
  for (auto it = router_pending.begin(); it != router_pending.end();) {
    const std::string& route = it->first;
    auto& q = it->second;
    while (!q.empty()) {
      const wire::frame& f = q.front();
      try {
        zmq::message_t id(route.data(), route.size());
        if (!router->send(id, zmq::send_flags::sndmore | zmq::send_flags::dontwait)) break;
        // Once the id part is accepted the peer's pipe has room: the payload cannot fail.
        zmq::message_t m = make_message(f);
        (void)router->send(m, zmq::send_flags::dontwait);
        frames_out.fetch_add(1, std::memory_order_relaxed);
        bytes_out.fetch_add(f->size(), std::memory_order_relaxed);
        release(f);
      } catch (const zmq::error_t& e) {
        if (e.num() == EHOSTUNREACH) unroutable.fetch_add(1, std::memory_order_relaxed);
        drop(f);
      }
      q.pop_front();
      progress = true;
    }
    it = q.empty() ? router_pending.erase(it) : std::next(it);
  }
  router_progress = progress;
}

// ---------------------------------------------------------------- inbound

void zmq_transport::impl::deliver(peer_address from, const zmq::message_t& payload) {
  if (stop_requested.load(std::memory_order_relaxed)) return;  // stop() came from a handler
  std::shared_ptr<const frame_handler> h = handler;
  if (!h || !*h) {
    frames_rejected.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  frames_in.fetch_add(1, std::memory_order_relaxed);
  bytes_in.fetch_add(payload.size(), std::memory_order_relaxed);
  // Word-aligned copy: libzmq hands out 33 B .. 8 KiB messages at any address, and Cap'n Proto reads words.
  taken_from_zmq(payload.data());
  wire::frame f = wire::make_frame(payload.data(), payload.size());
  try {
    (*h)(from, std::move(f));
  } catch (...) {
    handler_exceptions.fetch_add(1, std::memory_order_relaxed);
  }
}

bool zmq_transport::impl::acceptable(const zmq::message_t& payload) const {
  return !payload.more() && payload.size() > 0 && payload.size() <= opts.max_frame_bytes;
}

// Reads the rest of a malformed multipart message so the next read starts a new one.
void zmq_transport::impl::discard_rest(zmq::socket_t& s, zmq::message_t& last) {
  while (last.more()) {
    if (!s.recv(last, zmq::recv_flags::dontwait)) return;
  }
}

// Who sent a message on the listening socket: libzmq attaches the ZAP handler's user id (CURVE:
// the key's role and name) and the peer's address to every message of a connection.
actors::peer_identity zmq_transport::impl::sender_of(zmq::message_t& payload) {
  auto property = [&](const char* name) {
    const char* v = zmq_msg_gets(payload.handle(), name);
    return v != nullptr ? std::string(v) : std::string();
  };
  return identity_of(property("User-Id"), property("Peer-Address"));
}

// ROUTER: [routing id][payload], anything else is rejected.
void zmq_transport::impl::receive_router() {
  for (int n = 0; n < kReceiveBatch && router; ++n) {
    zmq::message_t id;
    if (!router->recv(id, zmq::recv_flags::dontwait)) return;
    zmq::message_t payload;
    if (!id.more() || !router->recv(payload, zmq::recv_flags::dontwait)) {
      frames_rejected.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    if (!acceptable(payload)) {
      discard_rest(*router, payload);
      frames_rejected.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    peer_address from{0, std::string(static_cast<const char*>(id.data()), id.size()), {}};
    from.sender = sender_of(payload);
    deliver(std::move(from), payload);
  }
}

// DEALER: [payload], anything else is rejected. Looks the link up for every message because
// the handler may close it.
void zmq_transport::impl::receive_link(std::uint32_t id) {
  for (int n = 0; n < kReceiveBatch; ++n) {
    auto it = links.find(id);
    if (it == links.end()) return;
    zmq::message_t payload;
    if (!it->second.socket.recv(payload, zmq::recv_flags::dontwait)) return;
    if (!acceptable(payload)) {
      discard_rest(it->second.socket, payload);
      frames_rejected.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    deliver(peer_address{id, {}}, payload);
  }
}

}  // namespace ss::transport
