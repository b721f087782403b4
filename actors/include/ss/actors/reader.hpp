// The data reader's actor: serves pull_request with the next batch of its files (parsed and
// hashed by the core batch_reader), numbers batches per reader, and tracks which were trained
// (batch_ack) so it knows its committed position: every row before it was trained.
#pragma once

#include <caf/fwd.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "ss/core/data/batch_reader.hpp"

namespace ss::actors {

struct reader_options {
  std::string name = "reader";
  std::uint32_t index = 0;
};

// Progress the membership agent reports; written by the reader actor only.
struct reader_counters {
  std::atomic<std::uint64_t> batches_sent{0}, examples_sent{0};
  std::atomic<std::uint64_t> batches_acked{0}, examples_acked{0};
  std::atomic<std::uint64_t> bytes_done{0}, bytes_total{0};
  std::atomic<std::uint64_t> rows_read{0}, bad_rows{0};
  std::atomic<bool> exhausted{false};  // no more batches to hand out
  std::atomic<bool> finished{false};   // exhausted and every batch acked
  mutable std::mutex mu;
  std::string error;                   // why reading stopped, if it failed
  std::string bad_row_reports;         // the first bad rows, one per line
};

// `reader` may be null: a reader with no files, done from the start.
caf::actor spawn_reader(caf::actor_system& sys, const caf::actor& gateway, std::unique_ptr<data::batch_reader> reader,
                        const reader_options& options, std::shared_ptr<reader_counters> counters);

}  // namespace ss::actors
