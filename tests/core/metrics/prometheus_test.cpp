#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

#include <set>

#include "ss/core/json_value.hpp"
#include "ss/core/metrics/prometheus.hpp"
#include "ss/core/metrics/status_metrics.hpp"

namespace {

using ss::metrics::prometheus_text;

}  // namespace

TEST_CASE("prometheus: one gauge without labels", "[core][metrics][prometheus]") {
  prometheus_text p;
  p.gauge("shadowsync_queue_depth", "Batches waiting.", 3);
  CHECK(p.str() ==
        "# HELP shadowsync_queue_depth Batches waiting.\n"
        "# TYPE shadowsync_queue_depth gauge\n"
        "shadowsync_queue_depth 3\n");
}

TEST_CASE("prometheus: counter with labels keeps its name and label order", "[core][metrics][prometheus]") {
  prometheus_text p;
  p.counter("shadowsync_examples_total", "Examples trained.", 1234567,
            {{"role", "trainer"}, {"index", "0"}});
  CHECK(p.str() ==
        "# HELP shadowsync_examples_total Examples trained.\n"
        "# TYPE shadowsync_examples_total counter\n"
        "shadowsync_examples_total{role=\"trainer\",index=\"0\"} 1234567\n");
}

TEST_CASE("prometheus: families are grouped by name in first-seen order", "[core][metrics][prometheus]") {
  prometheus_text p;
  p.gauge("b_rows", "Rows held.", 10, {{"shard", "0"}});
  p.counter("a_total", "A counter.", 1);
  p.gauge("b_rows", "ignored second help", 20, {{"shard", "1"}});
  p.counter("a_total", "A counter.", 2, {{"x", "y"}});
  CHECK(p.str() ==
        "# HELP b_rows Rows held.\n"
        "# TYPE b_rows gauge\n"
        "b_rows{shard=\"0\"} 10\n"
        "b_rows{shard=\"1\"} 20\n"
        "# HELP a_total A counter.\n"
        "# TYPE a_total counter\n"
        "a_total 1\n"
        "a_total{x=\"y\"} 2\n");
  CHECK(p.dropped() == 0);
}

TEST_CASE("prometheus: a repeated series or a type clash is dropped", "[core][metrics][prometheus]") {
  prometheus_text p;
  p.gauge("g", "G.", 1, {{"a", "1"}});
  p.gauge("g", "G.", 2, {{"a", "1"}});  // same series: first wins
  p.counter("g", "G.", 3);             // another type: dropped
  CHECK(p.str() ==
        "# HELP g G.\n"
        "# TYPE g gauge\n"
        "g{a=\"1\"} 1\n");
  CHECK(p.dropped() == 2);
  p.clear();
  CHECK(p.empty());
  CHECK(p.str().empty());
}

TEST_CASE("prometheus: label values and help text are escaped", "[core][metrics][prometheus]") {
  prometheus_text p;
  p.gauge("esc", "back\\slash \"quoted\"\nsecond line", 1,
          {{"path", "C:\\dir\\\"x\"\nend"}});
  CHECK(p.str() ==
        "# HELP esc back\\\\slash \"quoted\"\\nsecond line\n"
        "# TYPE esc gauge\n"
        "esc{path=\"C:\\\\dir\\\\\\\"x\\\"\\nend\"} 1\n");
  CHECK(ss::metrics::escape_label_value("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
  CHECK(ss::metrics::escape_help("a\"b\\c\nd") == "a\"b\\\\c\\nd");
}

TEST_CASE("prometheus: NaN and infinities use the Prometheus spelling", "[core][metrics][prometheus]") {
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(ss::metrics::format_value(std::numeric_limits<double>::quiet_NaN()) == "NaN");
  CHECK(ss::metrics::format_value(inf) == "+Inf");
  CHECK(ss::metrics::format_value(-inf) == "-Inf");
  CHECK(ss::metrics::format_value(1.5) == "1.5");
  CHECK(ss::metrics::format_value(-2) == "-2");
  CHECK(ss::metrics::format_value(0.1) == "0.1");
  CHECK(ss::metrics::format_value(1e20) == "1e+20");
  CHECK(std::stod(ss::metrics::format_value(0.87235123456789)) == 0.87235123456789);

  prometheus_text p;
  p.gauge("ne", "Windowed NE.", std::nan(""), {{"w", "a"}});
  p.gauge("ne", "Windowed NE.", inf, {{"w", "b"}});
  p.gauge("ne", "Windowed NE.", -inf, {{"w", "c"}});
  CHECK(p.str() ==
        "# HELP ne Windowed NE.\n"
        "# TYPE ne gauge\n"
        "ne{w=\"a\"} NaN\n"
        "ne{w=\"b\"} +Inf\n"
        "ne{w=\"c\"} -Inf\n");
}

TEST_CASE("prometheus: summary renders quantiles then sum and count", "[core][metrics][prometheus]") {
  prometheus_text p;
  p.summary("lookup_seconds", "Lookup latency.", {{0.5, 0.001}, {0.99, 0.25}}, 12.5, 1000,
            {{"shard", "1"}});
  CHECK(p.str() ==
        "# HELP lookup_seconds Lookup latency.\n"
        "# TYPE lookup_seconds summary\n"
        "lookup_seconds{shard=\"1\",quantile=\"0.5\"} 0.001\n"
        "lookup_seconds{shard=\"1\",quantile=\"0.99\"} 0.25\n"
        "lookup_seconds_sum{shard=\"1\"} 12.5\n"
        "lookup_seconds_count{shard=\"1\"} 1000\n");
}

TEST_CASE("prometheus: histogram renders cumulative buckets, +Inf, then sum and count", "[core][metrics][prometheus]") {
  prometheus_text p;
  p.histogram("request_seconds", "Request latency.", {{0.001, 3}, {0.25, 7}}, 1.5, 9, {{"route", "predict"}});
  CHECK(p.str() ==
        "# HELP request_seconds Request latency.\n"
        "# TYPE request_seconds histogram\n"
        "request_seconds_bucket{route=\"predict\",le=\"0.001\"} 3\n"
        "request_seconds_bucket{route=\"predict\",le=\"0.25\"} 7\n"
        "request_seconds_bucket{route=\"predict\",le=\"+Inf\"} 9\n"
        "request_seconds_sum{route=\"predict\"} 1.5\n"
        "request_seconds_count{route=\"predict\"} 9\n");
}

TEST_CASE("prometheus: name validation and sanitizing", "[core][metrics][prometheus]") {
  using ss::metrics::is_valid_label_name;
  using ss::metrics::is_valid_metric_name;
  using ss::metrics::sanitize_metric_name;
  CHECK(is_valid_metric_name("shadowsync_examples_total"));
  CHECK(is_valid_metric_name("job:rate5m"));
  CHECK(is_valid_metric_name("_x9"));
  CHECK_FALSE(is_valid_metric_name(""));
  CHECK_FALSE(is_valid_metric_name("9lives"));
  CHECK_FALSE(is_valid_metric_name("a-b"));
  CHECK_FALSE(is_valid_metric_name("a.b"));
  CHECK(is_valid_label_name("shard"));
  CHECK_FALSE(is_valid_label_name("a:b"));
  CHECK(sanitize_metric_name("a-b.c d") == "a_b_c_d");
  CHECK(sanitize_metric_name("9lives") == "_9lives");
  CHECK(sanitize_metric_name("") == "_");
  CHECK(sanitize_metric_name("job:x") == "job:x");
  CHECK(sanitize_metric_name("job:x", false) == "job_x");
  CHECK(sanitize_metric_name("caf\xC3\xA9") == "caf__");
#ifdef NDEBUG
  // Release builds sanitize a bad name from code instead of asserting.
  prometheus_text p;
  p.gauge("bad-name", "h", 1, {{"bad.label", "v"}});
  CHECK(p.str() == "# HELP bad_name h\n# TYPE bad_name gauge\nbad_name{bad_label=\"v\"} 1\n");
#endif
}

namespace {

// A status table as a service declares one (the real ones are in actors/: ss/actors/status_metrics.hpp).
struct toy_view {
  std::uint64_t lookups;
  double latency_ms;
  bool persisted;
  std::string name;
};

const ss::metrics::status_table<toy_view>& toy_fields() {
  using t = ss::metrics::metric_type;
  static const ss::metrics::status_table<toy_view> table = {
      {"name", t::status_only, "The toy's name.", [](const toy_view& v) { return v.name; }},
      {"lookups", t::counter, "Lookup requests served.", [](const toy_view& v) { return v.lookups; }},
      {"latency_ms", t::gauge, "Median latency.", [](const toy_view& v) { return v.latency_ms; }},
      {"persisted", t::gauge, "1 when rows are written to storage.", [](const toy_view& v) { return v.persisted; }},
      {"items", t::status_only, "Items.", [](const toy_view&) { return ss::metrics::raw_json{"[1,2]"}; }},
      {"big", t::counter, "A counter past 2^53, exact.", [](const toy_view&) { return std::uint64_t{18446744073709551615ULL}; }},
      {"signed", t::gauge, "A negative integer.", [](const toy_view&) { return -3; }},
  };
  return table;
}

}  // namespace

TEST_CASE("status tables: the status JSON follows the table, each value as its type writes it", "[core][metrics][prometheus]") {
  const std::string json = ss::metrics::to_json(toy_fields(), toy_view{12, 0.5, true, "shard-0"});
  CHECK(json == R"({"name":"shard-0","lookups":12,"latency_ms":0.5,"persisted":true,"items":[1,2],)"
                R"("big":18446744073709551615,"signed":-3})");
  const std::string nan = ss::metrics::to_json(toy_fields(), toy_view{0, std::nan(""), false, ""});
  CHECK(nan.find(R"("latency_ms":null)") != std::string::npos);
}

TEST_CASE("status tables: /metrics exports the counters and gauges a status holds, typed and with help", "[core][metrics][prometheus]") {
  auto status = ss::json_value::parse(R"({"role":"toy","name":"shard-0","lookups":12,"persisted":true,"latency_ms":null,)"
                                      R"("unlisted_field":3,"items":[1,2]})");
  REQUIRE(status.is_ok());
  prometheus_text p;
  ss::metrics::append_status_metrics(p, "service", *status, ss::metrics::describe(toy_fields()), {{"service", "shard-0"}});
  const std::string text = p.str();
  CHECK(text.find("# HELP shadowsync_service_lookups Lookup requests served.\n# TYPE shadowsync_service_lookups counter\n"
                  "shadowsync_service_lookups{service=\"shard-0\"} 12\n") != std::string::npos);
  CHECK(text.find("# TYPE shadowsync_service_persisted gauge\nshadowsync_service_persisted{service=\"shard-0\"} 1\n") !=
        std::string::npos);
  CHECK(text.find("latency_ms") == std::string::npos);      // null (NaN): no sample
  CHECK(text.find("unlisted_field") == std::string::npos);  // only what the table names
  CHECK(text.find("shadowsync_service_name") == std::string::npos);  // status only
  CHECK(text.find("items") == std::string::npos);
  CHECK(text.find("big") == std::string::npos);  // absent from this status
}

TEST_CASE("status tables: the fields as JSON name their type and help", "[core][metrics][prometheus]") {
  const std::string json = ss::metrics::fields_json(ss::metrics::describe(toy_fields()));
  auto doc = ss::json_value::parse(json);
  REQUIRE(doc.is_ok());
  REQUIRE(doc->items().size() == toy_fields().size());
  CHECK((*doc).items()[0]["name"].string() == "name");
  CHECK((*doc).items()[0]["type"].string() == "status");
  CHECK((*doc).items()[1]["type"].string() == "counter");
  CHECK((*doc).items()[2]["type"].string() == "gauge");
  CHECK((*doc).items()[1]["help"].string() == "Lookup requests served.");
}
