#include <catch2/catch.hpp>

#include <cmath>

#include "ss/core/optim/dense_optimizer.hpp"
#include "ss/core/optim/sparse_optimizer.hpp"

using namespace ss::optim;

TEST_CASE("sparse sgd: row -= lr * g", "[core][optim]") {
  sparse_optimizer o{sparse_kind::sgd, 0.1f};
  float row[2] = {1.0f, 2.0f};
  const float g[2] = {0.5f, -1.0f};
  o.apply(row, g, 2);
  CHECK(row[0] == Approx(0.95f));
  CHECK(row[1] == Approx(2.1f));
  CHECK(o.state_floats() == 0);
}

TEST_CASE("row-wise adagrad: one accumulator per row, hand-computed", "[core][optim]") {
  sparse_optimizer o{sparse_kind::rowwise_adagrad, 0.1f, 1e-8f};
  REQUIRE(o.state_floats() == 1);
  float row[3] = {1.0f, 2.0f, 0.0f};
  const float g[2] = {0.5f, -1.0f};
  o.apply(row, g, 2);
  // G = (0.25 + 1) / 2 = 0.625; step = 0.1 / sqrt(0.625) = 0.1264911
  CHECK(row[2] == Approx(0.625f));
  CHECK(row[0] == Approx(1.0f - 0.1264911f * 0.5f));
  CHECK(row[1] == Approx(2.0f + 0.1264911f));
  o.apply(row, g, 2);  // G = 1.25, step = 0.1 / sqrt(1.25) = 0.0894427
  CHECK(row[2] == Approx(1.25f));
  CHECK(row[0] == Approx(1.0f - 0.1264911f * 0.5f - 0.0894427f * 0.5f));
}

TEST_CASE("dense adagrad: per-parameter accumulator, hand-computed", "[core][optim]") {
  dense_optimizer o{dense_kind::adagrad, 0.1f, 1e-10f};
  CHECK_FALSE(o.fused());
  CHECK(o.state_per_param() == 1);
  float w[2] = {1.0f, -1.0f}, state[2] = {0.0f, 3.0f};
  const float g[2] = {0.5f, 1.0f};
  o.apply(w, state, g, 2);
  CHECK(state[0] == Approx(0.25f));
  CHECK(state[1] == Approx(4.0f));
  CHECK(w[0] == Approx(0.9f));          // 1 - 0.1 * 0.5 / 0.5
  CHECK(w[1] == Approx(-1.05f));        // -1 - 0.1 * 1 / 2
}

TEST_CASE("optimizer names parse and unknown names are refused", "[core][optim]") {
  CHECK(*parse_dense_kind("adagrad") == dense_kind::adagrad);
  CHECK(*parse_sparse_kind("rowwise-adagrad") == sparse_kind::rowwise_adagrad);
  auto bad = parse_sparse_kind("adam");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.error().message().find("adam") != std::string::npos);
  CHECK(std::string(to_string(dense_kind::sgd)) == "sgd");
}
