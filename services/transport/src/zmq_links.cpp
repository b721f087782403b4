// zmq_transport's sockets: the listening ROUTER with its security (the CURVE server key, the
// ZAP domain that checks client keys and the connection bound) and its connection monitor; the
// DEALER of every outbound link, with the monitor that sees a peer refuse our handshake and the
// redial that follows; refusals logged at most once a minute per peer and key. Everything here
// runs on the poll thread (listen and connect reach it through execute()), except the ZAP
// callbacks that register_zap_domain installs: admit_connection, on_refused and on_full run on
// the context's ZAP thread, which is why the shared monitor is drained under monitor_mu and
// refusals are logged under refusal_mu.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ss/core/io/hex.hpp"
#include "zmq_transport_impl.hpp"

namespace ss::transport {
namespace {

using detail::clock_type;
using detail::kReceiveBatch;
using detail::random64;

// After a peer refused our handshake: the first wait before dialling again, and the longest.
constexpr std::chrono::milliseconds kRedialFirst{500};
constexpr std::chrono::milliseconds kRedialMax{10000};

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

}  // namespace

// Logs a refusal unless the same one was logged less than kRefusalLogInterval ago.
void zmq_transport::impl::report_refusal(const std::string& what, const std::string& key) {
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

void zmq_transport::impl::apply_socket_options(zmq::socket_t& s) const {
  s.set(zmq::sockopt::linger, static_cast<int>(opts.linger.count()));
  s.set(zmq::sockopt::sndhwm, opts.send_high_water_mark);
  s.set(zmq::sockopt::rcvhwm, opts.receive_high_water_mark);
  s.set(zmq::sockopt::maxmsgsize, static_cast<std::int64_t>(opts.max_frame_bytes));
}

// ---------------------------------------------------------------- the listening ROUTER

// This transport's ZAP domain, registered with the context's ZAP handler (started here if the
// context has none yet): CURVE clients are checked against the authorized keys, and every
// client (plain ones too) against the connection bound.
status zmq_transport::impl::register_zap_domain(zmq::socket_t& r) {
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
bool zmq_transport::impl::admit_connection() {
  {
    std::lock_guard<std::mutex> lock(monitor_mu);
    drain_monitor_locked(SIZE_MAX);
  }
  return connections.admit();
}

// CURVE server: the cluster's server secret key; clients are checked through ZAP.
status zmq_transport::impl::secure_router(zmq::socket_t& r) {
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

status zmq_transport::impl::open_router() {
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

result<std::string> zmq_transport::impl::do_listen(const std::string& endpoint) {
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

// ---------------------------------------------------------------- the ROUTER's monitor

void zmq_transport::impl::receive_monitor_events() {
  std::lock_guard<std::mutex> lock(monitor_mu);
  drain_monitor_locked(kReceiveBatch);
}

void zmq_transport::impl::drain_monitor_locked(std::size_t limit) {
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

void zmq_transport::impl::report_handshake_failure(std::uint16_t kind, std::uint32_t value,
                                                   const std::string& endpoint) {
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

// ---------------------------------------------------------------- outbound links (DEALERs)

// A DEALER to `endpoint` with routing id `id`, and a monitor that reports refused handshakes.
void zmq_transport::impl::open_dealer(std::uint32_t id, const std::string& endpoint, link_state* existing) {
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

void zmq_transport::impl::close_dealer(link_state& l) {
  if (l.monitor) {
    zmq_socket_monitor(l.socket.handle(), nullptr, 0);
    l.monitor.reset();
  }
  l.socket.close();
}

result<std::uint32_t> zmq_transport::impl::do_connect(const std::string& endpoint) {
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
void zmq_transport::impl::receive_link_monitor(std::uint32_t id) {
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
std::optional<clock_type::duration> zmq_transport::impl::redial_due_links() {
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

void zmq_transport::impl::do_close_link(std::uint32_t id) {
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

}  // namespace ss::transport
