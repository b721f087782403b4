// The ops HTTP server's one thread and its connections: a poll() loop over a self-pipe (stop's
// wake-up), the listening socket and every connection; accepting within max_connections
// (dropping the slowest reader to make room); each connection's phases, reading its head line
// by line (parsed by http_message.cpp), writing the answer, draining after it; the deadlines; and
// start(), which binds and starts the thread. Everything in impl runs on that thread, except
// start(), port() and stop(), which callers run (stop() wakes the thread through the pipe and
// joins it). The behaviour it promises is listed in ss/http/ops_http_server.hpp.
#include "ss/http/ops_http_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>

#include <spdlog/spdlog.h>

#include "http_message.hpp"
#include "ss/core/log_limiter.hpp"

namespace ss::http {

namespace {

using steady = std::chrono::steady_clock;

// How long a finished connection is drained (reading and discarding what the client still sends)
// after our response and FIN, so that closing does not reset the connection under the response.
constexpr std::chrono::milliseconds max_linger{1000};
// How long accepting pauses when the process is out of file descriptors.
constexpr std::chrono::milliseconds accept_backoff{100};

std::string errno_text(int err) { return std::system_category().message(err); }

std::string peer_name(const sockaddr_storage& addr, socklen_t len) {
  char host[NI_MAXHOST];
  char serv[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&addr), len, host, sizeof host, serv,
                  sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return "?";
  }
  if (addr.ss_family == AF_INET6) return std::string("[") + host + "]:" + serv;
  return std::string(host) + ":" + serv;
}

struct connection {
  enum class phase { reading, writing, draining };

  int fd = -1;
  std::string peer;
  phase state = phase::reading;
  steady::time_point deadline;
  // reading
  std::string in;
  std::size_t line_start = 0;  // first byte of the next line not parsed yet
  std::size_t scan_pos = 0;    // bytes of the request line already checked for bad characters
  bool have_request_line = false;
  bool overflow = false;  // accepted over max_connections: only gets a 503
  http_request request;
  // writing
  std::string out;
  std::size_t out_off = 0;

  ~connection() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

using detail::parse_header_line;
using detail::parse_request_line;
using detail::plain;
using detail::render;

struct ops_http_server::impl {
  ops_http_options options;
  int listen_fd = -1;
  int wake_read = -1;
  int wake_write = -1;
  std::uint16_t port = 0;
  std::atomic<bool> stopping{false};
  std::thread thread;
  std::mutex join_mutex;
  std::vector<std::unique_ptr<connection>> conns;
  steady::time_point accept_paused_until{};
  steady::time_point last_accept_warning{};
  log_limiter drop_log{60'000'000'000};  // slow clients dropped: a line a minute at most

  ~impl() {
    if (listen_fd >= 0) ::close(listen_fd);
    if (wake_read >= 0) ::close(wake_read);
    if (wake_write >= 0) ::close(wake_write);
  }

  void run();
  void accept_all(steady::time_point now);
  bool drop_slowest_reader(steady::time_point now);
  void on_readable(connection& c);
  int advance(connection& c);
  void dispatch(connection& c);
  void respond(connection& c, const http_response& r, bool head_only);
  void on_writable(connection& c);
  void on_drain(connection& c);
  void on_deadline(connection& c);
  static void close_conn(connection& c) {
    if (c.fd >= 0) ::close(c.fd);
    c.fd = -1;
  }
};

void ops_http_server::impl::run() {
  std::vector<pollfd> pfds;
  std::vector<connection*> polled;
  while (!stopping.load(std::memory_order_acquire)) {
    const auto now = steady::now();
    pfds.clear();
    polled.clear();
    pfds.push_back({wake_read, POLLIN, 0});
    const bool accepting = now >= accept_paused_until;
    if (accepting) pfds.push_back({listen_fd, POLLIN, 0});
    steady::time_point next = steady::time_point::max();
    if (!accepting) next = accept_paused_until;
    for (auto& c : conns) {
      const short events = c->state == connection::phase::writing ? POLLOUT : POLLIN;
      pfds.push_back({c->fd, events, 0});
      polled.push_back(c.get());
      next = std::min(next, c->deadline);
    }
    int timeout_ms = -1;
    if (next != steady::time_point::max()) {
      const auto wait = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
      timeout_ms = static_cast<int>(std::clamp<long long>(wait, 0, 60'000));
    }
    const int ready = ::poll(pfds.data(), pfds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) {
      spdlog::error("ops http: poll failed: {}", errno_text(errno));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    if (stopping.load(std::memory_order_acquire)) break;
    const auto after = steady::now();
    std::size_t first_conn = 1;
    if (ready > 0) {
      if (pfds[0].revents != 0) {
        char buf[64];
        while (::read(wake_read, buf, sizeof buf) > 0) {
        }
      }
      if (accepting) {
        first_conn = 2;
        if (pfds[1].revents != 0) accept_all(after);
      }
      for (std::size_t i = first_conn; i < pfds.size(); ++i) {
        if (pfds[i].revents == 0) continue;
        connection& c = *polled[i - first_conn];
        switch (c.state) {
          case connection::phase::reading: on_readable(c); break;
          case connection::phase::writing: on_writable(c); break;
          case connection::phase::draining: on_drain(c); break;
        }
      }
    }
    const auto end = steady::now();
    for (auto& c : conns) {
      if (c->fd >= 0 && end >= c->deadline) on_deadline(*c);
    }
    conns.erase(std::remove_if(conns.begin(), conns.end(), [](const auto& c) { return c->fd < 0; }),
                conns.end());
  }
  conns.clear();  // closes every connection
  if (listen_fd >= 0) ::close(listen_fd);
  listen_fd = -1;
}

void ops_http_server::impl::accept_all(steady::time_point now) {
  for (int i = 0; i < 256; ++i) {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      if (err == EAGAIN || err == EWOULDBLOCK) return;
      if (err == EINTR || err == ECONNABORTED || err == EPROTO) continue;
      // EMFILE, ENFILE, ENOBUFS, ENOMEM...: the listener stays readable, so back off instead of
      // spinning, and say so at most every 10 s.
      accept_paused_until = now + accept_backoff;
      if (now - last_accept_warning > std::chrono::seconds(10)) {
        last_accept_warning = now;
        spdlog::warn("ops http: accept failed: {}", errno_text(err));
      }
      return;
    }
    const auto limit = static_cast<std::size_t>(options.max_connections);
    // A connection counts while it reads its request or writes its answer; lingering after the
    // answer (at most max_linger) does not.
    std::size_t active = static_cast<std::size_t>(std::count_if(conns.begin(), conns.end(), [](const auto& c) {
      return !c->overflow && c->state != connection::phase::draining;
    }));
    if (active >= limit && conns.size() >= 2 * limit) {
      ::close(fd);  // far over the limit: not even a 503
      continue;
    }
    auto c = std::make_unique<connection>();
    c->fd = fd;
    c->peer = peer_name(addr, len);
    if (active >= limit && drop_slowest_reader(now)) --active;
    if (active >= limit) {
      // Over the limit: answer 503 at once, then linger briefly like any other connection so the
      // answer is not lost to a reset. These do not count against max_connections.
      c->overflow = true;
      respond(*c, plain(503, "too many connections\n"), false);
      if (c->fd >= 0) conns.push_back(std::move(c));
      continue;
    }
    c->deadline = now + options.read_timeout;
    c->in.reserve(std::min<std::size_t>(options.max_request_bytes + 1, 4096));
    conns.push_back(std::move(c));
  }
}

// At the limit, the connection that has waited longest for its request head (a slow or idle
// client, e.g. slowloris) makes way for the new one, so a fresh request such as a liveness probe
// is still served however many slow clients there are. A connection younger than
// min_age_to_drop keeps its place: a flood of new connections cannot push out a probe whose
// request is on its way.
bool ops_http_server::impl::drop_slowest_reader(steady::time_point now) {
  constexpr std::chrono::milliseconds min_age_to_drop{100};
  connection* slowest = nullptr;
  for (auto& k : conns) {
    if (k->overflow || k->fd < 0 || k->state != connection::phase::reading) continue;
    if (slowest == nullptr || k->deadline < slowest->deadline) slowest = k.get();  // deadline = accept + timeout
  }
  if (slowest == nullptr) return false;
  const auto waited = now - (slowest->deadline - options.read_timeout);
  if (waited < min_age_to_drop) return false;
  std::uint64_t held_back = 0;
  if (drop_log.admit("slow", std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count(),
                     &held_back)) {
    spdlog::warn("ops http: {} connections open (the limit): dropped {}, which sent no complete request in {} ms, "
                 "to serve a new one{}",
                 options.max_connections, slowest->peer,
                 std::chrono::duration_cast<std::chrono::milliseconds>(waited).count(),
                 held_back > 0 ? " (" + std::to_string(held_back) + " more since the last report)" : std::string());
  }
  slowest->overflow = true;  // lingers with its answer, outside the limit
  respond(*slowest, plain(503, "too many connections: dropped to serve newer ones\n"), false);
  return true;
}

void ops_http_server::impl::on_readable(connection& c) {
  char buf[4096];
  while (c.state == connection::phase::reading) {
    // Never hold more than max_request_bytes + 1: enough to see that a head is too long.
    const std::size_t room = options.max_request_bytes + 1 - std::min(c.in.size(), options.max_request_bytes + 1);
    if (room == 0) {  // cannot happen: advance() answers before the buffer is full
      respond(c, plain(431, "request header too large\n"), false);
      return;
    }
    const ssize_t n = ::recv(c.fd, buf, std::min(sizeof buf, room), 0);
    if (n > 0) {
      c.in.append(buf, static_cast<std::size_t>(n));
      const int result = advance(c);
      if (result < 0) {
        dispatch(c);
        return;
      }
      if (result > 0) {
        const bool head = c.have_request_line && c.request.method == "HEAD";
        const char* what = result == 414   ? "request line too long\n"
                           : result == 431 ? "request header too large\n"
                           : result == 505 ? "http version not supported\n"
                                           : "bad request\n";
        respond(c, plain(result, what), head);
        return;
      }
      continue;
    }
    if (n == 0) {  // the client went away before a whole request
      close_conn(c);
      return;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) close_conn(c);
    return;
  }
}

// Parses the complete lines received so far: 0 = need more, -1 = the head is complete, otherwise
// the HTTP status of the error to answer.
int ops_http_server::impl::advance(connection& c) {
  const std::size_t max = options.max_request_bytes;
  while (true) {
    const std::size_t nl = c.in.find('\n', c.line_start);
    if (nl == std::string::npos) {
      if (!c.have_request_line) {
        // Refuse bytes that cannot be part of a request line (TLS hellos, binary junk) at once
        // instead of waiting for a newline that may never come.
        c.scan_pos = std::max(c.scan_pos, c.line_start);
        for (; c.scan_pos < c.in.size(); ++c.scan_pos) {
          const auto ch = static_cast<unsigned char>(c.in[c.scan_pos]);
          if ((ch < 0x20 && ch != '\r') || ch >= 0x7f) return 400;
        }
        if (c.in.size() > max) return 414;
      } else if (c.in.size() > max) {
        return 431;
      }
      return 0;
    }
    std::string_view line(c.in.data() + c.line_start, nl - c.line_start);
    c.line_start = nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (c.line_start > max) return c.have_request_line ? 431 : 414;
    if (!c.have_request_line) {
      if (line.empty()) continue;  // tolerated empty lines before the request line
      if (const int st = parse_request_line(line, c.request); st != 0) return st;
      c.have_request_line = true;
      continue;
    }
    if (line.empty()) return -1;
    if (const int st = parse_header_line(line, c.request); st != 0) return st;
  }
}

void ops_http_server::impl::dispatch(connection& c) {
  c.request.peer = c.peer;
  const bool head = c.request.method == "HEAD";
  if (c.request.method != "GET" && !head) {
    http_response r = plain(405, "method not allowed\n");
    r.headers.emplace_back("Allow", "GET, HEAD");
    respond(c, r, false);
    return;
  }
  http_response r;
  try {
    r = options.handler(c.request);
    if (r.status < 200 || r.status > 599) {
      spdlog::warn("ops http: handler returned status {} for {} {}", r.status, c.request.method,
                   c.request.path);
      r = plain(500, "internal error\n");
    }
  } catch (const std::exception& e) {
    spdlog::warn("ops http: handler failed on {} {}: {}", c.request.method, c.request.path,
                 e.what());
    r = plain(500, "internal error\n");
  } catch (...) {
    spdlog::warn("ops http: handler failed on {} {}: unknown exception", c.request.method,
                 c.request.path);
    r = plain(500, "internal error\n");
  }
  respond(c, r, head);
}

void ops_http_server::impl::respond(connection& c, const http_response& r, bool head_only) {
  c.out = render(r, head_only);
  c.out_off = 0;
  c.in.clear();
  c.in.shrink_to_fit();
  c.state = connection::phase::writing;
  c.deadline = steady::now() + options.read_timeout;
  on_writable(c);  // usually the whole response fits the socket buffer right away
}

void ops_http_server::impl::on_writable(connection& c) {
  while (c.out_off < c.out.size()) {
    const ssize_t n = ::send(c.fd, c.out.data() + c.out_off, c.out.size() - c.out_off, MSG_NOSIGNAL);
    if (n > 0) {
      c.out_off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    close_conn(c);
    return;
  }
  // Done: send our FIN, then read and discard until the client's FIN (or a short linger), so the
  // response is not lost to a reset caused by unread request bytes.
  ::shutdown(c.fd, SHUT_WR);
  c.out.clear();
  c.out.shrink_to_fit();
  c.state = connection::phase::draining;
  c.deadline = steady::now() + std::min<std::chrono::milliseconds>(options.read_timeout, max_linger);
}

void ops_http_server::impl::on_drain(connection& c) {
  char buf[4096];
  for (int i = 0; i < 64; ++i) {
    const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
    if (n > 0) continue;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    close_conn(c);  // EOF or error
    return;
  }
}

void ops_http_server::impl::on_deadline(connection& c) {
  if (c.state == connection::phase::reading) {
    respond(c, plain(408, "request timeout\n"), false);  // slow or idle client
  } else {
    close_conn(c);  // the client does not read its response, or lingers after it
  }
}

ops_http_server::ops_http_server(std::unique_ptr<impl> state) : impl_(std::move(state)) {}

ops_http_server::~ops_http_server() { stop(); }

std::uint16_t ops_http_server::port() const noexcept { return impl_->port; }

void ops_http_server::stop() {
  impl& s = *impl_;
  s.stopping.store(true, std::memory_order_release);
  const char byte = 1;
  (void)!::write(s.wake_write, &byte, 1);  // a full pipe already wakes the thread
  if (std::this_thread::get_id() == s.thread.get_id()) return;  // from the handler: request only
  std::lock_guard<std::mutex> lock(s.join_mutex);
  if (s.thread.joinable()) s.thread.join();
}

result<std::unique_ptr<ops_http_server>> ops_http_server::start(ops_http_options options) {
  if (!options.handler) return status(errc::invalid_argument, "ops http: no handler");
  if (options.max_request_bytes < 64) {
    return status(errc::invalid_argument, "ops http: max_request_bytes must be at least 64");
  }
  if (options.read_timeout.count() <= 0) {
    return status(errc::invalid_argument, "ops http: read_timeout must be positive");
  }
  if (options.max_connections < 1) {
    return status(errc::invalid_argument, "ops http: max_connections must be at least 1");
  }

  const std::string where = options.bind + ":" + std::to_string(options.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(options.port);
  if (const int rc = ::getaddrinfo(options.bind.empty() ? nullptr : options.bind.c_str(),
                                   service.c_str(), &hints, &found);
      rc != 0) {
    return status(errc::invalid_argument,
                  "ops http: cannot resolve bind address '" + options.bind + "': " + gai_strerror(rc));
  }
  auto state = std::make_unique<impl>();
  std::string last_error = "no address";
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                            ai->ai_protocol);
    if (fd < 0) {
      last_error = errno_text(errno);
      continue;
    }
    const int one = 1;
    if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        ::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
      last_error = errno_text(errno);
      ::close(fd);
      continue;
    }
    state->listen_fd = fd;
    break;
  }
  ::freeaddrinfo(found);
  if (state->listen_fd < 0) {
    return status(errc::io_error, "ops http: cannot listen on " + where + ": " + last_error);
  }

  sockaddr_storage bound{};
  socklen_t bound_len = sizeof bound;
  if (::getsockname(state->listen_fd, reinterpret_cast<sockaddr*>(&bound), &bound_len) != 0) {
    return status(errc::io_error, "ops http: getsockname: " + errno_text(errno));
  }
  state->port = bound.ss_family == AF_INET6
                    ? ntohs(reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port)
                    : ntohs(reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_NONBLOCK | O_CLOEXEC) != 0) {
    return status(errc::io_error, "ops http: pipe: " + errno_text(errno));
  }
  state->wake_read = pipe_fds[0];
  state->wake_write = pipe_fds[1];
  state->options = std::move(options);

  impl* raw = state.get();
  try {
    raw->thread = std::thread([raw] { raw->run(); });
  } catch (const std::system_error& e) {
    return status(errc::resource_exhausted, std::string("ops http: cannot start thread: ") + e.what());
  }
  spdlog::debug("ops http: listening on {}:{}", raw->options.bind, raw->port);
  return std::unique_ptr<ops_http_server>(new ops_http_server(std::move(state)));
}

}  // namespace ss::http
