#include "ss/core/job/job_options.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "ss/core/data/follow_reader.hpp"
#include "ss/core/embedding/row_ttl.hpp"
#include "ss/core/embedding/sharding.hpp"

namespace ss::job {
namespace {
const char* const description =
    "A training job: its data, model, optimizers and cluster settings, set at the coordinator and "
    "sent to every member.";
}

void add_job_options(config::option_set& opts, job_options& o) {
  opts.add("train", &o.train, "Training files (plain or gzip); reader i of N reads files i, i+N, ...");
  opts.add("test", &o.test, "Test files the coordinator scores after training (optional).");
  opts.add("batch-size", &o.batch_size, "Examples per minibatch.").range(1, 65536);
  opts.add("shards", &o.shards, "Embedding shard servers in the job (0 only with --simulate-step-ms).")
      .range(0, 4096);
  opts.add("readers", &o.readers, "Data readers in the job (0 only with --simulate-step-ms).").range(0, 4096);
  opts.add("min-trainers", &o.min_trainers, "Training starts once this many trainers registered.")
      .range(1, 65536);
  opts.add("lookahead", &o.lookahead,
           "Trainer: batches whose embedding lookups run ahead of compute (0 = none).")
      .range(0, 8);
  opts.add("pull-credits", &o.pull_credits,
           "Trainer: batch requests outstanding per reader (bounds the trainer's queue).")
      .range(1, 64);
  opts.add("heartbeat-interval", &o.heartbeat_interval, "Seconds between member heartbeats.")
      .range(0.01, 3600.0);
  opts.add("member-timeout", &o.member_timeout, "Seconds without a heartbeat before a member is dropped.")
      .range(0.05, 86400.0);
  opts.add("request-timeout", &o.request_timeout, "Seconds before a request to a peer counts as lost.")
      .range(0.01, 3600.0);
  opts.add("progress-interval", &o.progress_interval, "Seconds between progress lines; 0 = none.").min(0.0);
  opts.add("export-page-rows", &o.export_page_rows,
           "Embedding rows per page when a model is exported (each page is held in memory by the shard and "
           "the coordinator).")
      .range(1, 1 << 20);
  opts.add("admit-after", &o.admit_after,
           "Shards: an id gets an embedding row only once it was looked up this many times; until then it is "
           "served its initial values and its gradients are dropped (counted). Keeps one-off ids out of memory "
           "and storage (docs/embeddings.md). 1: every id at once.")
      .range(1, 255);
  opts.add("row-ttl", &o.row_ttl,
           "Shards: a row not touched (looked up for training, or pushed) for this long is deleted from RAM and "
           "storage by a background sweep, and its id starts over from its initial values (counted: rows_expired). "
           "In examples the shard served (2000000ex: the same for a given input on any machine) or wall-clock "
           "time (90s, 30m, 12h, 7d). 0: rows never expire. Fixed for a job's life (it adds a slot to each row).");
  opts.add("peer-wait", &o.peer_wait,
           "Seconds the job waits for a service that went away (a shard, reader or sync server that stopped "
           "answering or left the cluster: a restart) before it fails with the reason; in training, scoring and "
           "export alike.")
      .range(1.0, 86400.0);
  opts.add("batch-lease", &o.batch_lease,
           "Seconds a trainer may hold a batch without acking it before the reader hands it to another trainer "
           "(a replay if the first one was only slow).")
      .range(1.0, 86400.0);
  opts.add("dense-features", &o.dense_features,
           "Dense features per example; -1 = from the schema (and the first training file's header).")
      .range(-1, 100000);
  opts.add("categorical-features", &o.categorical_features,
           "Categorical features per example; -1 = from the schema (and the first training file's header).")
      .range(-1, 127);
  opts.add("sync", &o.sync,
           "How trainers synchronize their dense replicas: none, or shadow (s-) / foreground (fr-) "
           "elastic averaging, model averaging or block momentum; -nesterov adds the outer optimizer (Nesterov "
           "momentum per sweep of the trainers) to s-easgd and s-ma. auto: s-easgd whose rounds run while 2 or "
           "more trainers are in the job (a trainer alone skips them), whatever --min-trainers says.")
      .choices({"auto", "none", "s-easgd", "s-ma", "s-bmuf", "fr-easgd", "fr-ma", "fr-bmuf", "s-easgd-nesterov",
                "s-ma-nesterov"});
  opts.add("sync-servers", &o.sync_servers,
           "Sync capacity: sync servers the dense vector is split over (the coordinator is the first).")
      .range(1, 256);
  opts.add("sync-interval", &o.sync_interval, "Shadow sync: minimum seconds between two rounds of a trainer.")
      .range(0.0, 3600.0);
  opts.add("sync-every", &o.sync_every, "Foreground sync: a trainer's batches between two syncs (k).")
      .range(1, 1000000);
  opts.add("easgd-alpha", &o.easgd_alpha, "EASGD elastic rate; 0 = 0.9 / trainers.").range(0.0, 1.0);
  opts.add("bmuf-momentum", &o.bmuf_momentum, "BMUF block momentum; -1 = 1 - 1 / trainers.").range(-1.0, 1.0);
  opts.add("bmuf-block-lr", &o.bmuf_block_lr, "BMUF block learning rate (zeta).").range(0.0, 100.0);
  opts.add("bmuf-nesterov", &o.bmuf_nesterov, "BMUF with Nesterov momentum.");
  opts.add("outer-momentum", &o.outer_momentum,
           "s-easgd-nesterov, s-ma-nesterov: the outer optimizer's momentum, in [0, 1); -1 = the default: 1 - 1 / "
           "trainers around EASGD, at most 0.25 around MA (docs/sync.md).")
      .range(-1.0, 0.999);
  opts.add("outer-lr", &o.outer_lr, "s-easgd-nesterov, s-ma-nesterov: the outer learning rate.").range(0.01, 10.0);
  opts.add("sync-round-timeout", &o.sync_round_timeout,
           "Seconds a model-averaging or BMUF round waits for missing trainers before it goes on without them.")
      .range(0.01, 3600.0);
  opts.add("sync-quantize", &o.sync_quantize,
           "What a sync round sends: int8 (the change since the last exchange, 8 bits per value with a scale "
           "per 256 values, about 3.8x fewer bytes; docs/sync.md) or none (the slice in FP32 each way).")
      .choices({"none", "int8"});
  opts.add("simulate-step-ms", &o.simulate_step_ms,
           "SIMULATED compute: every training step waits this long instead of running the model (no data, no "
           "lookups), to study the sync layer at more trainers than cores. 0 = real training.")
      .range(0.0, 60000.0);
  opts.add("simulate-steps", &o.simulate_steps, "Simulated mode: training steps per trainer.").min(1);
  add_epoch_options(opts, o.passes);
  add_follow_options(opts, o.follow);
  add_progressive_options(opts, o.progressive);
  add_input_options(opts, o.input);
  add_model_options(opts, o.model);
}

void resolve_sync(job_options& o, int trainers) {
  if (o.sync == "auto" && trainers < 2) o.sync = "none";
}

namespace {

// --follow's combinations: one pass, in arrival order, one reader per input; the --follow-*
// settings only with --follow.
status check_follow(const job_options& o) {
  const auto& f = o.follow;
  if (!f.enabled) {
    const follow_options defaults;
    const char* given = f.limit_examples != defaults.limit_examples ? "--follow-limit-examples"
                        : f.for_seconds != defaults.for_seconds     ? "--follow-for"
                        : f.pattern != defaults.pattern             ? "--follow-pattern"
                        : f.batch_wait != defaults.batch_wait       ? "--follow-batch-wait"
                                                                    : nullptr;
    if (given != nullptr) return {errc::invalid_argument, std::string(given) + " needs --follow"};
    return status::ok();
  }
  if (o.simulate_step_ms > 0)
    return {errc::invalid_argument, "--follow needs input to follow: it does not go with --simulate-step-ms"};
  if (o.passes.epochs != 1)
    return {errc::invalid_argument, "--follow reads its input once, as it arrives: --epochs must be 1, not " +
                                        std::to_string(o.passes.epochs)};
  if (o.passes.shuffle_window() > 0)
    return {errc::invalid_argument, "--follow hands out rows in the order they arrive: --shuffle-buffer must be 0 "
                                    "(or -1), not " + std::to_string(o.passes.shuffle_buffer)};
  if (static_cast<int>(o.train.size()) != o.readers)
    return {errc::invalid_argument, "--follow: each reader follows one input, and --train names " +
                                        std::to_string(o.train.size()) + " while --readers is " +
                                        std::to_string(o.readers) + ": give --readers " +
                                        std::to_string(o.train.size())};
  if (f.limit_examples > 0 && f.limit_examples < static_cast<std::uint64_t>(o.readers))
    return {errc::invalid_argument, "--follow-limit-examples " + std::to_string(f.limit_examples) +
                                        " is less than one example per reader (--readers " +
                                        std::to_string(o.readers) + ")"};
  return status::ok();
}

}  // namespace

status check_job(const job_options& o) {
  if (o.simulate_step_ms <= 0) {
    if (o.shards < 1) return {errc::invalid_argument, "--shards must be at least 1 (0 only with --simulate-step-ms)"};
    if (static_cast<std::uint32_t>(o.shards) > embedding::max_shards)
      return {errc::invalid_argument, "--shards " + std::to_string(o.shards) + " is more than the " +
                                          std::to_string(embedding::max_shards) + " shards rows can be placed on"};
    if (o.readers < 1) return {errc::invalid_argument, "--readers must be at least 1 (0 only with --simulate-step-ms)"};
    if (o.train.empty()) return {errc::invalid_argument, "--train needs at least one file"};
  }
  SS_RETURN_IF_ERROR(check_epoch_options(o.passes));
  SS_RETURN_IF_ERROR(check_follow(o));
  if (auto ttl = embedding::parse_row_ttl(o.row_ttl); !ttl.is_ok()) return ttl.error();
  if (o.outer_momentum < 0 && o.outer_momentum != -1) {
    char value[32];
    std::snprintf(value, sizeof value, "%g", o.outer_momentum);
    return {errc::invalid_argument, std::string("--outer-momentum must be -1 (1 - 1 / trainers) or in [0, 1), not ") + value};
  }
  // The model's shape, once the input's feature counts are known: a bad one is a flag's mistake,
  // found before anything starts.
  if (o.dense_features >= 0 && o.categorical_features >= 0) {
    auto setup = resolve_model(o.model, static_cast<std::uint32_t>(o.dense_features),
                               static_cast<std::uint32_t>(o.categorical_features));
    if (!setup.is_ok()) return setup.error();
  }
  return status::ok();
}

std::string job_config_text(const job_options& o) {
  job_options copy = o;
  config::option_set opts("job", description);
  add_job_options(opts, copy);
  return opts.effective_config();
}

namespace {

// Job configs written before progressive evaluation had its own window (a snapshot's, a model
// file's) name it `window`: it is read as progressive-window.
std::string with_current_keys(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    const std::size_t key = line.find_first_not_of(" \t");
    constexpr std::string_view old_key = "window";
    if (key != std::string_view::npos && line.substr(key, old_key.size()) == old_key &&
        line.find_first_not_of(" \t", key + old_key.size()) == line.find('=', key)) {
      out.append(line.substr(0, key)).append("progressive-window").append(line.substr(key + old_key.size()));
    } else {
      out.append(line);
    }
    if (end < text.size()) out += '\n';
    at = end + 1;
  }
  return out;
}

}  // namespace

result<job_options> parse_job_config(std::string_view text) {
  job_options o;
  config::option_set opts("job", description);
  add_job_options(opts, o);
  if (auto st = opts.parse_config_text(with_current_keys(text), "job config"); !st.is_ok()) return st;
  return o;
}

namespace {

// The file whose header names the columns: the first training file; with --follow and a directory
// input, its first file matching --follow-pattern.
result<std::string> first_training_file(const job_options& o) {
  const std::string& input = o.train.front();
  std::error_code ec;
  if (!o.follow.enabled || !std::filesystem::is_directory(input, ec)) return input;
  std::string first;
  for (std::filesystem::directory_iterator it(input, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (data::follow_name_matches(o.follow.pattern, name) && it->is_regular_file(type_ec) &&
        (first.empty() || name < first))
      first = name;
  }
  if (first.empty())
    return status(errc::invalid_argument, input + " holds no file matching --follow-pattern '" + o.follow.pattern +
                                              "' yet, whose header would give the feature counts; set --dense-features "
                                              "and --categorical-features");
  return (std::filesystem::path(input) / first).string();
}

}  // namespace

status resolve_feature_counts(job_options& o) {
  if (o.dense_features >= 0 && o.categorical_features >= 0) return status::ok();
  auto schema = load_schema(o.input.schema);
  if (!schema.is_ok()) return schema.error();
  result<data::bound_schema> bound = schema->header ? result<data::bound_schema>(errc::not_found, "no header read")
                                                    : data::bind_schema(*schema);
  if (!bound.is_ok()) {
    if (o.train.empty())
      return {errc::invalid_argument, "cannot tell the feature counts of schema '" + o.input.schema +
                                          "' without a training file; set --dense-features and --categorical-features"};
    auto first = first_training_file(o);
    if (!first.is_ok()) return first.error();
    auto ropts = reader_options(o.input, {*first}, 1);
    if (!ropts.is_ok()) return ropts.error();
    auto reader = data::batch_reader::open(*ropts);
    if (!reader.is_ok())
      return reader.error().with_context("reading the header of " + *first +
                                         " (or set --dense-features and --categorical-features)");
    bound = reader->schema();
  }
  if (o.dense_features < 0) o.dense_features = static_cast<int>(bound->num_dense());
  if (o.categorical_features < 0) o.categorical_features = static_cast<int>(bound->num_categorical());
  return status::ok();
}

namespace {
// The settings of one option group as config text, to compare groups as a whole.
template <class T, class Add>
std::string group_text(const T& value, Add add) {
  T copy = value;
  config::option_set opts("job", description);
  add(opts, copy);
  return opts.effective_config();
}

// One setting that differs, as the resume's messages name it.
std::string change_line(const std::string& what, const std::string& saved, const std::string& now) {
  return what + ": the snapshot has " + saved + ", this run " + now;
}
}  // namespace

std::vector<std::string> resume_conflicts(const job_options& saved, const job_options& now) {
  std::vector<std::string> out;
  auto differ = [&out](const std::string& what, const std::string& a, const std::string& b) {
    if (a != b) out.push_back(change_line(what, a, b));
  };
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
    return "[" + s + "]";
  };
  differ("--train", join(saved.train), join(now.train));
  differ("--epochs", std::to_string(saved.passes.epochs), std::to_string(now.passes.epochs));
  differ("--shuffle-buffer", std::to_string(saved.passes.shuffle_window()), std::to_string(now.passes.shuffle_window()));
  differ("--follow", saved.follow.enabled ? "true" : "false", now.follow.enabled ? "true" : "false");
  if (saved.follow.enabled && now.follow.enabled) differ("--follow-pattern", saved.follow.pattern, now.follow.pattern);
  differ("--sync", saved.sync, now.sync);
  differ("--row-ttl", saved.row_ttl, now.row_ttl);
  differ("--sync-servers", std::to_string(saved.sync_servers), std::to_string(now.sync_servers));
  differ("--dense-features", std::to_string(saved.dense_features), std::to_string(now.dense_features));
  differ("--categorical-features", std::to_string(saved.categorical_features), std::to_string(now.categorical_features));
  if (group_text(saved.input, add_input_options) != group_text(now.input, add_input_options))
    out.push_back("the input options (--schema, hashing, bad-row policy) differ from the snapshot's");
  // The model's options as a whole, but for the rows' precision, which a resume converts.
  model_options saved_model = saved.model;
  saved_model.row_precision = now.model.row_precision;
  if (group_text(saved_model, add_model_options) != group_text(now.model, add_model_options))
    out.push_back("the model options (sizes, optimizers, seed) differ from the snapshot's");
  return out;
}

std::vector<std::string> resume_conversions(const job_options& saved, const job_options& now) {
  if (saved.model.row_precision == now.model.row_precision) return {};
  const bool to_wider = now.model.row_precision == "fp32";
  return {change_line("--row-precision", saved.model.row_precision, now.model.row_precision) +
          ": the shards convert the embedding rows as they restore them (" +
          (to_wider ? std::string("exactly") : std::string("rounded to the nearest")) + ")"};
}

std::vector<std::string> rerun_conflicts(const job_options& saved, const job_options& now) {
  auto out = resume_conflicts(saved, now);
  if (saved.model.row_precision != now.model.row_precision)
    out.push_back(change_line("--row-precision", saved.model.row_precision, now.model.row_precision));
  return out;
}

std::uint64_t follow_limit_of_reader(const job_options& o, int index) {
  const auto readers = static_cast<std::uint64_t>(std::max(1, o.readers));
  const std::uint64_t limit = o.follow.limit_examples;
  if (limit == 0) return 0;
  return limit / readers + (static_cast<std::uint64_t>(index) < limit % readers ? 1 : 0);
}

std::vector<std::size_t> file_indices_of_reader(std::size_t files, int readers, int index) {
  std::vector<std::size_t> out;
  const auto stride = static_cast<std::size_t>(std::max(1, readers));
  for (auto i = static_cast<std::size_t>(std::max(0, index)); i < files; i += stride) out.push_back(i);
  return out;
}

std::vector<std::string> files_of_reader(const job_options& o, int index) {
  std::vector<std::string> files;
  for (const auto i : file_indices_of_reader(o.train.size(), o.readers, index)) files.push_back(o.train[i]);
  return files;
}

}  // namespace ss::job
