// shadowsync train: the single-process trainer. Reads text files, trains a DLRM with T Hogwild
// threads, evaluates on test files, and ends with a human summary and one JSON line.
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "commands.hpp"
#include "ss/core/clock.hpp"
#include "ss/core/config/option_set.hpp"
#include "ss/core/job/epoch_options.hpp"
#include "ss/core/job/job_options.hpp"
#include "ss/core/job/preflight.hpp"
#include "ss/core/json.hpp"
#include "ss/core/metrics/metrics.hpp"
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
  job::epoch_options passes;
  job::input_options input;
  job::model_options model;
};

// One pass over the training files.
struct epoch_record {
  int epoch = 0;
  train::train_result trained;
  metrics::summary validation;  // examples == 0 without --validation
};

std::string epochs_json(const std::vector<epoch_record>& epochs) {
  std::vector<std::string> items;
  for (const auto& e : epochs) {
    json_object j;
    j.add("epoch", e.epoch)
        .add("examples", e.trained.examples)
        .add("seconds", e.trained.seconds)
        .add("train_logloss", e.trained.train_log_loss)
        .add("train_progressive", e.epoch == 1);
    if (e.validation.examples > 0) metrics::add_validation_fields(j, e.validation);
    items.push_back(j.str());
  }
  return json_array(items);
}

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
  job::add_epoch_options(opts, o.passes);
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
  if (auto st = job::check_input_files(o.input, o.passes.validation, "--validation"); !st.is_ok())
    return refused(st.message());
  if (auto st = job::check_epoch_options(o.passes); !st.is_ok()) return refused(st.message());
  const std::size_t shuffle_window = o.passes.shuffle_window();
  auto failed = [&json_failure](const std::string& why) {
    spdlog::error("{}", why);
    json_failure(why);
    return 1;
  };

  auto ropts = job::reader_options(o.input, o.train, static_cast<std::size_t>(o.batch_size));
  if (!ropts.is_ok()) return refused(ropts.error().message());
  data::epoch_reader_options eopts;
  eopts.input = *ropts;
  eopts.epochs = static_cast<std::uint32_t>(o.passes.epochs);
  eopts.shuffle_window = shuffle_window;
  eopts.seed = o.model.seed;
  auto reader = data::epoch_reader::open(eopts);
  if (!reader.is_ok()) return failed("cannot read training data: " + reader.error().message());
  const auto& bound = reader->current().schema();
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

  train::hogwild_options ho;
  ho.threads = o.threads;
  ho.window_examples = o.window;
  ho.progress_interval_seconds = o.progress_interval;
  ho.buckets = setup->buckets;
  ho.schedule = setup->schedule;
  ho.cancel = &cancel;
  steady_clock_source clock;
  auto on_progress = [&o](int epoch) {
    return [&o, epoch](const train::train_progress& p) {
      std::string where = p.fraction_done >= 0 ? fmt::format(" ({:.1f}%, ETA {})", 100 * p.fraction_done,
                                                               service::human_seconds(p.eta_seconds))
                                               : std::string();
      spdlog::info("{}{} examples{}, {:.0f} ex/s, recent {}: NE {:.5f} AUC {:.5f}",
                   o.passes.epochs > 1 ? fmt::format("epoch {}/{}: ", epoch, o.passes.epochs) : std::string(),
                   service::with_commas(p.examples), where, p.examples_per_sec, service::with_commas(p.window.examples),
                   p.window.ne, p.window.auc);
    };
  };
  train::eval_options eo;
  eo.threads = o.threads;
  eo.buckets = setup->buckets;
  // Scores `model` on `files`; `bad_rows` receives the rows skipped, reported when `report`.
  auto score = [&](const train::dense_model& m, const embedding::local_embeddings& e, const std::vector<std::string>& files,
                   double base_rate, const char* what, std::uint64_t& bad_rows,
                   bool report = true) -> result<metrics::summary> {
    auto sopts = job::reader_options(o.input, files, 4096);
    auto r = sopts.is_ok() ? data::batch_reader::open(*sopts) : result<data::batch_reader>(sopts.error());
    if (!r.is_ok()) return r.error().with_context(std::string("cannot read ") + what);
    train::reader_source src(std::move(*r));
    auto scored = train::evaluate(m, e, src, base_rate, eo);
    if (report) print_bad_rows(src.reader(), what);
    bad_rows = src.reader().counters().bad;
    if (!scored.is_ok()) return scored.error().with_context(std::string("scoring ") + what);
    return *scored;
  };

  // The epochs, read by the reader opened above (its schema built the model).
  std::vector<epoch_record> epochs;
  std::uint64_t train_bad_rows = 0, validation_bad_rows = 0;
  int best_epoch = 0, since_best = 0;
  double best_loss = 0;
  bool stopped_early = false, cancelled = false;
  // The best epoch's model when validation picks one: written to --export, or to a scratch file.
  const std::string best_path = !o.export_path.empty() ? o.export_path
                                                       : (std::filesystem::temp_directory_path() /
                                                          ("shadowsync-best-" + std::to_string(::getpid()) + ".model"))
                                                             .string();
  struct remove_scratch {
    std::string path;
    ~remove_scratch() {
      std::error_code ignored;
      if (!path.empty()) std::filesystem::remove(path, ignored);
    }
  } scratch{o.export_path.empty() && !o.passes.validation.empty() ? best_path : std::string()};
  model::model_file_stats exported;  // what --export holds
  double export_seconds = 0;
  auto save = [&](std::uint64_t examples, double click_rate) -> status {
    const double start = clock.now_seconds();
    auto header = model::header_for_job(model_job, click_rate, examples, "shadowsync train");
    auto saved = header.is_ok() ? model::save_model(best_path, *header, model, store)
                                : result<model::model_file_stats>(header.error());
    if (!saved.is_ok()) return saved.error();
    if (!o.export_path.empty()) exported = *saved, export_seconds = clock.now_seconds() - start;
    return status::ok();
  };
  std::uint64_t examples_trained = 0;
  double first_click_rate = 0;
  // --eval-every: the validation files scored mid-epoch while the workers wait.
  std::vector<job::evaluation> evaluations;
  int current_epoch = 1;
  bool evaluation_failed = false;
  if (o.passes.eval_every > 0) {
    ho.pause_every = o.passes.eval_every;
    ho.on_pause = [&](std::uint64_t in_epoch, double click_rate_so_far) {
      // NE against the first pass's click rate, or within it, the rate so far.
      const double base = first_click_rate > 0 ? first_click_rate : click_rate_so_far;
      auto v = score(model, store, o.passes.validation, base, "validation data", validation_bad_rows,
                     evaluations.empty() && current_epoch == 1);
      if (!v.is_ok()) {
        spdlog::error("{}", v.error().message());
        evaluation_failed = true;
        cancel.store(true);
        return;
      }
      evaluations.push_back({current_epoch, examples_trained + in_epoch, *v});
      spdlog::info("epoch {}, {} examples: validation log loss {:.5f} NE {:.5f} AUC {:.5f}", current_epoch,
                   service::with_commas(examples_trained + in_epoch), v->log_loss, v->ne, v->auc);
    };
  }
  for (int epoch = 1; epoch <= o.passes.epochs && !cancelled; ++epoch) {
    if (epoch > 1) {
      auto next = reader->next_epoch();
      if (!next.is_ok()) return failed("cannot read training data (epoch " + std::to_string(epoch) + "): " +
                                       next.error().message());
    }
    train::epoch_source source(*reader);
    ho.examples_before = examples_trained;  // the schedule counts every epoch's examples
    current_epoch = epoch;
    auto trained = train::train_hogwild(model, store, source, ho, clock, on_progress(epoch));
    if (epoch == 1) {
      print_bad_rows(reader->current(), "training data");
      train_bad_rows = reader->current().counters().bad;
    }
    if (!trained.is_ok()) return failed("training stopped: " + trained.error().message());
    if (evaluation_failed) return failed("scoring the validation data failed (see above)");
    const auto& tr = *trained;
    if (const std::size_t bad = train::non_finite_params(model); bad > 0 || !std::isfinite(tr.train_log_loss)) {
      return failed("training diverged: " + std::to_string(bad) + " of " + std::to_string(model.size()) +
                    " dense parameters are NaN or infinite (train log loss " + std::to_string(tr.train_log_loss) +
                    "); lower --learning-rate or --embedding-learning-rate. No model is scored or exported");
    }
    if (epoch == 1) first_click_rate = tr.train_click_rate;
    examples_trained += tr.examples;
    cancelled = tr.cancelled;
    epoch_record rec{epoch, tr, {}};
    if (!o.passes.validation.empty() && !cancelled) {
      // The same validation rows every epoch: their bad rows are reported once.
      auto v = score(model, store, o.passes.validation, first_click_rate, "validation data", validation_bad_rows, epoch == 1);
      if (!v.is_ok()) return failed(v.error().message());
      rec.validation = *v;
      const bool better = best_epoch == 0 || v->log_loss < best_loss;
      if (better) {
        best_epoch = epoch, best_loss = v->log_loss, since_best = 0;
        // Kept on disk while a later epoch could be worse; the last one is the model in memory.
        const bool keep = epoch < o.passes.epochs || !o.export_path.empty();
        if (auto st = keep ? save(examples_trained, first_click_rate) : status::ok(); !st.is_ok())
          return failed("cannot " + std::string(o.export_path.empty() ? "keep the best model" : "export the model") +
                        ": " + st.message());
      } else {
        ++since_best;
      }
      spdlog::info("epoch {}/{}: train log loss {:.5f}{}, validation log loss {:.5f} NE {:.5f} AUC {:.5f}{}", epoch,
                   o.passes.epochs, tr.train_log_loss, epoch == 1 ? " (progressive)" : "", v->log_loss, v->ne, v->auc,
                   better ? " (best so far)" : "");
    } else if (o.passes.epochs > 1) {
      spdlog::info("epoch {}/{}: train log loss {:.5f}{}", epoch, o.passes.epochs, tr.train_log_loss,
                   epoch == 1 ? " (progressive)" : "");
    }
    epochs.push_back(rec);
    if (o.passes.early_stop_patience > 0 && since_best >= o.passes.early_stop_patience && epoch < o.passes.epochs) {
      spdlog::info("early stop after epoch {}: no better validation log loss for {} epochs (best: epoch {})", epoch,
                   since_best, best_epoch);
      stopped_early = true;
      break;
    }
  }
  const auto& first = epochs.front().trained;
  const auto& last = epochs.back().trained;
  double seconds = 0;
  for (const auto& e : epochs) seconds += e.trained.seconds;

  // The model that is tested (and exported, above): the best epoch's when validation chose one,
  // read back only when there is a test to score.
  std::unique_ptr<model::loaded_model> best;
  if (best_epoch > 0 && best_epoch != epochs.back().epoch && !o.test.empty() && !cancelled) {
    auto loaded = model::load_model(best_path);
    if (!loaded.is_ok()) return failed("cannot read back the best epoch's model: " + loaded.error().message());
    best = std::make_unique<model::loaded_model>(std::move(*loaded));
    spdlog::info("using the model of epoch {} (validation log loss {:.5f})", best_epoch, best_loss);
  }
  const train::dense_model& final_dense = best ? *best->dense : model;
  const embedding::local_embeddings& final_store = best ? *best->embeddings : store;

  metrics::summary test;
  std::uint64_t test_bad_rows = 0;
  if (!o.test.empty() && !cancelled) {
    auto t = score(final_dense, final_store, o.test, first_click_rate, "test data", test_bad_rows);
    if (!t.is_ok()) return failed(t.error().message());
    test = *t;
  }

  // Without validation the model is exported once, at the end; with it, each best epoch's was.
  if (!o.export_path.empty() && best_epoch == 0) {
    if (cancelled)
      spdlog::warn("training stopped early: not exporting the model to {}", o.export_path);
    else if (auto st = save(examples_trained, first_click_rate); !st.is_ok())
      return failed("cannot export the model: " + st.message());
  }
  if (exported.bytes > 0)
    spdlog::info("exported the model{} to {}: {} rows, {} in {}",
                 best_epoch > 0 ? " of epoch " + std::to_string(best_epoch) : std::string(), o.export_path,
                 service::with_commas(exported.rows), service::human_bytes(static_cast<double>(exported.bytes)),
                 service::human_seconds(export_seconds));

  const std::uint64_t bad_rows = train_bad_rows + test_bad_rows;
  const double train_ne = metrics::normalized_entropy(first.train_log_loss, first.train_click_rate);
  const double examples_per_sec = seconds > 0 ? static_cast<double>(examples_trained) / seconds : 0;
  std::printf("shadowsync train: %s examples in %s (%.0f examples/s, %d thread%s)%s%s\n",
              service::with_commas(examples_trained).c_str(), service::human_seconds(seconds).c_str(),
              examples_per_sec, o.threads, o.threads == 1 ? "" : "s",
              o.passes.epochs > 1 ? fmt::format(", {} of {} epochs", epochs.size(), o.passes.epochs).c_str() : "",
              cancelled ? " [stopped early]" : stopped_early ? " [early stop]" : "");
  std::printf("  train   log loss %.5f  NE %.5f (progressive, first pass)  click rate %.4f\n", first.train_log_loss,
              train_ne, first.train_click_rate);
  if (epochs.size() > 1)
    std::printf("  train   last pass log loss %.5f (not progressive: seen before)\n", last.train_log_loss);
  if (best_epoch > 0)
    std::printf("  valid   best epoch %d: log loss %.5f  NE %.5f  AUC %.5f\n", best_epoch,
                epochs[static_cast<std::size_t>(best_epoch - 1)].validation.log_loss,
                epochs[static_cast<std::size_t>(best_epoch - 1)].validation.ne,
                epochs[static_cast<std::size_t>(best_epoch - 1)].validation.auc);
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
      .add("examples", examples_trained)
      .add("seconds", seconds)
      .add("examples_per_sec", examples_per_sec)
      .add("threads", o.threads)
      .add("batch_size", o.batch_size)
      .add("train_logloss", first.train_log_loss)
      .add("train_ne", train_ne)
      .add("train_click_rate", first.train_click_rate)
      .add("epochs_run", static_cast<std::uint64_t>(epochs.size()))
      .add("best_epoch", best_epoch)
      .add("stopped_early", stopped_early)
      .add_raw("epochs", epochs_json(epochs))
      .add_raw("evaluations", job::evaluations_json(evaluations));
  metrics::add_test_fields(j, test)
      .add("bad_rows", bad_rows)
      .add("validation_bad_rows", validation_bad_rows)
      .add("embedding_rows", store.total_rows())
      .add("embedding_bytes", store.total_bytes())
      .add("model", setup->dlrm.describe())
      .add("export_path", exported.bytes > 0 ? o.export_path : std::string())
      .add("export_rows", exported.rows)
      .add("export_bytes", exported.bytes)
      .add("export_seconds", export_seconds)
      .add("cancelled", cancelled);
  std::printf("%s\n", j.str().c_str());
  return cancelled ? 130 : 0;
}

}  // namespace ss::cli
