#include "ss/core/data/generator.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
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

std::vector<std::string> generated_paths(const std::string& path, std::uint32_t files) {
  if (files <= 1) return {path};
  const auto slash = path.find_last_of('/');
  const std::size_t name_start = slash == std::string::npos ? 0 : slash + 1;
  auto dot = path.find('.', name_start + 1);  // a leading dot is part of the name
  if (dot == std::string::npos) dot = path.size();
  const std::string stem = path.substr(0, dot);
  const std::string ext = path.substr(dot);
  std::vector<std::string> out;
  char part[40];
  for (std::uint32_t k = 0; k < files; ++k) {
    std::snprintf(part, sizeof part, "-%05u-of-%05u", k, files);
    out.push_back(stem + part + ext);
  }
  return out;
}

namespace {

// A plain or gzip output file.
class sink {
 public:
  // `append`: a plain file written at its end, unbuffered (every write is whole lines, so one
  // that follows the file never waits long on half a line).
  static result<std::unique_ptr<sink>> open(const std::string& path, bool gzip, int level, bool append = false) {
    auto s = std::unique_ptr<sink>(new sink(path));
    if (append) {
      s->file_ = std::fopen(path.c_str(), "ab");
      if (s->file_ == nullptr) return status(errc::io_error, path + ": cannot append: " + std::strerror(errno));
      std::setvbuf(s->file_, nullptr, _IONBF, 0);
    } else if (gzip) {
      const char mode[4] = {'w', 'b', static_cast<char>('0' + std::min(std::max(level, 0), 9)), '\0'};
      s->gz_ = gzopen(path.c_str(), mode);
      if (s->gz_ == nullptr) return status(errc::io_error, path + ": cannot create: " + std::strerror(errno));
      gzbuffer(s->gz_, 1 << 20);
    } else {
      s->file_ = std::fopen(path.c_str(), "wb");
      if (s->file_ == nullptr) return status(errc::io_error, path + ": cannot create: " + std::strerror(errno));
    }
    return s;
  }
  sink(const sink&) = delete;
  sink& operator=(const sink&) = delete;
  ~sink() { static_cast<void>(close()); }

  status write(const char* data, std::size_t n) {
    if (n == 0) return status::ok();
    const bool ok = file_ != nullptr ? std::fwrite(data, 1, n, file_) == n
                                     : gzwrite(gz_, data, static_cast<unsigned>(n)) == static_cast<int>(n);
    if (!ok) return status(errc::io_error, path_ + ": write failed: " + std::strerror(errno));
    return status::ok();
  }

  status close() {
    bool ok = true;
    if (file_ != nullptr) ok = std::fclose(file_) == 0;
    if (gz_ != nullptr) ok = gzclose_w(gz_) == Z_OK;
    file_ = nullptr;
    gz_ = nullptr;
    if (!ok) return status(errc::io_error, path_ + ": close failed: " + std::strerror(errno));
    return status::ok();
  }

 private:
  explicit sink(std::string path) : path_(std::move(path)) {}
  std::string path_;
  std::FILE* file_ = nullptr;
  gzFile gz_ = nullptr;
};

// Writes stream rows into sinks and sums up what the report says of them.
class row_writer {
 public:
  row_writer(const teacher& t, const generator_options& options)
      : t_(t),
        options_(options),
        rows_key_(hash_combine(hash_combine(t.options().seed, options.rows_seed), 0x726f7773ULL)),
        buffer_(buffer_bytes) {}

  // Rows [first, last) of the stream (the row of `first` in options.first_row's numbering).
  status write(sink& out, std::uint64_t first, std::uint64_t last) {
    static constexpr char hex[] = "0123456789abcdef";
    char* p = buffer_.data();
    char* const flush_at = buffer_.data() + buffer_bytes - max_row_bytes;
    for (std::uint64_t i = first; i < last; ++i) {
      rng r(hash_combine(rows_key_, i));  // row i depends on nothing but i
      t_.draw(r, row_);
      const double prob = t_.probability(row_, drift_angle(options_, i));
      const bool click = r.uniform() < prob;
      report_.clicks += click ? 1 : 0;
      sum_entropy_ += binary_entropy(prob);
      sum_loss_ -= std::log(std::max(click ? prob : 1.0 - prob, 1e-300));

      *p++ = click ? '1' : '0';
      for (std::uint32_t j = 0; j < teacher::num_dense; ++j) {
        *p++ = '\t';
        if (!row_.dense_missing[j]) p = std::to_chars(p, p + 24, row_.dense[j]).ptr;
      }
      for (std::uint32_t f = 0; f < teacher::num_categorical; ++f) {
        *p++ = '\t';
        if (row_.categorical_missing[f]) continue;
        const std::uint32_t tok = row_.token[f];
        for (int c = 0; c < 8; ++c) p[c] = hex[(tok >> (28 - 4 * c)) & 15];
        p += 8;
      }
      *p++ = '\n';
      if (p >= flush_at) {
        SS_RETURN_IF_ERROR(flush(out, p));
        p = buffer_.data();
      }
    }
    return flush(out, p);
  }

  // The report over rows [first, last).
  teacher_report finish(std::uint64_t first, std::uint64_t last) {
    teacher_report report = report_;
    report.rows = last - first;
    if (report.rows > 0) {
      const double n = static_cast<double>(report.rows);
      report.click_rate = static_cast<double>(report.clicks) / n;
      report.bayes_log_loss = sum_entropy_ / n;
      report.realized_log_loss = sum_loss_ / n;
      const double h = binary_entropy(report.click_rate);
      if (h > 0) {
        report.bayes_ne = report.bayes_log_loss / h;
        report.realized_ne = report.realized_log_loss / h;
      }
      constexpr double quarter_turn = 1.5707963267948966;
      report.drift_start = drift_angle(options_, first) / quarter_turn;
      report.drift_end = drift_angle(options_, last - 1) / quarter_turn;
    }
    return report;
  }

 private:
  static constexpr std::size_t buffer_bytes = std::size_t{4} << 20;
  static constexpr std::size_t max_row_bytes = 1024;  // 40 fields, none over 21 bytes

  status flush(sink& out, const char* end) {
    const auto n = static_cast<std::size_t>(end - buffer_.data());
    SS_RETURN_IF_ERROR(out.write(buffer_.data(), n));
    report_.bytes += n;
    return status::ok();
  }

  const teacher& t_;
  const generator_options& options_;
  std::uint64_t rows_key_;
  std::vector<char> buffer_;
  teacher_row row_;
  teacher_report report_;
  double sum_entropy_ = 0, sum_loss_ = 0;
};

}  // namespace

result<teacher_report> generate_criteo(const teacher& t, const generator_options& options,
                                       const std::string& path) {
  if (options.files == 0) return status(errc::invalid_argument, "files must be at least 1");
  if (options.drift_rows > 0 && !t.options().drift)
    return status(errc::invalid_argument, "drift needs a teacher calibrated for it (teacher_options::drift)");
  const auto paths = generated_paths(path, options.files);
  row_writer writer(t, options);
  const std::uint64_t first = options.first_row, last = options.first_row + options.rows;
  for (std::uint32_t k = 0; k < options.files; ++k) {
    auto out = sink::open(paths[k], options.gzip, options.gzip_level);
    if (!out) return out.error();
    SS_RETURN_IF_ERROR(writer.write(**out, first + options.rows * k / options.files,
                                    first + options.rows * (k + 1) / options.files));
    SS_RETURN_IF_ERROR((*out)->close());
  }
  teacher_report report = writer.finish(first, last);
  report.paths = paths;
  return report;
}

result<teacher_report> append_criteo(const teacher& t, const generator_options& options, const std::string& path,
                                     std::uint64_t piece_rows, const std::function<void(std::uint64_t)>& pace) {
  if (options.gzip) return status(errc::invalid_argument, path + ": rows are appended to plain files only, not gzip");
  if (options.drift_rows > 0 && !t.options().drift)
    return status(errc::invalid_argument, "drift needs a teacher calibrated for it (teacher_options::drift)");
  auto out = sink::open(path, false, 0, /*append=*/true);
  if (!out) return out.error();
  row_writer writer(t, options);
  const std::uint64_t first = options.first_row, last = options.first_row + options.rows;
  const std::uint64_t step = std::max<std::uint64_t>(piece_rows, 1);
  for (std::uint64_t at = first; at < last; at += std::min(step, last - at)) {
    SS_RETURN_IF_ERROR(writer.write(**out, at, at + std::min(step, last - at)));
    if (pace) pace(std::min(at + step, last) - first);
  }
  SS_RETURN_IF_ERROR((*out)->close());
  teacher_report report = writer.finish(first, last);
  report.paths = {path};
  return report;
}

namespace {
teacher_options teacher_options_of(const generator_options& options) {
  teacher_options t;
  t.seed = options.seed;
  t.click_rate = options.click_rate;
  t.bayes_ne = options.bayes_ne;
  t.drift = options.drift_rows > 0;
  return t;
}
}  // namespace

result<teacher_report> generate_criteo(const generator_options& options, const std::string& path) {
  const teacher t(teacher_options_of(options));
  return generate_criteo(t, options, path);
}

result<train_test_report> generate_train_test(const generator_options& options, std::uint64_t test_rows,
                                              const std::string& train_path, const std::string& test_path) {
  const teacher t(teacher_options_of(options));
  auto train = generate_criteo(t, options, train_path);
  if (!train) return train.error();
  generator_options test_options = options;
  test_options.rows = test_rows;
  test_options.rows_seed = hash_combine(options.rows_seed, 0x74657374ULL);
  test_options.files = 1;  // the test set is one file; only training data is split for readers
  test_options.first_row = 0;
  if (options.drift_rows > 0 && options.drift_at_row < 0)  // the teacher after the last training row
    test_options.drift_at_row = static_cast<std::int64_t>(options.first_row + options.rows);
  auto test = generate_criteo(t, test_options, test_path);
  if (!test) return test.error();
  return train_test_report{std::move(*train), std::move(*test)};
}

}  // namespace ss::data
