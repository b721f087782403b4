#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "ss/core/metrics/accumulator.hpp"
#include "ss/core/metrics/metrics.hpp"
#include "ss/core/random.hpp"

namespace {

using ss::metrics::accumulator;
using ss::metrics::summary;

// O(n^2) reference AUC: the definition, pair by pair.
double brute_force_auc(const std::vector<float>& preds, const std::vector<float>& labels) {
  double credit = 0.0;
  double pairs = 0.0;
  for (std::size_t i = 0; i < preds.size(); ++i) {
    if (labels[i] < 0.5f) continue;
    for (std::size_t j = 0; j < preds.size(); ++j) {
      if (labels[j] >= 0.5f) continue;
      pairs += 1.0;
      if (preds[i] > preds[j]) credit += 1.0;
      if (preds[i] == preds[j]) credit += 0.5;
    }
  }
  return credit / pairs;
}

summary summarize(const std::vector<float>& preds, const std::vector<float>& labels,
                  double base_rate) {
  accumulator acc;
  REQUIRE(acc.add(preds, labels).is_ok());
  return acc.compute(base_rate);
}

}  // namespace

TEST_CASE("log loss: four examples match the hand-computed mean", "[core][metrics]") {
  // Exactly representable predictions, so the float storage loses nothing.
  std::vector<float> preds = {0.5f, 0.25f, 0.75f, 0.125f};
  std::vector<float> labels = {1, 0, 1, 0};
  const double expected =
      (std::log(2.0) + std::log(4.0 / 3.0) + std::log(4.0 / 3.0) + std::log(8.0 / 7.0)) / 4.0;
  summary s = summarize(preds, labels, 0.5);
  CHECK(std::abs(s.log_loss - expected) < 1e-12);
  CHECK(s.examples == 4);
  CHECK(s.positives == 2);
  CHECK(s.click_rate == 0.5);
  // H(0.5) = ln 2.
  CHECK(std::abs(s.ne - expected / std::log(2.0)) < 1e-12);
}

TEST_CASE("log loss: predictions are clipped to [1e-7, 1 - 1e-7]", "[core][metrics]") {
  CHECK(ss::metrics::log_loss(0.0, true) == Approx(-std::log(1e-7)).epsilon(1e-12));
  CHECK(ss::metrics::log_loss(1.0, false) == Approx(-std::log(1e-7)).epsilon(1e-9));
  CHECK(ss::metrics::log_loss(-3.0, true) == Approx(-std::log(1e-7)).epsilon(1e-12));
  CHECK(ss::metrics::log_loss(1.0, true) == Approx(1e-7).epsilon(1e-6));
  CHECK(std::isfinite(ss::metrics::log_loss(0.0, true)));
  CHECK(std::isnan(ss::metrics::log_loss(std::nan(""), true)));
}

TEST_CASE("ne: the constant predictor at the base rate scores exactly 1", "[core][metrics]") {
  // Click rate 1/4, every prediction 1/4, base rate 1/4.
  std::vector<float> preds(8, 0.25f);
  std::vector<float> labels = {1, 0, 0, 0, 0, 1, 0, 0};
  summary s = summarize(preds, labels, 0.25);
  CHECK(std::abs(s.ne - 1.0) < 1e-12);
  CHECK(std::abs(s.log_loss - ss::metrics::entropy(0.25)) < 1e-12);
  CHECK(s.calibration == Approx(1.0).epsilon(1e-12));
}

TEST_CASE("ne: entropy and the undefined base rates", "[core][metrics]") {
  CHECK(ss::metrics::entropy(0.5) == Approx(std::log(2.0)).epsilon(1e-15));
  CHECK(ss::metrics::entropy(0.0) == 0.0);
  CHECK(ss::metrics::entropy(1.0) == 0.0);
  CHECK(std::isnan(ss::metrics::entropy(1.5)));
  CHECK(std::isnan(ss::metrics::normalized_entropy(0.3, 0.0)));
  CHECK(std::isnan(ss::metrics::normalized_entropy(0.3, 1.0)));
  CHECK(std::isnan(ss::metrics::normalized_entropy(0.3, -0.1)));
  CHECK(std::isnan(ss::metrics::normalized_entropy(0.3, std::nan(""))));
  summary s = summarize({0.5f, 0.5f}, {1, 0}, 0.0);
  CHECK(std::isnan(s.ne));
  CHECK(!std::isnan(s.log_loss));
}

TEST_CASE("auc: perfect ranking is 1, reversed is 0", "[core][metrics]") {
  CHECK(ss::metrics::auc(std::vector<float>{0.1f, 0.2f, 0.8f, 0.9f},
                         std::vector<float>{0, 0, 1, 1}) == 1.0);
  CHECK(ss::metrics::auc(std::vector<float>{0.9f, 0.8f, 0.2f, 0.1f},
                         std::vector<float>{0, 0, 1, 1}) == 0.0);
}

TEST_CASE("auc: hand-computed small case", "[core][metrics]") {
  // Positive 0.35 beats 0.1 only; positive 0.8 beats both negatives: 3 of 4 pairs.
  std::vector<float> preds = {0.1f, 0.4f, 0.35f, 0.8f};
  std::vector<float> labels = {0, 0, 1, 1};
  CHECK(ss::metrics::auc(preds, labels) == 0.75);
  CHECK(summarize(preds, labels, 0.5).auc == 0.75);
}

TEST_CASE("auc: ties get half credit", "[core][metrics]") {
  CHECK(ss::metrics::auc(std::vector<float>{0.5f, 0.5f, 0.5f, 0.5f},
                         std::vector<float>{0, 1, 0, 1}) == 0.5);
  // Positive 0.5: beats 0.2, ties 0.5 (1.5); positive 0.9 beats both (2): 3.5 / 4.
  CHECK(ss::metrics::auc(std::vector<float>{0.2f, 0.5f, 0.5f, 0.9f},
                         std::vector<float>{0, 1, 0, 1}) == 0.875);
  // -0 and +0 compare equal, so they tie.
  CHECK(ss::metrics::auc(std::vector<float>{-0.0f, 0.0f}, std::vector<float>{1, 0}) == 0.5);
}

TEST_CASE("auc: matches the pairwise definition on data with many ties", "[core][metrics]") {
  // Large enough to take the radix-sort path; coarse predictions (including negative scores)
  // force many ties.
  ss::rng rng(42);
  std::vector<float> preds;
  std::vector<float> labels;
  for (int i = 0; i < 3000; ++i) {
    const float p = static_cast<float>(static_cast<int>(rng.below(40)) - 10) / 29.0f;
    preds.push_back(p);
    labels.push_back(rng.bernoulli(0.2 + 0.5 * std::max(0.0f, p)) ? 1.0f : 0.0f);
  }
  const double expected = brute_force_auc(preds, labels);
  CHECK(std::abs(ss::metrics::auc(preds, labels) - expected) < 1e-12);
  CHECK(std::abs(summarize(preds, labels, 0.3).auc - expected) < 1e-12);
  std::vector<float> pos;
  std::vector<float> neg;
  for (std::size_t i = 0; i < preds.size(); ++i) (labels[i] >= 0.5f ? pos : neg).push_back(preds[i]);
  CHECK(std::abs(ss::metrics::auc_from_groups(pos, neg) - expected) < 1e-12);
}

TEST_CASE("auc: NaN when only one class is present", "[core][metrics]") {
  CHECK(std::isnan(ss::metrics::auc(std::vector<float>{0.1f, 0.7f}, std::vector<float>{1, 1})));
  CHECK(std::isnan(ss::metrics::auc(std::vector<float>{0.1f, 0.7f}, std::vector<float>{0, 0})));
  CHECK(std::isnan(ss::metrics::auc(std::vector<float>{}, std::vector<float>{})));
  summary s = summarize({0.1f, 0.7f}, {0, 0}, 0.2);
  CHECK(std::isnan(s.auc));
  CHECK(std::isnan(s.calibration));  // no clicks: the ratio is undefined
  CHECK(s.click_rate == 0.0);
}

TEST_CASE("calibration: mean prediction over click rate", "[core][metrics]") {
  summary s = summarize({0.25f, 0.5f, 0.125f, 0.125f}, {1, 0, 0, 0}, 0.25);
  CHECK(s.mean_prediction == 0.25);
  CHECK(s.click_rate == 0.25);
  CHECK(s.calibration == 1.0);
  summary over = summarize({0.5f, 0.5f}, {1, 0}, 0.5);
  summary under = summarize({0.25f, 0.25f}, {1, 0}, 0.5);
  CHECK(over.calibration == 1.0);
  CHECK(under.calibration == 0.5);
}

TEST_CASE("accumulator: empty gives NaN ratios and zero counts", "[core][metrics]") {
  accumulator acc;
  summary s = acc.compute(0.25);
  CHECK(s.examples == 0);
  CHECK(s.positives == 0);
  CHECK(std::isnan(s.click_rate));
  CHECK(std::isnan(s.mean_prediction));
  CHECK(std::isnan(s.log_loss));
  CHECK(std::isnan(s.ne));
  CHECK(std::isnan(s.auc));
  CHECK(std::isnan(s.calibration));
  CHECK(!s.to_string().empty());
}

TEST_CASE("accumulator: mismatched spans are refused", "[core][metrics]") {
  accumulator acc;
  ss::status st = acc.add(std::vector<float>{0.1f, 0.2f}, std::vector<float>{1});
  CHECK(st.code() == ss::errc::invalid_argument);
  CHECK(acc.examples() == 0);
}

TEST_CASE("accumulator: merge equals a single accumulator", "[core][metrics]") {
  ss::rng rng(7);
  accumulator single;
  accumulator parts[3];
  for (int i = 0; i < 30000; ++i) {
    const float p = rng.uniform_float();
    const float y = rng.bernoulli(p) ? 1.0f : 0.0f;
    single.add(p, y);
    parts[i % 3].add(p, y);
  }
  accumulator merged;
  for (const auto& part : parts) merged.merge(part);
  summary a = single.compute(0.5);
  summary b = merged.compute(0.5);
  CHECK(a.examples == b.examples);
  CHECK(a.positives == b.positives);
  CHECK(a.auc == b.auc);
  CHECK(a.log_loss == Approx(b.log_loss).epsilon(1e-13));
  CHECK(a.ne == Approx(b.ne).epsilon(1e-13));
  CHECK(a.mean_prediction == Approx(b.mean_prediction).epsilon(1e-13));
  CHECK(a.calibration == Approx(b.calibration).epsilon(1e-13));

  // Merging into itself doubles every count and leaves the ratios alone.
  accumulator twice = single;
  twice.merge(twice);
  summary c = twice.compute(0.5);
  CHECK(c.examples == 2 * a.examples);
  CHECK(c.positives == 2 * a.positives);
  CHECK(c.auc == Approx(a.auc).epsilon(1e-12));
  CHECK(c.log_loss == Approx(a.log_loss).epsilon(1e-13));

  twice.clear();
  CHECK(twice.examples() == 0);
}

TEST_CASE("accumulator: ten million examples", "[core][metrics]") {
  constexpr std::size_t n = 10'000'000;
  ss::rng rng(11);
  accumulator acc;
  acc.reserve(n);
  std::vector<float> preds(1000);
  std::vector<float> labels(1000);
  for (std::size_t done = 0; done < n; done += preds.size()) {
    for (std::size_t i = 0; i < preds.size(); ++i) {
      preds[i] = rng.uniform_float();
      labels[i] = rng.bernoulli(preds[i]) ? 1.0f : 0.0f;
    }
    acc.add(preds.data(), labels.data(), preds.size());
  }
  summary s = acc.compute(0.5);
  CHECK(s.examples == n);
  // Labels drawn from the predictions: perfectly calibrated, AUC of a uniform score is 5/6.
  CHECK(s.calibration == Approx(1.0).epsilon(2e-3));
  CHECK(s.auc == Approx(5.0 / 6.0).epsilon(2e-3));
}
