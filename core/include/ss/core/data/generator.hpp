// Synthetic Criteo-format data labelled by a hidden random "teacher", so training can be checked
// end to end without downloading anything, against a known best possible log loss.
//
// The teacher (everything below is a pure function of the teacher seed):
//  - 13 integer dense features I1..I13, count-like: x = floor(c_j * (U^(-1/a_j) - 1)) (a Lomax,
//    heavy tailed; a_j in [0.7, 2.5], c_j log-uniform in [0.5, 200]). Each is missing with its own
//    rate (0..60%, most low); four of them are -1, -2 or -3 with rate 2..10% (like Criteo's I2).
//  - 26 categorical features C1..C26. Feature f has V_f values, the V_f spread log-uniformly over
//    [10, 1e6] (one per stratum of the log range, in a seeded order). Value ranks are drawn from a
//    Zipf law with exponent s_f in [1.05, 1.2] (an alias table up to 4096 values, rejection-
//    inversion sampling above: O(1) time and memory for any V_f); each feature is missing with its
//    own probability in [0, 40%]. A value is written
//    as 8 lowercase hex characters: the low 32 bits of a hash of (seed, f, rank), like Criteo.
//  - The label is Bernoulli(sigmoid(z)), z = bias + scale * r with
//      r = sum_f w_f(v_f)                                   first order, w ~ N(0, sigma_f^2)
//        + sum_j u_j * log1p(max(x_j, 0))                   dense, missing = 0 as the parser reads it
//        + sum_{(a,b) in 6 pairs} <e_a(v_a), e_b(v_b)>      factorization-machine pairs, dim 4
//        + sum_{h in 3 features} <A_h d, e_h(v_h)>          dense part x categorical, A_h is 4 x 13
//    Every per-value weight and latent vector comes from hashing (seed, feature, value), never a
//    stored table, so a vocabulary of a million costs no memory. Values are keyed by their written
//    hex token (the missing value by its own key), so z is a function of exactly what a reader
//    sees, even where two ranks collide in 32 bits. A DLRM with dot interactions can represent
//    every term except the unlearnable tail of rare values.
//  - `scale` and `bias` are calibrated on 8192 rows drawn from a stream of the teacher seed (not
//    the row seed): bias by bisection so the mean click probability is click_rate (0.25), scale by
//    bisection so the Bayes-optimal normalized entropy is bayes_ne (0.7).
//
// Drift (generator_options::drift_rows > 0): the label function changes over the rows; the
// features do not. Next to the teacher above (teacher A) the seed defines teacher B, alike but
// with independent per-value weights w'_f(v) and latent vectors e'_f(v) (other hashes of the
// same values). Row i is labelled by the teacher at angle theta(i) = (pi / 2) * i / drift_rows:
//      w_f(v, theta) = cos(theta) w_f(v) + sin(theta) w'_f(v), likewise every e_f(v, theta),
// so the teacher turns from A (row 0) to B (row drift_rows), on to -A (2 drift_rows), and so on,
// as long as the stream goes. With drift_step = K it holds still within each step of K rows
// (theta of the step's first row) and jumps between steps. Turning keeps every weight's and
// latent coordinate's variance, so the calibrated scale stays right and the Bayes NE near its
// target at any angle; the mean logit does move (a Zipf feature's head values carry much of the
// mass, and B weighs them anew), so the bias is calibrated again at 256 angles round the turn and
// read between them: the click rate stays near its target too (tests/core/data/drift_test.cpp). The dense
// weights and the dense x categorical matrices do not drift. theta is a pure function of the row's
// index in the stream (first_row + its place in the file), so any range of rows can be written
// alone and equals the same rows of the whole; drift_rows = 0 is the stationary teacher, byte
// for byte.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ss/core/random.hpp"
#include "ss/core/status.hpp"

namespace ss::data {

struct teacher_options {
  std::uint64_t seed = 1;
  double click_rate = 0.25;  // target mean click probability
  double bayes_ne = 0.7;     // target Bayes-optimal normalized entropy
  std::uint32_t calibration_rows = 8192;
  // Calibrate the bias for every angle of drift too (a table round the turn; about 0.1 s).
  bool drift = false;
};

// One drawn row, in raw form.
struct teacher_row {
  std::array<std::int64_t, 13> dense{};
  std::array<bool, 13> dense_missing{};
  std::array<std::uint32_t, 26> token{};  // written as 8 hex characters
  std::array<bool, 26> categorical_missing{};
};

class teacher {
 public:
  static constexpr std::uint32_t num_dense = 13;
  static constexpr std::uint32_t num_categorical = 26;
  static constexpr std::uint32_t latent_dim = 4;
  static constexpr std::uint32_t num_pairs = 6;
  static constexpr std::uint32_t num_dense_crosses = 3;

  explicit teacher(const teacher_options& options);

  // Draws one row's features (not its label) from `r`.
  void draw(rng& r, teacher_row& out) const;
  // The label's logit and probability; `angle` turns the teacher from A (0) towards B (pi / 2).
  double logit(const teacher_row& row, double angle = 0) const;
  double probability(const teacher_row& row, double angle = 0) const;

  std::uint64_t vocabulary(std::uint32_t f) const { return cat_[f].vocabulary; }
  double zipf_exponent(std::uint32_t f) const { return cat_[f].exponent; }
  double categorical_missing_rate(std::uint32_t f) const { return cat_[f].missing; }
  double dense_missing_rate(std::uint32_t j) const { return dense_[j].missing; }
  double bias() const noexcept { return bias_; }
  double scale() const noexcept { return scale_; }
  const teacher_options& options() const noexcept { return options_; }

 private:
  struct dense_feature {
    double missing = 0, negative = 0, shape = 1, spread = 1, weight = 0;
  };
  struct categorical_feature {
    std::uint64_t vocabulary = 1;
    double exponent = 1.1, missing = 0, sigma = 1;
    std::uint64_t key = 0;  // hashes of this feature's tokens and weights start here
    // Small vocabularies: Walker/Vose alias table, one uniform per draw.
    std::vector<double> alias_prob;
    std::vector<std::uint32_t> alias_index;
    // Large ones: rejection-inversion (Hoermann & Derflinger 1996), O(1) memory for any size.
    double h_integral_x1 = 0, h_integral_n = 0, s = 0;
    std::uint64_t sample(rng& r) const;
    double h(double x) const;
    double h_integral(double x) const;
    double h_integral_inverse(double x) const;
  };

  // Drift: r of a row as six numbers, r(angle) = k0 + c k1 + s k2 + c^2 k3 + s^2 k4 + c s k5.
  using parts = std::array<double, 6>;
  double raw_logit(const teacher_row& row, double angle) const;  // r, before scale and bias
  parts drift_parts(const teacher_row& row) const;
  static double turned(const parts& k, double angle) noexcept;
  double bias_at(double angle) const;
  void calibrate_drift(const std::vector<parts>& rows, double target_rate);

  teacher_options options_;
  std::array<dense_feature, num_dense> dense_{};
  std::array<categorical_feature, num_categorical> cat_{};
  std::array<std::array<std::uint32_t, 2>, num_pairs> pairs_{};
  std::array<std::uint32_t, num_dense_crosses> cross_features_{};
  std::array<std::array<double, latent_dim * num_dense>, num_dense_crosses> cross_matrix_{};
  double latent_sigma_ = 0.5;
  double bias_ = 0;
  double scale_ = 1;
  std::vector<double> drift_bias_;  // the bias at 256 angles round the turn (with drift only)
};

struct generator_options {
  std::uint64_t seed = 1;       // the teacher: the same seed is the same task
  std::uint64_t rows_seed = 1;  // the row stream: which rows are drawn from it
  std::uint64_t rows = 0;
  std::uint32_t files = 1;      // rows split evenly over this many files (see generated_paths)
  bool gzip = false;
  int gzip_level = 1;           // fast; the hex tokens barely compress anyway
  double click_rate = 0.25;
  double bayes_ne = 0.7;
  // Drift (see the top of this file): a quarter turn of the teacher every drift_rows rows (0: no
  // drift), in steps of drift_step rows (0: every row).
  std::uint64_t drift_rows = 0;
  std::uint64_t drift_step = 0;
  // Row 0 of the output is row first_row of the stream: its features and its teacher.
  std::uint64_t first_row = 0;
  // >= 0: every row is labelled by the teacher of that stream row (a test set of the teacher as
  // it stands at the end of the training rows, say).
  std::int64_t drift_at_row = -1;
};

// The teacher's angle at stream row `row` (0 without drift; see the top of this file).
double drift_angle(const generator_options& options, std::uint64_t row) noexcept;

struct teacher_report {
  std::uint64_t rows = 0;
  std::uint64_t clicks = 0;
  double click_rate = 0;
  double bayes_log_loss = 0;     // mean over rows of the binary entropy of the true p
  double realized_log_loss = 0;  // mean log loss of the true p on the drawn labels
  double bayes_ne = 0;           // bayes_log_loss / H(click_rate)
  double realized_ne = 0;        // realized_log_loss / H(click_rate)
  std::uint64_t bytes = 0;       // uncompressed bytes written
  std::vector<std::string> paths;
  // The teacher at the first and last row, in quarter turns (0: teacher A, 1: teacher B).
  double drift_start = 0, drift_end = 0;
};

// The files written for `path`: path itself for one file, else "stem-00000-of-00004.ext", ....
std::vector<std::string> generated_paths(const std::string& path, std::uint32_t files);

// Writes options.rows Criteo TSV lines. Row i depends only on (seed, rows_seed, i): the same
// options give the same bytes every run, and the concatenated files do not depend on `files`.
result<teacher_report> generate_criteo(const generator_options& options, const std::string& path);
// The same with an already calibrated teacher (options.seed, click_rate, bayes_ne are ignored).
result<teacher_report> generate_criteo(const teacher& t, const generator_options& options,
                                       const std::string& path);

// Appends stream rows [options.first_row, options.first_row + options.rows) to `path` (a plain
// file, created if missing), piece_rows rows at a time: each piece is written as whole lines,
// then pace(rows appended so far) runs (where a caller waits to hold a rate). options.files and
// gzip do not apply.
result<teacher_report> append_criteo(const teacher& t, const generator_options& options, const std::string& path,
                                     std::uint64_t piece_rows, const std::function<void(std::uint64_t)>& pace);

struct train_test_report {
  teacher_report train;
  teacher_report test;
};

// A train and a test set of one teacher: the train rows use options.rows_seed, the test rows a
// seed derived from it, so the two sets are disjoint draws of the same task. With drift, the test
// rows are labelled by the teacher as it stands at the end of the training rows. Training rows are
// split over options.files files; the test set is always one file.
result<train_test_report> generate_train_test(const generator_options& options, std::uint64_t test_rows,
                                              const std::string& train_path, const std::string& test_path);

// -(p log p + (1 - p) log(1 - p)), in nats.
double binary_entropy(double p) noexcept;

}  // namespace ss::data
