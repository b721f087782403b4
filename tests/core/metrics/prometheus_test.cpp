#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "ss/core/metrics/prometheus.hpp"

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

TEST_CASE("json_to_prometheus: nested objects become prefixed gauges", "[core][metrics][prometheus]") {
  const std::string json =
      R"({"eps": 76626.5, "ok": true, "stopped": false, "role": "trainer", "missing": null,)"
      R"( "sync": {"gap": 3, "round_ms": {"p50": 1.25}}, "queue-depth": -2e3,)"
      R"( "shards": [{"rows": 7}, {"rows": 8}], "empty": {}, "list": []})";
  auto text = ss::metrics::json_to_prometheus(json, "shadowsync_trainer", {{"index", "1"}});
  REQUIRE(text.is_ok());
  CHECK(*text ==
        "# HELP shadowsync_trainer_eps shadowsync status field eps\n"
        "# TYPE shadowsync_trainer_eps gauge\n"
        "shadowsync_trainer_eps{index=\"1\"} 76626.5\n"
        "# HELP shadowsync_trainer_ok shadowsync status field ok\n"
        "# TYPE shadowsync_trainer_ok gauge\n"
        "shadowsync_trainer_ok{index=\"1\"} 1\n"
        "# HELP shadowsync_trainer_stopped shadowsync status field stopped\n"
        "# TYPE shadowsync_trainer_stopped gauge\n"
        "shadowsync_trainer_stopped{index=\"1\"} 0\n"
        "# HELP shadowsync_trainer_sync_gap shadowsync status field sync_gap\n"
        "# TYPE shadowsync_trainer_sync_gap gauge\n"
        "shadowsync_trainer_sync_gap{index=\"1\"} 3\n"
        "# HELP shadowsync_trainer_sync_round_ms_p50 shadowsync status field sync_round_ms_p50\n"
        "# TYPE shadowsync_trainer_sync_round_ms_p50 gauge\n"
        "shadowsync_trainer_sync_round_ms_p50{index=\"1\"} 1.25\n"
        "# HELP shadowsync_trainer_queue_depth shadowsync status field queue-depth\n"
        "# TYPE shadowsync_trainer_queue_depth gauge\n"
        "shadowsync_trainer_queue_depth{index=\"1\"} -2000\n"
        "# HELP shadowsync_trainer_shards_0_rows shadowsync status field shards_0_rows\n"
        "# TYPE shadowsync_trainer_shards_0_rows gauge\n"
        "shadowsync_trainer_shards_0_rows{index=\"1\"} 7\n"
        "# HELP shadowsync_trainer_shards_1_rows shadowsync status field shards_1_rows\n"
        "# TYPE shadowsync_trainer_shards_1_rows gauge\n"
        "shadowsync_trainer_shards_1_rows{index=\"1\"} 8\n");
}

TEST_CASE("json_to_prometheus: escapes keys collisions and an empty prefix", "[core][metrics][prometheus]") {
  // "\u0041" is 'A'; "a.b" and "a_b" both sanitize to a_b: the first one wins.
  auto text = ss::metrics::json_to_prometheus(R"({"\u0041x": 1, "a.b": 2, "a_b": 3, "9": 4})", "");
  REQUIRE(text.is_ok());
  CHECK(*text ==
        "# HELP Ax shadowsync status field Ax\n"
        "# TYPE Ax gauge\n"
        "Ax 1\n"
        "# HELP a_b shadowsync status field a.b\n"
        "# TYPE a_b gauge\n"
        "a_b 2\n"
        "# HELP _9 shadowsync status field 9\n"
        "# TYPE _9 gauge\n"
        "_9 4\n");
  auto empty = ss::metrics::json_to_prometheus("  {}  ", "p");
  REQUIRE(empty.is_ok());
  CHECK(empty->empty());
  // Overflowing numbers become +-Inf, as a JSON reader would produce.
  auto big = ss::metrics::json_to_prometheus(R"({"x": 1e400, "y": -1e400, "z": 1e-400})", "p");
  REQUIRE(big.is_ok());
  CHECK(big->find("p_x +Inf\n") != std::string::npos);
  CHECK(big->find("p_y -Inf\n") != std::string::npos);
  CHECK(big->find("p_z 0\n") != std::string::npos);
}

TEST_CASE("json_to_prometheus: malformed JSON is a parse error", "[core][metrics][prometheus]") {
  const char* bad[] = {
      "",
      "   ",
      "[1, 2]",
      "42",
      "\"str\"",
      "{",
      "{\"a\"}",
      "{\"a\":}",
      "{\"a\": 1,}",
      "{\"a\": 1 \"b\": 2}",
      "{\"a\": 01}",
      "{\"a\": 1.}",
      "{\"a\": .5}",
      "{\"a\": -}",
      "{\"a\": 1e}",
      "{\"a\": tru}",
      "{\"a\": nul}",
      "{\"a\": NaN}",
      "{\"a\": \"unterminated}",
      "{\"a\": \"bad \\x escape\"}",
      "{\"a\": \"bad \\u12G4\"}",
      "{\"a\": \"raw\nnewline\"}",
      "{a: 1}",
      "{\"a\": 1} trailing",
      "{\"a\": 1}}",
      "{\"a\": [1, 2}",
      "{\"a\": {\"b\": [}}",
  };
  for (const char* text : bad) {
    INFO("input: " << text);
    auto r = ss::metrics::json_to_prometheus(text, "p");
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.error().code() == ss::errc::parse_error);
  }
  // Embedded NUL and truncated input at every position: an error or a value, never a crash.
  const std::string good = R"({"a": {"b": [1, true, "x\u00e9"]}, "c": -1.5e-3})";
  for (std::size_t n = 0; n < good.size(); ++n) {
    auto r = ss::metrics::json_to_prometheus(good.substr(0, n), "p");
    CHECK_FALSE(r.is_ok());
  }
  REQUIRE(ss::metrics::json_to_prometheus(good, "p").is_ok());
  CHECK_FALSE(ss::metrics::json_to_prometheus(std::string("{\"a\":\0 1}", 9), "p").is_ok());
}

TEST_CASE("json_to_prometheus: deep nesting is refused without recursion blow-up", "[core][metrics][prometheus]") {
  std::string ok_deep;
  for (int i = 0; i < 63; ++i) ok_deep += "{\"k\":";
  ok_deep += "1";
  for (int i = 0; i < 63; ++i) ok_deep += "}";
  CHECK(ss::metrics::json_to_prometheus(ok_deep, "p").is_ok());

  std::string too_deep(100000, '[');
  too_deep = "{\"a\":" + too_deep;
  auto r = ss::metrics::json_to_prometheus(too_deep, "p");
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.error().code() == ss::errc::parse_error);
}

TEST_CASE("append_json_gauges mixes with hand-written metrics", "[core][metrics][prometheus]") {
  prometheus_text p;
  p.counter("svc_examples_total", "Examples.", 5);
  REQUIRE(ss::metrics::append_json_gauges(p, R"({"rows": 9})", "svc").is_ok());
  CHECK_FALSE(ss::metrics::append_json_gauges(p, R"({"rows": )", "svc").is_ok());
  CHECK(p.str() ==
        "# HELP svc_examples_total Examples.\n"
        "# TYPE svc_examples_total counter\n"
        "svc_examples_total 5\n"
        "# HELP svc_rows shadowsync status field rows\n"
        "# TYPE svc_rows gauge\n"
        "svc_rows 9\n");
}
