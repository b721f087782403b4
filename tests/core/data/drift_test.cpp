// The generator's drifting teacher (core/include/ss/core/data/generator.hpp): no drift is the
// stationary output byte for byte, any row range is reproducible on its own, late rows follow
// another label function than early ones, and the Bayes NE stays near its target.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "data_test_util.hpp"
#include "ss/core/checksum.hpp"
#include "ss/core/data/generator.hpp"
#include "ss/core/hash.hpp"

using namespace ss::data;

namespace {

generator_options drift_options(std::uint64_t rows) {
  generator_options o;
  o.seed = 3;
  o.rows_seed = 11;
  o.rows = rows;
  return o;
}

std::string generated(const generator_options& o, test::temp_dir& dir, const std::string& name,
                      teacher_report* report = nullptr) {
  auto r = generate_criteo(o, dir.file(name));
  if (!r.is_ok()) FAIL(r.error().to_string());
  if (report != nullptr) *report = *r;
  return test::read_all(dir.file(name));
}

// A row as a logistic model sees it: its label and its 26 categorical tokens (hashed with the
// feature's index), and the 13 dense values as log1p.
struct parsed_row {
  int label = 0;
  std::vector<std::uint64_t> tokens;
  std::vector<double> dense;
};
std::vector<parsed_row> parse(const std::string& text) {
  std::vector<parsed_row> rows;
  for (const auto& line : test::split_lines(text)) {
    parsed_row r;
    std::size_t start = 0;
    for (int field = 0; field < 40; ++field) {
      const auto tab = line.find('\t', start);
      const std::string value = line.substr(start, tab == std::string::npos ? std::string::npos : tab - start);
      if (field == 0) r.label = value == "1" ? 1 : 0;
      else if (field <= 13) r.dense.push_back(value.empty() ? 0.0 : std::log1p(std::max(0.0, std::stod(value))));
      else r.tokens.push_back(ss::hash_combine(static_cast<std::uint64_t>(field), std::hash<std::string>{}(value)));
      start = tab + 1;
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

// Logistic regression on hashed one-hot tokens and the dense values, a few passes of SGD: a
// stand-in for any model fitted to one part of the stream.
class logistic {
 public:
  static constexpr std::size_t buckets = 1 << 18;
  logistic() : w_(buckets, 0.0), dense_(13, 0.0) {}
  void fit(const std::vector<parsed_row>& rows, int passes) {
    for (int p = 0; p < passes; ++p)
      for (const auto& r : rows) {
        const double g = predict(r) - r.label;
        const double lr = 0.05;
        bias_ -= lr * g;
        for (const auto t : r.tokens) w_[t % buckets] -= lr * (g + 1e-5 * w_[t % buckets]);
        for (std::size_t j = 0; j < 13; ++j) dense_[j] -= 0.01 * g * r.dense[j];
      }
  }
  double predict(const parsed_row& r) const {
    double z = bias_;
    for (const auto t : r.tokens) z += w_[t % buckets];
    for (std::size_t j = 0; j < 13; ++j) z += dense_[j] * r.dense[j];
    return 1 / (1 + std::exp(-z));
  }
  double log_loss(const std::vector<parsed_row>& rows) const {
    double sum = 0;
    for (const auto& r : rows) {
      const double p = std::min(std::max(predict(r), 1e-7), 1 - 1e-7);
      sum -= r.label ? std::log(p) : std::log1p(-p);
    }
    return sum / static_cast<double>(rows.size());
  }

 private:
  std::vector<double> w_, dense_;
  double bias_ = 0;
};

}  // namespace

TEST_CASE("drift: none is the stationary teacher's output byte for byte", "[core][data]") {
  test::temp_dir dir;
  const std::string plain = generated(drift_options(3000), dir, "plain.tsv");
  // The bytes of this version's stationary generator (seed 3, rows seed 11, 3000 rows): a change
  // here changes every data set users generated before.
  CHECK(ss::crc32c(plain.data(), plain.size()) == 0xd29cb8c8u);
  auto o = drift_options(3000);
  o.drift_step = 500;  // a step without drift is no drift
  CHECK(generated(o, dir, "step.tsv") == plain);
  o.drift_rows = 1000;
  o.drift_at_row = 0;  // every row labelled by the teacher of row 0: teacher A, the stationary one
  CHECK(generated(o, dir, "frozen.tsv") == plain);
  o.drift_at_row = -1;
  CHECK(generated(o, dir, "drifting.tsv") != plain);
}

TEST_CASE("drift: any row range is generated on its own, the same as within the whole", "[core][data]") {
  test::temp_dir dir;
  auto o = drift_options(4000);
  o.drift_rows = 2000;
  const auto whole = test::split_lines(generated(o, dir, "whole.tsv"));
  auto part = o;
  part.first_row = 2500;
  part.rows = 1000;
  const auto range = test::split_lines(generated(part, dir, "range.tsv"));
  REQUIRE(range.size() == 1000);
  CHECK(std::equal(range.begin(), range.end(), whole.begin() + 2500));
  // Stepped drift too; and the same options twice give the same bytes.
  o.drift_step = 700;
  CHECK(generated(o, dir, "a.tsv") == generated(o, dir, "b.tsv"));
  const auto stepped = test::split_lines(generated(o, dir, "stepped.tsv"));
  part.drift_step = 700;
  const auto stepped_range = test::split_lines(generated(part, dir, "stepped_range.tsv"));
  CHECK(std::equal(stepped_range.begin(), stepped_range.end(), stepped.begin() + 2500));
  // Features never drift: only labels do.
  auto still = drift_options(4000);
  const auto plain = test::split_lines(generated(still, dir, "plain.tsv"));
  for (std::size_t i = 0; i < plain.size(); i += 97) CHECK(plain[i].substr(1) == whole[i].substr(1));
}

TEST_CASE("drift: a model fitted to the early rows scores worse on the late ones", "[core][data]") {
  test::temp_dir dir;
  // The teacher turns a quarter (teacher A to teacher B) over 40,000 rows.
  auto o = drift_options(50000);
  o.drift_rows = 40000;
  teacher_report report;
  const auto rows = parse(generated(o, dir, "drift.tsv", &report));
  const std::vector<parsed_row> fit(rows.begin(), rows.begin() + 20000);
  const std::vector<parsed_row> early(rows.begin() + 20000, rows.begin() + 24000);  // near where it was fitted
  const std::vector<parsed_row> late(rows.begin() + 46000, rows.end());             // past teacher B
  logistic model;
  model.fit(fit, 2);
  // The same rows of a stationary teacher: the late rows score as the early ones do.
  auto still = drift_options(50000);
  const auto still_rows = parse(generated(still, dir, "still.tsv"));
  logistic control;
  control.fit(std::vector<parsed_row>(still_rows.begin(), still_rows.begin() + 20000), 2);
  const double drift_gap = model.log_loss(late) - model.log_loss(early);
  const double still_gap = control.log_loss(std::vector<parsed_row>(still_rows.begin() + 46000, still_rows.end())) -
                           control.log_loss(std::vector<parsed_row>(still_rows.begin() + 20000, still_rows.begin() + 24000));
  INFO("log loss late - early: drifting " << drift_gap << ", stationary " << still_gap);
  CHECK(drift_gap > 0.02);
  CHECK(drift_gap > still_gap + 0.02);
  CHECK(report.drift_start == 0);
  CHECK(report.drift_end == Approx(49999.0 / 40000).epsilon(1e-12));
}

TEST_CASE("drift: the Bayes NE and the click rate stay near their targets as the teacher turns", "[core][data]") {
  test::temp_dir dir;
  for (const double at : {0.0, 0.5, 1.0, 1.5, 2.0}) {
    auto o = drift_options(20000);
    o.drift_rows = 10000;
    o.drift_at_row = static_cast<std::int64_t>(at * 10000);
    teacher_report r;
    generated(o, dir, "at.tsv", &r);
    INFO("quarter turns " << at << ": Bayes NE " << r.bayes_ne << ", click rate " << r.click_rate);
    CHECK(std::abs(r.bayes_ne - o.bayes_ne) < 0.03);
    CHECK(std::abs(r.click_rate - o.click_rate) < 0.02);
  }
}

TEST_CASE("drift: stepped drift holds the teacher within each step", "[core][data]") {
  test::temp_dir dir;
  auto o = drift_options(3000);
  o.drift_rows = 1000;
  o.drift_step = 1000;
  const auto stepped = test::split_lines(generated(o, dir, "stepped.tsv"));
  // Rows 1000..1999 are all labelled by the teacher of row 1000: the same as a frozen teacher there.
  auto frozen = o;
  frozen.drift_step = 0;
  frozen.drift_at_row = 1000;
  const auto at_1000 = test::split_lines(generated(frozen, dir, "frozen.tsv"));
  CHECK(std::equal(stepped.begin() + 1000, stepped.begin() + 2000, at_1000.begin() + 1000));
  CHECK_FALSE(std::equal(stepped.begin() + 2000, stepped.end(), at_1000.begin() + 2000));
}

TEST_CASE("drift: rows appended in paced pieces continue the stream", "[core][data]") {
  test::temp_dir dir;
  auto o = drift_options(2500);
  o.drift_rows = 1000;
  const auto whole = generated(o, dir, "whole.tsv");
  teacher_options to;
  to.seed = o.seed;
  to.drift = true;
  const teacher t(to);
  // Two appends, 1000 rows then 1500 from row 1000, in pieces of 300: the whole file's bytes.
  std::vector<std::uint64_t> paced;
  auto first = o;
  first.rows = 1000;
  auto a = append_criteo(t, first, dir.file("grown.tsv"), 300, [&](std::uint64_t done) { paced.push_back(done); });
  REQUIRE(a.is_ok());
  CHECK(paced == std::vector<std::uint64_t>{300, 600, 900, 1000});
  auto second = o;
  second.first_row = 1000;
  second.rows = 1500;
  auto b = append_criteo(t, second, dir.file("grown.tsv"), 300, nullptr);
  REQUIRE(b.is_ok());
  CHECK(test::read_all(dir.file("grown.tsv")) == whole);
  CHECK(b->rows == 1500);
  CHECK(b->drift_start == 1.0);
  // Appending gzip is refused, and so is drift from a teacher not calibrated for it.
  second.gzip = true;
  CHECK(append_criteo(t, second, dir.file("x.tsv"), 300, nullptr).error().code() == ss::errc::invalid_argument);
  second.gzip = false;
  const teacher still(teacher_options{o.seed});
  auto refused = append_criteo(still, second, dir.file("x.tsv"), 300, nullptr);
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refused.error().message().find("calibrated for it") != std::string::npos);
}
