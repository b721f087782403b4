#include <catch2/catch.hpp>

#include "ss/core/log_limiter.hpp"

namespace {
constexpr std::int64_t kSecond = 1'000'000'000;
}

TEST_CASE("log_limiter: one line per key per interval, and the next says how many were held back", "[unit]") {
  ss::log_limiter limiter(60 * kSecond);
  std::uint64_t held = 99;
  REQUIRE(limiter.admit("10.0.0.7", 0, &held));
  CHECK(held == 0);
  for (int i = 1; i <= 1000; ++i) CHECK_FALSE(limiter.admit("10.0.0.7", i * kSecond / 100, &held));
  // Another sender is not held back by the first one's flood.
  REQUIRE(limiter.admit("10.0.0.8", kSecond, &held));
  CHECK(held == 0);
  CHECK_FALSE(limiter.admit("10.0.0.7", 59 * kSecond, &held));
  REQUIRE(limiter.admit("10.0.0.7", 60 * kSecond, &held));
  CHECK(held == 1001);
  REQUIRE(limiter.admit("10.0.0.7", 200 * kSecond, &held));
  CHECK(held == 0);
}

TEST_CASE("log_limiter: remembers at most max_keys senders", "[unit]") {
  ss::log_limiter limiter(60 * kSecond, 4);
  std::uint64_t held = 0;
  for (int i = 0; i < 4; ++i) REQUIRE(limiter.admit("k" + std::to_string(i), 0, &held));
  CHECK_FALSE(limiter.admit("k0", 1, &held));
  // A fifth key makes it forget the others rather than grow: k0 may log again.
  REQUIRE(limiter.admit("k4", 2, &held));
  CHECK(limiter.admit("k0", 3, &held));
}
