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

#include "command_line.hpp"
#include "commands.hpp"
#include "ss/core/clock.hpp"
#include "ss/core/config/option_set.hpp"
#include "ss/core/job/epoch_options.hpp"
#include "ss/core/job/job_options.hpp"
#include "ss/core/job/preflight.hpp"
#include "ss/core/job/progressive_options.hpp"
#include "ss/core/json.hpp"
#include "ss/core/metrics/metrics.hpp"
#include "ss/core/model/gemm.hpp"
#include "ss/core/model_file/model_file.hpp"
#include "ss/core/train/hogwild_trainer.hpp"
#include "ss/core/train/reader_source.hpp"
#include "ss/service/format.hpp"
#include "ss/core/job/input_options.hpp"
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
  job::progressive_options progressive;
  log_flags log;
  std::string export_path;  // --export: write the trained model here (model_file.hpp)
  job::epoch_options passes;
  job::input_options input;
  job::model_options model;
};

const char* const train_help =
    "Trains a DLRM on CTR data in this process: one reader thread parses and batches the --train files, "
    "--threads Hogwild workers update one shared model without locks, then the model is scored on the --test "
    "files. Progress goes to stderr; the summary and one JSON line to stdout.";

void add_train_flags(config::option_set& opts, train_options& o) {
  opts.add("train", &o.train, "Training files (plain or gzip), read once, in order.");
  opts.add("test", &o.test, "Test files scored after training (optional).");
  opts.add("batch-size", &o.batch_size, "Examples per minibatch.").range(1, 65536);
  opts.add("threads", &o.threads, "Hogwild worker threads (1 = deterministic).").range(1, 256);
  opts.add("progress-interval", &o.progress_interval, "Seconds between progress lines; 0 = none.").min(0.0);
  job::add_progressive_options(opts, o.progressive);
  add_log_flags(opts, o.log);
  opts.add("export", &o.export_path,
           "After training, write the model (dense part and embedding rows, see `shadowsync predict`) to "
           "this file; empty = none.");
  job::add_epoch_options(opts, o.passes);
  job::add_input_options(opts, o.input);
  job::add_model_options(opts, o.model);
}

// Before training: there is data to train on, the model's path can be written and the test and
// validation files are data of this schema.
status check_train_options(const train_options& o) {
  if (o.train.empty()) return status(errc::invalid_argument, "--train needs at least one file (see --help)");
  SS_RETURN_IF_ERROR(job::check_output_path(o.export_path, "--export"));
  SS_RETURN_IF_ERROR(job::check_input_files(o.input, o.test, "--test"));
  SS_RETURN_IF_ERROR(job::check_input_files(o.input, o.passes.validation, "--validation"));
  return job::check_epoch_options(o.passes);
}

// The job as the exported model records it: the options that define the model and its input.
job::job_options model_job_of(const train_options& o, const data::bound_schema& bound) {
  job::job_options j;
  j.train = o.train;
  j.test = o.test;
  j.batch_size = o.batch_size;
  j.input = o.input;
  j.model = o.model;
  j.dense_features = static_cast<int>(bound.num_dense());
  j.categorical_features = static_cast<int>(bound.num_categorical());
  return j;
}

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

// A file removed when the run ends: the best epoch's model kept while a later epoch could be worse.
struct scratch_file {
  std::string path;  // "" = none
  ~scratch_file() {
    std::error_code ignored;
    if (!path.empty()) std::filesystem::remove(path, ignored);
  }
};

// One run of `shadowsync train` once its data is open and its model built: the epochs (with
// validation, the best one kept), the test, the export and the printed result. An error from a
// step is why the run failed (exit 1).
class train_run {
 public:
  train_run(const train_options& o, data::epoch_reader& reader, const job::model_setup& setup,
            job::job_options model_job, train::dense_model& model, embedding::local_embeddings& store, std::atomic<bool>& cancel);
  status train_epochs();
  status test_and_export();
  void print_result() const;
  bool cancelled() const { return cancelled_; }
  // Nothing was trained although the input was read to its end: its files hold no good row.
  status check_trained() const {
    if (examples_trained_ > 0 || cancelled_) return status::ok();
    return {errc::invalid_argument, "the training files held no examples (" + std::to_string(train_bad_rows_) +
                                        " bad rows skipped); check --train"};
  }

 private:
  status run_epoch(int epoch, bool& stop);
  status validate_epoch(int epoch, const train::train_result& trained, epoch_record& record);
  void evaluate_mid_epoch(std::uint64_t in_epoch, double click_rate_so_far);
  train::progress_callback progress_printer(int epoch) const;
  // Scores a model on `files`; `bad_rows` receives the rows skipped, reported when `report`.
  result<metrics::summary> score(const train::dense_model& m, const embedding::local_embeddings& e,
                                 const std::vector<std::string>& files, double base_rate, const char* what,
                                 std::uint64_t& bad_rows, bool report = true) const;
  // Writes the model in memory to best_path_ (--export, or the scratch file).
  status save();
  double seconds() const;  // training time, every epoch's
  double examples_per_sec() const;
  double train_ne() const;
  void print_summary() const;
  void print_json() const;

  const train_options& o_;
  data::epoch_reader& reader_;
  const job::model_setup& setup_;
  const job::job_options model_job_;
  train::dense_model& model_;
  embedding::local_embeddings& store_;
  std::atomic<bool>& cancel_;
  train::hogwild_options hogwild_;
  train::eval_options eval_;
  steady_clock_source clock_;
  // The best epoch's model when validation picks one: written to --export, or to a scratch file.
  std::string best_path_;
  scratch_file scratch_;
  std::vector<epoch_record> epochs_;
  std::vector<job::evaluation> evaluations_;  // --eval-every: the validation files scored mid-epoch
  std::uint64_t examples_trained_ = 0;
  double first_click_rate_ = 0;
  int current_epoch_ = 1;
  status evaluation_error_;  // a mid-epoch scoring that failed
  int best_epoch_ = 0, since_best_ = 0;
  double best_loss_ = 0;
  bool stopped_early_ = false, cancelled_ = false;
  std::uint64_t train_bad_rows_ = 0, validation_bad_rows_ = 0, test_bad_rows_ = 0;
  metrics::summary test_;
  model::model_file_stats exported_;  // what --export holds
  double export_seconds_ = 0;
};

train_run::train_run(const train_options& o, data::epoch_reader& reader, const job::model_setup& setup,
                     job::job_options model_job, train::dense_model& model, embedding::local_embeddings& store,
                     std::atomic<bool>& cancel)
    : o_(o), reader_(reader), setup_(setup), model_job_(std::move(model_job)), model_(model), store_(store),
      cancel_(cancel) {
  hogwild_.threads = o.threads;
  hogwild_.window = job::window_spec_of(o.progressive);
  hogwild_.progress_interval_seconds = o.progress_interval;
  hogwild_.buckets = setup.buckets;
  hogwild_.schedule = setup.schedule;
  hogwild_.cancel = &cancel;
  if (o.passes.eval_every > 0) {
    hogwild_.pause_every = o.passes.eval_every;
    hogwild_.on_pause = [this](std::uint64_t in_epoch, double rate) { evaluate_mid_epoch(in_epoch, rate); };
  }
  eval_.threads = o.threads;
  eval_.buckets = setup.buckets;
  best_path_ = !o.export_path.empty() ? o.export_path
                                      : (std::filesystem::temp_directory_path() /
                                         ("shadowsync-best-" + std::to_string(::getpid()) + ".model"))
                                            .string();
  if (o.export_path.empty() && !o.passes.validation.empty()) scratch_.path = best_path_;
}

train::progress_callback train_run::progress_printer(int epoch) const {
  return [this, epoch](const train::train_progress& p) {
    std::string where = p.fraction_done >= 0 ? fmt::format(" ({:.1f}%, ETA {})", 100 * p.fraction_done,
                                                             service::human_seconds(p.eta_seconds))
                                             : std::string();
    spdlog::info("{}{} examples{}, {:.0f} ex/s, {}",
                 o_.passes.epochs > 1 ? fmt::format("epoch {}/{}: ", epoch, o_.passes.epochs) : std::string(),
                 service::with_commas(p.examples), where, p.examples_per_sec, p.window.to_string());
  };
}

result<metrics::summary> train_run::score(const train::dense_model& m, const embedding::local_embeddings& e,
                                          const std::vector<std::string>& files, double base_rate, const char* what,
                                          std::uint64_t& bad_rows, bool report) const {
  auto sopts = job::reader_options(o_.input, files, 4096);
  auto r = sopts.is_ok() ? data::batch_reader::open(*sopts) : result<data::batch_reader>(sopts.error());
  if (!r.is_ok()) return r.error().with_context(std::string("cannot read ") + what);
  train::reader_source src(std::move(*r));
  auto scored = train::evaluate(m, e, src, base_rate, eval_);
  if (report) print_bad_rows(src.reader(), what);
  bad_rows = src.reader().counters().bad;
  if (!scored.is_ok()) return scored.error().with_context(std::string("scoring ") + what);
  return *scored;
}

status train_run::save() {
  const double start = clock_.now_seconds();
  auto header = model::header_for_job(model_job_, first_click_rate_, examples_trained_, "shadowsync train");
  auto saved = header.is_ok() ? model::save_model(best_path_, *header, model_, store_)
                              : result<model::model_file_stats>(header.error());
  if (!saved.is_ok()) return saved.error();
  if (!o_.export_path.empty()) exported_ = *saved, export_seconds_ = clock_.now_seconds() - start;
  return status::ok();
}

// --eval-every: scores the validation files while the workers wait.
void train_run::evaluate_mid_epoch(std::uint64_t in_epoch, double click_rate_so_far) {
  // NE against the first pass's click rate, or within it, the rate so far.
  const double base = first_click_rate_ > 0 ? first_click_rate_ : click_rate_so_far;
  auto v = score(model_, store_, o_.passes.validation, base, "validation data", validation_bad_rows_,
                 evaluations_.empty() && current_epoch_ == 1);
  if (!v.is_ok()) {
    spdlog::error("{}", v.error().message());
    evaluation_error_ = v.error();
    cancel_.store(true);
    return;
  }
  evaluations_.push_back({current_epoch_, examples_trained_ + in_epoch, *v});
  spdlog::info("epoch {}, {} examples: validation log loss {:.5f} NE {:.5f} AUC {:.5f}", current_epoch_,
               service::with_commas(examples_trained_ + in_epoch), v->log_loss, v->ne, v->auc);
}

// The epochs, read by the reader opened before (its schema built the model).
status train_run::train_epochs() {
  bool stop = false;
  for (int epoch = 1; epoch <= o_.passes.epochs && !cancelled_ && !stop; ++epoch)
    SS_RETURN_IF_ERROR(run_epoch(epoch, stop));
  return status::ok();
}

status train_run::run_epoch(int epoch, bool& stop) {
  if (epoch > 1) {
    auto next = reader_.next_epoch();
    if (!next.is_ok())
      return status(next.error().code(), "cannot read training data (epoch " + std::to_string(epoch) +
                                             "): " + next.error().message());
  }
  train::epoch_source source(reader_);
  hogwild_.examples_before = examples_trained_;  // the schedule counts every epoch's examples
  current_epoch_ = epoch;
  auto trained = train::train_hogwild(model_, store_, source, hogwild_, clock_, progress_printer(epoch));
  if (epoch == 1) {
    print_bad_rows(reader_.current(), "training data");
    train_bad_rows_ = reader_.current().counters().bad;
  }
  if (!trained.is_ok()) return trained.error().with_context("training stopped");
  if (!evaluation_error_.is_ok())
    return status(evaluation_error_.code(), "scoring the validation data failed (see above)");
  const auto& tr = *trained;
  if (const std::size_t bad = train::non_finite_params(model_); bad > 0 || !std::isfinite(tr.train_log_loss)) {
    return status(errc::out_of_range, "training diverged: " + std::to_string(bad) + " of " +
                                      std::to_string(model_.size()) +
                                      " dense parameters are NaN or infinite (train log loss " +
                                      std::to_string(tr.train_log_loss) +
                                      "); lower --learning-rate or --embedding-learning-rate. No model is scored or "
                                      "exported");
  }
  if (epoch == 1) first_click_rate_ = tr.train_click_rate;
  examples_trained_ += tr.examples;
  cancelled_ = tr.cancelled;
  epoch_record rec{epoch, tr, {}};
  if (!o_.passes.validation.empty() && !cancelled_) {
    SS_RETURN_IF_ERROR(validate_epoch(epoch, tr, rec));
  } else if (o_.passes.epochs > 1) {
    spdlog::info("epoch {}/{}: train log loss {:.5f}{}", epoch, o_.passes.epochs, tr.train_log_loss,
                 epoch == 1 ? " (progressive)" : "");
  }
  epochs_.push_back(rec);
  if (o_.passes.early_stop_patience > 0 && since_best_ >= o_.passes.early_stop_patience && epoch < o_.passes.epochs) {
    spdlog::info("early stop after epoch {}: no better validation log loss for {} epochs (best: epoch {})", epoch,
                 since_best_, best_epoch_);
    stopped_early_ = true;
    stop = true;
  }
  return status::ok();
}

// Scores the validation files after an epoch and keeps the best epoch's model.
status train_run::validate_epoch(int epoch, const train::train_result& tr, epoch_record& rec) {
  // The same validation rows every epoch: their bad rows are reported once.
  auto v = score(model_, store_, o_.passes.validation, first_click_rate_, "validation data", validation_bad_rows_,
                 epoch == 1);
  if (!v.is_ok()) return v.error();
  rec.validation = *v;
  const bool better = best_epoch_ == 0 || v->log_loss < best_loss_;
  if (better) {
    best_epoch_ = epoch, best_loss_ = v->log_loss, since_best_ = 0;
    // Kept on disk while a later epoch could be worse; the last one is the model in memory.
    const bool keep = epoch < o_.passes.epochs || !o_.export_path.empty();
    if (auto st = keep ? save() : status::ok(); !st.is_ok())
      return st.with_context(o_.export_path.empty() ? "cannot keep the best model" : "cannot export the model");
  } else {
    ++since_best_;
  }
  spdlog::info("epoch {}/{}: train log loss {:.5f}{}, validation log loss {:.5f} NE {:.5f} AUC {:.5f}{}", epoch,
               o_.passes.epochs, tr.train_log_loss, epoch == 1 ? " (progressive)" : "", v->log_loss, v->ne, v->auc,
               better ? " (best so far)" : "");
  return status::ok();
}

status train_run::test_and_export() {
  // The model that is tested (and exported, above): the best epoch's when validation chose one,
  // read back only when there is a test to score.
  std::unique_ptr<model::loaded_model> best;
  if (best_epoch_ > 0 && best_epoch_ != epochs_.back().epoch && !o_.test.empty() && !cancelled_) {
    auto loaded = model::load_model(best_path_);
    if (!loaded.is_ok()) return loaded.error().with_context("cannot read back the best epoch's model");
    best = std::make_unique<model::loaded_model>(std::move(*loaded));
    spdlog::info("using the model of epoch {} (validation log loss {:.5f})", best_epoch_, best_loss_);
  }
  if (!o_.test.empty() && !cancelled_) {
    auto t = score(best ? *best->dense : model_, best ? *best->embeddings : store_, o_.test, first_click_rate_,
                   "test data", test_bad_rows_);
    if (!t.is_ok()) return t.error();
    test_ = *t;
  }
  // Without validation the model is exported once, at the end; with it, each best epoch's was.
  if (!o_.export_path.empty() && best_epoch_ == 0) {
    if (cancelled_)
      spdlog::warn("training stopped early: not exporting the model to {}", o_.export_path);
    else
      SS_RETURN_IF_ERROR(save().with_context("cannot export the model"));
  }
  if (exported_.bytes > 0)
    spdlog::info("exported the model{} to {}: {} rows, {} in {}",
                 best_epoch_ > 0 ? " of epoch " + std::to_string(best_epoch_) : std::string(), o_.export_path,
                 service::with_commas(exported_.rows), service::human_bytes(static_cast<double>(exported_.bytes)),
                 service::human_seconds(export_seconds_));
  return status::ok();
}

void train_run::print_result() const {
  print_summary();
  print_json();
}

double train_run::seconds() const {
  double seconds = 0;
  for (const auto& e : epochs_) seconds += e.trained.seconds;
  return seconds;
}

double train_run::examples_per_sec() const {
  const double s = seconds();
  return s > 0 ? static_cast<double>(examples_trained_) / s : 0;
}

// The first pass's NE: progressive, each example scored before it was trained on.
double train_run::train_ne() const {
  const auto& first = epochs_.front().trained;
  return metrics::normalized_entropy(first.train_log_loss, first.train_click_rate);
}

void train_run::print_summary() const {
  const auto& first = epochs_.front().trained;
  std::printf("shadowsync train: %s examples in %s (%.0f examples/s, %d thread%s)%s%s\n",
              service::with_commas(examples_trained_).c_str(), service::human_seconds(seconds()).c_str(),
              examples_per_sec(), o_.threads, o_.threads == 1 ? "" : "s",
              o_.passes.epochs > 1 ? fmt::format(", {} of {} epochs", epochs_.size(), o_.passes.epochs).c_str() : "",
              cancelled_ ? " [stopped early]" : stopped_early_ ? " [early stop]" : "");
  std::printf("  train   log loss %.5f  NE %.5f (progressive, first pass)  click rate %.4f\n", first.train_log_loss,
              train_ne(), first.train_click_rate);
  std::printf("  window  %s; window: %s%s\n", first.last_window.to_string().c_str(),
              job::describe_window(o_.progressive).c_str(), epochs_.size() > 1 ? " of the first pass" : "");
  if (epochs_.size() > 1)
    std::printf("  train   last pass log loss %.5f (not progressive: seen before)\n",
                epochs_.back().trained.train_log_loss);
  if (best_epoch_ > 0) {
    const auto& best = epochs_[static_cast<std::size_t>(best_epoch_ - 1)].validation;
    std::printf("  valid   best epoch %d: log loss %.5f  NE %.5f  AUC %.5f\n", best_epoch_, best.log_loss, best.ne,
                best.auc);
  }
  if (test_.examples > 0)
    std::printf("  test    %s examples  log loss %.5f  NE %.5f  AUC %.5f  calibration %.4f\n",
                service::with_commas(test_.examples).c_str(), test_.log_loss, test_.ne, test_.auc, test_.calibration);
  std::printf("  data    %s bad rows skipped\n", service::with_commas(train_bad_rows_ + test_bad_rows_).c_str());
  std::printf("  model   %s; %s embedding rows (%s)\n", setup_.dlrm.describe().c_str(),
              service::with_commas(store_.total_rows()).c_str(), service::human_bytes(store_.total_bytes()).c_str());
  if (exported_.bytes > 0)
    std::printf("  export  %s: %s rows, %s in %s\n", o_.export_path.c_str(),
                service::with_commas(exported_.rows).c_str(),
                service::human_bytes(static_cast<double>(exported_.bytes)).c_str(),
                service::human_seconds(export_seconds_).c_str());
}

void train_run::print_json() const {
  const auto& first = epochs_.front().trained;
  json_object j;
  j.add("command", "train")
      .add("ok", true)
      .add("error", "")
      .add("examples", examples_trained_)
      .add("seconds", seconds())
      .add("examples_per_sec", examples_per_sec())
      .add("threads", o_.threads)
      .add("batch_size", o_.batch_size)
      .add("train_logloss", first.train_log_loss)
      .add("train_ne", train_ne())
      .add("train_click_rate", first.train_click_rate)
      .add("progressive_window", o_.progressive.window)
      .add("progressive_window_seconds", o_.progressive.window_seconds);
  metrics::add_progressive_fields(j, first.last_window)
      .add("epochs_run", static_cast<std::uint64_t>(epochs_.size()))
      .add("best_epoch", best_epoch_)
      .add("stopped_early", stopped_early_)
      .add_raw("epochs", epochs_json(epochs_))
      .add_raw("evaluations", job::evaluations_json(evaluations_));
  metrics::add_test_fields(j, test_)
      .add("bad_rows", train_bad_rows_ + test_bad_rows_)
      .add("validation_bad_rows", validation_bad_rows_)
      .add("embedding_rows", store_.total_rows())
      .add("embedding_bytes", store_.total_bytes())
      .add("model", setup_.dlrm.describe())
      .add("export_path", exported_.bytes > 0 ? o_.export_path : std::string())
      .add("export_rows", exported_.rows)
      .add("export_bytes", exported_.bytes)
      .add("export_seconds", export_seconds_)
      .add("cancelled", cancelled_);
  std::printf("%s\n", j.str().c_str());
}

}  // namespace

int run_train(const args& a, const config::environment& env) {
  train_options o;
  // A run refused before it starts (exit 2) or failed after (exit 1) still ends with a JSON line,
  // saying why, for the scripts that read only that line.
  command_line cmd({"train", "train"}, train_help);
  add_train_flags(cmd.options(), o);
  if (auto done = cmd.parse(a, env, &o.log)) return *done;
  if (auto st = check_train_options(o); !st.is_ok()) return cmd.refuse(st.message());
  auto failed = [](const std::string& why) {
    spdlog::error("{}", why);
    std::printf("%s\n", json_object().add("command", "train").add("ok", false).add("error", why).str().c_str());
    return 1;
  };

  auto ropts = job::reader_options(o.input, o.train, static_cast<std::size_t>(o.batch_size));
  if (!ropts.is_ok()) return cmd.refuse(ropts.error().message());
  data::epoch_reader_options eopts;
  eopts.input = *ropts;
  eopts.epochs = static_cast<std::uint32_t>(o.passes.epochs);
  eopts.shuffle_window = o.passes.shuffle_window();
  eopts.seed = o.model.seed;
  auto reader = data::epoch_reader::open(eopts);
  if (!reader.is_ok()) return failed("cannot read training data: " + reader.error().message());
  const auto& bound = reader->current().schema();
  auto setup = job::resolve_model(o.model, bound.num_dense(), bound.num_categorical());
  if (!setup.is_ok()) return cmd.refuse(setup.error().message());
  if (setup->embeddings.precision != embedding::row_precision::fp32)
    return cmd.refuse("--row-precision " + o.model.row_precision +
                      ": the single-process trainer's workers read its rows in place, at fp32; 16-bit rows are a "
                      "cluster's (shadowsync local, or shard servers)");

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
  train_run run(o, *reader, *setup, model_job_of(o, bound), model, store, cancel);
  if (auto st = run.train_epochs(); !st.is_ok()) return failed(st.message());
  if (auto st = run.check_trained(); !st.is_ok()) return failed(st.message());
  if (auto st = run.test_and_export(); !st.is_ok()) return failed(st.message());
  run.print_result();
  return run.cancelled() ? 130 : 0;
}

std::vector<std::string> train_option_names() { return names_of_options<train_options>(add_train_flags); }

}  // namespace ss::cli
