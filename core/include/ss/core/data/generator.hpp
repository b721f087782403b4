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
#pragma once

#include <array>
#include <cstdint>
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
  double logit(const teacher_row& row) const;
  double probability(const teacher_row& row) const;

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

  double raw_logit(const teacher_row& row) const;  // r, before scale and bias

  teacher_options options_;
  std::array<dense_feature, num_dense> dense_{};
  std::array<categorical_feature, num_categorical> cat_{};
  std::array<std::array<std::uint32_t, 2>, num_pairs> pairs_{};
  std::array<std::uint32_t, num_dense_crosses> cross_features_{};
  std::array<std::array<double, latent_dim * num_dense>, num_dense_crosses> cross_matrix_{};
  double latent_sigma_ = 0.5;
  double bias_ = 0;
  double scale_ = 1;
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
};

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
};

// The files written for `path`: path itself for one file, else "stem-00000-of-00004.ext", ....
std::vector<std::string> generated_paths(const std::string& path, std::uint32_t files);

// Writes options.rows Criteo TSV lines. Row i depends only on (seed, rows_seed, i): the same
// options give the same bytes every run, and the concatenated files do not depend on `files`.
result<teacher_report> generate_criteo(const generator_options& options, const std::string& path);
// The same with an already calibrated teacher (options.seed, click_rate, bayes_ne are ignored).
result<teacher_report> generate_criteo(const teacher& t, const generator_options& options,
                                       const std::string& path);

struct train_test_report {
  teacher_report train;
  teacher_report test;
};

// A train and a test set of one teacher: the train rows use options.rows_seed, the test rows a
// seed derived from it, so the two sets are disjoint draws of the same task. Training rows are
// split over options.files files; the test set is always one file.
result<train_test_report> generate_train_test(const generator_options& options, std::uint64_t test_rows,
                                              const std::string& train_path, const std::string& test_path);

// -(p log p + (1 - p) log(1 - p)), in nats.
double binary_entropy(double p) noexcept;

}  // namespace ss::data
