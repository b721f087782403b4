// Everything that defines a training job. The coordinator is configured with it (flags, config
// file, environment) and hands it to every member as config text when they register, so shards,
// trainers and readers cannot disagree about the model, the data or the protocol settings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ss/core/config/option_set.hpp"
#include "ss/core/job/input_options.hpp"
#include "ss/core/job/model_options.hpp"
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
  std::uint64_t window = 100000;    // examples in the windowed metrics
  // Feature counts of the input; -1 = derive them from the schema (Criteo: 13 and 26; a CSV
  // schema: from the first training file's header, read by the coordinator).
  int dense_features = -1;
  int categorical_features = -1;
  input_options input;
  model_options model;
};

void add_job_options(config::option_set& opts, job_options& o);

// The job as config text (a [job] section), and back.
std::string job_config_text(const job_options& o);
result<job_options> parse_job_config(std::string_view text);

// Fills in dense_features and categorical_features when they are -1, from the schema (and, for a
// schema with a header, the first training file).
status resolve_feature_counts(job_options& o);

// The training files reader `index` of `readers` reads: every readers-th file from index.
std::vector<std::string> files_of_reader(const job_options& o, int index);

}  // namespace ss::job
