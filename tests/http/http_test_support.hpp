// What the ops_http_server test units share: curl as a child process, raw sockets for malformed
// traffic, a response parser, open descriptors counted, a flood of idle or slow connections, and a
// server started with a fake service.
#pragma once

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ss/core/metrics/prometheus.hpp"
#include "ss/http/ops_http_server.hpp"
#include "ss/http/ops_routes.hpp"

namespace ss::test {


using namespace std::chrono_literals;
using ss::http::http_request;
using ss::http::http_response;
using ss::http::ops_http_options;
using ss::http::ops_http_server;
using steady = std::chrono::steady_clock;

struct command_result {
  int exit_code = -1;
  std::string output;
};

// Runs a shell command, returns its exit status and stdout (stderr too when the command says 2>&1).
inline command_result run_command(const std::string& command) {
  command_result r;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline void require_curl() {
  static const bool present = run_command("curl --version >/dev/null 2>&1").exit_code == 0;
  if (!present) FAIL("curl is not installed: these tests need a real HTTP client (apt-get install curl)");
}

// curl with no proxy from the environment and a hard time limit; `args` are shell words.
inline command_result curl(const std::string& args) {
  require_curl();
  return run_command("curl -sS --noproxy '*' --max-time 10 " + args + " 2>&1");
}

inline std::string url(const ops_http_server& s, const std::string& target) {
  return "'http://127.0.0.1:" + std::to_string(s.port()) + target + "'";
}

struct parsed_response {
  int status = 0;
  std::string head;  // status line and headers, CRLF separated
  std::string body;
  bool complete = false;  // a blank line ended the head
};

inline parsed_response parse_response(const std::string& text) {
  parsed_response p;
  const std::size_t end = text.find("\r\n\r\n");
  p.complete = end != std::string::npos;
  p.head = text.substr(0, end);
  if (p.complete) p.body = text.substr(end + 4);
  if (text.rfind("HTTP/1.1 ", 0) == 0 && text.size() >= 12) p.status = std::stoi(text.substr(9, 3));
  return p;
}

inline bool has_header(const parsed_response& p, const std::string& line) {
  return ("\r\n" + p.head + "\r\n").find("\r\n" + line + "\r\n") != std::string::npos;
}

// `target` of `server` through curl with `options` (-i: the head too): REQUIREs that curl got an
// answer (any status), returns it parsed.
inline parsed_response curl_answer(const ops_http_server& server, const std::string& target,
                                   const std::string& options = "-i") {
  const command_result r = curl(options + " " + url(server, target));
  INFO("curl " << options << " " << target << ": " << r.output);
  REQUIRE(r.exit_code == 0);
  return parse_response(r.output);
}

// A GET request as the server hands it to a route handler.
inline http_request get_request(const std::string& path, const std::string& query = "") {
  http_request r;
  r.method = "GET";
  r.path = path;
  r.query = query;
  r.version = "HTTP/1.1";
  return r;
}

// Another client address than the flood's (all of 127.0.0.0/8 is loopback on Linux): the server
// counts connections by address, as it would a kubelet's probes apart from a flood elsewhere.
inline constexpr const char* other_address = "127.0.0.2";

// No Catch assertions here: it runs on client threads too, and Catch is not thread-safe.
// `from`: the local address to connect from (nullptr: 127.0.0.1).
inline int try_connect(std::uint16_t port, const char* from = nullptr) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  if (from != nullptr) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    if (::inet_pton(AF_INET, from, &local.sin_addr) != 1 ||
        ::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
      ::close(fd);
      return -1;
    }
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

inline int connect_to(std::uint16_t port, const char* from = nullptr) {
  const int fd = try_connect(port, from);
  REQUIRE(fd >= 0);
  return fd;
}

inline void set_recv_timeout(int fd, std::chrono::milliseconds t) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(t.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((t.count() % 1000) * 1000);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

struct raw_result {
  std::string data;
  bool eof = false;  // the server closed (FIN or reset) before the timeout
  std::chrono::milliseconds elapsed{0};
};

// Reads until the server closes the connection or `timeout` passes.
inline raw_result read_until_close(int fd, std::chrono::milliseconds timeout) {
  raw_result r;
  const auto start = steady::now();
  char buf[4096];
  while (steady::now() - start < timeout) {
    set_recv_timeout(fd, 50ms);
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      r.data.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      r.eof = true;
      break;
    }
  }
  r.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - start);
  return r;
}

// Sends `bytes` on a fresh connection (no answer when it cannot connect; send errors ignored: the server may answer and close
// early), then reads the answer until the server closes.
inline raw_result raw_exchange(std::uint16_t port, const std::string& bytes,
                               std::chrono::milliseconds timeout = 5000ms, const char* from = nullptr) {
  const int fd = try_connect(port, from);
  if (fd < 0) return {};
  std::size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0) break;
    off += static_cast<std::size_t>(n);
  }
  raw_result r = read_until_close(fd, timeout);
  ::close(fd);
  return r;
}

// Open file descriptors of this process.
inline int open_fds() {
  int n = 0;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  while (::readdir(dir) != nullptr) ++n;
  ::closedir(dir);
  return n;
}

// Waits until `done` holds (true) or `timeout` passes (false), looking every millisecond.
inline bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout = 5000ms) {
  const auto until = steady::now() + timeout;
  while (!done()) {
    if (steady::now() >= until) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// Clients that keep `n` connections open to a server and open a new one as soon as the server
// drops one (503, 408 or a close), as a connection pool or a flooding tool does: idle ones never
// send a byte; slow ones send a request head one byte a second that never ends. One thread
// (epoll) runs them all; no Catch assertions there. The destructor stops it and closes them.
class connection_flood {
 public:
  enum class kind { idle, slow };

  connection_flood(std::uint16_t port, int n, kind k)
      : port_(port), kind_(k), fds_(static_cast<std::size_t>(n), -1), sent_(fds_.size(), 0) {
    ep_ = ::epoll_create1(EPOLL_CLOEXEC);
    for (std::size_t i = 0; i < fds_.size(); ++i) open(i);
    thread_ = std::thread([this] { run(); });
  }
  ~connection_flood() {
    stop_ = true;
    thread_.join();
    for (int fd : fds_)
      if (fd >= 0) ::close(fd);
    ::close(ep_);
  }
  connection_flood(const connection_flood&) = delete;
  connection_flood& operator=(const connection_flood&) = delete;

  long dropped() const { return dropped_.load(); }  // connections the server closed

 private:
  void open(std::size_t i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    fds_[i] = fd;
    if (fd < 0) return;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port_);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    (void)::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);  // EINPROGRESS or done
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.u64 = i;
    ::epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev);
    if (kind_ == kind::slow) sent_[i] = ::send(fd, "G", 1, MSG_NOSIGNAL) == 1 ? 1 : 0;  // then a byte a second
  }

  void run() {
    auto next_byte = steady::now() + 1s;
    epoll_event events[256];
    while (!stop_) {
      const int n = ::epoll_wait(ep_, events, 256, 20);
      for (int j = 0; j < n; ++j) {
        const auto i = static_cast<std::size_t>(events[j].data.u64);
        char buf[4096];
        while (::recv(fds_[i], buf, sizeof buf, 0) > 0) {
        }
        if ((events[j].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) == 0) continue;
        ::close(fds_[i]);  // dropped by the server: come back at once
        ++dropped_;
        open(i);
      }
      if (kind_ == kind::slow && steady::now() >= next_byte) {
        next_byte += 1s;
        for (std::size_t i = 0; i < fds_.size(); ++i) {
          if (fds_[i] >= 0 && sent_[i] < head_.size() && ::send(fds_[i], &head_[sent_[i]], 1, MSG_NOSIGNAL) == 1) {
            ++sent_[i];
          }
        }
      }
    }
  }

  std::uint16_t port_;
  kind kind_;
  std::vector<int> fds_;
  std::vector<std::size_t> sent_;  // bytes of head_ each slow connection has sent
  const std::string head_ = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + std::string(1000, 's');
  int ep_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<long> dropped_{0};
  std::thread thread_;
};

inline std::unique_ptr<ops_http_server> start_server(ops_http_options o) {
  if (o.bind == "0.0.0.0") o.bind = "127.0.0.1";
  auto s = ops_http_server::start(std::move(o));
  REQUIRE(s.is_ok());
  REQUIRE(s->get() != nullptr);
  REQUIRE((*s)->port() != 0);
  return std::move(s.value());
}

// A service stand-in: probes the tests can flip.
struct fake_service {
  std::atomic<bool> live{true};
  std::atomic<bool> ready{true};
  std::string not_ready_reason = "waiting for 2 of 3 shards";
  std::atomic<int> requests{0};

  std::string metrics() const {
    ss::metrics::prometheus_text p;
    p.counter("shadowsync_examples_total", "Examples trained.", 1000, {{"role", "trainer"}});
    p.gauge("shadowsync_windowed_ne", "NE over the last 100000 examples.", 0.8723,
            {{"role", "trainer"}});
    return p.str();
  }

  ss::http::ops_probe probe() {
    ss::http::ops_probe p;
    p.live = [this] { return live.load(); };
    p.ready = [this] { return std::make_pair(ready.load(), not_ready_reason); };
    p.metrics = [this] { return metrics(); };
    return p;
  }

  ops_http_options options() {
    ops_http_options o;
    o.bind = "127.0.0.1";
    o.handler = [this, p = probe()](const http_request& r) {
      ++requests;
      return ss::http::ops_routes(p, r);
    };
    return o;
  }
};


}  // namespace ss::test
