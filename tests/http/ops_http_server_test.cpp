// ops_http_server over real loopback sockets, well-formed traffic through curl (a real HTTP
// client, run as a child process): the probes, metrics, methods, HEAD, a throwing handler, the
// handler's view of a request.
#include "http_test_support.hpp"

using namespace ss::test;

TEST_CASE("ops http: healthz is 200 ok through curl", "[http][server]") {
  fake_service svc;
  auto server = start_server(svc.options());
  auto p = curl_answer(*server, "/healthz");
  CHECK(p.status == 200);
  CHECK(p.head.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(has_header(p, "Content-Type: text/plain; charset=utf-8"));
  CHECK(has_header(p, "Content-Length: 3"));
  CHECK(has_header(p, "Connection: close"));
  CHECK(p.body == "ok\n");
  // --fail: the exit status an orchestrator's probe would see.
  CHECK(curl("--fail -o /dev/null " + url(*server, "/healthz")).exit_code == 0);
}

TEST_CASE("ops http: healthz is 503 when not live", "[http][server]") {
  fake_service svc;
  auto server = start_server(svc.options());
  svc.live = false;
  auto p = curl_answer(*server, "/healthz");
  CHECK(p.status == 503);
  CHECK(p.head.rfind("HTTP/1.1 503 Service Unavailable\r\n", 0) == 0);
  CHECK(p.body == "not live\n");
  CHECK(curl("--fail -o /dev/null " + url(*server, "/healthz")).exit_code == 22);
  svc.live = true;
  CHECK(curl_answer(*server, "/healthz").status == 200);
}

TEST_CASE("ops http: readyz says ready or gives the reason", "[http][server]") {
  fake_service svc;
  auto server = start_server(svc.options());
  auto p = curl_answer(*server, "/readyz");
  CHECK(p.status == 200);
  CHECK(p.body == "ready\n");
  svc.ready = false;
  p = curl_answer(*server, "/readyz");
  CHECK(p.status == 503);
  CHECK(p.body == "not ready: waiting for 2 of 3 shards\n");
}

TEST_CASE("ops http: metrics has the Prometheus content type and body", "[http][server]") {
  fake_service svc;
  auto server = start_server(svc.options());
  auto p = curl_answer(*server, "/metrics");
  CHECK(p.status == 200);
  CHECK(has_header(p, "Content-Type: text/plain; version=0.0.4; charset=utf-8"));
  CHECK(has_header(p, "Content-Length: " + std::to_string(svc.metrics().size())));
  CHECK(p.body == svc.metrics());
  CHECK(p.body.find("shadowsync_examples_total{role=\"trainer\"} 1000\n") != std::string::npos);
  // A query string does not change the route.
  CHECK(curl_answer(*server, "/metrics?name[]=x&y=1").body == svc.metrics());
  // curl's own view of the content type.
  auto ct = curl("-o /dev/null -w '%{content_type}' " + url(*server, "/metrics"));
  CHECK(ct.output == "text/plain; version=0.0.4; charset=utf-8");
}

TEST_CASE("ops http: unknown paths are 404", "[http][server]") {
  fake_service svc;
  auto server = start_server(svc.options());
  for (const char* path : {"/", "/nope", "/healthz/", "/metrics.txt"}) {
    INFO(path);
    auto p = curl_answer(*server, path);
    CHECK(p.status == 404);
    CHECK(p.body == "not found\n");
  }
}

TEST_CASE("ops http: POST and other methods are 405", "[http][server]") {
  fake_service svc;
  auto server = start_server(svc.options());
  auto p = curl_answer(*server, "/metrics", "-i -X POST --data 'a=1&b=2'");
  CHECK(p.status == 405);
  CHECK(has_header(p, "Allow: GET, HEAD"));
  CHECK(p.body == "method not allowed\n");
  CHECK(curl_answer(*server, "/healthz", "-i -X DELETE").status == 405);
  // A large body the server never reads: the answer still arrives intact (no reset).
  auto raw = raw_exchange(server->port(),
                          "PUT /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" +
                              std::string(100000, 'z'));
  CHECK(raw.eof);
  CHECK(parse_response(raw.data).status == 405);
  CHECK(svc.requests == 0);  // the handler never saw them
}

TEST_CASE("ops http: HEAD sends the headers without a body", "[http][server]") {
  fake_service svc;
  auto server = start_server(svc.options());
  auto p = curl_answer(*server, "/metrics", "-I");
  CHECK(p.status == 200);
  CHECK(has_header(p, "Content-Length: " + std::to_string(svc.metrics().size())));
  CHECK(has_header(p, "Content-Type: text/plain; version=0.0.4; charset=utf-8"));
  CHECK(p.body.empty());
  // On the wire: nothing at all after the blank line.
  auto raw = raw_exchange(server->port(), "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(raw.eof);
  auto rp = parse_response(raw.data);
  CHECK(rp.status == 200);
  CHECK(rp.complete);
  CHECK(rp.body.empty());
  // A HEAD that is 503 or 404 has no body either.
  svc.live = false;
  rp = parse_response(raw_exchange(server->port(), "HEAD /healthz HTTP/1.0\r\n\r\n").data);
  CHECK(rp.status == 503);
  CHECK(rp.body.empty());
}

TEST_CASE("ops http: a throwing handler is 500 and the server goes on", "[http][server]") {
  ops_http_options o;
  o.bind = "127.0.0.1";
  std::atomic<int> calls{0};
  o.handler = [&](const http_request& r) -> http_response {
    ++calls;
    if (r.path == "/throw") throw std::runtime_error("probe exploded");
    if (r.path == "/int") throw 42;
    if (r.path == "/weird") return http_response{42, "text/plain", "x", {}};
    return http_response{200, "text/plain", "fine", {}};
  };
  auto server = start_server(std::move(o));
  for (const char* path : {"/throw", "/int", "/weird"}) {
    INFO(path);
    auto p = curl_answer(*server, path);
    CHECK(p.status == 500);
    CHECK(p.body == "internal error\n");
  }
  CHECK(curl_answer(*server, "/ok").body == "fine");
  CHECK(calls == 4);
}

TEST_CASE("ops http: the handler sees method path query headers and peer", "[http][server]") {
  ops_http_options o;
  o.bind = "127.0.0.1";
  o.handler = [](const http_request& r) {
    const std::string* h = r.header("x-test");
    http_response resp;
    resp.body = r.method + "|" + r.path + "|" + r.query + "|" + r.version + "|" + (h ? *h : "-") +
                "|" + (r.peer.rfind("127.0.0.1:", 0) == 0 ? "peer" : r.peer);
    resp.headers = {{"X-Extra", "yes"}, {"Bad Name", "dropped"}, {"X-Inject", "a\r\nEvil: 1"},
                    {"Content-Length", "999"}};
    return resp;
  };
  auto server = start_server(std::move(o));
  auto p = curl_answer(*server, "/echo?a=1&b=2#frag", "-i -H 'X-Test:   hello  '");
  CHECK(p.status == 200);
  CHECK(p.body == "GET|/echo|a=1&b=2|HTTP/1.1|hello|peer");
  CHECK(has_header(p, "X-Extra: yes"));
  CHECK(p.head.find("Evil") == std::string::npos);
  CHECK(p.head.find("Bad Name") == std::string::npos);
  CHECK(p.head.find("999") == std::string::npos);
}
