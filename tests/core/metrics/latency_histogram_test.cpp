// latency_histogram: quantiles within a quarter-doubling bucket above the truth.
#include <catch2/catch.hpp>

#include <thread>
#include <vector>

#include "ss/core/metrics/latency_histogram.hpp"

using ss::metrics::latency_histogram;

TEST_CASE("latency histogram: empty, then quantiles at most 19% above the truth", "[core][metrics]") {
  latency_histogram h;
  REQUIRE(h.count() == 0);
  REQUIRE(h.quantile_ms(0.5) == 0);
  // 99 reads of 1 ms and one of 40 ms.
  for (int i = 0; i < 99; ++i) h.record(0.001);
  h.record(0.040);
  REQUIRE(h.count() == 100);
  const double p50 = h.quantile_ms(0.5), p99 = h.quantile_ms(0.99), p100 = h.quantile_ms(1.0);
  CHECK(p50 >= 1.0);
  CHECK(p50 <= 1.0 * 1.19);
  CHECK(p99 == p50);  // the 99th of 100 is still a 1 ms read
  CHECK(p100 >= 40.0);
  CHECK(p100 <= 40.0 * 1.19);
}

TEST_CASE("latency histogram: out of range values land in the end buckets", "[core][metrics]") {
  latency_histogram h;
  h.record(0);
  h.record(-1);
  REQUIRE(h.quantile_ms(1.0) == Approx(0.001 * 1.1892).epsilon(0.01));  // the first bucket: up to 2^(1/4) us
  h.record(1e9);
  REQUIRE(h.count() == 3);
  CHECK(h.quantile_ms(1.0) > 3.6e6);  // the last bucket: about an hour
}

TEST_CASE("latency histogram: records from many threads all count", "[core][metrics]") {
  latency_histogram h;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&h, t] {
      for (int i = 0; i < 10000; ++i) h.record(1e-6 * (1 + (i + t) % 1000));
    });
  for (auto& t : threads) t.join();
  REQUIRE(h.count() == 40000);
}
