// shadowsync train --export and shadowsync predict as a user runs them: real processes, real
// files, exit codes and the JSON result line.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "support/files.hpp"

using namespace ss::test;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Generated data and a model trained and exported on it, shared by the tests of this file.
struct trained {
  ss::test::temp_dir dir;
  std::string model;
  std::string train_json;

  trained() {
    REQUIRE(run_command(bin + " gen-data --out " + dir.str() + " --rows 20000 --test-rows 3000 --seed 5").exit_code ==
            0);
    model = dir.str("m.ssm");
    auto train = run_command(bin + " train --train " + dir.str("train.tsv") + " --test " + dir.str("test.tsv") +
                             " --threads 1 --progress-interval 0 --sparse-optimizer rowwise-adagrad"
                             " --bottom-mlp 32-16 --top-mlp 32-1 --export " + model);
    INFO(train.out);
    REQUIRE(train.exit_code == 0);
    train_json = last_json_line(train.out);
  }
};

trained& shared_model() {
  static trained t;
  return t;
}

}  // namespace

TEST_CASE("predict: train --export then predict reproduces the test metrics exactly", "[predict]") {
  auto& t = shared_model();
  const std::string& tj = t.train_json;
  CHECK(json_field(tj, "export_path") == t.model);
  CHECK(json_number(tj, "export_rows") == json_number(tj, "embedding_rows"));
  CHECK(json_number(tj, "export_rows") > 1000);
  CHECK(json_number(tj, "export_bytes") == static_cast<double>(std::filesystem::file_size(t.model)));
  CHECK_FALSE(std::filesystem::exists(t.model + ".tmp"));

  auto p = run_command(bin + " predict --model " + t.model + " --test " + t.dir.str("test.tsv"));
  INFO(p.out);
  REQUIRE(p.exit_code == 0);
  const std::string pj = last_json_line(p.out);
  CHECK(json_field(pj, "command") == "predict");
  CHECK(json_field(pj, "model") == t.model);
  for (const char* key : {"test_examples", "test_logloss", "test_ne", "test_auc", "test_calibration", "bad_rows",
                          "train_click_rate"}) {
    INFO(key);
    CHECK(json_field(pj, key) == json_field(tj, key));
  }
  CHECK(json_field(pj, "test_examples") == "3000");
  CHECK(json_number(pj, "model_rows") == json_number(tj, "export_rows"));
  CHECK(p.out.find("test    3,000 examples") != std::string::npos);

  // More threads: the same examples and metrics (sums merged across threads agree to ~1e-16).
  auto p2 = run_command(bin + " predict --model " + t.model + " --test " + t.dir.str("test.tsv") + " --threads 2");
  REQUIRE(p2.exit_code == 0);
  const std::string pj2 = last_json_line(p2.out);
  CHECK(json_field(pj2, "test_examples") == "3000");
  CHECK(json_field(pj2, "test_auc") == json_field(tj, "test_auc"));
  CHECK(std::abs(json_number(pj2, "test_logloss") - json_number(tj, "test_logloss")) < 1e-9);
}

TEST_CASE("predict: ids the model never saw score like a fresh row in training", "[predict]") {
  auto& t = shared_model();
  // Another teacher's data: mostly unseen ids. Scored without error and finite.
  ss::test::temp_dir other;
  REQUIRE(run_command(bin + " gen-data --out " + other.str() + " --rows 10 --test-rows 500 --seed 99").exit_code == 0);
  auto p = run_command(bin + " predict --model " + t.model + " --test " + other.str("test.tsv"));
  INFO(p.out);
  REQUIRE(p.exit_code == 0);
  const std::string pj = last_json_line(p.out);
  CHECK(json_number(pj, "test_examples") == 500);
  CHECK(std::isfinite(json_number(pj, "test_logloss")));
}

TEST_CASE("predict: --predictions writes one probability per good row in input order", "[predict]") {
  auto& t = shared_model();
  const auto rows = lines_of(read_file(t.dir.str("test.tsv")));
  REQUIRE(rows.size() == 3000);
  // The first 1000 rows with two malformed rows among them.
  std::string text;
  for (std::size_t i = 0; i < 1000; ++i) {
    if (i == 10 || i == 500) text += "1\tnot-a-row\n";
    text += rows[i] + "\n";
  }
  const std::string input = t.dir.str("some.tsv");
  write_file(input, text);
  const std::string out = t.dir.str("p.txt");
  auto p = run_command(bin + " predict --model " + t.model + " --test " + input + " --predictions " + out +
                       " --threads 2");
  INFO(p.out);
  REQUIRE(p.exit_code == 0);
  const std::string pj = last_json_line(p.out);
  CHECK(json_number(pj, "bad_rows") == 2);
  CHECK(json_number(pj, "test_examples") == 1000);
  CHECK(json_number(pj, "predictions_written") == 1000);
  CHECK(p.out.find("some.tsv:11:") != std::string::npos);  // the bad rows are reported with file and line
  CHECK_FALSE(std::filesystem::exists(out + ".tmp"));

  const auto probs = lines_of(read_file(out));
  REQUIRE(probs.size() == 1000);
  // In input order: the log loss of (prediction, label) pairs is the reported one.
  double loss = 0;
  for (std::size_t i = 0; i < probs.size(); ++i) {
    const double q = std::stod(probs[i]);
    REQUIRE(q > 0.0);
    REQUIRE(q < 1.0);
    const bool click = rows[i][0] == '1';
    loss -= std::log(click ? q : 1 - q);
  }
  CHECK(std::abs(loss / 1000 - json_number(pj, "test_logloss")) < 1e-6);

  // The same rows alone give the same first predictions, bit for bit: a short batch is scored
  // padded (train::min_scoring_rows), in the GEMM kernels a batch of 1,000 takes.
  write_file(input, rows[0] + "\n" + rows[1] + "\n");
  auto two = run_command(bin + " predict --model " + t.model + " --test " + input + " --predictions " + out);
  REQUIRE(two.exit_code == 0);
  const auto first = lines_of(read_file(out));
  REQUIRE(first.size() == 2);
  CHECK(first[0] == probs[0]);
  CHECK(first[1] == probs[1]);
}

TEST_CASE("predict: a missing or damaged model exits 1 with a precise message", "[predict]") {
  auto& t = shared_model();
  const std::string test = " --test " + t.dir.str("test.tsv");
  ss::test::temp_dir dir;

  const std::string missing = dir.str("missing.ssm");
  expect_exit(bin + " predict --model " + missing + test, 1, "model file " + missing + ": no such file");

  const std::string bytes = read_file(t.model);
  const std::string bad = dir.str("bad.ssm");
  std::string flipped = bytes;
  flipped[bytes.size() / 2] = static_cast<char>(flipped[bytes.size() / 2] ^ 0x10);
  write_file(bad, flipped);
  auto b = expect_exit(bin + " predict --model " + bad + test, 1, "model file " + bad + ": row block");
  CHECK(b.out.find("fails its checksum") != std::string::npos);

  write_file(bad, bytes.substr(0, bytes.size() - 100));
  expect_exit(bin + " predict --model " + bad + test,
              1, "truncated after " + std::to_string(bytes.size() - 100) + " bytes");

  write_file(bad, "label\tI1\n");
  expect_exit(bin + " predict --model " + bad + test, 1, "not a shadowsync model file");

  std::string newer = bytes;
  newer[8] = 3;
  write_file(bad, newer);
  expect_exit(bin + " predict --model " + bad + test, 1, "written by format version 3, this build reads 2");

  expect_exit(bin + " predict --model " + t.model + " --test " + dir.str("no-such-test.tsv"), 1, "no-such-test.tsv");
}

TEST_CASE("predict: bad flags exit 2", "[predict]") {
  expect_exit(bin + " predict --modle m.ssm --test x", 2, "did you mean '--model'");
  expect_exit(bin + " predict --test x", 2, "--model");
  expect_exit(bin + " predict --model m.ssm", 2, "--test");
  auto threads = run_command(bin + " predict --model m.ssm --test x --threads 0");
  CHECK(threads.exit_code == 2);
  expect_exit(bin + " predict --help", 0, "--predictions");
  expect_exit(bin + " train --train x --export /nonexistent-dir/m.ssm", 2, "/nonexistent-dir");
}
