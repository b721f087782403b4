// shadowsync gen-data: synthetic Criteo-format train and test files labelled by a hidden random
// teacher, plus the teacher's Bayes-optimal log loss and NE, so a user can check training end to
// end without downloading anything.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

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
      .add("drift_start", r.drift_start)
      .add("drift_end", r.drift_end)
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
  std::uint64_t drift_rows = 0;
  std::uint64_t drift_step = 0;
  // Streaming: rows appended to one file at a rate (see generate_stream).
  std::string append_to;
  double rows_per_second = 0;
  std::int64_t first_row = -1;  // -1: the rows the file holds already
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
  opts.add("drift-rows", &o.drift_rows,
           "Drift: the hidden teacher turns from its first form to an independent second one over this many rows "
           "(and on, as long as rows follow), so late rows have another label function than early ones; the "
           "test rows are labelled by the teacher after the last training row. 0 = no drift (docs/data-and-model.md).");
  opts.add("drift-step", &o.drift_step,
           "Drift in steps: the teacher holds still for this many rows, then jumps; 0 = it turns a little every row.");
  opts.add("append-to", &o.append_to,
           "Streaming: append --rows rows to this file (created if missing) instead of writing --out, whole lines at "
           "a time, at --rows-per-second; the rows continue the stream of rows the file holds (see --first-row).");
  opts.add("rows-per-second", &o.rows_per_second, "With --append-to: rows appended per second; 0 = as fast as it can.")
      .min(0.0);
  opts.add("first-row", &o.first_row,
           "With --append-to: the stream row the first appended row is (its features and teacher); -1 = the number "
           "of lines the file holds already, so appends continue one stream.")
      .min(-1);
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
  g.drift_rows = o.drift_rows;
  g.drift_step = o.drift_step;
  return g;
}

// The lines a file holds (0 when it does not exist).
result<std::uint64_t> lines_in(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::uint64_t{0};
  std::uint64_t lines = 0;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    lines += static_cast<std::uint64_t>(std::count(buf, buf + in.gcount(), '\n'));
    if (!in) break;
  }
  if (in.bad()) return status(errc::io_error, path + ": cannot read to count its rows");
  return lines;
}

// --append-to: rows appended to one file at --rows-per-second (a growing input for a job that
// follows it, or a benchmark's stream), in pieces of a tenth of a second's rows.
result<data::teacher_report> generate_stream(const gen_data_options& o, std::uint64_t& first_row) {
  data::generator_options g = generator_options_of(o);
  if (o.first_row >= 0) {
    g.first_row = static_cast<std::uint64_t>(o.first_row);
  } else {
    auto held = lines_in(o.append_to);
    if (!held.is_ok()) return held.error();
    g.first_row = *held;
  }
  first_row = g.first_row;
  data::teacher_options to;
  to.seed = o.seed;
  to.click_rate = o.click_rate;
  to.bayes_ne = o.bayes_ne;
  to.drift = o.drift_rows > 0;
  const data::teacher t(to);
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t piece =
      o.rows_per_second > 0 ? std::max<std::uint64_t>(1, static_cast<std::uint64_t>(o.rows_per_second / 10)) : 65536;
  auto pace = [&](std::uint64_t done) {
    if (o.rows_per_second <= 0) return;
    std::this_thread::sleep_until(start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                              std::chrono::duration<double>(static_cast<double>(done) / o.rows_per_second)));
  };
  return data::append_criteo(t, g, o.append_to, piece, pace);
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
  if (!o.append_to.empty()) {
    if (o.gzip) return cmd.refuse("--append-to appends plain text; --gzip does not apply");
    std::uint64_t first_row = 0;
    auto appended = generate_stream(o, first_row);
    if (!appended.is_ok()) {
      std::fprintf(stderr, "shadowsync gen-data: %s\n", appended.error().message().c_str());
      return 1;
    }
    std::printf("%s\n", json_object()
                             .add("command", "gen-data")
                             .add("seed", o.seed)
                             .add("rows_seed", o.rows_seed)
                             .add("first_row", first_row)
                             .add_raw("appended", report_json(*appended))
                             .str()
                             .c_str());
    return 0;
  }
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
