// The ops HTTP server's one thread and its connections: a poll() loop over a self-pipe (stop's
// wake-up), the listening socket and every connection; accepting (each new connection read at
// once, then given a reading place, or the reserve, another connection making room at the limit:
// place_reader()); each connection's phases, reading its head line by line (parsed by
// http_message.cpp) and a POST's body, handing a POST to the workers (handler_pool.cpp) and taking
// their answers back, writing the answer, draining after it; the bound on those past their
// request; the deadlines; the counters; and start(), which binds and starts the thread.
// Everything in impl runs on that thread, except start(), port(), stats() and stop(), which
// callers run (stop() wakes the thread through the pipe and joins it). The behaviour it promises
// is listed in ss/http/ops_http_server.hpp.
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
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "handler_pool.hpp"
#include "http_message.hpp"
#include "socket_names.hpp"
#include "ss/core/log_limiter.hpp"

namespace ss::http {

namespace {

using detail::errno_text;
using detail::peer_name;
using detail::source_of;
using steady = std::chrono::steady_clock;

// How long a finished connection is drained (reading and discarding what the client still sends)
// after our response and FIN, so that closing does not reset the connection under the response.
constexpr std::chrono::milliseconds max_linger{1000};
// How long accepting pauses when the process is out of file descriptors.
constexpr std::chrono::milliseconds accept_backoff{100};
// A connection in a reading place for this long without a complete request head may be evicted
// for a new one at the limit; younger ones keep their place (their request may be on its way).
constexpr std::chrono::milliseconds min_age_to_evict{100};
// New connections accepted per pass of the loop, after the open ones have been served.
constexpr int accept_batch = 256;

std::int64_t nanos(steady::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

long long millis(steady::duration d) {
  return static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

struct connection {
  // handling: a POST with the workers; the loop neither reads it nor times it out meanwhile.
  enum class phase { reading, handling, writing, draining };
  // What it counts against: a reading place (waiting for its request), the workers' queue
  // (handling), or the bound on those past their request (answering or draining); none before it
  // is placed and once closed.
  enum class place { none, reader, handling, answering };

  std::uint64_t id = 0;  // names it to the workers
  int fd = -1;
  sockaddr_storage addr{};  // the peer, named only when needed (peer_name is not free)
  socklen_t addr_len = 0;
  phase state = phase::reading;
  place where = place::none;
  bool reserve = false;            // its reading place is in the reserve
  std::uint64_t source = 0;        // source_of(addr)
  steady::time_point accepted;     // readers: the oldest without a request makes room first
  steady::time_point answering_since;  // answering: the oldest is closed first past the bound
  steady::time_point deadline;
  // reading
  std::string in;
  std::size_t line_start = 0;  // first byte of the next line not parsed yet
  std::size_t scan_pos = 0;    // bytes of the request line already checked for bad characters
  bool have_request_line = false;
  http_request request;
  // a POST's body: body_length bytes from in[body_start] on
  bool reading_body = false;
  std::size_t body_start = 0;
  std::size_t body_length = 0;
  // writing
  std::string out;
  std::size_t out_off = 0;

  std::string peer() const { return peer_name(addr, addr_len); }

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
  struct counters {
    std::atomic<std::uint64_t> accepted{0};
    std::atomic<std::uint64_t> evicted{0};
    std::atomic<std::uint64_t> refused{0};
    std::atomic<std::uint64_t> requests{0};
    std::atomic<std::uint64_t> bad_requests{0};
    std::atomic<std::uint64_t> read_timeouts{0};
    std::atomic<std::uint64_t> accept_failures{0};
    std::atomic<std::uint64_t> bodies_too_large{0};
    std::atomic<std::uint64_t> shed{0};
    std::atomic<std::uint64_t> open{0};
  };

  ops_http_options options;
  std::size_t max_readers = 0;    // options.max_connections
  std::size_t reserve = 0;        // reading places beyond it, for bursts of new connections
  std::size_t max_answering = 0;  // connections past their request: max_readers + reserve
  int listen_fd = -1;
  int wake_read = -1;
  int wake_write = -1;
  std::uint16_t port = 0;
  std::atomic<bool> stopping{false};
  std::thread thread;
  std::mutex join_mutex;
  std::vector<std::unique_ptr<connection>> conns;
  std::size_t readers = 0;          // connections in a reading place (the reserve's included)
  std::size_t reserve_readers = 0;  // those of them in the reserve
  std::unordered_map<std::uint64_t, std::size_t> readers_from;  // readers by client address (none: no entry)
  std::size_t answering = 0;  // connections writing an answer or draining after it
  // POST: the workers, the connections waiting for them (never closed by the loop meanwhile), and
  // the answers taken back.
  std::unique_ptr<detail::handler_pool> pool;
  std::unordered_map<std::uint64_t, connection*> handling;
  std::vector<detail::handler_pool::answer> answers;
  std::uint64_t next_id = 0;
  counters count;
  steady::time_point accept_paused_until{};
  steady::time_point last_accept_warning{};
  log_limiter drop_log{60'000'000'000};  // connections dropped to make room: a line a minute at most

  ~impl() {
    if (pool) pool->stop();  // its workers wake the loop through wake_write
    if (listen_fd >= 0) ::close(listen_fd);
    if (wake_read >= 0) ::close(wake_read);
    if (wake_write >= 0) ::close(wake_write);
  }

  void run();
  void accept_all();
  void place_reader(connection& c, steady::time_point now);
  void drop_for_new(connection& victim, bool evicted, steady::time_point now);
  void to_answering(connection& c);
  void on_readable(connection& c);
  int advance(connection& c);
  int start_body(connection& c);
  void dispatch(connection& c);
  void hand_over(connection& c);
  void collect_answers();
  void respond(connection& c, const http_response& r, bool head_only);
  void on_writable(connection& c);
  void on_drain(connection& c);
  void on_deadline(connection& c);
  void leave_reading(connection& c);
  void close_conn(connection& c);
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
      if (c->state == connection::phase::handling) continue;  // the workers have it
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
    if (ready > 0) {
      if (pfds[0].revents != 0) {
        char buf[64];
        while (::read(wake_read, buf, sizeof buf) > 0) {
        }
      }
      const std::size_t first_conn = accepting ? 2 : 1;
      // The open connections first: a request that has arrived completes before new connections
      // are accepted, so none of them makes its connection give way.
      for (std::size_t i = first_conn; i < pfds.size(); ++i) {
        if (pfds[i].revents == 0) continue;
        connection& c = *polled[i - first_conn];
        if (c.fd < 0) continue;  // closed meanwhile to keep a bound
        switch (c.state) {
          case connection::phase::reading: on_readable(c); break;
          case connection::phase::writing: on_writable(c); break;
          case connection::phase::draining: on_drain(c); break;
          case connection::phase::handling: break;
        }
      }
      if (accepting && pfds[1].revents != 0) accept_all();
    }
    collect_answers();
    const auto end = steady::now();
    for (std::size_t i = 0; i < conns.size(); ++i) {  // on_deadline may close others, never add
      connection& c = *conns[i];
      if (c.fd >= 0 && end >= c.deadline) on_deadline(c);
    }
    conns.erase(std::remove_if(conns.begin(), conns.end(), [](const auto& c) { return c->fd < 0; }),
                conns.end());
    count.open.store(conns.size(), std::memory_order_relaxed);
  }
  conns.clear();  // closes every connection
  handling.clear();
  readers = reserve_readers = answering = 0;
  readers_from.clear();
  count.open.store(0, std::memory_order_relaxed);
  if (listen_fd >= 0) ::close(listen_fd);
  listen_fd = -1;
}

void ops_http_server::impl::accept_all() {
  for (int i = 0; i < accept_batch; ++i) {
    const auto now = steady::now();  // a handler answering the one before may have taken a while
    auto c = std::make_unique<connection>();
    c->addr_len = sizeof c->addr;
    const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&c->addr), &c->addr_len,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      if (err == EAGAIN || err == EWOULDBLOCK) return;
      if (err == EINTR || err == ECONNABORTED || err == EPROTO) continue;
      // EMFILE, ENFILE, ENOBUFS, ENOMEM...: the listener stays readable, so back off instead of
      // spinning, and say so at most every 10 s.
      count.accept_failures.fetch_add(1, std::memory_order_relaxed);
      accept_paused_until = now + accept_backoff;
      if (now - last_accept_warning > std::chrono::seconds(10)) {
        last_accept_warning = now;
        spdlog::warn("ops http: accept failed: {}", errno_text(err));
      }
      return;
    }
    count.accepted.fetch_add(1, std::memory_order_relaxed);
    c->fd = fd;
    c->source = source_of(c->addr);
    c->accepted = now;
    c->deadline = now + options.read_timeout;
    connection& conn = *c;
    conns.push_back(std::move(c));
    // Read at once: a probe's request has usually arrived with the connection, and is answered
    // without taking a place from anyone. Only a connection that must wait for more takes one.
    on_readable(conn);
    if (conn.fd >= 0 && conn.state == connection::phase::reading && conn.where == connection::place::none) {
      place_reader(conn, now);
    }
  }
}

// Gives a reading place to a new connection still waiting for its request head. When the
// max_connections places are taken, a connection may make room: one open min_age_to_evict or more
// without a complete head (a slow or idle client: slowloris, connections held open and never
// used), or, when the reserve is full, one in the reserve. Of these, the one whose address holds
// the most reading places goes, the oldest first among equals, but only if its address holds at
// least as many as the new one's; otherwise the new one takes the reserve if it has room, and
// makes way itself if not. So a flood from a few addresses pushes out its own connections, not a
// probe or a client from elsewhere; new connections are still read; and one in a place keeps it
// for its first min_age_to_evict, time for its request to arrive.
void ops_http_server::impl::place_reader(connection& c, steady::time_point now) {
  const auto held_by = [this](const connection& k) {
    const auto it = readers_from.find(k.source);
    return it == readers_from.end() ? std::size_t{0} : it->second;
  };
  if (readers - reserve_readers >= max_readers) {
    const bool reserve_full = reserve_readers >= reserve;
    connection* victim = nullptr;
    std::size_t victim_held = 0;
    for (auto& k : conns) {
      if (k->fd < 0 || k->where != connection::place::reader) continue;
      if (now - k->accepted < min_age_to_evict && !(reserve_full && k->reserve)) continue;
      const std::size_t held = held_by(*k);
      if (victim == nullptr || held > victim_held || (held == victim_held && k->accepted < victim->accepted)) {
        victim = k.get();
        victim_held = held;
      }
    }
    if (victim != nullptr && victim_held >= held_by(c)) {
      drop_for_new(*victim, now - victim->accepted >= min_age_to_evict, now);
    } else if (reserve_full) {
      drop_for_new(c, false, now);  // its address holds more places than any candidate's
      return;
    }
  }
  c.reserve = readers - reserve_readers >= max_readers;
  c.where = connection::place::reader;
  ++readers;
  if (c.reserve) ++reserve_readers;
  ++readers_from[c.source];
}

void ops_http_server::impl::drop_for_new(connection& victim, bool evicted, steady::time_point now) {
  (evicted ? count.evicted : count.refused).fetch_add(1, std::memory_order_relaxed);
  std::uint64_t held_back = 0;
  if (drop_log.admit(evicted ? "evicted" : "refused", nanos(now), &held_back)) {
    const std::string more =
        held_back > 0 ? " (" + std::to_string(held_back) + " more since the last report)" : std::string();
    if (evicted) {
      spdlog::warn("ops http: {} connections waiting for a request (the limit): dropped {}, which sent no complete "
                   "request in {} ms, to read a new one{}",
                   options.max_connections, victim.peer(), millis(now - victim.accepted), more);
    } else {
      spdlog::warn("ops http: {} connections waiting for a request and the reserve of {} full: dropped {}, open {} ms, "
                   "whose address holds the most of them, to read a new one{}",
                   options.max_connections, reserve, victim.peer(), millis(now - victim.accepted), more);
    }
  }
  respond(victim, plain(503, evicted ? "too many connections: dropped to serve newer ones\n"
                                     : "too many connections\n"),
          false);
}

// Moves a connection from its reading place (if it has one) to those past their request; past
// their bound, the oldest of them is closed: one that has written its whole answer and only
// drains if there is one (closing it loses nothing the client still needs), else the oldest
// writing an answer its client does not read.
void ops_http_server::impl::to_answering(connection& c) {
  if (c.where == connection::place::answering) return;
  if (c.where == connection::place::reader) leave_reading(c);
  if (c.where == connection::place::handling) handling.erase(c.id);
  c.where = connection::place::answering;
  c.answering_since = steady::now();
  ++answering;
  while (answering > max_answering) {
    connection* oldest_draining = nullptr;
    connection* oldest_writing = nullptr;
    for (auto& k : conns) {
      if (k.get() == &c || k->fd < 0 || k->where != connection::place::answering) continue;
      connection*& oldest = k->state == connection::phase::draining ? oldest_draining : oldest_writing;
      if (oldest == nullptr || k->answering_since < oldest->answering_since) oldest = k.get();
    }
    connection* victim = oldest_draining != nullptr ? oldest_draining : oldest_writing;
    if (victim == nullptr) break;  // cannot happen: c alone is never over the bound
    close_conn(*victim);
  }
}

void ops_http_server::impl::leave_reading(connection& c) {
  --readers;
  if (c.reserve) --reserve_readers;
  c.reserve = false;
  const auto it = readers_from.find(c.source);
  if (it != readers_from.end() && --it->second == 0) readers_from.erase(it);
}

void ops_http_server::impl::close_conn(connection& c) {
  if (c.fd < 0) return;
  ::close(c.fd);
  c.fd = -1;
  if (c.where == connection::place::reader) leave_reading(c);
  if (c.where == connection::place::answering) --answering;
  if (c.where == connection::place::handling) handling.erase(c.id);
  c.where = connection::place::none;
}

void ops_http_server::impl::on_readable(connection& c) {
  char buf[4096];
  while (c.state == connection::phase::reading) {
    // Never hold more than max_request_bytes + 1 (enough to see that a head is too long), or the
    // head and the body it announced.
    const std::size_t limit = c.reading_body ? c.body_start + c.body_length : options.max_request_bytes + 1;
    const std::size_t room = limit - std::min(c.in.size(), limit);
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
        (result == 413 ? count.bodies_too_large : count.bad_requests).fetch_add(1, std::memory_order_relaxed);
        const bool head = c.have_request_line && c.request.method == "HEAD";
        const std::string what =
            result == 414   ? "request line too long\n"
            : result == 431 ? "request header too large\n"
            : result == 505 ? "http version not supported\n"
            : result == 411 ? "length required: a POST needs Content-Length\n"
            : result == 501 ? "Transfer-Encoding is not supported: send the body with Content-Length\n"
            : result == 413 ? "request body too large: at most " + std::to_string(options.max_body_bytes) + " bytes\n"
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
  if (c.reading_body) return c.in.size() >= c.body_start + c.body_length ? -1 : 0;
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
    if (line.empty()) return c.request.method == "POST" && options.max_body_bytes > 0 ? start_body(c) : -1;
    if (const int st = parse_header_line(line, c.request); st != 0) return st;
  }
}

// The head of a POST is complete: what its body will be. Like advance(): 0 = need more, -1 = the
// request is complete, otherwise the HTTP status of the error to answer.
int ops_http_server::impl::start_body(connection& c) {
  std::size_t length = 0;
  if (const int st = detail::body_length(c.request, options.max_body_bytes, length); st != 0) return st;
  c.reading_body = true;
  c.body_start = c.line_start;
  c.body_length = length;
  if (c.in.size() >= c.body_start + length) return -1;
  const std::string* expect = c.request.header("expect");
  if (expect != nullptr && (*expect == "100-continue" || *expect == "100-Continue")) {
    static constexpr char go_on[] = "HTTP/1.1 100 Continue\r\n\r\n";
    (void)!::send(c.fd, go_on, sizeof go_on - 1, MSG_NOSIGNAL);  // short and first: it fits the socket
  }
  return 0;
}

void ops_http_server::impl::dispatch(connection& c) {
  count.requests.fetch_add(1, std::memory_order_relaxed);
  c.request.peer = c.peer();
  const bool head = c.request.method == "HEAD";
  const bool post = c.request.method == "POST" && options.max_body_bytes > 0;
  if (c.request.method != "GET" && !head && !post) {
    http_response r = plain(405, "method not allowed\n");
    r.headers.emplace_back("Allow", options.max_body_bytes > 0 ? "GET, HEAD, POST" : "GET, HEAD");
    respond(c, r, false);
    return;
  }
  if (post) {
    hand_over(c);
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

// A complete POST goes to the workers; its connection waits, unread and untimed, for the answer.
void ops_http_server::impl::hand_over(connection& c) {
  c.request.body = c.in.substr(c.body_start, c.body_length);
  c.in.clear();
  c.in.shrink_to_fit();
  if (c.where == connection::place::reader) leave_reading(c);
  c.where = connection::place::none;
  c.id = ++next_id;
  if (!pool->submit({c.id, std::move(c.request)})) {
    count.shed.fetch_add(1, std::memory_order_relaxed);
    respond(c, plain(503, "busy: too many requests waiting; try again\n"), false);
    return;
  }
  c.state = connection::phase::handling;
  c.where = connection::place::handling;
  c.deadline = steady::time_point::max();
  handling.emplace(c.id, &c);
}

void ops_http_server::impl::collect_answers() {
  if (!pool) return;
  pool->take_answers(answers);
  for (auto& a : answers) {
    const auto it = handling.find(a.connection);
    if (it == handling.end()) continue;  // cannot happen: the loop closes no connection being handled
    respond(*it->second, a.response, false);
  }
  answers.clear();
}

void ops_http_server::impl::respond(connection& c, const http_response& r, bool head_only) {
  c.out = render(r, head_only);
  c.out_off = 0;
  c.in.clear();
  c.in.shrink_to_fit();
  c.state = connection::phase::writing;
  c.deadline = steady::now() + options.read_timeout;
  to_answering(c);
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
    count.read_timeouts.fetch_add(1, std::memory_order_relaxed);
    respond(c, plain(408, "request timeout\n"), false);  // slow or idle client
  } else {
    close_conn(c);  // the client does not read its response, or lingers after it
  }
}

ops_http_server::ops_http_server(std::unique_ptr<impl> state) : impl_(std::move(state)) {}

ops_http_server::~ops_http_server() { stop(); }

std::uint16_t ops_http_server::port() const noexcept { return impl_->port; }

ops_http_stats ops_http_server::stats() const noexcept {
  const impl::counters& k = impl_->count;
  constexpr auto relaxed = std::memory_order_relaxed;
  ops_http_stats s;
  s.connections_accepted = k.accepted.load(relaxed);
  s.connections_evicted = k.evicted.load(relaxed);
  s.connections_refused = k.refused.load(relaxed);
  s.requests = k.requests.load(relaxed);
  s.bad_requests = k.bad_requests.load(relaxed);
  s.read_timeouts = k.read_timeouts.load(relaxed);
  s.accept_failures = k.accept_failures.load(relaxed);
  s.bodies_too_large = k.bodies_too_large.load(relaxed);
  s.requests_shed = k.shed.load(relaxed);
  s.connections_open = k.open.load(relaxed);
  s.max_connections = impl_->max_readers;
  s.reserve = impl_->reserve;
  return s;
}

void ops_http_server::stop() {
  impl& s = *impl_;
  s.stopping.store(true, std::memory_order_release);
  const char byte = 1;
  (void)!::write(s.wake_write, &byte, 1);  // a full pipe already wakes the thread
  if (std::this_thread::get_id() == s.thread.get_id()) return;  // from the handler: request only
  std::lock_guard<std::mutex> lock(s.join_mutex);
  if (s.thread.joinable()) s.thread.join();
  if (s.pool) s.pool->stop();  // after the loop: no request is handed over any more
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
  if (options.max_body_bytes > 0 && (!options.body_handler || options.workers < 1)) {
    return status(errc::invalid_argument, "ops http: a body handler and at least one worker are needed for POST");
  }

  auto listener = detail::listen_on(options.bind, options.port);
  if (!listener.is_ok()) return listener.error();
  auto state = std::make_unique<impl>();
  state->listen_fd = listener->fd;
  state->port = listener->port;

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_NONBLOCK | O_CLOEXEC) != 0) {
    return status(errc::io_error, "ops http: pipe: " + errno_text(errno));
  }
  state->wake_read = pipe_fds[0];
  state->wake_write = pipe_fds[1];
  state->max_readers = static_cast<std::size_t>(options.max_connections);
  state->reserve = std::max<std::size_t>(2, state->max_readers / 4);
  state->max_answering = state->max_readers + state->reserve;
  state->options = std::move(options);

  impl* raw = state.get();
  if (raw->options.max_body_bytes > 0) {
    const int wake = raw->wake_write;
    raw->pool = std::make_unique<detail::handler_pool>(raw->max_answering, [wake] {
      const char byte = 1;
      (void)!::write(wake, &byte, 1);  // a full pipe already wakes the loop
    });
    SS_RETURN_IF_ERROR(raw->pool->start(raw->options.workers, raw->options.body_handler));
  }
  try {
    raw->thread = std::thread([raw] { raw->run(); });
  } catch (const std::system_error& e) {
    return status(errc::resource_exhausted, std::string("ops http: cannot start thread: ") + e.what());
  }
  spdlog::debug("ops http: listening on {}:{}", raw->options.bind, raw->port);
  return std::unique_ptr<ops_http_server>(new ops_http_server(std::move(state)));
}

}  // namespace ss::http
