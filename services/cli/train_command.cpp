// shadowsync train: the single-process trainer. Reads text files, trains a DLRM with T Hogwild
// threads, evaluates on test files, and ends with a human summary and one JSON line.
#include <spdlog/spdlog.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "commands.hpp"
#include "ss/core/clock.hpp"
#include "ss/core/config/option_set.hpp"
#include "ss/core/job/job_options.hpp"
#include "ss/core/job/preflight.hpp"
#include "ss/core/json.hpp"
#include "ss/core/model/gemm.hpp"
#include "ss/core/model/model_file.hpp"
#include "ss/core/train/hogwild_trainer.hpp"
#include "ss/core/train/reader_source.hpp"
#include "ss/service/format.hpp"
#include "ss/core/job/input_options.hpp"
#include "ss/service/logging.hpp"
#include "ss/service/shutdown_signal.hpp"
#include "ss/core/job/model_options.hpp"

namespace ss::cli {
namespace {

struct train_options {
  std::vector<std::string> train;
  std::vector<std::string> test;
  int batch_size = 128;
  int threads = 1;
  double progress_interval = 5;
  std::uint64_t window = 100000;
  std::string log_level = "info";
  std::string log_format = "human";
  std::string export_path;  // --export: write the trained model here (model_file.hpp)
  job::input_options input;
  job::model_options model;
};

void print_bad_rows(const data::batch_reader& reader, const char* what) {
  const auto& c = reader.counters();
  if (c.bad == 0) return;
  spdlog::warn("{}: skipped {} malformed rows of {} read", what, c.bad, c.rows_read);
  for (const auto& r : reader.bad_row_reports()) spdlog::warn("  {}", r);
}

}  // namespace

int run_train(const args& a, const config::environment& env) {
  train_options o;
  config::option_set opts("train",
                          "Trains a DLRM on CTR data in this process: one reader thread parses and "
                          "batches the --train files, --threads Hogwild workers update one shared "
                          "model without locks, then the model is scored on the --test files. "
                          "Progress goes to stderr; the summary and one JSON line to stdout.");
  opts.add("train", &o.train, "Training files (plain or gzip), read once, in order.");
  opts.add("test", &o.test, "Test files scored after training (optional).");
  opts.add("batch-size", &o.batch_size, "Examples per minibatch.").range(1, 65536);
  opts.add("threads", &o.threads, "Hogwild worker threads (1 = deterministic).").range(1, 256);
  opts.add("progress-interval", &o.progress_interval, "Seconds between progress lines; 0 = none.").min(0.0);
  opts.add("window", &o.window, "Recent examples in the windowed metrics of progress lines.");
  opts.add("log-level", &o.log_level, "Log level.").choices({"trace", "debug", "info", "warn", "error", "off"});
  opts.add("log-format", &o.log_format, "Log line format.").choices({"human", "json"});
  opts.add("export", &o.export_path,
           "After training, write the model (dense part and embedding rows, see `shadowsync predict`) to "
           "this file; empty = none.");
  job::add_input_options(opts, o.input);
  job::add_model_options(opts, o.model);
  // A run refused before it starts (exit 2) or failed after (exit 1) still ends with a JSON line,
  // saying why, for the scripts that read only that line.
  auto json_failure = [](const std::string& why) {
    std::printf("%s\n", json_object().add("command", "train").add("ok", false).add("error", why).str().c_str());
  };
  auto refused = [&json_failure](const std::string& why) {
    std::fprintf(stderr, "shadowsync train: %s\n", why.c_str());
    json_failure(why);
    return 2;
  };
  if (auto st = opts.parse(a, env); !st.is_ok()) return refused(st.message());
  if (opts.help_requested()) {
    std::printf("%s", opts.help().c_str());
    return 0;
  }
  if (auto st = service::init_logging(o.log_level, o.log_format); !st.is_ok()) return refused(st.message());
  if (o.train.empty()) return refused("--train needs at least one file (see --help)");
  // Before training: the model's path can be written and the test files are data of this schema.
  if (auto st = job::check_output_path(o.export_path, "--export"); !st.is_ok()) return refused(st.message());
  if (auto st = job::check_input_files(o.input, o.test, "--test"); !st.is_ok()) return refused(st.message());
  auto failed = [&json_failure](const std::string& why) {
    spdlog::error("{}", why);
    json_failure(why);
    return 1;
  };

  auto ropts = job::reader_options(o.input, o.train, static_cast<std::size_t>(o.batch_size));
  if (!ropts.is_ok()) return refused(ropts.error().message());
  auto reader = data::batch_reader::open(*ropts);
  if (!reader.is_ok()) return failed("cannot read training data: " + reader.error().message());
  const auto& bound = reader->schema();
  auto setup = job::resolve_model(o.model, bound.num_dense(), bound.num_categorical());
  if (!setup.is_ok()) return refused(setup.error().message());

  // The job as the exported model records it: the options that define the model and its input.
  job::job_options model_job;
  model_job.train = o.train;
  model_job.test = o.test;
  model_job.batch_size = o.batch_size;
  model_job.input = o.input;
  model_job.model = o.model;
  model_job.dense_features = static_cast<int>(bound.num_dense());
  model_job.categorical_features = static_cast<int>(bound.num_categorical());

  train::dense_model model(setup->dlrm, setup->dense, o.model.seed);
  embedding::local_embeddings store(setup->embeddings);
  spdlog::info("model {} ({} dense parameters), {} threads, batch {}, dense {} / embeddings {}, oneDNN {}",
               setup->dlrm.describe(), service::with_commas(model.size()), o.threads, o.batch_size,
               optim::to_string(setup->dense.kind), optim::to_string(setup->embeddings.optimizer.kind),
               model::gemm_isa());

  std::atomic<bool> cancel{false};
  service::shutdown_signal signals([&cancel](int sig) {
    spdlog::warn("signal {}: stopping after the batches in flight (again to abort)", sig);
    cancel.store(true);
  });

  train::reader_source source(std::move(*reader));
  train::hogwild_options ho;
  ho.threads = o.threads;
  ho.window_examples = o.window;
  ho.progress_interval_seconds = o.progress_interval;
  ho.buckets = setup->buckets;
  ho.cancel = &cancel;
  steady_clock_source clock;
  auto trained = train::train_hogwild(model, store, source, ho, clock, [](const train::train_progress& p) {
    std::string where = p.fraction_done >= 0 ? fmt::format(" ({:.1f}%, ETA {})", 100 * p.fraction_done,
                                                             service::human_seconds(p.eta_seconds))
                                             : std::string();
    spdlog::info("{} examples{}, {:.0f} ex/s, recent {}: NE {:.5f} AUC {:.5f}", service::with_commas(p.examples),
                 where, p.examples_per_sec, service::with_commas(p.window.examples), p.window.ne, p.window.auc);
  });
  print_bad_rows(source.reader(), "training data");
  if (!trained.is_ok()) return failed("training stopped: " + trained.error().message());
  const auto& tr = *trained;
  if (const std::size_t bad = train::non_finite_params(model); bad > 0 || !std::isfinite(tr.train_log_loss)) {
    return failed("training diverged: " + std::to_string(bad) + " of " + std::to_string(model.size()) +
                  " dense parameters are NaN or infinite (train log loss " + std::to_string(tr.train_log_loss) +
                  "); lower --learning-rate or --embedding-learning-rate. No model is scored or exported");
  }

  metrics::summary test;
  std::uint64_t test_bad_rows = 0;
  if (!o.test.empty() && !tr.cancelled) {
    auto topts = job::reader_options(o.input, o.test, 4096);
    auto test_reader = topts.is_ok() ? data::batch_reader::open(*topts) : result<data::batch_reader>(topts.error());
    if (!test_reader.is_ok()) return failed("cannot read test data: " + test_reader.error().message());
    train::reader_source test_source(std::move(*test_reader));
    train::eval_options eo;
    eo.threads = o.threads;
    eo.buckets = setup->buckets;
    auto scored = train::evaluate(model, store, test_source, tr.train_click_rate, eo);
    print_bad_rows(test_source.reader(), "test data");
    test_bad_rows = test_source.reader().counters().bad;
    if (!scored.is_ok()) return failed("evaluation failed: " + scored.error().message());
    test = *scored;
  }

  model::model_file_stats exported;
  double export_seconds = 0;
  if (!o.export_path.empty() && tr.cancelled) {
    spdlog::warn("training stopped early: not exporting the model to {}", o.export_path);
  } else if (!o.export_path.empty()) {
    const double start = clock.now_seconds();
    auto header = model::header_for_job(model_job, tr.train_click_rate, tr.examples, "shadowsync train");
    auto saved = header.is_ok() ? model::save_model(o.export_path, *header, model, store)
                                : result<model::model_file_stats>(header.error());
    if (!saved.is_ok()) return failed("cannot export the model: " + saved.error().message());
    exported = *saved;
    export_seconds = clock.now_seconds() - start;
    spdlog::info("exported the model to {}: {} rows, {} in {}", o.export_path, service::with_commas(exported.rows),
                 service::human_bytes(static_cast<double>(exported.bytes)), service::human_seconds(export_seconds));
  }

  const std::uint64_t bad_rows = source.reader().counters().bad + test_bad_rows;
  const double train_ne = metrics::normalized_entropy(tr.train_log_loss, tr.train_click_rate);
  std::printf("shadowsync train: %s examples in %s (%.0f examples/s, %d thread%s)%s\n",
              service::with_commas(tr.examples).c_str(), service::human_seconds(tr.seconds).c_str(),
              tr.examples_per_sec, o.threads, o.threads == 1 ? "" : "s", tr.cancelled ? " [stopped early]" : "");
  std::printf("  train   log loss %.5f  NE %.5f (progressive)  click rate %.4f\n", tr.train_log_loss, train_ne,
              tr.train_click_rate);
  if (test.examples > 0)
    std::printf("  test    %s examples  log loss %.5f  NE %.5f  AUC %.5f  calibration %.4f\n",
                service::with_commas(test.examples).c_str(), test.log_loss, test.ne, test.auc, test.calibration);
  std::printf("  data    %s bad rows skipped\n", service::with_commas(bad_rows).c_str());
  std::printf("  model   %s; %s embedding rows (%s)\n", setup->dlrm.describe().c_str(),
              service::with_commas(store.total_rows()).c_str(), service::human_bytes(store.total_bytes()).c_str());
  if (exported.bytes > 0)
    std::printf("  export  %s: %s rows, %s in %s\n", o.export_path.c_str(), service::with_commas(exported.rows).c_str(),
                service::human_bytes(static_cast<double>(exported.bytes)).c_str(),
                service::human_seconds(export_seconds).c_str());
  json_object j;
  j.add("command", "train")
      .add("ok", true)
      .add("error", "")
      .add("examples", tr.examples)
      .add("seconds", tr.seconds)
      .add("examples_per_sec", tr.examples_per_sec)
      .add("threads", o.threads)
      .add("batch_size", o.batch_size)
      .add("train_logloss", tr.train_log_loss)
      .add("train_ne", train_ne)
      .add("train_click_rate", tr.train_click_rate)
      .add("test_examples", test.examples)
      .add("test_logloss", test.log_loss)
      .add("test_ne", test.ne)
      .add("test_auc", test.auc)
      .add("test_calibration", test.calibration)
      .add("bad_rows", bad_rows)
      .add("embedding_rows", store.total_rows())
      .add("embedding_bytes", store.total_bytes())
      .add("model", setup->dlrm.describe())
      .add("export_path", exported.bytes > 0 ? o.export_path : std::string())
      .add("export_rows", exported.rows)
      .add("export_bytes", exported.bytes)
      .add("export_seconds", export_seconds)
      .add("cancelled", tr.cancelled);
  std::printf("%s\n", j.str().c_str());
  return tr.cancelled ? 130 : 0;
}

}  // namespace ss::cli
