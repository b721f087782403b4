#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>
#include <vector>

#include "ss/core/random.hpp"
#include "ss/core/sync/sync_algorithms.hpp"

using namespace ss::sync;

TEST_CASE("sync names: every algorithm in both modes, and none", "[core][sync]") {
  for (const char* name : {"none", "s-easgd", "s-ma", "s-bmuf", "fr-easgd", "fr-ma", "fr-bmuf"}) {
    auto s = parse_sync(name);
    REQUIRE(s.is_ok());
    CHECK(to_string(*s) == name);
  }
  CHECK(parse_sync("s-bmuf")->when == mode::shadow);
  CHECK(parse_sync("fr-easgd")->algo == algorithm::easgd);
  auto bad = parse_sync("s-adam");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.error().message().find("s-easgd") != std::string::npos);
  CHECK_FALSE(parse_sync("easgd").is_ok());
  CHECK(default_easgd_alpha(9) == Approx(0.1f));
  CHECK(default_bmuf_momentum(4) == Approx(0.75f));
}

TEST_CASE("easgd: hand-computed step, and w_i + central is conserved", "[core][sync]") {
  std::vector<float> w = {1.0f, -2.0f, 4.0f}, c = {0.0f, 2.0f, 4.0f}, d(3);
  const std::vector<float> before_sum = {w[0] + c[0], w[1] + c[1], w[2] + c[2]};
  easgd_step(w.data(), c.data(), 0.25f, d.data(), 3);
  subtract(w.data(), d.data(), 3);
  // d = 0.25 * (w - c) = (0.25, -1, 0)
  CHECK(d == std::vector<float>{0.25f, -1.0f, 0.0f});
  CHECK(w == std::vector<float>{0.75f, -1.0f, 4.0f});
  CHECK(c == std::vector<float>{0.25f, 1.0f, 4.0f});
  for (int i = 0; i < 3; ++i) CHECK(w[i] + c[i] == Approx(before_sum[i]));
}

TEST_CASE("easgd: repeated rounds pull a replica and the center together", "[core][sync]") {
  std::vector<float> w = {10.0f}, c = {0.0f}, d(1);
  for (int r = 0; r < 50; ++r) {
    easgd_step(w.data(), c.data(), 0.3f, d.data(), 1);
    subtract(w.data(), d.data(), 1);
  }
  CHECK(w[0] == Approx(5.0f).margin(1e-4));  // they meet halfway: w + c stays 10
  CHECK(c[0] == Approx(5.0f).margin(1e-4));
}

TEST_CASE("model averaging: the mean, and equal replicas are a no-op", "[core][sync]") {
  replica_mean m(2);
  const float a[] = {1, 2}, b[] = {3, 6}, c[] = {5, 1};
  m.add(a);
  m.add(b);
  m.add(c);
  CHECK(m.count() == 3);
  float out[2];
  m.mean(out);
  CHECK(out[0] == Approx(3.0f));
  CHECK(out[1] == Approx(3.0f));
  // Averaging identical replicas changes nothing.
  replica_mean same(3);
  const float w[] = {0.5f, -1.5f, 2.0f};
  for (int i = 0; i < 4; ++i) same.add(w);
  float target[3], live[3] = {0.5f, -1.5f, 2.0f};
  same.mean(target);
  apply_target(live, w, target, 3);
  CHECK(live[0] == 0.5f);
  CHECK(live[1] == -1.5f);
  CHECK(live[2] == 2.0f);
}

TEST_CASE("shadow delta: progress made during a round survives its application", "[core][sync]") {
  // The replica was snapshotted, then the workers moved it by +0.5 while the round ran.
  const float snapshot[] = {1.0f, 2.0f};
  float live[] = {1.5f, 2.5f};
  const float target[] = {0.0f, 4.0f};  // the round's result for the snapshot
  apply_target(live, snapshot, target, 2);
  CHECK(live[0] == Approx(0.5f));  // target + the workers' progress
  CHECK(live[1] == Approx(4.5f));
}

TEST_CASE("bmuf: hand-computed block momentum with and without Nesterov", "[core][sync]") {
  const float w0[] = {1.0f};
  bmuf_state s;
  s.init(w0, 1);
  bmuf_options o{0.5f, 1.0f, false};
  float target;
  const float mean1[] = {3.0f};
  s.step(mean1, o, &target);
  // G = 2, D = 0.5 * 0 + 2 = 2, w_g = 3
  CHECK(s.global()[0] == Approx(3.0f));
  CHECK(s.momentum()[0] == Approx(2.0f));
  CHECK(target == Approx(3.0f));
  const float mean2[] = {4.0f};
  s.step(mean2, o, &target);
  // G = 1, D = 0.5 * 2 + 1 = 2, w_g = 5
  CHECK(s.global()[0] == Approx(5.0f));
  CHECK(target == Approx(5.0f));
  o.nesterov = true;
  const float mean3[] = {5.0f};
  s.step(mean3, o, &target);
  // The block started at 5: G = 0, D = 1, w_g = 6, Nesterov target = 6 + 0.5 * 1 = 6.5
  CHECK(s.global()[0] == Approx(6.0f));
  CHECK(target == Approx(6.5f));
  // The next block starts at 6.5 (not at w_g = 6): replicas that did not move give G = 0,
  // so the momentum decays instead of compounding.
  const float mean4[] = {6.5f};
  s.step(mean4, o, &target);
  // G = 0, D = 0.5, w_g = 6.5, target = 6.75
  CHECK(s.momentum()[0] == Approx(0.5f));
  CHECK(s.global()[0] == Approx(6.5f));
  CHECK(target == Approx(6.75f));
}

TEST_CASE("bmuf: frequent blocks without progress converge (Nesterov does not compound)", "[core][sync]") {
  // Shadow mode runs many small blocks. Replicas that simply take the target and make no
  // progress must leave BMUF at rest, whatever the momentum.
  const float w0[] = {1.0f};
  bmuf_state s;
  s.init(w0, 1);
  float target = 0;
  float mean = 2.0f;  // one real step of progress
  for (int r = 0; r < 200; ++r) {
    s.step(&mean, bmuf_options{0.875f, 1.0f, true}, &target);
    mean = target;  // the replicas took the target and did nothing else
  }
  CHECK(std::isfinite(target));
  CHECK(std::abs(s.momentum()[0]) < 1e-6);
  CHECK(target == Approx(s.global()[0]).margin(1e-5));
}

TEST_CASE("bmuf: with no momentum and block rate 1 it is model averaging", "[core][sync]") {
  ss::rng gen(3);
  std::vector<float> w0(100), mean(100), target(100);
  for (auto& v : w0) v = gen.uniform_float(-1, 1);
  for (auto& v : mean) v = gen.uniform_float(-1, 1);
  bmuf_state s;
  s.init(w0.data(), w0.size());
  s.step(mean.data(), bmuf_options{0.0f, 1.0f, true}, target.data());
  for (std::size_t i = 0; i < mean.size(); ++i) CHECK(target[i] == Approx(mean[i]));
}

TEST_CASE("relative distance", "[core][sync]") {
  const float a[] = {3, 4}, b[] = {0, 0}, c[] = {3, 4};
  CHECK(relative_distance(a, c, 2) == 0.0);
  CHECK(relative_distance(b, a, 2) == Approx(1.0));  // ||a|| / ||a||
}

TEST_CASE("average_by_examples: weighted by examples; a replica that trained nothing adds nothing", "[core][sync]") {
  const std::vector<float> a{1.0f, 2.0f}, b{3.0f, 6.0f}, untrained{100.0f, -100.0f};
  auto avg = ss::sync::average_by_examples({{&a, 300}, {&b, 100}, {&untrained, 0}});
  REQUIRE(avg.size() == 2);
  CHECK(avg[0] == Approx(1.5));  // (300 * 1 + 100 * 3) / 400
  CHECK(avg[1] == Approx(3.0));
  auto simulated = ss::sync::average_by_examples({{&a, 0}, {&b, 0}});
  CHECK(simulated[0] == Approx(2.0));
  CHECK(ss::sync::average_by_examples({}).empty());
}

TEST_CASE("sync names: the outer optimizer is a shadow EASGD or MA variant only", "[core][sync]") {
  for (const char* name : {"s-easgd-nesterov", "s-ma-nesterov"}) {
    auto s = parse_sync(name);
    REQUIRE(s.is_ok());
    CHECK(s->outer_nesterov);
    CHECK(s->when == mode::shadow);
    CHECK(to_string(*s) == name);
  }
  CHECK_FALSE(parse_sync("s-ma")->outer_nesterov);
  for (const char* bad : {"s-bmuf-nesterov", "fr-ma-nesterov", "none-nesterov", "-nesterov", "s-ma-nesterov-nesterov"})
    CHECK_FALSE(parse_sync(bad).is_ok());
  CHECK(parse_sync("s-x").error().message().find("s-ma-nesterov") != std::string::npos);
  CHECK(default_outer_momentum(algorithm::easgd, 4) == Approx(0.75f));
  CHECK(default_outer_momentum(algorithm::ma, 4) == Approx(0.25f));
  CHECK(default_outer_momentum(algorithm::ma, 1) == Approx(0.0f));
}

TEST_CASE("easgd fold: the synchronous center update, capped so it never overshoots", "[core][sync]") {
  std::vector<float> c = {0.0f, 4.0f};
  const float mean[] = {2.0f, 0.0f};
  easgd_fold(mean, 2, 0.25f, c.data(), 2);  // rate 0.5
  CHECK(c == std::vector<float>{1.0f, 2.0f});
  easgd_fold(mean, 8, 0.25f, c.data(), 2);  // rate capped at 1: the center becomes the mean
  CHECK(c == std::vector<float>{2.0f, 0.0f});
}

TEST_CASE("outer nesterov: hand-computed sweeps with and without the look-ahead", "[core][sync]") {
  outer_nesterov o;
  const float start[] = {1.0f};
  o.init(start, 1);
  outer_options opt;
  opt.momentum = 0.5f;
  opt.lr = 1.0f;
  // Sweep 1: the inner model moved to 3 (delta 2). v = 2; w = 1 + (2 + 0.5 * 2) = 4.
  float w = 3.0f;
  o.sweep_done(&w, opt);
  CHECK(w == Approx(4.0f));
  CHECK(o.momentum()[0] == Approx(2.0f));
  // Sweep 2 from the anchor 4: the inner model moved to 5 (delta 1). v = 0.5 * 2 + 1 = 2;
  // w = 4 + (1 + 0.5 * 2) = 6.
  w = 5.0f;
  o.sweep_done(&w, opt);
  CHECK(w == Approx(6.0f));
  // The closing round takes the true iterate, not the look-ahead: delta = 1, w = 6 + 1 = 7;
  // the momentum still moves, v = 0.5 * 2 + 1 = 2.
  w = 7.0f;
  o.sweep_done(&w, opt, false);
  CHECK(w == Approx(7.0f));
  CHECK(o.momentum()[0] == Approx(2.0f));
  // lr scales the whole step.
  outer_nesterov half;
  half.init(start, 1);
  opt.lr = 0.5f;
  w = 3.0f;
  half.sweep_done(&w, opt);
  CHECK(w == Approx(1.0f + 0.5f * 3.0f));
}

TEST_CASE("outer nesterov: no momentum and rate 1 is the plain algorithm", "[core][sync]") {
  outer_nesterov o;
  std::vector<float> start = {0.5f, -1.0f, 2.0f};
  o.init(start.data(), 3);
  ss::rng r(11);
  outer_options opt;
  opt.momentum = 0.0f;
  for (int sweep = 0; sweep < 20; ++sweep) {
    std::vector<float> w(3);
    for (auto& x : w) x = r.uniform_float(-1.0f, 1.0f);
    const auto inner = w;
    o.sweep_done(w.data(), opt);
    CHECK(w == inner);
  }
}

TEST_CASE("outer nesterov: a steady drift is amplified to 1 / (1 - mu), and it stops when the drift does",
          "[core][sync]") {
  // Each sweep the inner algorithm moves the model by 0.1 from where the last sweep left it.
  outer_nesterov o;
  float w = 0.0f;
  o.init(&w, 1);
  outer_options opt;
  opt.momentum = 0.75f;
  float prev = w;
  for (int sweep = 0; sweep < 200; ++sweep) {
    prev = w;
    w += 0.1f;
    o.sweep_done(&w, opt);
  }
  CHECK(w - prev == Approx(0.1f / (1 - 0.75f)).epsilon(1e-3));
  // The inner algorithm stops moving: the momentum decays and the model comes to rest.
  for (int sweep = 0; sweep < 200; ++sweep) {
    prev = w;
    o.sweep_done(&w, opt);
  }
  CHECK(std::abs(w - prev) < 1e-6f);
  // Resuming from a snapshot's momentum continues the same trajectory.
  outer_nesterov a, b;
  float wa = 1.0f, wb = 1.0f;
  const float v = 0.3f;
  a.restore(&wa, &v, 1);
  b.restore(&wb, &v, 1);
  wa += 0.05f;
  wb += 0.05f;
  a.sweep_done(&wa, opt);
  b.sweep_done(&wb, opt);
  CHECK(wa == wb);
  CHECK(wa == Approx(1.0f + 0.05f + 0.75f * (0.75f * 0.3f + 0.05f)));
}

TEST_CASE("sweep tracker: a sweep completes once every live trainer synced", "[core][sync]") {
  sweep_tracker s;
  const std::vector<std::uint64_t> live = {7, 9};
  s.saw(7);
  s.saw(7);
  CHECK_FALSE(s.complete(live, 2));
  s.saw(9);
  CHECK(s.complete(live, 2));
  CHECK(s.seen() == 0);  // the next sweep begins
  // A trainer that left does not hold the sweep; one that joined does.
  s.saw(7);
  CHECK(s.complete({7}, 1));
  s.saw(7);
  CHECK_FALSE(s.complete({7, 11}, 2));
  // Without identities, distinct trainers are counted.
  sweep_tracker n;
  n.saw(1);
  CHECK_FALSE(n.complete({}, 2));
  n.saw(2);
  CHECK(n.complete({}, 2));
}
