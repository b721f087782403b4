// Counters declared once (metrics::counter_set): the status table takes them all, in declaration
// order, with their names, types, help and units.
#include <catch2/catch.hpp>

#include <string>
#include <thread>
#include <vector>

#include "ss/core/json_value.hpp"
#include "ss/core/metrics/counter_set.hpp"

namespace {

using ss::metrics::counter;
using ss::metrics::counter_unit;
using ss::metrics::metric_type;

struct toy_counters : ss::metrics::counter_set {
  counter requests{*this, "requests", "Requests served."};
  counter busy_ns{*this, "busy_seconds", "Seconds busy.", counter_unit::nanoseconds};
  counter depth{*this, "depth", "Queue depth.", metric_type::gauge};
  counter last_id{*this, "last_id", "Newest id.", metric_type::status_only};
};

struct counter_toy_view {
  const toy_counters& c;
  int other;
};

const ss::metrics::status_table<counter_toy_view>& counter_toy_fields() {
  using v = const counter_toy_view&;
  static const ss::metrics::status_table<counter_toy_view> table = ss::metrics::concat<counter_toy_view>({
      {{"role", metric_type::status_only, "The role.", [](v) { return "toy"; }}},
      ss::metrics::counter_fields<toy_counters, counter_toy_view>([](v x) -> const toy_counters& { return x.c; }),
      {{"other", metric_type::gauge, "Not a counter.", [](v x) { return x.other; }}},
  });
  return table;
}

}  // namespace

TEST_CASE("counter_set: every counter in declaration order, with its name, type and help", "[core][metrics]") {
  const auto fields = ss::metrics::describe(counter_toy_fields());
  REQUIRE(fields.size() == 6);
  const std::vector<std::string> names = {"role", "requests", "busy_seconds", "depth", "last_id", "other"};
  for (std::size_t i = 0; i < names.size(); ++i) CHECK(fields[i].name == names[i]);
  CHECK(fields[1].type == metric_type::counter);
  CHECK(std::string(fields[1].help) == "Requests served.");
  CHECK(fields[3].type == metric_type::gauge);
  CHECK(fields[4].type == metric_type::status_only);
}

TEST_CASE("counter_set: the status reads each instance's own values, nanoseconds as seconds", "[core][metrics]") {
  toy_counters a, b;
  a.requests.add(3);
  a.requests.add();
  a.busy_ns.fetch_add(2'500'000'000);
  a.depth.store(7);
  a.last_id.store(42);
  b.requests.add();
  auto doc = ss::json_value::parse(ss::metrics::to_json(counter_toy_fields(), counter_toy_view{a, 9}));
  REQUIRE(doc.is_ok());
  CHECK((*doc)["requests"].number() == 4);
  CHECK((*doc)["busy_seconds"].number() == Approx(2.5));
  CHECK((*doc)["depth"].number() == 7);
  CHECK((*doc)["last_id"].number() == 42);
  CHECK((*doc)["other"].number() == 9);
  auto other = ss::json_value::parse(ss::metrics::to_json(counter_toy_fields(), counter_toy_view{b, 0}));
  REQUIRE(other.is_ok());
  CHECK((*other)["requests"].number() == 1);
  CHECK((*other)["busy_seconds"].number() == 0);
}

TEST_CASE("counter_set: counts from several threads add up", "[core][metrics]") {
  toy_counters c;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&c] {
      for (int i = 0; i < 10000; ++i) c.requests.add();
    });
  for (auto& t : threads) t.join();
  CHECK(c.requests.load() == 40000);
  CHECK(c.counters().size() == 4);
}
