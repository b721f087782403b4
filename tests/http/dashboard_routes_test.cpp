#include <catch2/catch.hpp>

#include <string>

#include "ss/http/dashboard_assets.hpp"
#include "ss/http/dashboard_routes.hpp"
#include "http_test_support.hpp"

namespace {

using ss::http::dashboard_routes;
using ss::http::dashboard_source;
using ss::test::get_request;

const std::string* header(const ss::http::http_response& r, const std::string& name) {
  for (const auto& [k, v] : r.headers)
    if (k == name) return &v;
  return nullptr;
}

dashboard_source source_with(std::string status, std::string history, double* asked_since = nullptr) {
  dashboard_source s;
  s.status = [status](std::string&) -> std::optional<std::string> { return status; };
  s.history = [history, asked_since](double since, std::string&) -> std::optional<std::string> {
    if (asked_since != nullptr) *asked_since = since;
    return history;
  };
  return s;
}

}  // namespace

TEST_CASE("dashboard: the page and its files are compiled in, each with its type", "[http][dashboard]") {
  const auto src = source_with("{}", "{}");
  auto page = dashboard_routes(src, get_request("/"));
  REQUIRE(page);
  CHECK(page->status == 200);
  CHECK(page->content_type == "text/html; charset=utf-8");
  CHECK(page->body.find("<script src=\"/dashboard.js\"") != std::string::npos);
  auto js = dashboard_routes(src, get_request("/dashboard.js"));
  REQUIRE(js);
  CHECK(js->content_type == "text/javascript; charset=utf-8");
  CHECK(js->body.find("/api/history") != std::string::npos);
  auto css = dashboard_routes(src, get_request("/dashboard.css"));
  REQUIRE(css);
  CHECK(css->content_type == "text/css; charset=utf-8");
  CHECK(ss::http::dashboard_assets().size() == 3);
  // The page loads nothing from elsewhere: no other origin in any of its files.
  for (const auto& f : ss::http::dashboard_assets()) {
    INFO(f.path);
    CHECK(std::string(f.bytes).find("https://") == std::string::npos);
    CHECK(std::string(f.bytes).find("<script>") == std::string::npos);  // no inline script (the CSP forbids it)
  }
}

TEST_CASE("dashboard: every answer carries a strict Content-Security-Policy", "[http][dashboard]") {
  const auto src = source_with("{}", "{}");
  for (const char* path : {"/", "/dashboard.js", "/api/status", "/api/history"}) {
    INFO(path);
    auto r = dashboard_routes(src, get_request(path));
    REQUIRE(r);
    const auto* csp = header(*r, "Content-Security-Policy");
    REQUIRE(csp != nullptr);
    CHECK(csp->find("default-src 'none'") != std::string::npos);
    CHECK(csp->find("connect-src 'self'") != std::string::npos);
    REQUIRE(header(*r, "X-Content-Type-Options") != nullptr);
  }
}

TEST_CASE("dashboard: /api/status and /api/history answer JSON, uncached; since= reaches the history",
          "[http][dashboard]") {
  double since = -2;
  const auto src = source_with(R"({"service":{"state":"running"}})", R"({"series":{}})", &since);
  auto status = dashboard_routes(src, get_request("/api/status"));
  REQUIRE(status);
  CHECK(status->status == 200);
  CHECK(status->content_type == "application/json");
  CHECK(status->body == R"({"service":{"state":"running"}})");
  REQUIRE(header(*status, "Cache-Control") != nullptr);
  CHECK(*header(*status, "Cache-Control") == "no-store");
  auto history = dashboard_routes(src, get_request("/api/history", "since=12.5"));
  REQUIRE(history);
  CHECK(history->body == R"({"series":{}})");
  CHECK(since == 12.5);
  dashboard_routes(src, get_request("/api/history"));
  CHECK(since == -1);
}

TEST_CASE("dashboard: the API says 503 and why while there is no status", "[http][dashboard]") {
  dashboard_source src;
  src.status = [](std::string& why) -> std::optional<std::string> {
    why = "starting";
    return std::nullopt;
  };
  auto r = dashboard_routes(src, get_request("/api/status"));
  REQUIRE(r);
  CHECK(r->status == 503);
  CHECK(r->body == R"({"error":"starting"})");
  auto h = dashboard_routes(src, get_request("/api/history"));  // no history function at all
  REQUIRE(h);
  CHECK(h->status == 503);
}

TEST_CASE("dashboard: other paths are not the dashboard's", "[http][dashboard]") {
  const auto src = source_with("{}", "{}");
  CHECK_FALSE(dashboard_routes(src, get_request("/metrics")));
  CHECK_FALSE(dashboard_routes(src, get_request("/healthz")));
  CHECK_FALSE(dashboard_routes(src, get_request("/index.htm")));
  CHECK_FALSE(dashboard_routes(src, get_request("/../etc/passwd")));
  CHECK_FALSE(dashboard_routes(src, get_request("/api/stop")));
}

TEST_CASE("dashboard: the since parameter", "[http][dashboard]") {
  using ss::http::since_parameter;
  CHECK(since_parameter("") == -1);
  CHECK(since_parameter("since=3") == 3);
  CHECK(since_parameter("a=1&since=7.25&b=2") == 7.25);
  CHECK(since_parameter("since=") == -1);
  CHECK(since_parameter("since=abc") == -1);
  CHECK(since_parameter("since=1e999") == -1);
  CHECK(since_parameter("xsince=4") == -1);
}
