// Resuming a job on another reader count. The training files are split over the readers by index
// (reader i reads files i, i + R, ...), so a new count gives most files a new reader, each
// partly read by its old one. The plan records, for every file, the passes over it done and where
// the next one goes on; each new reader skips or enters its files accordingly (data::epoch_reader),
// so every row is trained the job's number of epochs in all, none twice. A shuffled job's readers
// hand out each window of rows in an order of their own: a window an old reader left unfinished
// is finished by a new reader, which reads it as the old one would have (windows_left), and the
// files before the window's end count as read. The plan stays with the job's snapshots, and a
// later change of count starts from it and the readers' commits since.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ss/core/data/epoch_reader.hpp"
#include "ss/core/status.hpp"

namespace ss::job {

struct job_options;
struct reader_commit;

// A shuffle window that reader `reader` of a count of `readers` left unfinished: the old reader
// is named by its count and index (its files and seed follow from them), with its files' progress
// when it began.
struct window_left {
  std::uint32_t readers = 0;
  std::uint32_t reader = 0;
  std::vector<data::file_progress> progress;  // by the old reader's files; empty: nothing read before
  std::uint32_t epoch = 0;
  data::line_position start;  // in the old reader's order of its files in that epoch
  std::uint32_t handed = 0;   // batches of it handed out, at least 1

  friend bool operator==(const window_left& a, const window_left& b) noexcept {
    return a.readers == b.readers && a.reader == b.reader && a.progress == b.progress && a.epoch == b.epoch &&
           a.start == b.start && a.handed == b.handed;
  }
};

struct reader_plan {
  std::vector<data::file_progress> files;  // by --train index; empty: the job kept its reader count
  std::uint64_t examples = 0;              // good rows committed by the readers of earlier counts
  std::uint64_t bad_rows = 0;              // and bad ones
  // Ordered by epoch; reader i of the count R the plan is for finishes windows i, i + D, ...,
  // where D = min(R, files): every reader that has files.
  std::vector<window_left> windows;

  bool empty() const noexcept { return files.empty(); }
};

// A reader's commit at `p`, with the good and bad rows before it; and where a commit resumes.
reader_commit commit_at(const data::epoch_position& p, std::uint64_t examples, std::uint64_t bad_rows);
data::epoch_position resume_position_of(const reader_commit& c);

// Why the readers' commits cannot be spread over another reader count; empty when they can. A
// followed input's files are found as they come, by each reader: it resumes only on the count it
// ran with.
std::string reader_change_refusal(const job_options& job);

// Reader `index`'s seed: each reader hands out its windows in an order of its own.
std::uint64_t reader_seed(const job_options& job, int index);

// Every training file's progress after `commits` (by reader index) of a job that ran with
// `readers` readers, each starting from `plan`, and the shuffle windows left unfinished. Errors: a
// commit that names a file, an epoch or an inherited window its reader does not have
// (errc::corrupt); a commit inside a shuffle window that does not say where the window ends (a
// snapshot of an earlier build: errc::version_mismatch).
result<reader_plan> replan_readers(const job_options& job, int readers, const reader_plan& plan,
                                   const std::vector<reader_commit>& commits);

// The progress of reader `index`'s files (in files_of_reader's order) under `plan`; empty when the
// plan is.
std::vector<data::file_progress> progress_of_reader(const job_options& job, const reader_plan& plan, int index);

// The windows reader `index` finishes under `plan` (the coordinator tells it at registration).
std::vector<window_left> windows_of_reader(const job_options& job, const reader_plan& plan, int index);

// Those windows ready for the reader's data::epoch_reader: their old readers' files, progress and
// seeds. Errors: an old reader the job cannot have had, a file the job's input options refuse.
result<std::vector<data::inherited_window>> inherited_windows(const job_options& job,
                                                              const std::vector<window_left>& windows);

}  // namespace ss::job
