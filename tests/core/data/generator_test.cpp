#include <catch2/catch.hpp>

#include <charconv>
#include <cmath>
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "data_test_util.hpp"
#include "ss/core/data/batch_reader.hpp"
#include "ss/core/data/generator.hpp"

using namespace ss::data;

namespace {

generator_options small_options(std::uint64_t rows = 20000) {
  generator_options o;
  o.seed = 3;
  o.rows_seed = 11;
  o.rows = rows;
  return o;
}

teacher_report generate(const generator_options& o, const std::string& path) {
  auto r = generate_criteo(o, path);
  if (!r.is_ok()) FAIL(r.error().to_string());
  return *r;
}

// The teacher's view of a written line, parsed here independently of the library's parser.
teacher_row parse_teacher_row(const std::string& line, int& label) {
  teacher_row row;
  std::vector<std::string> fields;
  std::size_t start = 0;
  while (true) {
    const auto tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab == std::string::npos ? tab : tab - start));
    if (tab == std::string::npos) break;
    start = tab + 1;
  }
  REQUIRE(fields.size() == 40);
  label = fields[0] == "1" ? 1 : 0;
  for (int j = 0; j < 13; ++j) {
    const auto& f = fields[1 + j];
    row.dense_missing[j] = f.empty();
    row.dense[j] = 0;
    if (!f.empty()) std::from_chars(f.data(), f.data() + f.size(), row.dense[j]);
  }
  for (int c = 0; c < 26; ++c) {
    const auto& f = fields[14 + c];
    row.categorical_missing[c] = f.empty();
    row.token[c] = 0;
    if (!f.empty()) {
      REQUIRE(f.size() == 8);
      std::from_chars(f.data(), f.data() + 8, row.token[c], 16);
    }
  }
  return row;
}

}  // namespace

TEST_CASE("generator: same seed, same bytes, whatever the number of files", "[core][data]") {
  test::temp_dir dir;
  auto o = small_options(5000);
  const auto a = generate(o, dir.file("a.txt"));
  const auto b = generate(o, dir.file("b.txt"));
  const auto bytes = test::read_all(dir.file("a.txt"));
  CHECK(bytes == test::read_all(dir.file("b.txt")));
  CHECK(a.bytes == bytes.size());
  CHECK(a.clicks == b.clicks);
  CHECK(a.bayes_log_loss == b.bayes_log_loss);

  o.files = 3;
  const auto split = generate(o, dir.file("part.txt"));
  REQUIRE(split.paths == std::vector<std::string>{dir.file("part-00000-of-00003.txt"), dir.file("part-00001-of-00003.txt"),
                                                  dir.file("part-00002-of-00003.txt")});
  std::string joined;
  for (const auto& p : split.paths) joined += test::read_all(p);
  CHECK(joined == bytes);
  CHECK(split.clicks == a.clicks);

  o.files = 2;
  o.gzip = true;
  const auto packed = generate(o, dir.file("packed.txt.gz"));
  REQUIRE(packed.paths.size() == 2);
  CHECK(packed.paths[1] == dir.file("packed-00001-of-00002.txt.gz"));
  CHECK(*is_gzip_file(packed.paths[0]));
  CHECK(test::read_gzip(packed.paths[0]) + test::read_gzip(packed.paths[1]) == bytes);
  const auto packed_again = generate(o, dir.file("again.txt.gz"));
  CHECK(test::read_all(packed_again.paths[0]) == test::read_all(packed.paths[0]));

  o = small_options(5000);
  o.rows_seed = 12;
  generate(o, dir.file("other_rows.txt"));
  CHECK(test::read_all(dir.file("other_rows.txt")) != bytes);
  o = small_options(5000);
  o.seed = 4;
  generate(o, dir.file("other_teacher.txt"));
  CHECK(test::read_all(dir.file("other_teacher.txt")) != bytes);
}

TEST_CASE("generator: output parses cleanly and matches its report", "[core][data]") {
  test::temp_dir dir;
  const auto o = small_options(20000);
  const auto report = generate(o, dir.file("train.txt"));
  CHECK(report.rows == 20000);

  batch_reader_options ro;
  ro.schema = input_schema::criteo();
  ro.paths = report.paths;
  ro.bad_rows.max_bad_fraction = 0.0;
  auto reader = batch_reader::open(ro);
  REQUIRE(reader.is_ok());
  example_batch batch;
  std::uint64_t rows = 0;
  double clicks = 0;
  while (true) {
    auto more = reader->next(batch);
    REQUIRE(more.is_ok());
    if (!*more) break;
    rows += batch.size();
    for (const float l : batch.labels) clicks += l;
  }
  CHECK(rows == 20000);
  CHECK(reader->counters().bad == 0);
  CHECK(reader->counters().empty_lines == 0);
  CHECK(static_cast<std::uint64_t>(clicks) == report.clicks);

  // Click rate near 0.25; the Bayes NE in the intended band.
  CHECK(report.click_rate == Approx(static_cast<double>(report.clicks) / 20000.0));
  CHECK(report.click_rate > 0.23);
  CHECK(report.click_rate < 0.27);
  CHECK(report.bayes_ne > 0.6);
  CHECK(report.bayes_ne < 0.8);

  // Recompute the Bayes and realized log loss from the text with the same teacher.
  const teacher t(teacher_options{o.seed});
  const auto lines = test::split_lines(test::read_all(dir.file("train.txt")));
  REQUIRE(lines.size() == 20000);
  double entropy = 0;
  double loss = 0;
  std::uint64_t negatives = 0;
  std::uint64_t missing_dense = 0;
  for (const auto& line : lines) {
    int label = 0;
    const auto row = parse_teacher_row(line, label);
    const double p = t.probability(row);
    entropy += -(p * std::log(p) + (1 - p) * std::log(1 - p));
    loss += -std::log(label == 1 ? p : 1 - p);
    for (int j = 0; j < 13; ++j) {
      negatives += !row.dense_missing[j] && row.dense[j] < 0 ? 1 : 0;
      missing_dense += row.dense_missing[j] ? 1 : 0;
    }
  }
  CHECK(report.bayes_log_loss == Approx(entropy / 20000).epsilon(1e-9));
  CHECK(report.realized_log_loss == Approx(loss / 20000).epsilon(1e-9));
  const double h = binary_entropy(report.click_rate);
  CHECK(report.bayes_ne == Approx(report.bayes_log_loss / h));
  CHECK(report.realized_ne == Approx(report.realized_log_loss / h));
  // The true p beats the constant predictor on the drawn labels.
  CHECK(report.realized_log_loss < h);
  CHECK(report.realized_ne < 0.9);
  CHECK(negatives > 0);
  CHECK(missing_dense > 0);
}

TEST_CASE("generator: the teacher's vocabularies and missing rates", "[core][data]") {
  const teacher t(teacher_options{5});
  std::uint64_t smallest = ~std::uint64_t{0};
  std::uint64_t largest = 0;
  for (std::uint32_t f = 0; f < teacher::num_categorical; ++f) {
    smallest = std::min(smallest, t.vocabulary(f));
    largest = std::max(largest, t.vocabulary(f));
    CHECK(t.zipf_exponent(f) >= 1.05);
    CHECK(t.zipf_exponent(f) <= 1.2);
    CHECK(t.categorical_missing_rate(f) <= 0.4);
  }
  CHECK(smallest < 20);
  CHECK(largest > 500000);
  CHECK(largest <= 1000000);

  // Drawn values stay within each vocabulary, with the head of the Zipf law much more common.
  ss::rng r(99);
  teacher_row row;
  std::uint32_t small_f = 0;
  for (std::uint32_t f = 0; f < teacher::num_categorical; ++f) {
    if (t.vocabulary(f) == smallest) small_f = f;
  }
  std::set<std::uint32_t> seen;
  for (int i = 0; i < 20000; ++i) {
    t.draw(r, row);
    if (!row.categorical_missing[small_f]) seen.insert(row.token[small_f]);
  }
  CHECK(seen.size() <= smallest);
  CHECK(seen.size() >= smallest / 2);
}

TEST_CASE("generator: value frequencies follow the Zipf law", "[core][data]") {
  const teacher t(teacher_options{5});
  // The alias table (small vocabularies) and rejection-inversion (large ones) must both give
  // P(rank k) = k^-s / H(V, s): compare the two most frequent tokens with it.
  std::vector<std::uint32_t> features;
  for (std::uint32_t f = 0; f < teacher::num_categorical; ++f) {
    if (t.vocabulary(f) < 100 || t.vocabulary(f) > 300000) features.push_back(f);
  }
  REQUIRE(features.size() >= 4);
  ss::rng r(2024);
  teacher_row row;
  std::vector<std::map<std::uint32_t, std::uint64_t>> counts(teacher::num_categorical);
  std::vector<std::uint64_t> present(teacher::num_categorical, 0);
  const int draws = 60000;
  for (int i = 0; i < draws; ++i) {
    t.draw(r, row);
    for (const auto f : features) {
      if (row.categorical_missing[f]) continue;
      ++counts[f][row.token[f]];
      ++present[f];
    }
  }
  for (const auto f : features) {
    const double s = t.zipf_exponent(f);
    double h = 0;
    for (std::uint64_t k = 1; k <= t.vocabulary(f); ++k) h += std::pow(static_cast<double>(k), -s);
    std::vector<std::uint64_t> top;
    for (const auto& kv : counts[f]) top.push_back(kv.second);
    std::sort(top.rbegin(), top.rend());
    REQUIRE(top.size() >= 2);
    const double n = static_cast<double>(present[f]);
    INFO("feature " << f << " V " << t.vocabulary(f) << " s " << s);
    CHECK(static_cast<double>(top[0]) / n == Approx(1.0 / h).epsilon(0.06));
    CHECK(static_cast<double>(top[1]) / n == Approx(std::pow(2.0, -s) / h).epsilon(0.08));
    CHECK(n / draws == Approx(1.0 - t.categorical_missing_rate(f)).margin(0.01));
  }
}

TEST_CASE("generator: train and test share the teacher, not the rows", "[core][data]") {
  test::temp_dir dir;
  auto o = small_options(6000);
  auto both = generate_train_test(o, 3000, dir.file("train.txt"), dir.file("test.txt"));
  REQUIRE(both.is_ok());
  CHECK(both->train.rows == 6000);
  CHECK(both->test.rows == 3000);
  const auto train = test::split_lines(test::read_all(dir.file("train.txt")));
  const auto test_lines = test::split_lines(test::read_all(dir.file("test.txt")));
  CHECK(train.size() == 6000);
  CHECK(test_lines.size() == 3000);
  CHECK(train[0] != test_lines[0]);
  // The train file is what generate_criteo writes with the same options.
  generate(o, dir.file("alone.txt"));
  CHECK(test::read_all(dir.file("alone.txt")) == test::read_all(dir.file("train.txt")));
  // The test rows are scored by the same teacher.
  const teacher t(teacher_options{o.seed});
  double entropy = 0;
  for (const auto& line : test_lines) {
    int label = 0;
    entropy += binary_entropy(t.probability(parse_teacher_row(line, label)));
  }
  CHECK(both->test.bayes_log_loss == Approx(entropy / 3000).epsilon(1e-9));

  o.files = 0;
  CHECK(generate_criteo(o, dir.file("x.txt")).error().code() == ss::errc::invalid_argument);
  CHECK(generated_paths("/a.b/c", 2) == std::vector<std::string>{"/a.b/c-00000-of-00002", "/a.b/c-00001-of-00002"});
  CHECK(generated_paths("/d/.hidden.txt", 2)[0] == "/d/.hidden-00000-of-00002.txt");
}
