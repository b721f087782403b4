#include <catch2/catch.hpp>

#include <string>
#include <utility>

#include "ss/http/ops_routes.hpp"

namespace {

ss::http::http_request get(const std::string& path, const std::string& query = "") {
  ss::http::http_request r;
  r.method = "GET";
  r.path = path;
  r.query = query;
  r.version = "HTTP/1.1";
  return r;
}

}  // namespace

TEST_CASE("ops routes: healthz readyz and metrics with probes", "[http][routes]") {
  bool live = true;
  std::pair<bool, std::string> ready{true, ""};
  ss::http::ops_probe probe;
  probe.live = [&] { return live; };
  probe.ready = [&] { return ready; };
  probe.metrics = [] { return std::string("m 1\n"); };

  auto r = ss::http::ops_routes(probe, get("/healthz"));
  CHECK(r.status == 200);
  CHECK(r.body == "ok\n");
  CHECK(r.content_type == "text/plain; charset=utf-8");
  live = false;
  r = ss::http::ops_routes(probe, get("/healthz"));
  CHECK(r.status == 503);
  CHECK(r.body == "not live\n");

  r = ss::http::ops_routes(probe, get("/readyz"));
  CHECK(r.status == 200);
  CHECK(r.body == "ready\n");
  ready = {false, "waiting for 2 shards"};
  r = ss::http::ops_routes(probe, get("/readyz"));
  CHECK(r.status == 503);
  CHECK(r.body == "not ready: waiting for 2 shards\n");

  r = ss::http::ops_routes(probe, get("/metrics", "name[]=x"));
  CHECK(r.status == 200);
  CHECK(r.content_type == "text/plain; version=0.0.4; charset=utf-8");
  CHECK(r.body == "m 1\n");

  for (const char* path : {"/", "/healthz/", "/metricsx", "/HEALTHZ", "/favicon.ico"}) {
    INFO(path);
    r = ss::http::ops_routes(probe, get(path));
    CHECK(r.status == 404);
    CHECK(r.body == "not found\n");
  }
}

TEST_CASE("ops routes: unset probes mean live ready and empty metrics", "[http][routes]") {
  const ss::http::ops_probe probe;
  CHECK(ss::http::ops_routes(probe, get("/healthz")).status == 200);
  CHECK(ss::http::ops_routes(probe, get("/readyz")).status == 200);
  auto m = ss::http::ops_routes(probe, get("/metrics"));
  CHECK(m.status == 200);
  CHECK(m.body.empty());
}

TEST_CASE("ops routes: reason phrases", "[http][routes]") {
  CHECK(std::string(ss::http::reason_phrase(200)) == "OK");
  CHECK(std::string(ss::http::reason_phrase(431)) == "Request Header Fields Too Large");
  CHECK(std::string(ss::http::reason_phrase(599)) == "Unknown");
}
