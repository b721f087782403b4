// Everything that defines a training job. The coordinator is configured with it (flags, config
// file, environment) and hands it to every member as config text when they register, so shards,
// trainers and readers cannot disagree about the model, the data or the protocol settings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ss/core/config/option_set.hpp"
#include "ss/core/job/epoch_options.hpp"
#include "ss/core/job/follow_options.hpp"
#include "ss/core/job/input_options.hpp"
#include "ss/core/job/model_options.hpp"
#include "ss/core/job/progressive_options.hpp"
#include "ss/core/status.hpp"

namespace ss::job {

struct job_options {
  std::vector<std::string> train;  // training files, split over the readers by index
  std::vector<std::string> test;   // scored by the coordinator after training
  int batch_size = 128;
  int shards = 1;                  // embedding shard servers the job waits for
  int readers = 1;                 // data readers the job waits for
  int min_trainers = 1;            // training starts once this many trainers have registered
  int lookahead = 2;               // trainer: batches whose lookups run ahead of compute
  int pull_credits = 2;            // trainer: batch requests outstanding per reader per worker
  double heartbeat_interval = 1.0;  // seconds between member heartbeats
  double member_timeout = 10.0;     // seconds without a heartbeat before a member is dropped
  double request_timeout = 10.0;    // seconds before a request to a peer counts as lost
  double progress_interval = 5.0;   // seconds between progress lines at the coordinator
  int export_page_rows = 65536;     // embedding rows per page when a model is exported
  int admit_after = 1;              // shards: an id gets a row once seen this many times (1: at once)
  std::string row_ttl = "0";        // shards: rows untouched this long are deleted (embedding::parse_row_ttl)
  double peer_wait = 90.0;          // seconds the job waits for a shard, reader or sync server that went away
  double batch_lease = 120.0;       // seconds a trainer may hold a batch before it goes to another
  // Feature counts of the input; -1 = derive them from the schema (Criteo: 13 and 26; a CSV
  // schema: from the first training file's header, read by the coordinator).
  int dense_features = -1;
  int categorical_features = -1;
  // Synchronization of the trainers' dense replicas (docs/sync.md).
  // none, s-easgd, s-ma, s-bmuf, fr-easgd, fr-ma, fr-bmuf, s-*-nesterov; auto: s-easgd with rounds
  // while 2 or more trainers are in the view (sync::parse_sync, resolve_sync).
  std::string sync = "auto";
  int sync_servers = 1;             // sync capacity: the dense vector is split over this many
  double sync_interval = 0.2;       // shadow: minimum seconds between two rounds of a trainer
  int sync_every = 10;              // foreground: a trainer's batches between two syncs (k)
  double easgd_alpha = 0;           // elastic rate; 0 = 0.9 / trainers
  double bmuf_momentum = -1;        // block momentum; -1 = 1 - 1 / trainers
  double bmuf_block_lr = 1;         // block learning rate (zeta)
  bool bmuf_nesterov = true;
  double outer_momentum = -1;       // outer optimizer (-nesterov): momentum; -1 = 1 - 1 / trainers
  double outer_lr = 1;              // outer optimizer: learning rate
  double sync_round_timeout = 5;    // MA and BMUF rounds close after this long without everyone
  std::string sync_quantize = "int8";  // int8: 8-bit changes against a mirror; none: FP32 rounds
  // Simulated compute: each training step waits this long instead of running the model (no data,
  // no lookups), to study the sync layer at more trainers than cores. 0 = real training.
  double simulate_step_ms = 0;
  std::uint64_t simulate_steps = 1000;  // steps per trainer in simulated mode
  epoch_options passes;  // epochs, shuffling, validation and early stopping
  follow_options follow;  // a stream followed as it grows (--follow)
  progressive_options progressive;  // the window of progressive evaluation
  input_options input;
  model_options model;
};

void add_job_options(config::option_set& opts, job_options& o);

// The job as config text (a [job] section), and back.
std::string job_config_text(const job_options& o);
result<job_options> parse_job_config(std::string_view text);

// Checks combinations single options cannot: readers, shards and training files are required
// unless the job simulates its compute.
status check_job(const job_options& o);

// --sync auto where the number of trainers is fixed (`shadowsync local`): none with one trainer
// (EASGD with one replica only drags it back towards an older copy of itself); with more, auto
// stays (S-EASGD, rounds while two or more trainers are in the view: sync::parse_sync). A cluster
// started by hand keeps auto whatever --min-trainers says. Any other value stays as it is.
void resolve_sync(job_options& o, int trainers);

// Fills in dense_features and categorical_features when they are -1, from the schema (and, for a
// schema with a header, the first training file).
status resolve_feature_counts(job_options& o);

// Why a job resumed from a snapshot taken under `saved` cannot go on under `now`: one line per
// setting that defines the job (training files, readers, input, model, sync) and differs. Empty
// when it can. Operational settings (timeouts, progress, test files) may change, and so may the
// shard count (the rows move to the shards that own them under the new one) and the rows'
// precision (resume_conversions).
std::vector<std::string> resume_conflicts(const job_options& saved, const job_options& now);
// What a resume from a snapshot taken under `saved` converts to go on under `now`, one line each:
// the embedding rows, when --row-precision differs (the shards convert them as they restore them).
std::vector<std::string> resume_conversions(const job_options& saved, const job_options& now);
// Why the result of a job that finished under `saved` does not answer a run under `now`:
// resume_conflicts, and a change of --row-precision (the result is of the rows it had).
std::vector<std::string> rerun_conflicts(const job_options& saved, const job_options& now);

// The training files reader `index` of `readers` reads: every readers-th file from index (with
// --follow: the one input it follows). file_indices_of_reader: their indices among `files`.
std::vector<std::size_t> file_indices_of_reader(std::size_t files, int readers, int index);
std::vector<std::string> files_of_reader(const job_options& o, int index);

// --follow-limit-examples' share of reader `index`: the limit split over the readers, the first
// ones taking one more where it does not divide; 0: no limit.
std::uint64_t follow_limit_of_reader(const job_options& o, int index);

}  // namespace ss::job
