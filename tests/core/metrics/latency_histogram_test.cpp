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

TEST_CASE("latency histogram: counts below powers of two microseconds, and the sum", "[core][metrics]") {
  latency_histogram h;
  h.record(50e-6);    // 50 us: below 64
  h.record(63e-6);    // below 64
  h.record(100e-6);   // below 128
  h.record(0.5);      // 500 ms: below 2^19 us
  CHECK(h.count_below_power_of_two_us(6) == 2);
  CHECK(h.count_below_power_of_two_us(7) == 3);
  CHECK(h.count_below_power_of_two_us(18) == 3);
  CHECK(h.count_below_power_of_two_us(19) == 4);
  CHECK(h.count_below_power_of_two_us(40) == 4);  // past the last bucket: every record
  CHECK(h.sum_seconds() == Approx(0.500213).epsilon(1e-6));
}
