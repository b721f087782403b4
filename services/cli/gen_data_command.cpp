// shadowsync gen-data: synthetic Criteo-format train and test files labelled by a hidden random
// teacher, plus the teacher's Bayes-optimal log loss and NE, so a user can check training end to
// end without downloading anything.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "commands.hpp"
#include "ss/core/config/option_set.hpp"
#include "ss/core/data/generator.hpp"
#include "ss/core/json.hpp"
#include "ss/service/format.hpp"

namespace ss::cli {
namespace {

std::string report_json(const data::teacher_report& r) {
  std::vector<std::string> paths;
  for (const auto& p : r.paths) paths.push_back(json_quote(p));
  return json_object()
      .add("rows", r.rows)
      .add("clicks", r.clicks)
      .add("click_rate", r.click_rate)
      .add("bayes_logloss", r.bayes_log_loss)
      .add("bayes_ne", r.bayes_ne)
      .add("realized_logloss", r.realized_log_loss)
      .add("realized_ne", r.realized_ne)
      .add("bytes", r.bytes)
      .add_raw("paths", json_array(paths))
      .str();
}

}  // namespace

int run_gen_data(const args& a, const config::environment& env) {
  std::string out = "data/generated";
  std::uint64_t rows = 2000000, test_rows = 100000, seed = 1, rows_seed = 1;
  int files = 1;
  bool gzip = false;
  double click_rate = 0.25, bayes_ne = 0.7;
  config::option_set opts("gen-data",
                          "Writes Criteo-format TSV training and test files (label, 13 integers, 26 "
                          "hex categoricals) drawn from a hidden random teacher, and reports the "
                          "Bayes-optimal log loss and NE of that teacher: the best any model can do. "
                          "The same --seed and --rows-seed give the same bytes on every machine.");
  opts.add("out", &out, "Output directory (train.tsv, test.tsv, teacher.json).");
  opts.add("rows", &rows, "Training rows.").min(1);
  opts.add("test-rows", &test_rows, "Test rows (a disjoint draw from the same teacher); 0 = none.");
  opts.add("seed", &seed, "Teacher seed: the same seed is the same prediction task.");
  opts.add("rows-seed", &rows_seed, "Row stream seed: which rows are drawn.");
  opts.add("files", &files, "Split the training rows over this many files.").range(1, 100000);
  opts.add("gzip", &gzip, "Write gzip-compressed files (.tsv.gz).");
  opts.add("click-rate", &click_rate, "Mean click probability of the teacher.").range(0.001, 0.999);
  opts.add("bayes-ne", &bayes_ne, "Bayes-optimal NE the teacher is calibrated to (lower = easier).")
      .range(0.05, 0.99);
  if (auto st = opts.parse(a, env); !st.is_ok()) {
    std::fprintf(stderr, "shadowsync gen-data: %s\n", st.message().c_str());
    return 2;
  }
  if (opts.help_requested()) {
    std::printf("%s", opts.help().c_str());
    return 0;
  }
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) {
    std::fprintf(stderr, "shadowsync gen-data: cannot create %s: %s\n", out.c_str(), ec.message().c_str());
    return 1;
  }
  data::generator_options g;
  g.seed = seed;
  g.rows_seed = rows_seed;
  g.rows = rows;
  g.files = static_cast<std::uint32_t>(files);
  g.gzip = gzip;
  g.click_rate = click_rate;
  g.bayes_ne = bayes_ne;
  const std::string ext = gzip ? ".tsv.gz" : ".tsv";
  const std::string train_path = out + "/train" + ext;
  const std::string test_path = out + "/test" + ext;

  data::train_test_report report;
  if (test_rows > 0) {
    auto r = data::generate_train_test(g, test_rows, train_path, test_path);
    if (!r.is_ok()) {
      std::fprintf(stderr, "shadowsync gen-data: %s\n", r.error().message().c_str());
      return 1;
    }
    report = *r;
  } else {
    auto r = data::generate_criteo(g, train_path);
    if (!r.is_ok()) {
      std::fprintf(stderr, "shadowsync gen-data: %s\n", r.error().message().c_str());
      return 1;
    }
    report.train = *r;
  }

  json_object j;
  j.add("command", "gen-data").add("seed", seed).add("rows_seed", rows_seed).add_raw("train", report_json(report.train));
  if (test_rows > 0) j.add_raw("test", report_json(report.test));
  const std::string line = j.str();
  {
    std::ofstream teacher_file(out + "/teacher.json");
    teacher_file << line << "\n";
    if (!teacher_file) {
      std::fprintf(stderr, "shadowsync gen-data: cannot write %s/teacher.json\n", out.c_str());
      return 1;
    }
  }
  auto describe = [](const char* what, const data::teacher_report& r) {
    std::printf("  %-5s %s rows, click rate %.4f, Bayes-optimal log loss %.5f (NE %.5f), %s\n", what,
                service::with_commas(r.rows).c_str(), r.click_rate, r.bayes_log_loss, r.bayes_ne,
                service::human_bytes(static_cast<double>(r.bytes)).c_str());
  };
  std::printf("shadowsync gen-data: wrote %s (teacher seed %llu)\n", out.c_str(), static_cast<unsigned long long>(seed));
  describe("train", report.train);
  if (test_rows > 0) describe("test", report.test);
  std::printf("  the best any model can reach on the test set: NE %.5f\n",
              test_rows > 0 ? report.test.bayes_ne : report.train.bayes_ne);
  std::printf("%s\n", line.c_str());
  return 0;
}

}  // namespace ss::cli
