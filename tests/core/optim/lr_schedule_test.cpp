// Learning-rate schedules, checked against hand-computed multipliers, and the optimizers'
// lr_scale, checked against the same step at a proportionally smaller learning rate.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "ss/core/optim/dense_optimizer.hpp"
#include "ss/core/optim/lr_schedule.hpp"
#include "ss/core/optim/sparse_optimizer.hpp"

using namespace ss;
using namespace ss::optim;
using Approx = Catch::Detail::Approx;

TEST_CASE("lr schedule: warmup, then linear, cosine and step decay", "[core][optim]") {
  lr_schedule constant;
  CHECK(constant.constant());
  CHECK(constant.scale(0) == 1.0f);
  CHECK(constant.scale(123456789) == 1.0f);

  lr_schedule warm;
  warm.warmup_examples = 100;
  CHECK_FALSE(warm.constant());
  CHECK(warm.scale(0) == Approx(0.01));
  CHECK(warm.scale(49) == Approx(0.5));
  CHECK(warm.scale(99) == Approx(1.0));
  CHECK(warm.scale(100) == 1.0f);
  CHECK(warm.scale(100000) == 1.0f);

  lr_schedule linear = warm;
  linear.decay = decay_kind::linear;
  linear.decay_examples = 1000;
  linear.min_ratio = 0.1;
  CHECK(linear.scale(100) == Approx(1.0));
  CHECK(linear.scale(600) == Approx(0.55));   // halfway: 0.1 + 0.9 * 0.5
  CHECK(linear.scale(1100) == Approx(0.1));   // the end
  CHECK(linear.scale(50000) == Approx(0.1));  // and after it

  lr_schedule cosine = linear;
  cosine.decay = decay_kind::cosine;
  CHECK(cosine.scale(100) == Approx(1.0));
  CHECK(cosine.scale(350) == Approx(0.1 + 0.9 * (1 + std::cos(M_PI / 4)) / 2));  // a quarter in: 0.868
  CHECK(cosine.scale(600) == Approx(0.55));
  CHECK(cosine.scale(1100) == Approx(0.1));

  lr_schedule step;
  step.decay = decay_kind::step;
  step.decay_examples = 1000;
  step.step_gamma = 0.5;
  CHECK(step.scale(999) == 1.0f);
  CHECK(step.scale(1000) == 0.5f);
  CHECK(step.scale(2500) == 0.25f);
}

TEST_CASE("lr schedule: contradictory settings name the flags", "[core][optim]") {
  lr_schedule s;
  s.decay = decay_kind::cosine;
  CHECK_THAT(s.check().message(), Catch::Contains("--lr-decay cosine needs --lr-decay-examples"));
  s.decay_examples = 10;
  CHECK(s.check().is_ok());
  s.min_ratio = 1.5;
  CHECK_THAT(s.check().message(), Catch::Contains("--lr-min-ratio"));
  CHECK(parse_decay_kind("cosine").value() == decay_kind::cosine);
  CHECK(parse_decay_kind("none").value() == decay_kind::constant);
  CHECK_THAT(parse_decay_kind("exp").error().message(), Catch::Contains("none, linear, cosine, step"));
}

TEST_CASE("lr scale: an optimizer step at scale s is the step at learning rate lr * s", "[core][optim]") {
  const std::vector<float> grad = {0.5f, -1.0f, 0.25f, 2.0f};
  for (auto kind : {sparse_kind::sgd, sparse_kind::rowwise_adagrad}) {
    sparse_optimizer scaled, smaller;
    scaled.kind = smaller.kind = kind;
    scaled.learning_rate = 0.2f;
    smaller.learning_rate = 0.05f;
    std::vector<float> a = {1, 2, 3, 4, 0.5f}, b = a;  // 4 values, then the Adagrad state
    scaled.apply(a.data(), grad.data(), 4, 0.25f);
    smaller.apply(b.data(), grad.data(), 4);
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(b[i]).epsilon(1e-6));
  }
  for (auto kind : {dense_kind::sgd, dense_kind::adagrad, dense_kind::adam}) {
    dense_optimizer scaled, smaller;
    scaled.kind = smaller.kind = kind;
    scaled.learning_rate = 0.2f;
    smaller.learning_rate = 0.05f;
    scaled.weight_decay = smaller.weight_decay = 0.01f;
    std::vector<float> a = {1, 2, 3, 4}, b = a, sa(8, 0.1f), sb = sa;
    for (std::uint64_t t = 1; t <= 3; ++t) {
      scaled.apply(a.data(), sa.data(), grad.data(), 4, t, 0.25f);
      smaller.apply(b.data(), sb.data(), grad.data(), 4, t);
    }
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(b[i]).epsilon(1e-6));
  }
}
