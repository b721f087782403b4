#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "ss/core/json.hpp"
#include "ss/core/json_value.hpp"
#include "ss/core/metrics/history.hpp"

namespace {

using ss::json_value;
using ss::metrics::bounded_series;
using ss::metrics::history_limits;
using ss::metrics::job_history;

json_value parse(const std::string& text) {
  auto v = json_value::parse(text);
  REQUIRE(v.is_ok());
  return *v;
}

using ss::metrics::chart;
using ss::metrics::field_list;
using ss::metrics::metric_type;

// A status section and its table: one field of each chart kind (names of this test's own).
const field_list fields = {
    {"count", metric_type::counter, "A count: value and rate.", chart::value_and_rate},
    {"bytes", metric_type::counter, "A count: rate only.", chart::rate},
    {"level", metric_type::gauge, "A value.", chart::value},
    {"age", metric_type::gauge, "A value while known (not negative).", chart::known},
    {"score", metric_type::gauge, "A value that may be null.", chart::value},
    {"label", metric_type::status_only, "Not charted.", chart::none},
    {"hidden", metric_type::gauge, "A number not charted.", chart::none},
};

json_value section_at(std::uint64_t count, double level, double age) {
  auto v = json_value::parse(ss::json_object()
                                 .add("count", count)
                                 .add("bytes", 3 * count)
                                 .add("level", level)
                                 .add("age", age)
                                 .add("score", std::nan(""))
                                 .add("label", "x")
                                 .add("hidden", 7)
                                 .str());
  REQUIRE(v.is_ok());
  return *v;
}

}  // namespace

TEST_CASE("history: a series below its capacity keeps every point", "[core][metrics][history]") {
  bounded_series s(8);
  for (int i = 0; i < 7; ++i) s.add(i, i * 10.0);
  REQUIRE(s.points().size() == 7);
  CHECK(s.points()[3].t == 3);
  CHECK(s.points()[3].value == 30);
  CHECK(s.spacing() == 0);
}

TEST_CASE("history: a series never holds more than its capacity, spans the whole run and ends with the newest value",
          "[core][metrics][history]") {
  constexpr std::size_t capacity = 16;
  bounded_series s(capacity);
  for (int i = 0; i < 100000; ++i) {
    s.add(i, static_cast<double>(i));
    REQUIRE(s.points().size() <= capacity);
  }
  const auto& p = s.points();
  REQUIRE(p.size() >= capacity / 2);
  CHECK(p.back().t == 99999);  // the newest sample is always there
  CHECK(p.back().value == 99999);
  CHECK(p.front().t < 100000.0 / capacity * 2);  // the start of the run is still covered
  for (std::size_t i = 1; i < p.size(); ++i) REQUIRE(p[i].t > p[i - 1].t);
  // Kept points are real samples (t == value here), not averages.
  for (const auto& q : p) CHECK(q.value == q.t);
  // Evenly spread: no gap more than twice the spacing (the provisional newest point aside).
  for (std::size_t i = 1; i + 1 < p.size(); ++i) CHECK(p[i].t - p[i - 1].t <= 2 * s.spacing() + 1);
}

TEST_CASE("history: non-finite values and times that go back are ignored", "[core][metrics][history]") {
  bounded_series s(8);
  s.add(1, 1);
  s.add(2, std::nan(""));
  s.add(0.5, 3);
  s.add(3, INFINITY);
  REQUIRE(s.points().size() == 1);
}

TEST_CASE("history: record() keeps the numbers its table charts, and the rates of its counters",
          "[core][metrics][history]") {
  job_history h;
  h.record(0, "job/", section_at(0, 3, -1), fields);
  h.record(2, "job/", section_at(1000, 4, 5), fields);
  h.record(2, "m/a/", section_at(10, 1, 1), fields);
  auto doc = parse(h.to_json());
  const auto& series = doc["series"];
  REQUIRE(series["job/count"].items().size() == 2);
  CHECK(series["job/count"].items()[1].items()[1].number() == 1000);
  // A rate needs two samples: 1000 in 2 s.
  REQUIRE(series["job/count_per_sec"].items().size() == 1);
  CHECK(series["job/count_per_sec"].items()[0].items()[1].number() == 500);
  CHECK(series["job/bytes_per_sec"].items()[0].items()[1].number() == 1500);
  CHECK_FALSE(series.has("job/bytes"));  // a rate only
  CHECK(series["job/level"].items()[1].items()[1].number() == 4);
  // "known": the negative value (none yet) makes no point.
  REQUIRE(series["job/age"].items().size() == 1);
  CHECK(series["job/age"].items()[0].items()[1].number() == 5);
  // Null numbers make no points; fields not charted none.
  CHECK_FALSE(series.has("job/score"));
  CHECK_FALSE(series.has("job/label"));
  CHECK_FALSE(series.has("job/hidden"));
  // Another prefix is another series, with its own rate.
  CHECK(series["m/a/count"].items().size() == 1);
  CHECK_FALSE(series.has("m/a/count_per_sec"));
}

TEST_CASE("history: a counter that goes back (a restarted member) makes no rate point", "[core][metrics][history]") {
  job_history h;
  h.record(0, "m/", section_at(500, 0, 0), fields);
  h.record(1, "m/", section_at(100, 0, 0), fields);
  h.record(2, "m/", section_at(300, 0, 0), fields);
  auto doc = parse(h.to_json());
  const auto& rate = doc["series"]["m/count_per_sec"].items();
  REQUIRE(rate.size() == 1);
  CHECK(rate[0].items()[1].number() == 200);
}

TEST_CASE("history: to_json(since) sends only the newer points", "[core][metrics][history]") {
  job_history h;
  for (int i = 0; i < 5; ++i) h.add("job/x", i, i);
  auto doc = parse(h.to_json(2.5));
  const auto& pts = doc["series"]["job/x"].items();
  REQUIRE(pts.size() == 2);
  CHECK(pts[0].items()[0].number() == 3);
  CHECK(doc["capacity"].number() == 512);
}

TEST_CASE("history: bounded in memory: at most max_series series of points_per_series points",
          "[core][metrics][history]") {
  history_limits limits;
  limits.points_per_series = 32;
  limits.max_series = 10;
  job_history h(limits);
  // A long job with many members: 20 trainers (80 series) for 10,000 samples.
  for (int i = 0; i < 10000; ++i)
    for (int m = 0; m < 20; ++m) h.add("trainer/t" + std::to_string(m) + "/sync_gap", i, m);
  CHECK(h.series_count() == 10);
  CHECK(h.dropped_samples() == 10 * 10000);
  CHECK(h.longest_series() <= 32);
  CHECK(h.max_points() == 320);
  CHECK(parse(h.to_json())["dropped_samples"].number() == 100000);
}
