#include "ss/transport/zmq_transport.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>
#include <zmq.hpp>

#include "ss/core/io/hex.hpp"
#include "ss/core/log_limiter.hpp"
#include "ss/transport/connection_limit.hpp"
#include "zap_authenticator.hpp"

#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace ss::transport {
namespace {

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

using actors::peer_address;
using clock_type = std::chrono::steady_clock;

// Inbound messages read from one socket per poll round, so that one busy peer cannot starve the
// other sockets or the outbound queue.
constexpr int kReceiveBatch = 256;
// How long the poll thread waits before retrying ROUTER sends whose peers were full when a
// POLLOUT wake-up brought no progress (another peer's pipe had room, not theirs).
constexpr std::chrono::milliseconds kRouterRetry{1};
// After a peer refused our handshake: the first wait before dialling again, and the longest.
constexpr std::chrono::milliseconds kRedialFirst{500};
// How often the poll thread drains a monitor it shares with the ZAP thread (disconnections,
// failed handshakes): it cannot wait on a socket another thread reads.
constexpr std::chrono::milliseconds kSharedMonitorInterval{100};
constexpr std::chrono::milliseconds kRedialMax{10000};

std::uint64_t random64() {
  std::random_device rd;
  const auto t = static_cast<std::uint64_t>(clock_type::now().time_since_epoch().count());
  return ((std::uint64_t{rd()} << 32) ^ rd()) ^ (t * 0x9e3779b97f4a7c15ULL);
}

// What a failed bind/connect means to the caller.
errc endpoint_errc(int e) {
  switch (e) {
    case EADDRINUSE:
    case EADDRNOTAVAIL:
    case ENODEV:
      return errc::unavailable;
    case ETERM:
      return errc::cancelled;
    default:  // EINVAL, EPROTONOSUPPORT, ENOCOMPATPROTO, ...: the endpoint itself is wrong
      return errc::invalid_argument;
  }
}

// Asynchronous signals (SIGINT, SIGTERM, ...) belong to the service's signal thread, never to the
// poll thread: blocked here they cannot interrupt zmq_poll or kill the process through a thread
// that does not wait for them. Synchronous faults stay deliverable.
void block_async_signals() {
  sigset_t set;
  sigfillset(&set);
  for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS}) sigdelset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

// libzmq's free function for zero-copy messages: drops the reference that kept the frame alive
// while libzmq held its bytes (runs on a libzmq I/O thread, or the receiver's thread for inproc).
void release_frame(void* /*data*/, void* hint) { delete static_cast<wire::frame*>(hint); }

// A refused peer redials every reconnect interval: one log line per peer and key a minute.
constexpr std::chrono::seconds kRefusalLogInterval{60};
// Distinct refusals remembered for that (a flood of random keys must not grow memory).
constexpr std::size_t kRefusalLogEntries = 1024;

}  // namespace

struct zmq_transport::impl {
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

  impl(std::shared_ptr<zmq::context_t> c, zmq_transport_options o)
      : ctx(std::move(c)),
        opts(std::move(o)),
        id_prefix(opts.name.substr(0, 200) + "#" + io::hex(random64(), 16) + ".") {}

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
  log_limiter refusals{std::chrono::nanoseconds(kRefusalLogInterval).count(), kRefusalLogEntries};

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

  void warn(const std::string& message) const {
    if (opts.warn) {
      opts.warn(message);
    } else {
      spdlog::warn("{}", message);
    }
  }

  // Logs a refusal unless the same one was logged less than kRefusalLogInterval ago.
  void report_refusal(const std::string& what, const std::string& key) {
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now().time_since_epoch()).count();
    std::uint64_t suppressed = 0;
    {
      std::lock_guard<std::mutex> lock(refusal_mu);
      if (!refusals.admit(key, now, &suppressed)) return;
    }
    std::string line = prefix() + what;
    if (suppressed > 0) line += " (again; " + std::to_string(suppressed) + " more time(s) since the last report)";
    warn(line);
  }

  // ---------------------------------------------------------------- callers' side

  // Wakes the poll thread. The flag keeps a burst of sends to one eventfd write: the poll thread
  // clears it *before* it takes the queue, so a sender that finds it set knows its frame will be
  // seen by a drain that has not happened yet.
  void wake() {
    if (wake_pending.exchange(true)) return;
    const std::uint64_t one = 1;
    if (::write(wake_fd, &one, sizeof one) < 0) {
      // Only EAGAIN is possible (the counter is saturated): the thread is awake anyway.
    }
  }

  // Runs `fn` on the poll thread and returns its result; inline when already there.
  template <class R, class F>
  R execute(F fn, R when_stopped) {
    if (on_poll_thread()) return stop_requested.load() ? when_stopped : fn();
    auto done = std::make_shared<std::promise<R>>();
    auto answer = done->get_future();
    {
      std::lock_guard<std::mutex> lock(mu);
      if (stopped || stop_requested.load()) return when_stopped;
      commands.push_back({[done, fn = std::move(fn)]() mutable { done->set_value(fn()); },
                          [done, when_stopped] { done->set_value(when_stopped); }});
    }
    wake();
    return answer.get();
  }

  status stopped_status() const {
    std::lock_guard<std::mutex> lock(mu);
    if (!failure.empty()) return {errc::internal, prefix() + failure};
    return {errc::cancelled, prefix() + "transport stopped"};
  }

  status send(const peer_address& to, wire::frame f) {
    auto fail = [this](errc code, std::string message) {
      send_failures.fetch_add(1, std::memory_order_relaxed);
      return status(code, prefix() + message);
    };
    if (!f || f->size() == 0) return fail(errc::invalid_argument, "cannot send an empty frame");
    const std::size_t size = f->size();
    if (size > opts.max_frame_bytes) {
      return fail(errc::out_of_range, "frame of " + std::to_string(size) +
                                          " bytes exceeds max_frame_bytes " +
                                          std::to_string(opts.max_frame_bytes));
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      if (stopped || stop_requested.load()) {
        send_failures.fetch_add(1, std::memory_order_relaxed);
        return {failure.empty() ? errc::cancelled : errc::internal,
                prefix() + (failure.empty() ? std::string("transport stopped") : failure)};
      }
      if (to.link == 0) {
        if (!listening) return fail(errc::not_found, "cannot reply on a route: not listening");
        if (to.route.empty()) return fail(errc::invalid_argument, "empty route");
      } else if (open_links.count(to.link) == 0) {
        return fail(errc::not_found, "no open link " + std::to_string(to.link));
      }
      if (queued_frames >= opts.max_queued_frames ||
          (queued_frames > 0 && queued_bytes + size > opts.max_queued_bytes)) {
        return fail(errc::resource_exhausted,
                    "outbound queue full (" + std::to_string(queued_frames) + " frames, " +
                        std::to_string(queued_bytes) + " bytes)");
      }
      inbox.push_back({to, std::move(f)});
      ++queued_frames;
      queued_bytes += size;
      if (queued_frames > queue_high_water) queue_high_water = queued_frames;
    }
    wake();
    return status::ok();
  }

  // ---------------------------------------------------------------- poll thread

  void release(const wire::frame& f) {
    ++released_frames;
    released_bytes += f->size();
  }
  void drop(const wire::frame& f) {
    release(f);
    send_failures.fetch_add(1, std::memory_order_relaxed);
  }

  zmq::message_t make_message(const wire::frame& f) const {
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

  void apply_socket_options(zmq::socket_t& s) const {
    s.set(zmq::sockopt::linger, static_cast<int>(opts.linger.count()));
    s.set(zmq::sockopt::sndhwm, opts.send_high_water_mark);
    s.set(zmq::sockopt::rcvhwm, opts.receive_high_water_mark);
    s.set(zmq::sockopt::maxmsgsize, static_cast<std::int64_t>(opts.max_frame_bytes));
  }

  // This transport's ZAP domain, registered with the context's ZAP handler (started here if the
  // context has none yet): CURVE clients are checked against the authorized keys, and every
  // client (plain ones too) against the connection bound.
  status register_zap_domain(zmq::socket_t& r) {
    auto a = detail::zap_authenticator::for_context(ctx);
    if (!a.is_ok()) return a.error().with_context(opts.name);
    zap = *a;
    zap_domain = "shadowsync/" + id_prefix;
    detail::zap_authenticator::domain_policy policy;
    policy.curve = curve();
    for (const auto& client : opts.security.authorized_clients) policy.keys[client.public_key] = user_id_of(client);
    policy.on_refused = [this](const std::string& key, const std::string& address) {
      auth_refused.fetch_add(1, std::memory_order_relaxed);
      report_refusal("refused a CURVE client with unknown key " + key + " from " + address +
                         " (not in the authorized keys)",
                     key + "@" + address);
    };
    if (opts.max_connections > 0) {
      monitor_shared = true;
      policy.admit = [this] { return admit_connection(); };
      policy.on_full = [this](const std::string& address) {
        report_refusal("refused a connection from " + address + ": " + std::to_string(connections.max()) +
                           " connections are open (the bound, --max-connections)",
                       "full@" + address);
      };
    }
    zap->add_domain(zap_domain, std::move(policy));
    r.set(zmq::sockopt::zap_domain, zap_domain);
    return status::ok();
  }

  // ZAP thread (under the authenticator's lock, so never after shut_down removed the domain):
  // the asking connection's ACCEPTED event was written to the monitor before its handshake
  // began, so after draining the monitor the count includes it; poll-thread lag cannot let a
  // burst of handshakes past the bound.
  bool admit_connection() {
    {
      std::lock_guard<std::mutex> lock(monitor_mu);
      drain_monitor_locked(SIZE_MAX);
    }
    return connections.admit();
  }

  // CURVE server: the cluster's server secret key; clients are checked through ZAP.
  status secure_router(zmq::socket_t& r) {
    if (opts.security.server.secret_key.empty()) {
      return status(errc::invalid_argument, prefix() + "cannot listen with CURVE: no server secret key "
                                                       "(--curve-server-key must name the secret .key file)");
    }
    if (opts.security.authorized_clients.empty()) {
      return status(errc::invalid_argument, prefix() + "cannot listen with CURVE: no authorized client keys");
    }
    r.set(zmq::sockopt::curve_server, true);
    r.set(zmq::sockopt::curve_secretkey, opts.security.server.secret_key);
    return status::ok();
  }

  status open_router() {
    zmq::socket_t r(*ctx, zmq::socket_type::router);
    if (curve()) SS_RETURN_IF_ERROR(secure_router(r));
    if (curve() || opts.max_connections > 0) SS_RETURN_IF_ERROR(register_zap_domain(r));
    router.emplace(std::move(r));
    apply_socket_options(*router);
    // An unknown route fails with EHOSTUNREACH and a full peer with EAGAIN, instead of a silent
    // drop: both are counted, and EAGAIN keeps the frame queued.
    router->set(zmq::sockopt::router_mandatory, true);
    const std::string endpoint = "inproc://ss-transport-monitor." + io::hex(random64(), 16);
    if (zmq_socket_monitor(router->handle(), endpoint.c_str(),
                           ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                               ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) == 0) {
      // Under monitor_mu: the ZAP thread drains this monitor (admit_connection), and libzmq's
      // ordering of bind, handshake and ZAP request is invisible to ThreadSanitizer.
      std::lock_guard<std::mutex> lock(monitor_mu);
      monitor.emplace(*ctx, zmq::socket_type::pair);
      monitor->set(zmq::sockopt::linger, 0);
      monitor->connect(endpoint);
    }
    return status::ok();
  }

  result<std::string> do_listen(const std::string& endpoint) {
    try {
      if (!router) SS_RETURN_IF_ERROR(open_router());
      router->bind(endpoint);
    } catch (const zmq::error_t& e) {
      return status(endpoint_errc(e.num()),
                    prefix() + "cannot bind " + endpoint + ": " + e.what());
    }
    std::string real = router->get(zmq::sockopt::last_endpoint);
    if (!curve() && !plain_warned && !is_loopback_endpoint(endpoint)) {
      plain_warned = true;
      warn("shadowsync: plain (unauthenticated, unencrypted) transport on " + endpoint + " (" + opts.name +
           "): anyone who can reach this port can read and change the model; use --curve-* keys (shadowsync "
           "keygen --cluster)");
    }
    std::lock_guard<std::mutex> lock(mu);
    listening = true;
    return real;
  }

  // A DEALER to `endpoint` with routing id `id`, and a monitor that reports refused handshakes.
  void open_dealer(std::uint32_t id, const std::string& endpoint, link_state* existing) {
    zmq::socket_t s(*ctx, zmq::socket_type::dealer);
    apply_socket_options(s);
    // The peer's ROUTER addresses its replies by this id; unique per transport and link, and
    // random across processes (a duplicate id would be refused by the peer's ROUTER).
    s.set(zmq::sockopt::routing_id, id_prefix + std::to_string(id));
    s.set(zmq::sockopt::reconnect_ivl, static_cast<int>(opts.reconnect_interval.count()));
    s.set(zmq::sockopt::reconnect_ivl_max, static_cast<int>(opts.reconnect_interval_max.count()));
    if (curve()) {
      // A CURVE client: it talks only to a server holding the pinned key's secret half.
      s.set(zmq::sockopt::curve_serverkey, opts.security.server.public_key);
      s.set(zmq::sockopt::curve_publickey, opts.security.client.public_key);
      s.set(zmq::sockopt::curve_secretkey, opts.security.client.secret_key);
    }
    std::optional<zmq::socket_t> watch;
    if (endpoint.rfind("inproc://", 0) != 0) {  // inproc has no handshake to refuse
      const std::string where = "inproc://ss-link-monitor." + io::hex(random64(), 16);
      if (zmq_socket_monitor(s.handle(), where.c_str(), ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_SUCCEEDED) ==
          0) {
        watch.emplace(*ctx, zmq::socket_type::pair);
        watch->set(zmq::sockopt::linger, 0);
        watch->connect(where);
      }
    }
    s.connect(endpoint);
    if (existing != nullptr) {
      close_dealer(*existing);
      existing->socket = std::move(s);
      existing->monitor = std::move(watch);
      existing->blocked = existing->writable = false;
      return;
    }
    auto [it, added] = links.emplace(id, link_state(std::move(s), endpoint));
    (void)added;
    it->second.monitor = std::move(watch);
  }

  void close_dealer(link_state& l) {
    if (l.monitor) {
      zmq_socket_monitor(l.socket.handle(), nullptr, 0);
      l.monitor.reset();
    }
    l.socket.close();
  }

  result<std::uint32_t> do_connect(const std::string& endpoint) {
    std::uint32_t id;
    {
      std::lock_guard<std::mutex> lock(mu);
      id = next_link++;
    }
    try {
      open_dealer(id, endpoint, nullptr);
    } catch (const zmq::error_t& e) {
      return status(endpoint_errc(e.num()),
                    prefix() + "cannot connect to " + endpoint + ": " + e.what());
    }
    std::lock_guard<std::mutex> lock(mu);
    open_links.insert(id);
    return id;
  }

  // Events of link `id`'s monitor: a refused handshake schedules a fresh DEALER.
  void receive_link_monitor(std::uint32_t id) {
    auto it = links.find(id);
    if (it == links.end() || !it->second.monitor) return;
    link_state& l = it->second;
    for (int n = 0; n < kReceiveBatch && l.monitor; ++n) {
      zmq::message_t event;
      if (!l.monitor->recv(event, zmq::recv_flags::dontwait)) return;
      std::uint16_t kind = 0;
      std::uint32_t value = 0;
      if (event.size() >= sizeof kind + sizeof value) {
        std::memcpy(&kind, event.data(), sizeof kind);
        std::memcpy(&value, static_cast<const char*>(event.data()) + sizeof kind, sizeof value);
      }
      discard_rest(*l.monitor, event);
      if (kind == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
        l.backoff = std::chrono::milliseconds(0);
      } else if (kind == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH && !l.redial_at) {
        links_refused.fetch_add(1, std::memory_order_relaxed);
        l.backoff = std::clamp(l.backoff * 2, kRedialFirst, kRedialMax);
        l.redial_at = clock_type::now() + l.backoff;
        report_refusal(l.endpoint + " refused this service's connection (ZAP status " +
                           std::to_string(value) + ": it does not authorize this service's key, or it is at " +
                           "its --max-connections); dialling again every few seconds",
                       "link " + l.endpoint);
      }
    }
  }

  // Opens a fresh DEALER for every link whose redial is due; the time until the next one.
  std::optional<clock_type::duration> redial_due_links() {
    std::optional<clock_type::duration> next;
    const auto now = clock_type::now();
    for (auto& [id, l] : links) {
      if (!l.redial_at) continue;
      if (*l.redial_at <= now) {
        l.redial_at.reset();
        try {
          open_dealer(id, l.endpoint, &l);
        } catch (const zmq::error_t& e) {
          warn(prefix() + "cannot dial " + l.endpoint + " again: " + e.what());
        }
      } else {
        const auto wait = *l.redial_at - now;
        if (!next || wait < *next) next = wait;
      }
    }
    return next;
  }

  void do_close_link(std::uint32_t id) {
    {
      std::lock_guard<std::mutex> lock(mu);
      open_links.erase(id);
    }
    auto it = links.find(id);
    if (it == links.end()) return;
    for (const auto& f : it->second.pending) drop(f);
    close_dealer(it->second);  // linger per options
    links.erase(it);
  }

  // Moves frames taken from the shared inbox to their socket's queue, in order.
  void route_outbound(std::vector<outbound>& batch) {
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

  void flush_link(link_state& l) {
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
  void flush_router() {
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

  void deliver(peer_address from, const zmq::message_t& payload) {
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

  bool acceptable(const zmq::message_t& payload) const {
    return !payload.more() && payload.size() > 0 && payload.size() <= opts.max_frame_bytes;
  }

  // Reads the rest of a malformed multipart message so the next read starts a new one.
  static void discard_rest(zmq::socket_t& s, zmq::message_t& last) {
    while (last.more()) {
      if (!s.recv(last, zmq::recv_flags::dontwait)) return;
    }
  }

  // Who sent a message on the listening socket: libzmq attaches the ZAP handler's user id (CURVE:
  // the key's role and name) and the peer's address to every message of a connection.
  static actors::peer_identity sender_of(zmq::message_t& payload) {
    auto property = [&](const char* name) {
      const char* v = zmq_msg_gets(payload.handle(), name);
      return v != nullptr ? std::string(v) : std::string();
    };
    return identity_of(property("User-Id"), property("Peer-Address"));
  }

  // ROUTER: [routing id][payload], anything else is rejected.
  void receive_router() {
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
  void receive_link(std::uint32_t id) {
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

  void receive_monitor_events() {
    std::lock_guard<std::mutex> lock(monitor_mu);
    drain_monitor_locked(kReceiveBatch);
  }

  void drain_monitor_locked(std::size_t limit) {
    for (std::size_t n = 0; n < limit && monitor; ++n) {
      zmq::message_t event;
      if (!monitor->recv(event, zmq::recv_flags::dontwait)) return;
      if (event.size() >= sizeof(std::uint16_t)) {
        std::uint16_t kind;
        std::memcpy(&kind, event.data(), sizeof kind);
        std::uint32_t value = 0;  // the socket descriptor, for ACCEPTED and DISCONNECTED
        if (event.size() >= sizeof kind + sizeof value) {
          std::memcpy(&value, static_cast<const char*>(event.data()) + sizeof kind, sizeof value);
        }
        if (kind == ZMQ_EVENT_ACCEPTED) {
          peers_accepted.fetch_add(1, std::memory_order_relaxed);
          connections.accepted(static_cast<int>(value));
        }
        if (kind == ZMQ_EVENT_DISCONNECTED) {
          peers_disconnected.fetch_add(1, std::memory_order_relaxed);
          connections.closed(static_cast<int>(value));
        }
        if (kind == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL || kind == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) {
          handshakes_failed.fetch_add(1, std::memory_order_relaxed);
          zmq::message_t where;  // the second part: the endpoint (the bound one, for accepted peers)
          if (event.more() && monitor->recv(where, zmq::recv_flags::dontwait)) {
            if (curve()) report_handshake_failure(kind, value, where.to_string());
            discard_rest(*monitor, where);
            continue;
          }
        }
      }
      discard_rest(*monitor, event);  // the second part names the endpoint
    }
  }

  void report_handshake_failure(std::uint16_t kind, std::uint32_t value, const std::string& endpoint) {
    std::string why;
    if (kind == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL && value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) {
      why = "the peer does not speak CURVE (a plain client, or one without --curve-* keys)";
    } else if (kind == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL && value == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC) {
      why = "its CURVE handshake does not decrypt (a client that pinned another server key?)";
    } else if (kind == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) {
      why = "protocol error 0x" + io::hex(value, 8);
    } else {
      // Whichever side notices a mismatch first drops the connection: a plain client often sees
      // the server's CURVE greeting first and hangs up, and this side only sees EPIPE.
      why = "the peer hung up during the handshake (" + std::string(std::strerror(static_cast<int>(value))) +
            "): a plain client, or one without the cluster's keys?";
    }
    report_refusal("refused a connection on " + endpoint + ": " + why, "handshake " + why);
  }

  void drain_wake_fd() {
    std::uint64_t n;
    if (::read(wake_fd, &n, sizeof n) < 0) {
      // EAGAIN: already drained.
    }
  }

  // Takes posted work and frees the queue space of frames that left it.
  void sync(std::vector<outbound>& batch, std::deque<command>& cmds) {
    std::lock_guard<std::mutex> lock(mu);
    batch.swap(inbox);
    cmds.swap(commands);
    queued_frames -= released_frames;
    queued_bytes -= released_bytes;
    released_frames = released_bytes = 0;
  }

  void release_sync() {
    if (released_frames == 0) return;
    std::lock_guard<std::mutex> lock(mu);
    queued_frames -= released_frames;
    queued_bytes -= released_bytes;
    released_frames = released_bytes = 0;
  }

  void loop() {
    std::vector<outbound> batch;
    std::deque<command> cmds;
    std::vector<zmq::pollitem_t> items;
    std::vector<std::uint32_t> item_links;  // link id of items[first_link + i]
    std::vector<std::uint32_t> monitor_links;  // link id of items[first_link_monitor + i]
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

      // [0] the wake-up eventfd, [1] the monitor (if any), [2] the ROUTER (if any), then DEALERs
      // and their monitors.
      items.clear();
      item_links.clear();
      items.push_back({nullptr, wake_fd, ZMQ_POLLIN, 0});
      const std::size_t monitor_item = monitor && !monitor_shared ? items.size() : SIZE_MAX;
      if (monitor_item != SIZE_MAX) items.push_back({monitor->handle(), 0, ZMQ_POLLIN, 0});
      auto timeout = std::chrono::milliseconds(-1);
      if (monitor && monitor_shared) {
        receive_monitor_events();
        timeout = kSharedMonitorInterval;
      }
      const std::size_t router_item = router ? items.size() : SIZE_MAX;
      if (router) {
        short events = ZMQ_POLLIN;
        if (!router_pending.empty()) {
          // ROUTER's POLLOUT means "some peer has room", not necessarily the blocked one: after
          // a POLLOUT that brought nothing, retry on a short timer instead of spinning.
          if (router_progress) {
            events |= ZMQ_POLLOUT;
          } else {
            timeout = kRouterRetry;
          }
        }
        items.push_back({router->handle(), 0, events, 0});
      }
      const std::size_t first_link = items.size();
      for (auto& [id, l] : links) {
        short events = ZMQ_POLLIN;
        if (!l.pending.empty()) events |= ZMQ_POLLOUT;  // DEALER's POLLOUT is exact
        items.push_back({l.socket.handle(), 0, events, 0});
        item_links.push_back(id);
      }
      const std::size_t first_link_monitor = items.size();
      monitor_links.clear();
      for (auto& [id, l] : links) {
        if (!l.monitor) continue;
        items.push_back({l.monitor->handle(), 0, ZMQ_POLLIN, 0});
        monitor_links.push_back(id);
      }
      if (redial) {
        const auto ms = std::chrono::ceil<std::chrono::milliseconds>(*redial);
        if (timeout.count() < 0 || ms < timeout) timeout = ms;
      }

      try {
        zmq::poll(items.data(), items.size(), timeout);
      } catch (const zmq::error_t& e) {
        if (e.num() == EINTR) continue;
        throw;
      }

      if (items[0].revents & ZMQ_POLLIN) drain_wake_fd();
      if (monitor_item != SIZE_MAX && (items[monitor_item].revents & ZMQ_POLLIN)) {
        receive_monitor_events();
      }
      if (router_item != SIZE_MAX && (items[router_item].revents & ZMQ_POLLIN)) {
        receive_router();
      }
      for (std::size_t i = 0; i < item_links.size(); ++i) {
        const short revents = items[first_link + i].revents;
        if (revents & ZMQ_POLLOUT) {
          if (auto it = links.find(item_links[i]); it != links.end()) it->second.writable = true;
        }
        if (revents & ZMQ_POLLIN) receive_link(item_links[i]);
      }
      for (std::size_t i = 0; i < monitor_links.size(); ++i) {
        if (items[first_link_monitor + i].revents & ZMQ_POLLIN) receive_link_monitor(monitor_links[i]);
      }
    }
  }

  // Closes every socket (linger per options) and answers whatever is still posted.
  void shut_down() {
    std::deque<command> left;
    {
      std::lock_guard<std::mutex> lock(mu);
      stopped = true;
      left.swap(commands);
      inbox.clear();
      open_links.clear();
      listening = false;
      queued_frames = queued_bytes = 0;
    }
    for (auto& c : left) c.cancel();
    for (auto& [id, l] : links) close_dealer(l);
    links.clear();
    router_pending.clear();
    // No ZAP callback reaches this transport after this (the authenticator itself stops,
    // unbinding inproc://zeromq.zap.01, when the last transport of the context lets go of it).
    if (zap) zap->remove_domain(zap_domain);
    zap.reset();
    if (router && monitor) zmq_socket_monitor(router->handle(), nullptr, 0);
    monitor.reset();
    router.reset();
    handler.reset();  // what it captured is released here, on the thread that used it
  }

  void run() {
    block_async_signals();
    pthread_setname_np(pthread_self(), opts.name.substr(0, 15).c_str());
    try {
      loop();
    } catch (const std::exception& e) {
      // libzmq refused something that cannot fail in a healthy process (ETERM: someone
      // terminated the shared context). Reported by every later call instead of crashing.
      std::lock_guard<std::mutex> lock(mu);
      failure = std::string("poll thread failed: ") + e.what();
    }
    shut_down();
  }

  void stop() {
    stop_requested.store(true);
    const std::uint64_t one = 1;
    if (::write(wake_fd, &one, sizeof one) < 0) {
      // EAGAIN only: a wake-up is already pending.
    }
    if (on_poll_thread()) return;  // from the handler: the loop ends when it returns
    std::lock_guard<std::mutex> lock(join_mu);
    if (thread.joinable()) thread.join();
  }
};

std::shared_ptr<zmq::context_t> make_zmq_context(int io_threads) {
  auto ctx = std::make_shared<zmq::context_t>(io_threads);
  // Sockets that do not set ZMQ_LINGER (a test's raw socket) do not hold up termination either.
  ctx->set(zmq::ctxopt::blocky, false);
  return ctx;
}

zmq_transport::zmq_transport(std::shared_ptr<zmq::context_t> context, zmq_transport_options options)
    : impl_(std::make_unique<impl>(std::move(context), std::move(options))) {
  if (!impl_->ctx) throw std::invalid_argument("zmq_transport: null context");
  if (auto st = check_security(impl_->opts.security); !st.is_ok()) {
    throw std::invalid_argument(impl_->prefix() + st.message());
  }
  impl_->wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (impl_->wake_fd < 0) {
    throw std::system_error(errno, std::generic_category(), impl_->prefix() + "eventfd");
  }
  impl* self = impl_.get();
  impl_->thread = std::thread([self] { self->run(); });
  impl_->thread_id = impl_->thread.get_id();
}

zmq_transport::~zmq_transport() {
  impl_->stop();
  ::close(impl_->wake_fd);
}

void zmq_transport::on_frame(frame_handler handler) {
  impl* self = impl_.get();
  (void)impl_->execute(
      [self, h = std::move(handler)]() mutable {
        self->handler = std::make_shared<const frame_handler>(std::move(h));
        return true;
      },
      false);
}

result<std::string> zmq_transport::listen(const std::string& endpoint) {
  impl* self = impl_.get();
  return impl_->execute([self, endpoint] { return self->do_listen(endpoint); },
                        result<std::string>(impl_->stopped_status()));
}

result<std::uint32_t> zmq_transport::connect(const std::string& endpoint) {
  impl* self = impl_.get();
  return impl_->execute([self, endpoint] { return self->do_connect(endpoint); },
                        result<std::uint32_t>(impl_->stopped_status()));
}

void zmq_transport::close_link(std::uint32_t link) {
  {
    // Refuse sends on the link at once; the socket closes on the poll thread.
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->open_links.erase(link);
  }
  impl* self = impl_.get();
  (void)impl_->execute(
      [self, link] {
        self->do_close_link(link);
        return true;
      },
      false);
}

status zmq_transport::send(const actors::peer_address& to, wire::frame f) {
  return impl_->send(to, std::move(f));
}

actors::transport_stats zmq_transport::stats() const {
  actors::transport_stats s;
  s.frames_in = impl_->frames_in.load(std::memory_order_relaxed);
  s.frames_out = impl_->frames_out.load(std::memory_order_relaxed);
  s.bytes_in = impl_->bytes_in.load(std::memory_order_relaxed);
  s.bytes_out = impl_->bytes_out.load(std::memory_order_relaxed);
  s.frames_rejected = impl_->frames_rejected.load(std::memory_order_relaxed);
  s.send_failures = impl_->send_failures.load(std::memory_order_relaxed);
  s.auth_refused = impl_->auth_refused.load(std::memory_order_relaxed);
  s.handshakes_failed = impl_->handshakes_failed.load(std::memory_order_relaxed);
  s.connections_open = impl_->connections.open();
  s.connections_refused = impl_->connections.refused();
  s.max_connections = impl_->opts.max_connections;
  s.links_refused = impl_->links_refused.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(impl_->mu);
  s.queue_depth = impl_->queued_frames;
  s.queue_high_water = impl_->queue_high_water;
  return s;
}

zmq_transport_counters zmq_transport::counters() const {
  zmq_transport_counters c;
  c.peers_accepted = impl_->peers_accepted.load(std::memory_order_relaxed);
  c.peers_disconnected = impl_->peers_disconnected.load(std::memory_order_relaxed);
  c.unroutable = impl_->unroutable.load(std::memory_order_relaxed);
  c.handler_exceptions = impl_->handler_exceptions.load(std::memory_order_relaxed);
  c.auth_refused = impl_->auth_refused.load(std::memory_order_relaxed);
  c.handshakes_failed = impl_->handshakes_failed.load(std::memory_order_relaxed);
  c.connections_open = impl_->connections.open();
  c.connections_refused = impl_->connections.refused();
  c.links_refused = impl_->links_refused.load(std::memory_order_relaxed);
  return c;
}

void zmq_transport::stop() { impl_->stop(); }

const zmq_transport_options& zmq_transport::options() const { return impl_->opts; }

}  // namespace ss::transport
