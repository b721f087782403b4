#include "ss/core/data/generator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "ss/core/hash.hpp"

namespace ss::data {
namespace {

constexpr std::uint64_t missing_key = std::uint64_t{1} << 32;  // no 32-bit token collides with it
constexpr std::uint64_t golden = 0x9e3779b97f4a7c15ULL;

// Roughly N(0, 1) from one hash: the sum of four 16-bit uniforms (Irwin-Hall), rescaled.
double approx_normal(std::uint64_t h) noexcept {
  double sum = 0;
  for (int i = 0; i < 4; ++i) {
    sum += (static_cast<double>((h >> (16 * i)) & 0xffff) + 0.5) * (1.0 / 65536.0);
  }
  return (sum - 2.0) * 1.7320508075688772;  // variance 4/12 -> 1
}

// Uniform in (0, 1): never 0, so pow(u, negative) and log(u) stay finite.
double open_uniform(rng& r) noexcept {
  return (static_cast<double>(r.next_u64() >> 11) + 0.5) * 0x1.0p-53;
}

double sigmoid(double z) noexcept { return 1.0 / (1.0 + std::exp(-z)); }

// log1p(x)/x and expm1(x)/x, accurate near 0 (from the rejection-inversion paper's helpers).
double helper1(double x) noexcept {
  return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}
double helper2(double x) noexcept {
  return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x));
}

double dense_value(const teacher_row& row, std::uint32_t j) noexcept {
  if (row.dense_missing[j]) return 0.0;
  return std::log1p(static_cast<double>(std::max<std::int64_t>(row.dense[j], 0)));
}

}  // namespace

namespace {

constexpr std::uint64_t alias_max_vocabulary = 4096;

// Vose's alias method for P(rank k) proportional to k^-s, k = 1..V.
template <class feature>
void build_alias_table(feature& c) {
  const std::size_t n = static_cast<std::size_t>(c.vocabulary);
  std::vector<double> weight(n);
  double total = 0;
  for (std::size_t k = 0; k < n; ++k) total += weight[k] = std::pow(static_cast<double>(k + 1), -c.exponent);
  for (auto& w : weight) w *= static_cast<double>(n) / total;
  c.alias_prob.assign(n, 1.0);
  c.alias_index.resize(n);
  std::iota(c.alias_index.begin(), c.alias_index.end(), 0u);
  std::vector<std::uint32_t> small, large;
  for (std::uint32_t k = 0; k < n; ++k) (weight[k] < 1.0 ? small : large).push_back(k);
  while (!small.empty() && !large.empty()) {
    const std::uint32_t lo = small.back();
    small.pop_back();
    const std::uint32_t hi = large.back();
    c.alias_prob[lo] = weight[lo];
    c.alias_index[lo] = hi;
    weight[hi] -= 1.0 - weight[lo];
    if (weight[hi] < 1.0) {
      large.pop_back();
      small.push_back(hi);
    }
  }
  // Leftovers are 1 up to rounding.
}

}  // namespace

double binary_entropy(double p) noexcept {
  double h = 0;
  if (p > 0) h -= p * std::log(p);
  if (p < 1) h -= (1 - p) * std::log1p(-p);
  return h;
}

double teacher::categorical_feature::h(double x) const { return std::exp(-exponent * std::log(x)); }

double teacher::categorical_feature::h_integral(double x) const {
  const double log_x = std::log(x);
  return helper2((1.0 - exponent) * log_x) * log_x;
}

double teacher::categorical_feature::h_integral_inverse(double x) const {
  double t = x * (1.0 - exponent);
  if (t < -1.0) t = -1.0;  // numerical safety near the upper end
  return std::exp(helper1(t) * x);
}

std::uint64_t teacher::categorical_feature::sample(rng& r) const {
  if (!alias_prob.empty()) {
    const double u = r.uniform() * static_cast<double>(alias_prob.size());
    const auto i = std::min(static_cast<std::size_t>(u), alias_prob.size() - 1);
    return 1 + (u - static_cast<double>(i) < alias_prob[i] ? i : alias_index[i]);
  }
  // Rejection-inversion: invert the integral of the hat x^-s, accept with high probability.
  const double n = static_cast<double>(vocabulary);
  while (true) {
    const double u = h_integral_n + r.uniform() * (h_integral_x1 - h_integral_n);
    const double x = h_integral_inverse(u);
    double k = std::floor(x + 0.5);
    if (k < 1) k = 1;
    if (k > n) k = n;
    if (k - x <= s || u >= h_integral(k + 0.5) - h(k)) return static_cast<std::uint64_t>(k);
  }
}

teacher::teacher(const teacher_options& options) : options_(options) {
  rng pr(hash_combine(options.seed, 0x7465616368ULL));

  // Dense features: rates and shapes; four of them also take small negative values.
  std::array<std::uint32_t, num_dense> dense_order{};
  std::iota(dense_order.begin(), dense_order.end(), 0u);
  ss::shuffle(dense_order.begin(), dense_order.end(), pr);
  for (std::uint32_t j = 0; j < num_dense; ++j) {
    auto& d = dense_[j];
    const double u = pr.uniform();
    d.missing = 0.6 * u * u;
    d.shape = 0.7 + 1.8 * pr.uniform();
    d.spread = std::exp(std::log(0.5) + (std::log(200.0) - std::log(0.5)) * pr.uniform());
    d.weight = 0.25 * pr.normal();
  }
  for (std::uint32_t i = 0; i < 4; ++i) dense_[dense_order[i]].negative = 0.02 + 0.08 * pr.uniform();

  // Categorical features: vocabularies one per stratum of [log 10, log 1e6], in a seeded order.
  std::array<std::uint32_t, num_categorical> strata{};
  std::iota(strata.begin(), strata.end(), 0u);
  ss::shuffle(strata.begin(), strata.end(), pr);
  for (std::uint32_t f = 0; f < num_categorical; ++f) {
    auto& c = cat_[f];
    const double t = (static_cast<double>(strata[f]) + pr.uniform()) / num_categorical;
    c.vocabulary = static_cast<std::uint64_t>(std::llround(10.0 * std::pow(10.0, 5.0 * t)));
    c.exponent = 1.05 + 0.15 * pr.uniform();
    c.missing = 0.4 * pr.uniform() * pr.uniform();  // mostly low, a few up to 40%
    c.sigma = 0.2 + 0.8 * pr.uniform();
    c.key = hash_combine(options.seed, 0x6361740000ULL + f);
    if (c.vocabulary <= alias_max_vocabulary) build_alias_table(c);
    c.h_integral_x1 = c.h_integral(1.5) - 1.0;
    c.h_integral_n = c.h_integral(static_cast<double>(c.vocabulary) + 0.5);
    c.s = 2.0 - c.h_integral_inverse(c.h_integral(2.5) - c.h(2.0));
  }

  // Interactions: distinct random pairs of categorical features, and categorical features that
  // meet the dense part.
  for (std::uint32_t p = 0; p < num_pairs; ++p) {
    while (true) {
      const auto a = static_cast<std::uint32_t>(pr.below(num_categorical));
      const auto b = static_cast<std::uint32_t>(pr.below(num_categorical));
      if (a == b) continue;
      const std::array<std::uint32_t, 2> pair = {std::min(a, b), std::max(a, b)};
      if (std::find(pairs_.begin(), pairs_.begin() + p, pair) != pairs_.begin() + p) continue;
      pairs_[p] = pair;
      break;
    }
  }
  for (std::uint32_t h = 0; h < num_dense_crosses; ++h) {
    while (true) {
      const auto f = static_cast<std::uint32_t>(pr.below(num_categorical));
      if (std::find(cross_features_.begin(), cross_features_.begin() + h, f) != cross_features_.begin() + h) continue;
      cross_features_[h] = f;
      break;
    }
    for (auto& a : cross_matrix_[h]) a = 0.1 * pr.normal();
  }

  // Calibration on rows of a stream of the teacher seed only.
  const std::uint64_t calib_key = hash_combine(options.seed, 0x63616c6962ULL);
  std::vector<double> raw(std::max<std::uint32_t>(options.calibration_rows, 1));
  teacher_row row;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    rng r(hash_combine(calib_key, i));
    draw(r, row);
    raw[i] = raw_logit(row, 0);
  }
  const double target_rate = std::min(std::max(options.click_rate, 1e-6), 1 - 1e-6);
  auto solve_bias = [&](double scale) {
    double lo = -40, hi = 40;
    for (int it = 0; it < 50; ++it) {
      const double mid = 0.5 * (lo + hi);
      double sum = 0;
      for (const double v : raw) sum += sigmoid(mid + scale * v);
      (sum / static_cast<double>(raw.size()) < target_rate ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
  };
  auto ne_at = [&](double scale, double bias) {
    double sum = 0;
    for (const double v : raw) sum += binary_entropy(sigmoid(bias + scale * v));
    return sum / static_cast<double>(raw.size()) / binary_entropy(target_rate);
  };
  double lo = std::log(1e-3), hi = std::log(1e2);
  for (int it = 0; it < 40; ++it) {  // NE falls as the scale grows
    const double mid = 0.5 * (lo + hi);
    const double s = std::exp(mid);
    (ne_at(s, solve_bias(s)) > options.bayes_ne ? lo : hi) = mid;
  }
  scale_ = std::exp(0.5 * (lo + hi));
  bias_ = solve_bias(scale_);
  if (options.drift) {
    std::vector<parts> rows(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
      rng r(hash_combine(calib_key, i));
      draw(r, row);
      rows[i] = drift_parts(row);
    }
    calibrate_drift(rows, target_rate);
  }
}

void teacher::draw(rng& r, teacher_row& out) const {
  for (std::uint32_t j = 0; j < num_dense; ++j) {
    const auto& d = dense_[j];
    out.dense_missing[j] = r.uniform() < d.missing;
    if (out.dense_missing[j]) {
      out.dense[j] = 0;
    } else if (d.negative > 0 && r.uniform() < d.negative) {
      out.dense[j] = -1 - static_cast<std::int64_t>(r.below(3));
    } else {
      const double x = std::floor(d.spread * (std::pow(open_uniform(r), -1.0 / d.shape) - 1.0));
      out.dense[j] = static_cast<std::int64_t>(std::min(x, 1e12));
    }
  }
  for (std::uint32_t f = 0; f < num_categorical; ++f) {
    const auto& c = cat_[f];
    out.categorical_missing[f] = r.uniform() < c.missing;
    out.token[f] = out.categorical_missing[f] ? 0 : static_cast<std::uint32_t>(hash_combine(c.key, c.sample(r)));
  }
}

double teacher::raw_logit(const teacher_row& row, double angle) const {
  if (angle != 0) return turned(drift_parts(row), angle);
  std::array<double, num_dense> d{};
  double z = 0;
  for (std::uint32_t j = 0; j < num_dense; ++j) {
    d[j] = dense_value(row, j);
    z += dense_[j].weight * d[j];
  }
  // Every per-value quantity is a hash of (feature, value key).
  std::array<std::uint64_t, num_categorical> value_hash{};
  for (std::uint32_t f = 0; f < num_categorical; ++f) {
    const std::uint64_t key = row.categorical_missing[f] ? missing_key : row.token[f];
    value_hash[f] = hash_combine(cat_[f].key ^ 0x7765696768740000ULL, key);
    z += cat_[f].sigma * approx_normal(value_hash[f]);
  }
  auto latent = [&](std::uint32_t f, std::uint32_t i) {
    return latent_sigma_ * approx_normal(mix64(value_hash[f] + (i + 1) * golden));
  };
  for (const auto& [a, b] : pairs_) {
    for (std::uint32_t i = 0; i < latent_dim; ++i) z += latent(a, i) * latent(b, i);
  }
  for (std::uint32_t h = 0; h < num_dense_crosses; ++h) {
    for (std::uint32_t i = 0; i < latent_dim; ++i) {
      double ad = 0;
      for (std::uint32_t j = 0; j < num_dense; ++j) ad += cross_matrix_[h][i * num_dense + j] * d[j];
      z += ad * latent(cross_features_[h], i);
    }
  }
  return z;
}

teacher::parts teacher::drift_parts(const teacher_row& row) const {
  // With c = cos(angle), s = sin(angle) every per-value weight is c w_A + s w_B and every latent
  // coordinate c e_A + s e_B, so r = k0 + c k1 + s k2 + c^2 k3 + s^2 k4 + c s k5.
  parts k{};
  std::array<double, num_dense> d{};
  for (std::uint32_t j = 0; j < num_dense; ++j) {
    d[j] = dense_value(row, j);
    k[0] += dense_[j].weight * d[j];
  }
  std::array<std::uint64_t, num_categorical> hash_a{}, hash_b{};
  for (std::uint32_t f = 0; f < num_categorical; ++f) {
    const std::uint64_t key = row.categorical_missing[f] ? missing_key : row.token[f];
    hash_a[f] = hash_combine(cat_[f].key ^ 0x7765696768740000ULL, key);
    hash_b[f] = hash_combine(cat_[f].key ^ 0x6472696674000000ULL, key);  // teacher B's: other hashes
    k[1] += cat_[f].sigma * approx_normal(hash_a[f]);
    k[2] += cat_[f].sigma * approx_normal(hash_b[f]);
  }
  auto latent = [&](const std::array<std::uint64_t, num_categorical>& hash, std::uint32_t f, std::uint32_t i) {
    return latent_sigma_ * approx_normal(mix64(hash[f] + (i + 1) * golden));
  };
  for (const auto& [a, b] : pairs_) {
    for (std::uint32_t i = 0; i < latent_dim; ++i) {
      const double xa = latent(hash_a, a, i), xb = latent(hash_b, a, i);
      const double ya = latent(hash_a, b, i), yb = latent(hash_b, b, i);
      k[3] += xa * ya;
      k[4] += xb * yb;
      k[5] += xa * yb + xb * ya;
    }
  }
  for (std::uint32_t h = 0; h < num_dense_crosses; ++h) {
    for (std::uint32_t i = 0; i < latent_dim; ++i) {
      double ad = 0;
      for (std::uint32_t j = 0; j < num_dense; ++j) ad += cross_matrix_[h][i * num_dense + j] * d[j];
      k[1] += ad * latent(hash_a, cross_features_[h], i);
      k[2] += ad * latent(hash_b, cross_features_[h], i);
    }
  }
  return k;
}

double teacher::turned(const parts& k, double angle) noexcept {
  const double c = std::cos(angle), s = std::sin(angle);
  return k[0] + c * k[1] + s * k[2] + c * c * k[3] + s * s * k[4] + c * s * k[5];
}

double teacher::bias_at(double angle) const {
  if (angle == 0 || drift_bias_.empty()) return bias_;
  // Linear between the table's angles, over a whole turn.
  const double turn = 6.283185307179586;
  const double x = std::fmod(angle, turn) / turn * static_cast<double>(drift_bias_.size());
  const auto i = static_cast<std::size_t>(std::max(0.0, x)) % drift_bias_.size();
  const double frac = x - std::floor(x);
  return drift_bias_[i] + frac * (drift_bias_[(i + 1) % drift_bias_.size()] - drift_bias_[i]);
}

void teacher::calibrate_drift(const std::vector<parts>& rows, double target_rate) {
  // The turned teacher's raw logits keep their spread (the NE holds) but not exactly their mean:
  // the head values of a Zipf feature carry much of the mass, and teacher B weighs them anew. So
  // the bias is solved again (Newton's method from the neighbouring angle's) at angles all round
  // the turn, and read between them.
  constexpr std::size_t angles = 256;
  drift_bias_.assign(angles, bias_);
  double b = bias_;
  for (std::size_t a = 1; a < angles; ++a) {
    const double angle = 6.283185307179586 * static_cast<double>(a) / angles;
    for (int it = 0; it < 6; ++it) {
      double mean = 0, slope = 0;
      for (const auto& k : rows) {
        const double p = sigmoid(b + scale_ * turned(k, angle));
        mean += p;
        slope += p * (1 - p);
      }
      const double n = static_cast<double>(rows.size());
      if (slope <= 0) break;
      b -= (mean / n - target_rate) / (slope / n);
    }
    drift_bias_[a] = b;
  }
}

double teacher::logit(const teacher_row& row, double angle) const {
  return bias_at(angle) + scale_ * raw_logit(row, angle);
}

double teacher::probability(const teacher_row& row, double angle) const { return sigmoid(logit(row, angle)); }

double drift_angle(const generator_options& options, std::uint64_t row) noexcept {
  if (options.drift_rows == 0) return 0;
  if (options.drift_at_row >= 0) row = static_cast<std::uint64_t>(options.drift_at_row);
  if (options.drift_step > 0) row -= row % options.drift_step;
  constexpr double quarter_turn = 1.5707963267948966;
  return quarter_turn * static_cast<double>(row) / static_cast<double>(options.drift_rows);
}

}  // namespace ss::data
