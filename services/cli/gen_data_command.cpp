// shadowsync gen-data: synthetic Criteo-format train and test files labelled by a hidden random
// teacher, plus the teacher's Bayes-optimal log loss and NE, so a user can check training end to
// end without downloading anything.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "command_line.hpp"
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

struct gen_data_options {
  std::string out = "data/generated";
  std::uint64_t rows = 2000000;
  std::uint64_t test_rows = 100000;
  std::uint64_t seed = 1;
  std::uint64_t rows_seed = 1;
  int files = 1;
  bool gzip = false;
  double click_rate = 0.25;
  double bayes_ne = 0.7;
};

const char* const gen_data_help =
    "Writes Criteo-format TSV training and test files (label, 13 integers, 26 hex categoricals) drawn from a "
    "hidden random teacher, and reports the Bayes-optimal log loss and NE of that teacher: the best any model "
    "can do. The same --seed and --rows-seed give the same bytes on every machine.";

void add_gen_data_flags(config::option_set& opts, gen_data_options& o) {
  opts.add("out", &o.out, "Output directory (train.tsv, test.tsv, teacher.json).");
  opts.add("rows", &o.rows, "Training rows.").min(1);
  opts.add("test-rows", &o.test_rows, "Test rows (a disjoint draw from the same teacher); 0 = none.");
  opts.add("seed", &o.seed, "Teacher seed: the same seed is the same prediction task.");
  opts.add("rows-seed", &o.rows_seed, "Row stream seed: which rows are drawn.");
  opts.add("files", &o.files, "Split the training rows over this many files.").range(1, 100000);
  opts.add("gzip", &o.gzip, "Write gzip-compressed files (.tsv.gz).");
  opts.add("click-rate", &o.click_rate, "Mean click probability of the teacher.").range(0.001, 0.999);
  opts.add("bayes-ne", &o.bayes_ne, "Bayes-optimal NE the teacher is calibrated to (lower = easier).")
      .range(0.05, 0.99);
}

data::generator_options generator_options_of(const gen_data_options& o) {
  data::generator_options g;
  g.seed = o.seed;
  g.rows_seed = o.rows_seed;
  g.rows = o.rows;
  g.files = static_cast<std::uint32_t>(o.files);
  g.gzip = o.gzip;
  g.click_rate = o.click_rate;
  g.bayes_ne = o.bayes_ne;
  return g;
}

// Writes the training (and test) files into --out.
result<data::train_test_report> generate(const gen_data_options& o) {
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec) return status(errc::io_error, "cannot create " + o.out + ": " + ec.message());
  const data::generator_options g = generator_options_of(o);
  const std::string ext = o.gzip ? ".tsv.gz" : ".tsv";
  const std::string train_path = o.out + "/train" + ext;
  if (o.test_rows > 0) return data::generate_train_test(g, o.test_rows, train_path, o.out + "/test" + ext);
  auto train = data::generate_criteo(g, train_path);
  if (!train.is_ok()) return train.error();
  data::train_test_report report;
  report.train = *train;
  return report;
}

void print_teacher(const gen_data_options& o, const data::train_test_report& report) {
  auto describe = [](const char* what, const data::teacher_report& r) {
    std::printf("  %-5s %s rows, click rate %.4f, Bayes-optimal log loss %.5f (NE %.5f), %s\n", what,
                service::with_commas(r.rows).c_str(), r.click_rate, r.bayes_log_loss, r.bayes_ne,
                service::human_bytes(static_cast<double>(r.bytes)).c_str());
  };
  std::printf("shadowsync gen-data: wrote %s (teacher seed %llu)\n", o.out.c_str(),
              static_cast<unsigned long long>(o.seed));
  describe("train", report.train);
  if (o.test_rows > 0) describe("test", report.test);
  std::printf("  the best any model can reach on the test set: NE %.5f\n",
              o.test_rows > 0 ? report.test.bayes_ne : report.train.bayes_ne);
}

}  // namespace

int run_gen_data(const args& a, const config::environment& env) {
  gen_data_options o;
  command_line cmd({"gen-data", ""}, gen_data_help);
  add_gen_data_flags(cmd.options(), o);
  if (auto done = cmd.parse(a, env)) return *done;
  auto report = generate(o);
  if (!report.is_ok()) {
    std::fprintf(stderr, "shadowsync gen-data: %s\n", report.error().message().c_str());
    return 1;
  }
  json_object j;
  j.add("command", "gen-data")
      .add("seed", o.seed)
      .add("rows_seed", o.rows_seed)
      .add_raw("train", report_json(report->train));
  if (o.test_rows > 0) j.add_raw("test", report_json(report->test));
  const std::string line = j.str();
  std::ofstream teacher_file(o.out + "/teacher.json");
  teacher_file << line << "\n";
  if (!teacher_file.flush()) {
    std::fprintf(stderr, "shadowsync gen-data: cannot write %s/teacher.json\n", o.out.c_str());
    return 1;
  }
  print_teacher(o, *report);
  std::printf("%s\n", line.c_str());
  return 0;
}

std::vector<std::string> gen_data_option_names() {
  return names_of_options<gen_data_options>(add_gen_data_flags);
}

}  // namespace ss::cli
