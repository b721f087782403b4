#include <catch2/catch.hpp>

#include <cmath>

#include "ss/core/denormals.hpp"
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

TEST_CASE("dense adam: the first step is lr * sign(g), and later steps match a double-precision reference",
          "[core][optim]") {
  dense_optimizer o{dense_kind::adam, 0.01f, dense_optimizer::default_epsilon(dense_kind::adam)};
  CHECK_FALSE(o.fused());
  REQUIRE(o.state_per_param() == 2);
  constexpr std::size_t n = 3;
  float w[n] = {1.0f, -2.0f, 0.5f}, state[2 * n] = {};
  const float g1[n] = {0.5f, -4.0f, 1e-3f};
  o.apply(w, state, g1, n, 1);
  // Bias correction makes step 1 exactly m/sqrt(v) = sign(g) (up to eps): w -= lr * sign(g).
  CHECK(w[0] == Approx(0.99f));
  CHECK(w[1] == Approx(-1.99f));
  CHECK(w[2] == Approx(0.49f).epsilon(1e-4));
  CHECK(state[0] == Approx(0.05f));          // m = 0.1 g
  CHECK(state[n] == Approx(0.00025f).epsilon(1e-4));  // v = (1 - b2) g^2; 1 - 0.999f is 0.00100005 in float

  // Steps 2..20 with varying gradients against the textbook algorithm in double.
  double rw[n] = {w[0], w[1], w[2]}, rm[n], rv[n];
  for (std::size_t i = 0; i < n; ++i) rm[i] = state[i], rv[i] = state[n + i];
  for (std::uint64_t t = 2; t <= 20; ++t) {
    float g[n];
    for (std::size_t i = 0; i < n; ++i) g[i] = std::sin(static_cast<float>(t * 3 + i)) * (1.0f + i);
    o.apply(w, state, g, n, t);
    for (std::size_t i = 0; i < n; ++i) {
      rm[i] = 0.9 * rm[i] + 0.1 * g[i];
      rv[i] = 0.999 * rv[i] + 0.001 * double(g[i]) * g[i];
      const double m_hat = rm[i] / (1 - std::pow(0.9, double(t))), v_hat = rv[i] / (1 - std::pow(0.999, double(t)));
      rw[i] -= 0.01 * m_hat / (std::sqrt(v_hat) + 1e-8);
    }
  }
  for (std::size_t i = 0; i < n; ++i) CHECK(w[i] == Approx(rw[i]).epsilon(1e-5));
}

TEST_CASE("weight decay: L2 for sgd and adagrad, decoupled for adam, touched rows only for embeddings",
          "[core][optim]") {
  // SGD with decay is no longer fused (the gradient must be seen with the weight).
  dense_optimizer sgd{dense_kind::sgd, 0.1f};
  CHECK(sgd.fused());
  sgd.weight_decay = 0.5f;
  CHECK_FALSE(sgd.fused());
  float w[1] = {2.0f};
  const float g[1] = {1.0f};
  sgd.apply(w, nullptr, g, 1);
  CHECK(w[0] == Approx(2.0f - 0.1f * (1.0f + 0.5f * 2.0f)));  // 1.8

  dense_optimizer adagrad{dense_kind::adagrad, 0.1f, 1e-10f};
  adagrad.weight_decay = 0.5f;
  float wa[1] = {2.0f}, ga_state[1] = {0.0f};
  adagrad.apply(wa, ga_state, g, 1);
  CHECK(ga_state[0] == Approx(4.0f));  // (1 + 0.5 * 2)^2
  CHECK(wa[0] == Approx(1.9f));        // 2 - 0.1 * 2 / 2

  // AdamW: with a zero gradient only the decay moves the weight: w *= 1 - lr * wd.
  dense_optimizer adam{dense_kind::adam, 0.1f, 1e-8f};
  adam.weight_decay = 0.5f;
  float wd[1] = {2.0f}, adam_state[2] = {0.0f, 0.0f};
  const float zero[1] = {0.0f};
  adam.apply(wd, adam_state, zero, 1, 1);
  CHECK(wd[0] == Approx(2.0f * (1.0f - 0.05f)));

  // Embedding rows: g + wd * row, and row-wise Adagrad's accumulator sees the decayed gradient.
  sparse_optimizer rows{sparse_kind::sgd, 0.1f};
  rows.weight_decay = 0.5f;
  float row[2] = {1.0f, -2.0f};
  const float rg[2] = {0.0f, 0.0f};
  rows.apply(row, rg, 2);
  CHECK(row[0] == Approx(0.95f));
  CHECK(row[1] == Approx(-1.9f));
  sparse_optimizer rowwise{sparse_kind::rowwise_adagrad, 0.1f, 1e-8f};
  rowwise.weight_decay = 0.5f;
  float arow[3] = {2.0f, 0.0f, 0.0f};
  rowwise.apply(arow, rg, 2);
  CHECK(arow[2] == Approx(0.5f));                                // mean((1, 0)^2)
  CHECK(arow[0] == Approx(2.0f - 0.1f / std::sqrt(0.5f) * 1.0f));
}

TEST_CASE("optimizer names parse and unknown names are refused", "[core][optim]") {
  CHECK(*parse_dense_kind("adam") == dense_kind::adam);
  CHECK(std::string(to_string(dense_kind::adam)) == "adam");
  CHECK(*parse_dense_kind("adagrad") == dense_kind::adagrad);
  CHECK(*parse_sparse_kind("rowwise-adagrad") == sparse_kind::rowwise_adagrad);
  auto bad = parse_sparse_kind("adam");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.error().message().find("adam") != std::string::npos);
  CHECK(std::string(to_string(dense_kind::sgd)) == "sgd");
}

TEST_CASE("dense optimizer: subnormal moments are flushed, and only inside the optimizer", "[core][optim]") {
  // A parameter whose gradient stopped: its first moment decays by beta1 a step into subnormal
  // floats, which x86 cores compute through a slow assist; the optimizer's scope treats them as 0.
  volatile float tiny = 1e-39f;  // subnormal (FLT_MIN is about 1.18e-38)
  REQUIRE(std::fpclassify(tiny) == FP_SUBNORMAL);
  ss::optim::dense_optimizer o;
  o.kind = ss::optim::dense_kind::adam;
  o.learning_rate = 0.001f;
  o.epsilon = 1e-8f;
  float w = 1.0f, g = 0.0f;
  float state[2] = {tiny, 0.0f};  // m, v
  o.apply(&w, state, &g, 1, 10);
#if defined(__SSE__)
  CHECK(state[0] == 0.0f);  // 0.9 * m, subnormal, flushed
#else
  CHECK(state[0] < tiny);
#endif
  CHECK(w == 1.0f);
  // Outside the optimizer, the thread's arithmetic is as it was.
  const float twice = tiny + tiny;
  CHECK(twice > 0.0f);
  {
    const ss::flush_denormals scope;
    const float flushed = tiny + tiny;
#if defined(__SSE__)
    CHECK(flushed == 0.0f);
#else
    CHECK(flushed == twice);
#endif
  }
  const float after = tiny + tiny;
  CHECK(after == twice);
}
