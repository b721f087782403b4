#include <catch2/catch.hpp>

#include <string>
#include <utility>

#include "http_test_support.hpp"
#include "ss/http/ops_routes.hpp"

using ss::test::get_request;

TEST_CASE("ops routes: healthz readyz and metrics with probes", "[http][routes]") {
  bool live = true;
  std::pair<bool, std::string> ready{true, ""};
  ss::http::ops_probe probe;
  probe.live = [&] { return live; };
  probe.ready = [&] { return ready; };
  probe.metrics = [] { return std::string("m 1\n"); };

  auto r = ss::http::ops_routes(probe, get_request("/healthz"));
  CHECK(r.status == 200);
  CHECK(r.body == "ok\n");
  CHECK(r.content_type == "text/plain; charset=utf-8");
  live = false;
  r = ss::http::ops_routes(probe, get_request("/healthz"));
  CHECK(r.status == 503);
  CHECK(r.body == "not live\n");

  r = ss::http::ops_routes(probe, get_request("/readyz"));
  CHECK(r.status == 200);
  CHECK(r.body == "ready\n");
  ready = {false, "waiting for 2 shards"};
  r = ss::http::ops_routes(probe, get_request("/readyz"));
  CHECK(r.status == 503);
  CHECK(r.body == "not ready: waiting for 2 shards\n");

  r = ss::http::ops_routes(probe, get_request("/metrics", "name[]=x"));
  CHECK(r.status == 200);
  CHECK(r.content_type == "text/plain; version=0.0.4; charset=utf-8");
  CHECK(r.body == "m 1\n");

  for (const char* path : {"/", "/healthz/", "/metricsx", "/HEALTHZ", "/favicon.ico"}) {
    INFO(path);
    r = ss::http::ops_routes(probe, get_request(path));
    CHECK(r.status == 404);
    CHECK(r.body == "not found\n");
  }
}

TEST_CASE("ops routes: unset probes mean live ready and empty metrics", "[http][routes]") {
  const ss::http::ops_probe probe;
  CHECK(ss::http::ops_routes(probe, get_request("/healthz")).status == 200);
  CHECK(ss::http::ops_routes(probe, get_request("/readyz")).status == 200);
  auto m = ss::http::ops_routes(probe, get_request("/metrics"));
  CHECK(m.status == 200);
  CHECK(m.body.empty());
}

TEST_CASE("ops routes: reason phrases", "[http][routes]") {
  CHECK(std::string(ss::http::reason_phrase(200)) == "OK");
  CHECK(std::string(ss::http::reason_phrase(431)) == "Request Header Fields Too Large");
  CHECK(std::string(ss::http::reason_phrase(599)) == "Unknown");
}

TEST_CASE("ops routes: the server's counters as Prometheus samples", "[http][routes]") {
  ss::http::ops_http_stats s;
  s.connections_accepted = 120;
  s.connections_evicted = 7;
  s.connections_refused = 3;
  s.requests = 90;
  s.bad_requests = 2;
  s.read_timeouts = 1;
  s.connections_open = 5;
  s.max_connections = 64;
  s.reserve = 16;
  ss::metrics::prometheus_text p;
  ss::http::append_ops_http_metrics(p, s, {{"service", "shard-0"}});
  const std::string text = p.str();
  for (const char* line : {
           "# TYPE shadowsync_ops_http_connections_accepted counter\n",
           "shadowsync_ops_http_connections_accepted{service=\"shard-0\"} 120\n",
           "# TYPE shadowsync_ops_http_connections_evicted counter\n",
           "shadowsync_ops_http_connections_evicted{service=\"shard-0\"} 7\n",
           "shadowsync_ops_http_connections_refused{service=\"shard-0\"} 3\n",
           "shadowsync_ops_http_requests{service=\"shard-0\"} 90\n",
           "shadowsync_ops_http_bad_requests{service=\"shard-0\"} 2\n",
           "shadowsync_ops_http_read_timeouts{service=\"shard-0\"} 1\n",
           "shadowsync_ops_http_accept_failures{service=\"shard-0\"} 0\n",
           "# TYPE shadowsync_ops_http_connections_open gauge\n",
           "shadowsync_ops_http_connections_open{service=\"shard-0\"} 5\n",
           "shadowsync_ops_http_max_connections{service=\"shard-0\"} 64\n",
           "shadowsync_ops_http_reserve{service=\"shard-0\"} 16\n",
       }) {
    INFO(line);
    CHECK(text.find(line) != std::string::npos);
  }
  CHECK(p.dropped() == 0);
}
