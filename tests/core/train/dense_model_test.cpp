// dense_model's optimizer state: what a snapshot keeps and a resumed replica takes back.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "ss/core/train/dense_model.hpp"
#include "tiny_config.hpp"

using namespace ss;
using namespace ss::train;
using ss::train::testing::tiny_config;

namespace {

// Gradient k of a fixed sequence: every parameter gets a different value, some near zero.
std::vector<float> gradient(std::size_t n, int k) {
  std::vector<float> g(n);
  for (std::size_t i = 0; i < n; ++i) g[i] = 0.01f * std::sin(0.37f * static_cast<float>(i) + 1.3f * static_cast<float>(k));
  return g;
}

void step(dense_model& m, int k) {
  const auto g = gradient(m.size(), k);
  m.optimizer().apply(m.params(), m.optimizer_state(), g.data(), m.size(), m.next_step());
}

double max_difference(const float* a, const float* b, std::size_t n) {
  double d = 0;
  for (std::size_t i = 0; i < n; ++i) d = std::max(d, std::fabs(static_cast<double>(a[i]) - b[i]));
  return d;
}

}  // namespace

TEST_CASE("dense_model: a replica given another's optimizer state continues as that one would", "[train]") {
  for (const auto kind : {optim::dense_kind::adam, optim::dense_kind::adagrad}) {
    optim::dense_optimizer opt;
    opt.kind = kind;
    opt.learning_rate = 0.01f;
    opt.epsilon = optim::dense_optimizer::default_epsilon(kind);
    dense_model original(tiny_config(), opt, 7);
    REQUIRE(original.optimizer_state_size() == original.size() * opt.state_per_param());
    for (int k = 0; k < 50; ++k) step(original, k);
    CHECK(original.steps() == 50);

    // What a resume does: the params and the optimizer state and step count of the snapshot.
    dense_model resumed(tiny_config(), opt, 99);
    std::copy(original.params(), original.params() + original.size(), resumed.params());
    resumed.restore_optimizer(original.optimizer_state(), original.steps());
    // What a resume without the state did: the params alone, the optimizer afresh.
    dense_model afresh(tiny_config(), opt, 99);
    std::copy(original.params(), original.params() + original.size(), afresh.params());

    for (int k = 50; k < 55; ++k) {
      step(original, k);
      step(resumed, k);
      step(afresh, k);
    }
    CHECK(resumed.steps() == original.steps());
    CHECK(max_difference(resumed.params(), original.params(), original.size()) == 0.0);
    // Afresh, the first updates are full steps on every parameter (Adam: lr x sign; Adagrad:
    // lr x g / |g|), far from the continued ones.
    CHECK(max_difference(afresh.params(), original.params(), original.size()) > 1e-3);
  }
}

TEST_CASE("dense_model: SGD keeps no optimizer state", "[train]") {
  dense_model m(tiny_config(), optim::dense_optimizer{}, 1);
  CHECK(m.optimizer_state_size() == 0);
  CHECK(m.optimizer_state() == nullptr);
}
