// shadowsync predict: scores data files with an exported model (`shadowsync train --export`, or a
// cluster's export) through the same evaluation code as `train` (train::evaluate: an id the model
// never saw scores with the values its row would have started with), and ends with a human
// summary and one JSON line. With --predictions it also writes one click probability per good
// input row, in input order.
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "commands.hpp"
#include "ss/core/clock.hpp"
#include "ss/core/config/option_set.hpp"
#include "ss/core/job/input_options.hpp"
#include "ss/core/json.hpp"
#include "ss/core/metrics/metrics.hpp"
#include "ss/core/model_file/model_file.hpp"
#include "ss/core/serving/published_model.hpp"
#include "ss/core/train/hogwild_trainer.hpp"
#include "ss/core/train/reader_source.hpp"
#include "ss/core/train/train_step.hpp"
#include "ss/service/format.hpp"

namespace ss::cli {
namespace {

struct predict_options {
  std::string model;
  std::string publish_dir;  // instead of --model: the newest model a publish directory holds
  std::vector<std::string> test;
  std::string schema;               // empty: the model's
  double max_bad_fraction = -1;     // negative: the model's
  std::int64_t bad_row_grace = -1;  // negative: the model's
  int threads = 1;
  std::string predictions;
  log_flags log;
};

constexpr std::size_t eval_batch = 4096;  // what `train` scores its test files with

void print_bad_rows(const data::batch_reader& reader) {
  const auto& c = reader.counters();
  if (c.bad == 0) return;
  spdlog::warn("test data: skipped {} malformed rows of {} read", c.bad, c.rows_read);
  for (const auto& r : reader.bad_row_reports()) spdlog::warn("  {}", r);
}

// One probability per example of `source`, in input order, to `path` (written to path.tmp, then
// renamed). The same steps as train::evaluate, on one thread so the order is the input's.
result<std::uint64_t> write_predictions(const model::loaded_model& m, train::batch_source& source,
                                        const std::string& path) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) return status(errc::io_error, "cannot create " + tmp + ": " + std::strerror(errno));
  std::vector<char> buffer(std::size_t{1} << 20);
  std::setvbuf(f, buffer.data(), _IOFBF, buffer.size());
  auto fail = [&](status st) -> result<std::uint64_t> {
    std::fclose(f);
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    return st;
  };
  const auto& config = m.dense->config();
  train::worker_scratch scratch(config, static_cast<int>(eval_batch));
  data::example_batch batch;
  std::uint64_t written = 0;
  for (;;) {
    auto more = source.next(batch);
    if (!more.is_ok()) return fail(more.error());
    if (!*more) break;
    if (auto st = train::check_batch(config, batch); !st.is_ok()) return fail(st);
    train::prepare_rows(config, batch, m.setup.buckets, scratch);
    if (auto st = m.embeddings->peek(scratch.rows); !st.is_ok()) return fail(st);
    train::predict_batch(*m.dense, batch, scratch);
    for (std::size_t i = 0; i < batch.size(); ++i) std::fprintf(f, "%.9g\n", static_cast<double>(scratch.ws.probs[i]));
    written += batch.size();
  }
  if (std::fflush(f) != 0 || std::ferror(f) != 0) return fail({errc::io_error, "cannot write " + tmp});
  if (std::fclose(f) != 0) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    return status(errc::io_error, "cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return status(errc::io_error, "cannot rename " + tmp + " to " + path + ": " + ec.message());
  }
  return written;
}

const char* const predict_help =
    "Scores data files with an exported model (`shadowsync train --export`, or a cluster's export) and "
    "reports the metrics `train` reports for its test files: log loss, NE (against the model's training click "
    "rate), AUC and calibration. The summary and one JSON line go to stdout.";

void add_predict_flags(config::option_set& opts, predict_options& o) {
  opts.add("model", &o.model, "The model file (.ssm) to score with.");
  opts.add("publish-dir", &o.publish_dir,
           "Instead of --model: score the newest model a publish directory holds (its newest usable base with "
           "every delta after it applied, as `shadowsync serve` would serve it).");
  opts.add("test", &o.test, "Data files to score (plain or gzip), in the model's input format.");
  opts.add("schema", &o.schema,
           "Input layout of the --test files: 'criteo', 'avazu' or a schema file; empty = the model's.");
  opts.add("max-bad-fraction", &o.max_bad_fraction,
           "Stop with an error when more than this fraction of rows is malformed; negative = the model's.")
      .range(-1.0, 1.0);
  opts.add("bad-row-grace", &o.bad_row_grace,
           "Rows read before --max-bad-fraction is enforced; negative = the model's.");
  opts.add("threads", &o.threads, "Scoring threads.").range(1, 256);
  opts.add("predictions", &o.predictions,
           "Also write one click probability per good input row, in input order, to this file "
           "(a second, single-threaded pass over the data).");
  add_log_flags(opts, o.log);
}

// How the --test files are read: the model's schema and bad-row bounds unless the flags say otherwise.
data::batch_reader_options test_reader_options(const predict_options& o, const model::loaded_model& m,
                                               data::input_schema schema) {
  data::batch_reader_options ropts;
  ropts.schema = std::move(schema);
  ropts.paths = o.test;
  ropts.batch_size = eval_batch;
  ropts.bad_rows.max_bad_fraction = o.max_bad_fraction >= 0 ? o.max_bad_fraction : m.job.input.max_bad_fraction;
  ropts.bad_rows.grace_rows =
      o.bad_row_grace >= 0 ? static_cast<std::uint64_t>(o.bad_row_grace) : m.job.input.bad_row_grace;
  return ropts;
}

// The --test files, checked against the model's features.
result<std::unique_ptr<train::reader_source>> open_test_data(const data::batch_reader_options& ropts,
                                                             const model::loaded_model& m) {
  auto reader = data::batch_reader::open(ropts);
  if (!reader.is_ok()) return reader.error().with_context("cannot read test data");
  const auto& bound = reader->schema();
  if (bound.num_dense() != m.setup.dlrm.num_dense || bound.num_categorical() != m.setup.dlrm.num_sparse)
    return status(errc::invalid_argument,
                  "cannot read test data: the test data has " + std::to_string(bound.num_dense()) + " dense and " +
                      std::to_string(bound.num_categorical()) + " categorical features, the model expects " +
                      std::to_string(m.setup.dlrm.num_dense) + " and " + std::to_string(m.setup.dlrm.num_sparse));
  return std::make_unique<train::reader_source>(std::move(*reader));
}

// What a prediction run measured.
struct prediction_run {
  metrics::summary test;
  std::uint64_t bad_rows = 0;
  std::uint64_t predictions = 0;  // written to --predictions
  double load_seconds = 0;
  double score_seconds = 0;
};

// Scores the --test files, then writes --predictions (a second pass).
result<prediction_run> score_test_data(const predict_options& o, const model::loaded_model& m,
                                       const data::batch_reader_options& ropts, const steady_clock_source& clock) {
  prediction_run run;
  auto source = open_test_data(ropts, m);
  if (!source.is_ok()) return source.error();
  train::eval_options eo;
  eo.threads = o.threads;
  eo.buckets = m.setup.buckets;
  const double start = clock.now_seconds();
  auto scored = train::evaluate(*m.dense, *m.embeddings, **source, m.header.train_click_rate, eo);
  run.score_seconds = clock.now_seconds() - start;
  print_bad_rows((*source)->reader());
  if (!scored.is_ok()) return scored.error().with_context("scoring failed");
  run.test = *scored;
  run.bad_rows = (*source)->reader().counters().bad;
  if (!o.predictions.empty()) {
    auto again = open_test_data(ropts, m);
    if (!again.is_ok()) return again.error();
    auto written = write_predictions(m, **again, o.predictions);
    if (!written.is_ok()) return written.error().with_context("cannot write predictions");
    run.predictions = *written;
  }
  return run;
}

// The model scored: a model file, or a publish directory's newest publication.
struct model_source {
  std::string name;              // the file, or the directory
  std::uint64_t publication = 0;  // the publication scored (0: a model file)
  std::uint64_t behind = 0;       // newer publications the chain does not reach
};

void print_prediction_run(const predict_options& o, const model_source& from, const model::loaded_model& m,
                          const prediction_run& r) {
  const metrics::summary& test = r.test;
  std::printf("shadowsync predict: %s examples scored in %s (%.0f examples/s, %d thread%s)\n",
              service::with_commas(test.examples).c_str(), service::human_seconds(r.score_seconds).c_str(),
              r.score_seconds > 0 ? static_cast<double>(test.examples) / r.score_seconds : 0.0, o.threads,
              o.threads == 1 ? "" : "s");
  std::printf("  model   %s%s: %s; %s embedding rows; trained on %s examples, click rate %.4f\n", from.name.c_str(),
              from.publication > 0 ? (" (publication " + std::to_string(from.publication) + ")").c_str() : "",
              m.setup.dlrm.describe().c_str(), service::with_commas(m.stats.rows).c_str(),
              service::with_commas(m.header.train_examples).c_str(), m.header.train_click_rate);
  if (test.examples > 0)
    std::printf("  test    %s examples  log loss %.5f  NE %.5f  AUC %.5f  calibration %.4f\n",
                service::with_commas(test.examples).c_str(), test.log_loss, test.ne, test.auc, test.calibration);
  std::printf("  data    %s bad rows skipped\n", service::with_commas(r.bad_rows).c_str());
  if (!o.predictions.empty())
    std::printf("  output  %s: %s predictions\n", o.predictions.c_str(), service::with_commas(r.predictions).c_str());
  json_object j;
  j.add("command", "predict")
      .add("model", from.name)
      .add("publication", from.publication)
      .add("publications_behind", from.behind)
      .add("model_shape", m.setup.dlrm.describe())
      .add("model_rows", m.stats.rows)
      .add("train_examples", m.header.train_examples)
      .add("train_click_rate", m.header.train_click_rate);
  metrics::add_test_fields(j, test)
      .add("bad_rows", r.bad_rows)
      .add("predictions", o.predictions)
      .add("predictions_written", r.predictions)
      .add("load_seconds", r.load_seconds)
      .add("seconds", r.score_seconds)
      .add("threads", o.threads);
  std::printf("%s\n", j.str().c_str());
}

}  // namespace

int run_predict(const args& a, const config::environment& env) {
  predict_options o;
  command_line cmd({"predict", ""}, predict_help);
  add_predict_flags(cmd.options(), o);
  if (auto done = cmd.parse(a, env, &o.log)) return *done;
  if (o.model.empty() == o.publish_dir.empty())
    return cmd.refuse("give one of --model and --publish-dir (see --help)");
  if (o.test.empty()) return cmd.refuse("--test needs at least one file (see --help)");

  steady_clock_source clock;
  const double t0 = clock.now_seconds();
  model_source from{o.model.empty() ? o.publish_dir : o.model};
  model::loaded_model m;
  if (!o.publish_dir.empty()) {
    auto published = serving::load_published_model(o.publish_dir);
    if (!published.is_ok()) {
      spdlog::error("cannot load the published model: {}", published.error().message());
      return 1;
    }
    from.publication = published->last.sequence;
    from.behind = published->behind;
    if (published->stopped)
      spdlog::warn("{}: scoring publication {}, {} behind the newest: {}", o.publish_dir, from.publication,
                   from.behind, published->stopped->message);
    m = std::move(published->model);
  } else {
    auto loaded = model::load_model(o.model);
    if (!loaded.is_ok()) {
      spdlog::error("cannot load the model: {}", loaded.error().message());
      return 1;
    }
    m = std::move(*loaded);
  }
  const double load_seconds = clock.now_seconds() - t0;
  spdlog::info("model {}: {}, {} embedding rows, trained on {} examples (click rate {:.4f}), loaded in {}",
               from.name, m.setup.dlrm.describe(), service::with_commas(m.stats.rows),
               service::with_commas(m.header.train_examples), m.header.train_click_rate,
               service::human_seconds(load_seconds));
  auto schema = o.schema.empty() ? model::model_schema(m.header, m.job) : job::load_schema(o.schema);
  if (!schema.is_ok()) {
    spdlog::error("{}", schema.error().message());
    return o.schema.empty() ? 1 : 2;
  }
  auto run = score_test_data(o, m, test_reader_options(o, m, *schema), clock);
  if (!run.is_ok()) {
    spdlog::error("{}", run.error().message());
    return 1;
  }
  run->load_seconds = load_seconds;
  print_prediction_run(o, from, m, *run);
  return 0;
}

std::vector<std::string> predict_option_names() { return names_of_options<predict_options>(add_predict_flags); }

}  // namespace ss::cli
