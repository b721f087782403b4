// A model that serves predictions while new versions of it arrive (`shadowsync serve`): it scores
// batches of examples exactly as `shadowsync predict` does (train::evaluate's steps: the distinct
// rows of the batch, looked up without creating any, an unseen id with the values its row would
// have started with, then the forward pass), and it moves from one version to the next by
// updates: the dense parameters, rows written and rows erased. A scoring call sees one version,
// never part of one, and says which.
//
// How versions change under scorers. The tables are large and an update is small (the rows a
// trainer changed in a second or so), so the tables are updated in place, and what keeps a scorer
// from seeing half an update is a grace period, not a lock:
//  - a scorer takes the current view (a shared_ptr, copied under a mutex held for that copy only)
//    and scores with it, holding no lock;
//  - apply() builds the update's rows aside, as a sorted overlay, and publishes a view that reads
//    those rows from the overlay and every other row from the tables; it waits until no scorer
//    holds an older view (one that would read an updated row from the tables), writes the rows into
//    the tables, then publishes a view without the overlay. Scorers therefore never read a row that
//    is being written, and an update costs its own size (not the table's) in time and memory.
// The alternatives cost more: a shared_mutex stops every scorer for the whole write (tens of ms for
// a large delta, a p99 that grows with the delta), and building the next version aside whole
// (copy-on-write tables, or two copies of the model written in turn) costs the tables' size in
// memory or copying at every update. The wait is bounded by the longest scoring call (pure CPU
// work over a bounded batch): a scorer takes a new view for each call.
//
// Thread-safety: score() from any number of threads at once; apply() and replace() from any
// thread, one at a time (they serialize on a mutex), concurrently with score().
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ss/core/data/example_batch.hpp"
#include "ss/core/model_file/model_file.hpp"
#include "ss/core/status.hpp"
#include "ss/core/train/train_step.hpp"

namespace ss::serving {

// Which model a prediction came from.
struct model_version {
  std::uint64_t sequence = 0;          // the publication's; 0 for a model file served as it is
  std::uint64_t examples_trained = 0;  // examples the model had trained on
  std::int64_t wall_unix_ms = 0;       // when it was cut (a model file: when it was written)
};

// One table's part of an update. An id is at most once in ids and erased together.
struct table_update {
  std::uint32_t table = 0;
  std::vector<std::uint64_t> ids;     // rows written (created when absent)
  std::vector<float> values;          // ids.size() x dim, the rows' values in ids' order
  std::vector<std::uint64_t> erased;  // rows removed: their ids score as unseen afterwards
};

// What changes from one version to the next (what a publish follower reads from a delta).
struct model_update {
  model_version version;                    // its sequence must be above the served one's
  std::optional<std::vector<float>> dense;  // every dense parameter; absent: kept as they are
  std::vector<table_update> tables;         // a table at most once, in any order
};

// What a served model holds now.
struct served_stats {
  model_version version;
  std::uint64_t updates_applied = 0;  // apply() calls that took effect
  std::uint64_t models_replaced = 0;  // replace() calls that took effect
  std::uint64_t rows = 0;             // embedding rows held, every table
  std::uint64_t bytes = 0;            // the tables' memory (rows and index)
  std::uint64_t rows_written = 0;     // by updates, in total
  std::uint64_t rows_erased = 0;      // by updates, in total (ids that were held)
  std::uint64_t retired_views = 0;    // older versions still held by a scorer (or not yet noticed gone)
};

class served_model;

// A scoring thread's buffers (one per thread; not shared).
class scoring_scratch {
 public:
  explicit scoring_scratch(const served_model& model);

 private:
  friend class served_model;
  train::worker_scratch worker;
  std::vector<std::uint64_t> missed_ids;    // a table's ids not in the overlay
  std::vector<float*> missed_rows;          // where their values go
  std::vector<float*> found;                // find_batch's answers
  std::vector<float> fresh;                 // an unseen row's initial values
  embedding::embedding_table::batch_scratch lookup;
};

class served_model {
 public:
  // Serves `model` (its dense parameters and rows, taken over) as `version`.
  explicit served_model(model::loaded_model model, model_version version = {});
  ~served_model();
  served_model(const served_model&) = delete;
  served_model& operator=(const served_model&) = delete;

  // The model's shape, setup (bucket counts, embedding options), configuration and schema text: the
  // same for every version (replace() refuses another shape).
  const model::dlrm_config& config() const { return setup_.dlrm; }
  const job::model_setup& setup() const { return setup_; }
  const model::model_header& header() const { return header_; }
  const job::job_options& job() const { return job_; }

  // One click probability per example of `batch` into `probabilities` (resized to batch.size()),
  // computed with one version, which is returned. invalid_argument for a batch that does not fit
  // the model (feature counts, inconsistent arrays). Changes nothing shared.
  result<model_version> score(const data::example_batch& batch, scoring_scratch& scratch,
                              std::vector<float>& probabilities) const;

  // Moves to update.version, all of it or nothing: an update that does not fit (a sequence not
  // above the served one, a dense part or a row of the wrong size, a value not finite, a table out
  // of range or listed twice, an id twice in a table, more rows than a table's max-rows-per-table)
  // is refused with an error naming what is wrong, and the served version stays. Erasing an id
  // that is not held is no error.
  status apply(const model_update& update);

  // Serves another model of the same shape from now on (a new base), as `version`, whose sequence
  // must be above the served one's. A scorer still on the old model finishes with it.
  status replace(model::loaded_model model, model_version version);

  model_version version() const;
  served_stats stats() const;

 private:
  struct overlay;
  struct view;
  std::shared_ptr<const view> current() const;
  // Makes `next` the current view; the one it replaces is remembered until no scorer holds it.
  void publish(std::shared_ptr<const view> next);
  // Waits until no scorer holds a view older than the current one.
  void wait_for_retired_views();
  status check_update(const view& now, const model_update& update) const;
  result<std::shared_ptr<const overlay>> build_overlay(const model_update& update) const;
  void write_rows(embedding::local_embeddings& store, const model_update& update);

  model::model_header header_;
  job::job_options job_;
  job::model_setup setup_;

  mutable std::mutex view_mu_;  // guards current_ (held only to copy or swap it)
  // Scorers drop their views under it: a writer that saw them expire takes it once, which puts
  // their last reads before its writes (wait_for_retired_views).
  mutable std::mutex released_mu_;
  std::shared_ptr<const view> current_;
  std::mutex writer_mu_;  // one apply() or replace() at a time
  mutable std::mutex retired_mu_;  // guards retired_ (held briefly: stats() reads it while a writer waits)
  std::vector<std::weak_ptr<const view>> retired_;
  std::atomic<std::uint64_t> updates_applied_{0}, models_replaced_{0}, rows_written_{0}, rows_erased_{0};
};

}  // namespace ss::serving
