// shadowsync train --export and shadowsync predict as a user runs them: real processes, real
// files, exit codes and the JSON result line.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/process.hpp"

using ss::test::json_field;
using ss::test::json_number;
using ss::test::last_json_line;
using ss::test::run_command;

namespace {

const std::string bin = SS_SHADOWSYNC_BIN;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

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
  const auto rows = lines_of(read_text(t.dir.str("test.tsv")));
  REQUIRE(rows.size() == 3000);
  // The first 1000 rows with two malformed rows among them.
  std::string text;
  for (std::size_t i = 0; i < 1000; ++i) {
    if (i == 10 || i == 500) text += "1\tnot-a-row\n";
    text += rows[i] + "\n";
  }
  const std::string input = t.dir.str("some.tsv");
  write_text(input, text);
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

  const auto probs = lines_of(read_text(out));
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

  // The same rows alone give the same first predictions (to float rounding: the GEMM kernels
  // block a batch of 2 differently from one of 4096).
  write_text(input, rows[0] + "\n" + rows[1] + "\n");
  auto two = run_command(bin + " predict --model " + t.model + " --test " + input + " --predictions " + out);
  REQUIRE(two.exit_code == 0);
  const auto first = lines_of(read_text(out));
  REQUIRE(first.size() == 2);
  CHECK(std::stod(first[0]) == Approx(std::stod(probs[0])).epsilon(1e-5));
  CHECK(std::stod(first[1]) == Approx(std::stod(probs[1])).epsilon(1e-5));
}

TEST_CASE("predict: a missing or damaged model exits 1 with a precise message", "[predict]") {
  auto& t = shared_model();
  const std::string test = " --test " + t.dir.str("test.tsv");
  ss::test::temp_dir dir;

  const std::string missing = dir.str("missing.ssm");
  auto a = run_command(bin + " predict --model " + missing + test);
  CHECK(a.exit_code == 1);
  CHECK(a.out.find("model file " + missing + ": no such file") != std::string::npos);

  const std::string bytes = read_text(t.model);
  const std::string bad = dir.str("bad.ssm");
  std::string flipped = bytes;
  flipped[bytes.size() / 2] = static_cast<char>(flipped[bytes.size() / 2] ^ 0x10);
  write_text(bad, flipped);
  auto b = run_command(bin + " predict --model " + bad + test);
  CHECK(b.exit_code == 1);
  CHECK(b.out.find("model file " + bad + ": row block") != std::string::npos);
  CHECK(b.out.find("fails its checksum") != std::string::npos);

  write_text(bad, bytes.substr(0, bytes.size() - 100));
  auto c = run_command(bin + " predict --model " + bad + test);
  CHECK(c.exit_code == 1);
  CHECK(c.out.find("truncated after " + std::to_string(bytes.size() - 100) + " bytes") != std::string::npos);

  write_text(bad, "label\tI1\n");
  auto d = run_command(bin + " predict --model " + bad + test);
  CHECK(d.exit_code == 1);
  CHECK(d.out.find("not a shadowsync model file") != std::string::npos);

  std::string newer = bytes;
  newer[8] = 3;
  write_text(bad, newer);
  auto e = run_command(bin + " predict --model " + bad + test);
  CHECK(e.exit_code == 1);
  CHECK(e.out.find("written by format version 3, this build reads 1") != std::string::npos);

  auto f = run_command(bin + " predict --model " + t.model + " --test " + dir.str("no-such-test.tsv"));
  CHECK(f.exit_code == 1);
  CHECK(f.out.find("no-such-test.tsv") != std::string::npos);
}

TEST_CASE("predict: bad flags exit 2", "[predict]") {
  auto typo = run_command(bin + " predict --modle m.ssm --test x");
  CHECK(typo.exit_code == 2);
  CHECK(typo.out.find("did you mean '--model'") != std::string::npos);
  auto no_model = run_command(bin + " predict --test x");
  CHECK(no_model.exit_code == 2);
  CHECK(no_model.out.find("--model") != std::string::npos);
  auto no_test = run_command(bin + " predict --model m.ssm");
  CHECK(no_test.exit_code == 2);
  CHECK(no_test.out.find("--test") != std::string::npos);
  auto threads = run_command(bin + " predict --model m.ssm --test x --threads 0");
  CHECK(threads.exit_code == 2);
  auto help = run_command(bin + " predict --help");
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("--predictions") != std::string::npos);
  auto export_dir = run_command(bin + " train --train x --export /nonexistent-dir/m.ssm");
  CHECK(export_dir.exit_code == 2);
  CHECK(export_dir.out.find("/nonexistent-dir") != std::string::npos);
}
