// ops_http_server starting and stopping: prompt stops under open connections, ports, bad options.
#include "http_test_support.hpp"

using namespace ss::test;

TEST_CASE("ops http: stop returns promptly while clients hold connections open", "[http][server]") {
  fake_service svc;
  ops_http_options o = svc.options();
  o.read_timeout = 30s;
  auto server = start_server(std::move(o));
  const int partial = connect_to(server->port());
  REQUIRE(::send(partial, "GET /healthz HTTP/1.1\r\n", 23, MSG_NOSIGNAL) == 23);
  const int idle = connect_to(server->port());
  std::this_thread::sleep_for(100ms);  // let the server accept both
  const auto t0 = steady::now();
  server->stop();
  const auto took = steady::now() - t0;
  CHECK(took < 2000ms);  // milliseconds in practice; generous for loaded CI machines
  // Both clients see the connection closed, and the port is free again.
  CHECK(read_until_close(partial, 2000ms).eof);
  CHECK(read_until_close(idle, 2000ms).eof);
  ::close(partial);
  ::close(idle);
  server->stop();  // idempotent
  const auto t1 = steady::now();
  server.reset();  // the destructor after stop
  CHECK(steady::now() - t1 < 2000ms);
}

TEST_CASE("ops http: the destructor stops a busy server promptly", "[http][server]") {
  fake_service svc;
  ops_http_options o = svc.options();
  o.read_timeout = 30s;
  auto server = start_server(std::move(o));
  std::vector<int> fds;
  for (int i = 0; i < 10; ++i) fds.push_back(connect_to(server->port()));
  std::this_thread::sleep_for(50ms);
  const auto t0 = steady::now();
  server.reset();
  CHECK(steady::now() - t0 < 2000ms);
  for (int fd : fds) ::close(fd);
}

TEST_CASE("ops http: port 0 picks a free port and a taken port is an error", "[http][server]") {
  fake_service svc;
  auto a = start_server(svc.options());
  auto b = start_server(svc.options());
  CHECK(a->port() != 0);
  CHECK(b->port() != 0);
  CHECK(a->port() != b->port());
  CHECK(parse_response(curl("-i " + url(*a, "/healthz")).output).status == 200);
  CHECK(parse_response(curl("-i " + url(*b, "/healthz")).output).status == 200);

  ops_http_options taken = svc.options();
  taken.port = a->port();
  auto c = ops_http_server::start(std::move(taken));
  REQUIRE_FALSE(c.is_ok());
  CHECK(c.error().code() == ss::errc::io_error);
  CHECK(c.error().message().find(std::to_string(a->port())) != std::string::npos);

  // A fixed port can be rebound right after its server stops (SO_REUSEADDR), even after traffic.
  const std::uint16_t port = a->port();
  a.reset();
  ops_http_options again = svc.options();
  again.port = port;
  auto d = ops_http_server::start(std::move(again));
  REQUIRE(d.is_ok());
  CHECK((*d)->port() == port);
  CHECK(parse_response(curl("-i " + url(**d, "/healthz")).output).status == 200);
}

TEST_CASE("ops http: bad options are refused", "[http][server]") {
  ops_http_options none;
  auto r = ops_http_server::start(none);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.error().code() == ss::errc::invalid_argument);

  fake_service svc;
  ops_http_options o = svc.options();
  o.read_timeout = 0ms;
  CHECK(ops_http_server::start(o).error().code() == ss::errc::invalid_argument);
  o = svc.options();
  o.max_connections = 0;
  CHECK(ops_http_server::start(o).error().code() == ss::errc::invalid_argument);
  o = svc.options();
  o.max_request_bytes = 10;
  CHECK(ops_http_server::start(o).error().code() == ss::errc::invalid_argument);
}
