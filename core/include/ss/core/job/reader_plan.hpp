// Resuming a job on another reader count. The training files are split over the readers by index
// (reader i reads files i, i + R, ...), so a new count gives most files a new reader, each
// partly read by its old one. The plan records, for every file, the passes over it done and where
// the next one goes on; each new reader skips or enters its files accordingly (data::epoch_reader),
// so every row is trained the job's number of epochs in all, none twice. The plan stays with the
// job's snapshots, and a later change of count starts from it and the readers' commits since.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ss/core/data/epoch_reader.hpp"
#include "ss/core/status.hpp"

namespace ss::job {

struct job_options;
struct reader_commit;

struct reader_plan {
  std::vector<data::file_progress> files;  // by --train index; empty: the job kept its reader count
  std::uint64_t examples = 0;              // good rows committed by the readers of earlier counts
  std::uint64_t bad_rows = 0;              // and bad ones

  bool empty() const noexcept { return files.empty(); }
};

// Why the readers' commits cannot be spread over another reader count; empty when they can. A
// shuffled job's windows hand out rows in an order only their own reader repeats, and a followed
// input's files are found as they come: both resume only on the count they ran with.
std::string reader_change_refusal(const job_options& job);

// Every training file's progress after `commits` (by reader index) of a job that ran with
// `readers` readers, each starting from `plan`. Errors: a commit that names a file or an epoch
// its reader does not have (errc::corrupt).
result<reader_plan> replan_readers(const job_options& job, int readers, const reader_plan& plan,
                                   const std::vector<reader_commit>& commits);

// The progress of reader `index`'s files (in files_of_reader's order) under `plan`; empty when the
// plan is.
std::vector<data::file_progress> progress_of_reader(const job_options& job, const reader_plan& plan, int index);

}  // namespace ss::job
