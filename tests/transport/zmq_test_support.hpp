// What the zmq_transport test units share: an inbox that records arrivals (Catch2 assertions run
// on the test thread only), frames with sequence numbers or byte patterns, free ports, options,
// listen and connect that must work, an echo server and a round trip.
#pragma once

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "ss/transport/zmq_transport.hpp"
#include "text_frames.hpp"

namespace ss::test {

using namespace std::chrono_literals;
using ss::errc;
using ss::actors::peer_address;
using ss::transport::make_zmq_context;
using ss::transport::zmq_transport;
using ss::transport::zmq_transport_options;
using ss::wire::frame;

// How long a frame may take to arrive: generous, and more under sanitizers (TSan instruments
// every byte of a 16 MiB frame's copies).
#if defined(__SANITIZE_THREAD__)
inline constexpr auto kDeadline = 120s;
#elif defined(__SANITIZE_ADDRESS__)
inline constexpr auto kDeadline = 30s;
#else
inline constexpr auto kDeadline = 10s;
#endif

struct arrival {
  peer_address from;
  frame f;
};

// Collects what a handler receives; the test thread waits on it with a deadline.
class inbox {
 public:
  ss::actors::transport::frame_handler handler() {
    return [this](const peer_address& from, frame f) { push(from, std::move(f)); };
  }
  void push(const peer_address& from, frame f) {
    std::lock_guard<std::mutex> lock(mu_);
    items_.push_back({from, std::move(f)});
    cv_.notify_all();
  }
  bool wait_for(std::size_t n, std::chrono::milliseconds deadline = kDeadline) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, deadline, [&] { return items_.size() >= n; });
  }
  std::vector<arrival> items() const {
    std::lock_guard<std::mutex> lock(mu_);
    return items_;
  }
  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return items_.size();
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<arrival> items_;
};

// Polls `done` until it holds or the deadline passes (for state no condition variable signals).
template <class Pred>
bool eventually(Pred done, std::chrono::milliseconds deadline = kDeadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

inline frame seq_frame(std::uint32_t stream, std::uint32_t seq) {
  std::uint32_t v[2] = {stream, seq};
  return ss::wire::make_frame(v, sizeof v);
}
inline std::pair<std::uint32_t, std::uint32_t> seq_of(const frame& f) {
  std::uint32_t v[2] = {0, 0};
  if (f->size() == sizeof v) std::memcpy(v, f->data(), sizeof v);
  return {v[0], v[1]};
}

inline frame pattern_frame(std::size_t size) {
  ss::wire::frame_bytes b(size);
  for (std::size_t i = 0; i < size; ++i) b.mutable_data()[i] = static_cast<std::uint8_t>(i * 131 + size);
  return std::make_shared<const ss::wire::frame_bytes>(std::move(b));
}
inline bool has_pattern(const frame& f, std::size_t size) {
  if (f->size() != size) return false;
  for (std::size_t i = 0; i < size; ++i) {
    if (f->data()[i] != static_cast<std::uint8_t>(i * 131 + size)) return false;
  }
  return true;
}

// A port nobody listens on right now. A plain socket, closed synchronously: a ZeroMQ listener
// closes in the background and could still accept (and lose) the first connection.
inline int free_tcp_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

inline zmq_transport_options options(const std::string& name) {
  zmq_transport_options o;
  o.name = name;
  o.reconnect_interval = 10ms;
  return o;
}

// listen() that must work: the endpoint bound (for tcp port 0, with the real port).
inline std::string listening(zmq_transport& server, const std::string& endpoint = "tcp://127.0.0.1:0") {
  auto ep = server.listen(endpoint);
  REQUIRE(ep.is_ok());
  return *ep;
}

// connect() that must work: the link opened.
inline std::uint32_t connected(zmq_transport& client, const std::string& endpoint) {
  auto link = client.connect(endpoint);
  REQUIRE(link.is_ok());
  return *link;
}

// A server that answers every frame with the same bytes on the route it came from.
inline void echo_on(zmq_transport& server, inbox& seen) {
  server.on_frame([&server, &seen](const peer_address& from, frame f) {
    seen.push(from, f);
    (void)server.send(from, std::move(f));
  });
}

// A client and a server that echoes every frame, on one context; each side's inbox records what
// it received. The inboxes come before the transports: their handlers use them until stop.
struct echo_pair {
  std::shared_ptr<zmq::context_t> ctx = make_zmq_context();
  inbox at_server, at_client;
  zmq_transport server{ctx, options("server")};
  zmq_transport client{ctx, options("client")};

  echo_pair() {
    echo_on(server, at_server);
    client.on_frame(at_client.handler());
  }
};

// A client and a server whose inbox records every frame it receives, on one context. The inbox
// comes before the transports: the server's handler uses it until stop.
struct client_and_server {
  std::shared_ptr<zmq::context_t> ctx = make_zmq_context();
  inbox seen;
  zmq_transport server{ctx, options("server")};
  zmq_transport client{ctx, options("client")};

  client_and_server() { server.on_frame(seen.handler()); }
};

inline void round_trip(const std::string& endpoint) {
  auto ctx = make_zmq_context();
  inbox at_server, at_client;  // before the transports: their handlers use it until stop
  zmq_transport server(ctx, options("server"));
  zmq_transport client(ctx, options("client"));
  server.on_frame([&server, &at_server](const peer_address& from, frame f) {
    at_server.push(from, f);
    (void)server.send(from, text_frame("re:" + text(f)));
  });
  client.on_frame(at_client.handler());

  auto ep = server.listen(endpoint);
  REQUIRE(ep.is_ok());
  auto link = client.connect(*ep);
  REQUIRE(link.is_ok());
  CHECK(*link > 0);

  REQUIRE(client.send({*link, {}}, text_frame("ping")).is_ok());
  REQUIRE(at_client.wait_for(1));
  auto req = at_server.items().at(0);
  CHECK(req.from.link == 0);
  CHECK_FALSE(req.from.route.empty());
  CHECK(text(req.f) == "ping");
  auto rep = at_client.items().at(0);
  CHECK(rep.from.link == *link);
  CHECK(rep.from.route.empty());
  CHECK(text(rep.f) == "re:ping");

  // A second request on the same link keeps the same route.
  REQUIRE(client.send({*link, {}}, text_frame("again")).is_ok());
  REQUIRE(at_client.wait_for(2));
  CHECK(at_server.items().at(1).from == req.from);
  CHECK(text(at_client.items().at(1).f) == "re:again");

  auto s = client.stats();
  CHECK(s.frames_out == 2);
  CHECK(s.frames_in == 2);
  CHECK(s.bytes_out == 9);
  CHECK(s.bytes_in == 15);
  CHECK(s.send_failures == 0);
  CHECK(s.queue_depth == 0);
  CHECK(server.stats().frames_rejected == 0);
}


}  // namespace ss::test
