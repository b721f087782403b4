// Progressive evaluation windows (core/include/ss/core/metrics/progressive.hpp): exact sums against
// the accumulator, the bucket AUC within its stated bound, merging across holders, expiry.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ss/core/metrics/accumulator.hpp"
#include "ss/core/metrics/progressive.hpp"
#include "ss/core/random.hpp"

namespace {

using ss::metrics::accumulator;
using ss::metrics::progressive_window;
using ss::metrics::summary;
using ss::metrics::window_slice;
using ss::metrics::window_spec;

// Examples whose click probability is the prediction pushed through a noisy logit: a model of
// AUC about 0.75, predictions spread over a few units of logit like a CTR model's.
struct examples {
  std::vector<float> predictions, labels;
};
examples draw(std::size_t n, std::uint64_t seed, double mean_logit = -1.0) {
  ss::rng r(seed);
  examples e;
  for (std::size_t i = 0; i < n; ++i) {
    const double z = mean_logit + 1.2 * r.normal();
    const float p = static_cast<float>(1.0 / (1.0 + std::exp(-z)));
    const double truth = 1.0 / (1.0 + std::exp(-(z + 0.8 * r.normal())));
    e.predictions.push_back(p);
    e.labels.push_back(r.bernoulli(truth) ? 1.0f : 0.0f);
  }
  return e;
}

summary exact(const examples& e, std::size_t from, std::size_t to, double base) {
  accumulator acc;
  acc.add(e.predictions.data() + from, e.labels.data() + from, to - from);
  return acc.compute(base);
}

window_spec unbounded() {
  window_spec s;
  s.examples = std::numeric_limits<std::uint64_t>::max();
  return s;
}

}  // namespace

TEST_CASE("progressive: buckets follow the prediction and cover the clipped range", "[core][metrics]") {
  using ss::metrics::prediction_bucket;
  const auto last = ss::metrics::progressive_buckets - 1;
  CHECK(prediction_bucket(0.5f) == ss::metrics::progressive_buckets / 2);
  CHECK(prediction_bucket(0.0f) == 0);
  CHECK(prediction_bucket(1e-7f) == 0);
  CHECK(prediction_bucket(1.0f) == last);
  CHECK(prediction_bucket(std::nanf("")) == 0);
  CHECK(prediction_bucket(-3.0f) == 0);
  CHECK(prediction_bucket(7.0f) == last);
  // Never decreasing in p, over every float step from 1e-6 to 1 - 1e-6 sampled densely.
  std::uint32_t before = 0;
  for (float p = 1e-6f; p < 1.0f - 1e-6f; p = std::nextafter(p * 1.0007f, 2.0f)) {
    const auto b = prediction_bucket(p);
    REQUIRE(b >= before);
    before = b;
  }
  // A logit step of one bucket width moves one bucket.
  const double z = 0.3;
  const auto at = [](double logit) { return prediction_bucket(static_cast<float>(1 / (1 + std::exp(-logit)))); };
  CHECK(at(z + ss::metrics::progressive_bucket_width) == at(z) + 1);
}

TEST_CASE("progressive: log loss, NE and calibration equal the accumulator's on the same examples", "[core][metrics]") {
  const auto e = draw(50000, 11);
  progressive_window w(unbounded());
  for (std::size_t i = 0; i < e.predictions.size(); i += 128) {
    const std::size_t n = std::min<std::size_t>(128, e.predictions.size() - i);
    w.add(static_cast<double>(i), e.predictions.data() + i, e.labels.data() + i, n);
  }
  const double base = 0.3;
  const auto want = exact(e, 0, e.predictions.size(), base);
  const auto got = w.summary(1e9, base);
  CHECK(got.metrics.examples == want.examples);
  CHECK(got.metrics.positives == want.positives);
  CHECK(got.metrics.log_loss == Approx(want.log_loss).epsilon(1e-12));
  CHECK(got.metrics.ne == Approx(want.ne).epsilon(1e-12));
  CHECK(got.metrics.calibration == Approx(want.calibration).epsilon(1e-12));
  CHECK(got.metrics.mean_prediction == Approx(want.mean_prediction).epsilon(1e-12));
  CHECK(got.enough);
}

TEST_CASE("progressive: the bucket AUC is within its stated bound of the exact AUC", "[core][metrics]") {
  for (const double mean_logit : {-3.0, -1.0, 0.5}) {
    const auto e = draw(40000, 5 + static_cast<std::uint64_t>(mean_logit + 10), mean_logit);
    progressive_window w(unbounded());
    w.add(0, e.predictions.data(), e.labels.data(), e.predictions.size());
    const auto got = w.summary(0, 0.3);
    const double want = exact(e, 0, e.predictions.size(), 0.3).auc;
    INFO("mean logit " << mean_logit << ": bucket AUC " << got.metrics.auc << ", exact " << want << ", bound "
                       << got.auc_error_bound);
    CHECK(want > 0.6);
    CHECK(std::abs(got.metrics.auc - want) <= got.auc_error_bound);
    // On predictions spread like a CTR model's the bound is a few thousandths.
    CHECK(got.auc_error_bound < 0.01);
  }
}

TEST_CASE("progressive: the AUC bound holds where every prediction shares a bucket", "[core][metrics]") {
  // Perfectly ranked inside one bucket: the exact AUC is 1, the buckets cannot tell, the bound says so.
  std::vector<float> p, y;
  for (int i = 0; i < 200; ++i) {
    p.push_back(0.5f + static_cast<float>(i) * 1e-6f);
    y.push_back(i >= 100 ? 1.0f : 0.0f);
  }
  progressive_window w(unbounded());
  w.add(0, p.data(), y.data(), p.size());
  const auto got = w.summary(0, 0.5);
  CHECK(got.metrics.auc == 0.5);
  CHECK(got.auc_error_bound == 0.5);
  accumulator acc;
  acc.add(p.data(), y.data(), p.size());
  CHECK(std::abs(got.metrics.auc - acc.compute(0.5).auc) <= got.auc_error_bound);
}

TEST_CASE("progressive: windows of several holders merge into the window of one", "[core][metrics]") {
  // Three Hogwild workers (or trainers) each score a third of the batches; merged, their slices
  // give what one holder of every batch gives.
  const auto e = draw(30000, 3);
  progressive_window one(unbounded());
  std::vector<progressive_window> parts(3, progressive_window(unbounded()));
  for (std::size_t i = 0, k = 0; i < e.predictions.size(); i += 100, ++k) {
    one.add(static_cast<double>(k), e.predictions.data() + i, e.labels.data() + i, 100);
    parts[k % 3].add(static_cast<double>(k), e.predictions.data() + i, e.labels.data() + i, 100);
  }
  std::vector<const window_slice*> all;
  for (auto& part : parts)
    for (const auto& s : part.slices(1e9)) all.push_back(&s);
  const auto merged = summarize(ss::metrics::merge_window(all, unbounded(), 1e9), 0.3);
  const auto single = one.summary(1e9, 0.3);
  CHECK(merged.metrics.examples == single.metrics.examples);
  CHECK(merged.metrics.positives == single.metrics.positives);
  CHECK(merged.metrics.auc == single.metrics.auc);  // the same histograms
  CHECK(merged.auc_error_bound == single.auc_error_bound);
  CHECK(merged.metrics.log_loss == Approx(single.metrics.log_loss).epsilon(1e-12));
  CHECK(merged.metrics.calibration == Approx(single.metrics.calibration).epsilon(1e-12));
}

TEST_CASE("progressive: an example window keeps the newest examples and expires the rest", "[core][metrics]") {
  const auto e = draw(5000, 9);
  window_spec spec;
  spec.examples = 1000;
  spec.slices = 4;  // slices of 250
  progressive_window w(spec);
  for (std::size_t i = 0; i < e.predictions.size(); i += 50)
    w.add(static_cast<double>(i), e.predictions.data() + i, e.labels.data() + i, 50);
  const auto got = w.summary(1e9, 0.3);
  // The slices hold at least the window and less than a slice more: here exactly the last 1000.
  REQUIRE(got.metrics.examples >= 1000);
  REQUIRE(got.metrics.examples < 1250);
  const std::size_t held = got.metrics.examples;
  const auto want = exact(e, e.predictions.size() - held, e.predictions.size(), 0.3);
  CHECK(got.metrics.positives == want.positives);
  CHECK(got.metrics.log_loss == Approx(want.log_loss).epsilon(1e-12));
  CHECK(got.metrics.calibration == Approx(want.calibration).epsilon(1e-12));
  CHECK(w.slices(1e9).size() <= 5);

  // A bigger batch than the window still leaves at least the window's examples, the newest.
  std::vector<float> ones(3000, 0.9f), clicks(3000, 1.0f);
  w.add(1e9, ones.data(), clicks.data(), ones.size());
  const auto after = w.summary(1e9, 0.3);
  CHECK(after.metrics.examples >= 1000);
  CHECK(after.metrics.click_rate == 1.0);
}

TEST_CASE("progressive: a time window keeps what was scored in its last seconds", "[core][metrics]") {
  window_spec spec;
  spec.examples = 0;  // no limit by count
  spec.seconds = 10;
  spec.slices = 5;  // slices of 2 s
  progressive_window w(spec);
  const float p = 0.25f, click = 1.0f, none = 0.0f;
  for (int t = 0; t < 100; ++t) w.add(t, &p, t % 4 == 0 ? &click : &none, 1);
  const auto got = w.summary(99, 0.25);
  // Examples of seconds 88..99: a slice stays while its newest example is within 10 s.
  CHECK(got.metrics.examples >= 10);
  CHECK(got.metrics.examples <= 12);
  CHECK(got.seconds <= 12);
  // Later, with nothing scored meanwhile, the window empties.
  CHECK(w.summary(105, 0.25).metrics.examples < got.metrics.examples);
  CHECK(w.summary(200, 0.25).metrics.examples == 0);
  CHECK(w.slices(200).empty());
}

TEST_CASE("progressive: a holder that stopped drops out once newer examples fill the window", "[core][metrics]") {
  // Trainer A scores 2000 examples and leaves; B goes on. Merged over both, A's part counts until
  // B's newer examples alone fill the window, and never twice.
  const auto e = draw(8000, 21);
  window_spec spec;
  spec.examples = 2000;
  spec.slices = 4;
  progressive_window a(spec), b(spec);
  a.add(1, e.predictions.data(), e.labels.data(), 2000);
  const std::vector<window_slice> a_left(a.slices(1).begin(), a.slices(1).end());
  auto merged_at = [&](double now) {
    std::vector<const window_slice*> all;
    for (const auto& s : a_left) all.push_back(&s);
    for (const auto& s : b.slices(now)) all.push_back(&s);
    return ss::metrics::merge_window(all, spec, now);
  };
  b.add(2, e.predictions.data() + 2000, e.labels.data() + 2000, 1000);
  CHECK(merged_at(2).examples == 2000);  // B's 1000, then A's newest slices (whole ones) up to 2000
  b.add(3, e.predictions.data() + 3000, e.labels.data() + 3000, 3000);
  const auto late = merged_at(3);
  CHECK(late.examples >= 2000);
  CHECK(late.oldest_seconds == 3);  // only B's slices, which all began at t = 3 or later
}

TEST_CASE("progressive: too few examples are reported as such, not as metrics", "[core][metrics]") {
  progressive_window w;
  const auto e = draw(300, 4);
  w.add(0, e.predictions.data(), e.labels.data(), e.predictions.size());
  const auto got = w.summary(0, 0.3);
  CHECK_FALSE(got.enough);
  CHECK(got.to_string().find("too few examples (300") != std::string::npos);
  const auto more = draw(5000, 5);
  w.add(1, more.predictions.data(), more.labels.data(), more.predictions.size());
  CHECK(w.summary(1, 0.3).enough);
  CHECK(w.summary(1, 0.3).to_string().find("progressive NE") == 0);

  // Enough examples but a single class: still not enough.
  progressive_window clicks_only;
  std::vector<float> p(2000, 0.4f), y(2000, 1.0f);
  clicks_only.add(0, p.data(), y.data(), p.size());
  CHECK_FALSE(clicks_only.summary(0, 0.3).enough);

  w.reset(window_spec{});
  CHECK(w.summary(1, 0.3).metrics.examples == 0);
}
