// ops_http_server with POST: bodies read whole and handed to worker threads (never the loop's),
// every malformed or oversized body refused with its status, a full queue shed with 503, many
// clients at once, and stop() while a handler runs.
#include "http_test_support.hpp"

#include <condition_variable>
#include <mutex>
#include <set>

using namespace ss::test;

namespace {

// A server whose POST handler answers "<worker thread id> <body size> <body>" and whose GET
// handler answers the loop thread's id.
struct echo_server {
  std::atomic<int> made{0};  // handlers made (one per worker)
  std::mutex gate_mu;
  std::condition_variable gate_cv;
  bool gate_open = true;  // false: POST handlers wait until it opens
  std::atomic<int> waiting{0};

  ops_http_options options(int workers = 2, std::size_t max_body = 1000) {
    ops_http_options o;
    o.bind = "127.0.0.1";
    o.handler = [](const http_request&) {
      http_response r;
      r.body = thread_name();
      return r;
    };
    o.max_body_bytes = max_body;
    o.workers = workers;
    o.body_handler = [this] {
      ++made;
      return [this](const http_request& req) {
        {
          std::unique_lock<std::mutex> lock(gate_mu);
          ++waiting;
          gate_cv.wait(lock, [this] { return gate_open; });
          --waiting;
        }
        if (req.path == "/throw") throw std::runtime_error("boom");
        http_response r;
        r.body = thread_name() + " " + std::to_string(req.body.size()) + " " + req.body;
        return r;
      };
    };
    return o;
  }
  void close_gate() {
    std::lock_guard<std::mutex> lock(gate_mu);
    gate_open = false;
  }
  void open_gate() {
    {
      std::lock_guard<std::mutex> lock(gate_mu);
      gate_open = true;
    }
    gate_cv.notify_all();
  }
  static std::string thread_name() {
    return std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  }
};

std::string post(const std::string& path, const std::string& body, const std::string& extra_headers = "") {
  return "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
         extra_headers + "\r\n" + body;
}

}  // namespace

TEST_CASE("ops http POST: the body reaches a worker's handler, GET stays on the loop", "[http][post]") {
  echo_server e;
  auto server = start_server(e.options(2));
  CHECK(wait_until([&] { return e.made.load() == 2; }));
  const auto loop = parse_response(raw_exchange(server->port(), "GET /x HTTP/1.1\r\nHost: x\r\n\r\n").data);
  REQUIRE(loop.status == 200);
  const auto r = parse_response(raw_exchange(server->port(), post("/p", "hello, world")).data);
  REQUIRE(r.status == 200);
  const std::string worker = r.body.substr(0, r.body.find(' '));
  CHECK(worker != loop.body);
  CHECK(r.body.substr(worker.size()) == " 12 hello, world");
  // curl sends a body of its own, with a Content-Type.
  const auto c = curl_answer(*server, "/p", "-i --data-binary 'a=b&c'");
  CHECK(c.status == 200);
  CHECK(c.body.find(" 5 a=b&c") != std::string::npos);
  // An empty body is a body.
  CHECK(parse_response(raw_exchange(server->port(), post("/p", "")).data).body.find(" 0 ") != std::string::npos);
  CHECK(server->stats().requests == 4);
}

TEST_CASE("ops http POST: a body that arrives in pieces is read whole; Expect: 100-continue is answered",
          "[http][post]") {
  echo_server e;
  auto server = start_server(e.options(1));
  const int fd = connect_to(server->port());
  const std::string body(600, 'b');
  const std::string head = "POST /p HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 600\r\n\r\n";
  REQUIRE(::send(fd, head.data(), head.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(head.size()));
  set_recv_timeout(fd, 2000ms);
  char buf[64];
  const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  REQUIRE(n > 0);
  CHECK(std::string(buf, static_cast<std::size_t>(n)) == "HTTP/1.1 100 Continue\r\n\r\n");
  REQUIRE(::send(fd, body.data(), 100, MSG_NOSIGNAL) == 100);
  std::this_thread::sleep_for(100ms);
  REQUIRE(::send(fd, body.data() + 100, 500, MSG_NOSIGNAL) == 500);
  const auto r = parse_response(read_until_close(fd, 5000ms).data);
  ::close(fd);
  CHECK(r.status == 200);
  CHECK(r.body.find(" 600 " + body) != std::string::npos);
}

TEST_CASE("ops http POST: bad and oversized bodies are refused with their status", "[http][post]") {
  echo_server e;
  auto server = start_server(e.options(1, 100));
  struct refusal {
    std::string request;
    int status;
    const char* says;
  };
  const std::vector<refusal> cases = {
      {"POST /p HTTP/1.1\r\nHost: x\r\n\r\nabc", 411, "length required"},
      {"POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", 501,
       "Transfer-Encoding is not supported"},
      {"POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n", 400, "bad request"},
      {"POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400, "bad request"},
      {"POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n", 400, "bad request"},
      // Refused at once, from its head: the body is never sent.
      {"POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n\r\n", 413, "request body too large: at most 100 bytes"},
      {"PUT /p HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx", 405, "method not allowed"},
  };
  for (const auto& c : cases) {
    INFO(c.request);
    const auto r = raw_exchange(server->port(), c.request, 3000ms);
    const auto p = parse_response(r.data);
    CHECK(p.status == c.status);
    CHECK(p.body.find(c.says) != std::string::npos);
    CHECK(r.elapsed < 2000ms);
    if (c.status == 405) CHECK(has_header(p, "Allow: GET, HEAD, POST"));
  }
  const auto s = server->stats();
  CHECK(s.bodies_too_large == 1);
  CHECK(s.bad_requests == 5);
  // The one worker makes its handler when its thread first runs (which a loaded machine may delay);
  // none of the refused requests made another.
  CHECK(wait_until([&] { return e.made.load() >= 1; }));
  CHECK(e.made.load() == 1);
  // A body that does not arrive within the read timeout: 408.
  auto o = e.options(1, 100);
  o.read_timeout = 300ms;
  auto slow = start_server(std::move(o));
  const auto t = parse_response(
      raw_exchange(slow->port(), "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc", 3000ms).data);
  CHECK(t.status == 408);
  // Without max_body_bytes, POST is not allowed at all.
  fake_service f;
  auto plain = start_server(f.options());
  const auto p = parse_response(raw_exchange(plain->port(), post("/healthz", "x")).data);
  CHECK(p.status == 405);
  CHECK(has_header(p, "Allow: GET, HEAD"));
}

TEST_CASE("ops http POST: a handler that throws answers 500 and the worker goes on", "[http][post]") {
  echo_server e;
  auto server = start_server(e.options(1));
  CHECK(parse_response(raw_exchange(server->port(), post("/throw", "x")).data).status == 500);
  CHECK(parse_response(raw_exchange(server->port(), post("/p", "y")).data).status == 200);
}

TEST_CASE("ops http POST: with the queue full a request is shed with 503 at once, and the others are answered",
          "[http][post]") {
  echo_server e;
  auto o = e.options(1);
  o.max_connections = 1;  // the queue holds max_connections + reserve (2) = 3 requests
  auto server = start_server(std::move(o));
  e.close_gate();
  std::vector<int> held;
  for (int i = 0; i < 3; ++i) {
    const int fd = connect_to(server->port());
    const std::string req = post("/p", "held" + std::to_string(i));
    REQUIRE(::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size()));
    held.push_back(fd);
  }
  REQUIRE(wait_until([&] { return e.waiting.load() == 1; }));  // one handled, two queued
  std::this_thread::sleep_for(50ms);
  const auto shed = raw_exchange(server->port(), post("/p", "one too many"), 3000ms);
  CHECK(parse_response(shed.data).status == 503);
  CHECK(shed.elapsed < 1000ms);
  CHECK(server->stats().requests_shed == 1);
  // Probes are still answered, on the loop.
  CHECK(parse_response(raw_exchange(server->port(), "GET /x HTTP/1.1\r\n\r\n").data).status == 200);
  e.open_gate();
  for (std::size_t i = 0; i < held.size(); ++i) {
    const auto r = parse_response(read_until_close(held[i], 5000ms).data);
    ::close(held[i]);
    CHECK(r.status == 200);
    CHECK(r.body.find("held" + std::to_string(i)) != std::string::npos);
  }
}

TEST_CASE("ops http POST: many clients at once each get their own answer", "[http][post]") {
  echo_server e;
  auto server = start_server(e.options(4, 100000));
  constexpr int clients = 16, each = 20;
  std::atomic<int> wrong{0};
  std::mutex mu;
  std::set<std::string> workers;
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      for (int i = 0; i < each; ++i) {
        const std::string body = "client " + std::to_string(c) + " request " + std::to_string(i) +
                                 std::string(static_cast<std::size_t>(100 * i), 'z');
        const auto r = parse_response(raw_exchange(server->port(), post("/p", body), 10000ms).data);
        const std::string want = " " + std::to_string(body.size()) + " " + body;
        if (r.status != 200 || r.body.size() < want.size() || r.body.substr(r.body.size() - want.size()) != want) {
          ++wrong;
          continue;
        }
        std::lock_guard<std::mutex> lock(mu);
        workers.insert(r.body.substr(0, r.body.find(' ')));
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(wrong.load() == 0);
  CHECK(workers.size() > 1);  // the work was spread
  CHECK(server->stats().requests == clients * each);
}

TEST_CASE("ops http POST: stop() returns once the handlers running are done", "[http][post]") {
  echo_server e;
  auto server = start_server(e.options(2));
  e.close_gate();
  const int fd = connect_to(server->port());
  const std::string req = post("/p", "x");
  REQUIRE(::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size()));
  REQUIRE(wait_until([&] { return e.waiting.load() == 1; }));
  std::thread opener([&] {
    std::this_thread::sleep_for(200ms);
    e.open_gate();
  });
  const auto t0 = steady::now();
  server->stop();
  const auto took = steady::now() - t0;
  opener.join();
  CHECK(took >= 150ms);
  CHECK(took < 3000ms);
  ::close(fd);
}
