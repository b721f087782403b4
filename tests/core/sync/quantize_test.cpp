#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "ss/core/random.hpp"
#include "ss/core/sync/quantize.hpp"

using namespace ss;
using namespace ss::sync;

namespace {

std::vector<float> gaussian(std::size_t n, std::uint64_t seed, float scale) {
  rng r(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = scale * static_cast<float>(r.normal());
  return v;
}

}  // namespace

TEST_CASE("quantize: each value within half a step of its block's scale; 3.9x fewer bytes", "[core][sync]") {
  const std::size_t n = 1000;  // 3 full blocks of 256 and one of 232
  auto x = gaussian(n, 1, 0.01f);
  x[300] = -0.5f;  // one large value sets its block's scale
  quantized_vector q;
  quantize(x.data(), n, 256, q);
  REQUIRE(check(q, n).is_ok());
  REQUIRE(q.scales.size() == 4);
  CHECK(q.scales[1] == Approx(0.5f / 127.0f));
  std::vector<float> back(n);
  dequantize(q, back.data());
  for (std::size_t i = 0; i < n; ++i) REQUIRE(std::fabs(back[i] - x[i]) <= 0.5f * q.scales[i / 256] * 1.0001f);
  CHECK(back[300] == Approx(-0.5f));  // the extreme of a block is exact
  CHECK(q.bytes() == n + 4 * 4);
  CHECK(static_cast<double>(n * sizeof(float)) / static_cast<double>(q.bytes()) > 3.9);
}

TEST_CASE("quantize: a zero block has scale 0 and zero values; -x quantizes to -q(x)", "[core][sync]") {
  std::vector<float> x(300, 0.0f);
  for (std::size_t i = 256; i < 300; ++i) x[i] = 0.001f * static_cast<float>(i - 270);
  quantized_vector q, neg;
  quantize(x.data(), x.size(), 256, q);
  REQUIRE(check(q, x.size()).is_ok());
  CHECK(q.scales[0] == 0.0f);
  for (std::size_t i = 0; i < 256; ++i) REQUIRE(q.values[i] == 0);
  std::vector<float> minus(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) minus[i] = -x[i];
  quantize(minus.data(), minus.size(), 256, neg);
  for (std::size_t i = 0; i < x.size(); ++i) REQUIRE(neg.values[i] == -q.values[i]);
}

TEST_CASE("quantize with error feedback: what was received sums to what was meant, less the residual",
          "[core][sync]") {
  const std::size_t n = 700, rounds = 50;
  std::vector<float> residual(n, 0.0f), meant(n, 0.0f), received(n, 0.0f);
  quantized_vector q;
  for (std::size_t r = 0; r < rounds; ++r) {
    auto delta = gaussian(n, 100 + r, 1e-3f);
    for (std::size_t i = 0; i < n; ++i) meant[i] += delta[i];
    quantize_with_feedback(delta.data(), residual.data(), n, 256, q);
    REQUIRE(check(q, n).is_ok());
    add_dequantized(q, received.data());
    // The residual never grows past half a step: it is re-sent, not accumulated.
    for (std::size_t i = 0; i < n; ++i) REQUIRE(std::fabs(residual[i]) <= 0.5f * q.scales[i / 256] * 1.001f);
  }
  double worst = 0, plain_worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    REQUIRE(received[i] + residual[i] == Approx(meant[i]).margin(1e-6));
    worst = std::max(worst, static_cast<double>(std::fabs(received[i] - meant[i])));
  }
  // Without feedback, the rounding errors of 50 rounds add up; with it, one step's error remains.
  std::vector<float> plain(n, 0.0f), back(n);
  for (std::size_t r = 0; r < rounds; ++r) {
    auto delta = gaussian(n, 100 + r, 1e-3f);
    quantize(delta.data(), n, 256, q);
    dequantize(q, back.data());
    for (std::size_t i = 0; i < n; ++i) plain[i] += back[i];
  }
  for (std::size_t i = 0; i < n; ++i) plain_worst = std::max(plain_worst, static_cast<double>(std::fabs(plain[i] - meant[i])));
  CHECK(worst * 3 < plain_worst);
}

TEST_CASE("quantize: check refuses wrong sizes, a zero block, and scales that are not finite or overflow",
          "[core][sync]") {
  auto x = gaussian(600, 7, 1.0f);
  quantized_vector q;
  quantize(x.data(), x.size(), 256, q);
  REQUIRE(check(q, 600).is_ok());
  CHECK(check(q, 599).message().find("600 values where 599 were expected") != std::string::npos);
  auto fewer = q;
  fewer.scales.pop_back();
  CHECK(check(fewer, 600).message().find("2 scales for 3 blocks of 256") != std::string::npos);
  auto zero = q;
  zero.block = 0;
  CHECK(check(zero, 600).code() == errc::invalid_argument);
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), -1.0f,
                    max_quantization_scale * 2}) {
    auto garbage = q;
    garbage.scales[1] = bad;
    const auto st = check(garbage, 600);
    CHECK(st.code() == errc::out_of_range);
    CHECK(st.message().find("block 1") != std::string::npos);
  }
  // A sender with a non-finite value produces a scale the receiver refuses.
  x[10] = std::numeric_limits<float>::infinity();
  quantize(x.data(), x.size(), 256, q);
  CHECK(check(q, 600).code() == errc::out_of_range);
}
