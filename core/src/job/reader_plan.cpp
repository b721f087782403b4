#include "ss/core/job/reader_plan.hpp"

#include <algorithm>
#include <tuple>

#include "ss/core/hash.hpp"
#include "ss/core/job/input_options.hpp"
#include "ss/core/job/job_options.hpp"
#include "ss/core/job/snapshot.hpp"

namespace ss::job {
namespace {

// A file read further is ahead: more passes, or further into the same one.
bool ahead(const data::file_progress& a, const data::file_progress& b) {
  return std::make_tuple(a.passes, a.at.byte_offset) > std::make_tuple(b.passes, b.at.byte_offset);
}

data::file_progress progress_at(std::uint32_t passes, const data::line_position& at) {
  data::file_progress p;
  p.passes = passes;
  if (at.byte_offset > 0) p.at = at;
  return p;
}

std::vector<data::file_progress> progress_of_reader(std::size_t files, int readers, const reader_plan& plan,
                                                    int index) {
  std::vector<data::file_progress> out;
  if (plan.empty()) return out;
  for (const auto f : file_indices_of_reader(files, readers, index)) out.push_back(plan.files[f]);
  return out;
}

// The windows a reader of `readers` finishes, by their place in plan.windows: dealt in turn to the
// readers that have files (a reader without any reads nothing, and would finish nothing).
std::vector<std::size_t> windows_of(const reader_plan& plan, int readers, int index) {
  std::vector<std::size_t> out;
  const auto dealt = std::min(static_cast<std::size_t>(readers), plan.files.size());
  if (static_cast<std::size_t>(index) >= dealt) return out;
  for (auto j = static_cast<std::size_t>(index); j < plan.windows.size(); j += dealt) out.push_back(j);
  return out;
}

}  // namespace

reader_commit commit_at(const data::epoch_position& p, std::uint64_t examples, std::uint64_t bad_rows) {
  reader_commit c;
  c.valid = true;
  c.file_index = p.window.file_index;
  c.byte_offset = p.window.byte_offset;
  c.line_number = p.window.line_number;
  c.examples = examples;
  c.bad_rows = bad_rows;
  c.previous_line_crc = p.window.previous_line_crc;
  c.file_size = p.window.file_size;
  c.epoch = p.epoch;
  c.window_batches = p.window_batches;
  c.window_end = p.window_end;
  c.inherited = p.inherited;
  return c;
}

data::epoch_position resume_position_of(const reader_commit& c) {
  return {c.epoch,
          {c.file_index, c.byte_offset, c.line_number, c.previous_line_crc, c.file_size},
          c.window_batches,
          c.window_end,
          c.inherited};
}

std::string reader_change_refusal(const job_options& job) {
  if (job.follow.enabled)
    return "a followed input (--follow) resumes only on the reader count it ran with: its files are found as they "
           "come, by each reader";
  return {};
}

std::uint64_t reader_seed(const job_options& job, int index) {
  return hash_combine(job.model.seed, static_cast<std::uint64_t>(index));
}

result<reader_plan> replan_readers(const job_options& job, int readers, const reader_plan& plan,
                                   const std::vector<reader_commit>& commits) {
  const std::size_t files = job.train.size();
  if (!plan.empty() && plan.files.size() != files)
    return status(errc::corrupt, "the readers' plan covers " + std::to_string(plan.files.size()) + " files, the job has " +
                                     std::to_string(files));
  if (readers < 1) return status(errc::invalid_argument, "a job has at least one reader");
  reader_plan next;
  next.files = plan.empty() ? std::vector<data::file_progress>(files) : plan.files;
  next.examples = plan.examples;
  next.bad_rows = plan.bad_rows;
  for (int r = 0; r < readers; ++r) {
    const auto mine = windows_of(plan, readers, r);
    const reader_commit c = static_cast<std::size_t>(r) < commits.size() ? commits[static_cast<std::size_t>(r)]
                                                                          : reader_commit{};
    if (!c.valid) {  // its files stand as the plan has them, its windows as they were left
      for (const auto j : mine) next.windows.push_back(plan.windows[j]);
      continue;
    }
    const std::string who = "reader " + std::to_string(r) + "'s committed position";
    const auto own = file_indices_of_reader(files, readers, r);
    if (c.file_index > own.size())
      return status(errc::corrupt, who + " names its file " + std::to_string(c.file_index) + " of " +
                                       std::to_string(own.size()));
    if (c.epoch >= static_cast<std::uint32_t>(job.passes.epochs))
      return status(errc::corrupt, who + " is in epoch " + std::to_string(c.epoch + 1) + " of a job of " +
                                       std::to_string(job.passes.epochs));
    if (c.inherited > mine.size())
      return status(errc::corrupt, who + " is in inherited shuffle window " + std::to_string(c.inherited) + " of " +
                                       std::to_string(mine.size()));
    // The reader finishes its windows of an epoch before its files of that epoch: those of
    // earlier epochs are finished, the one it is in goes on past its batches handed out, and its
    // files of the epoch are not begun.
    std::vector<data::file_progress> by_commit(own.size());
    if (c.inherited > 0) {
      const std::size_t k = c.inherited - 1;
      if (plan.windows[mine[k]].epoch != c.epoch)
        return status(errc::corrupt, who + " is in epoch " + std::to_string(c.epoch + 1) + ", its inherited window " +
                                         std::to_string(c.inherited) + " in epoch " +
                                         std::to_string(plan.windows[mine[k]].epoch + 1));
      for (std::size_t q = k; q < mine.size(); ++q) {
        next.windows.push_back(plan.windows[mine[q]]);
        if (q == k) next.windows.back().handed = c.window_batches;
      }
      for (auto& p : by_commit) p.passes = c.epoch;
    } else {
      for (const auto j : mine)
        if (plan.windows[j].epoch > c.epoch) next.windows.push_back(plan.windows[j]);
      // Within the epoch, the files before the position (in the epoch's order of the reader's
      // files) were read through and the one at it up to there. Inside a shuffle window the
      // position is the window's end, and the window goes to a new reader to finish.
      data::line_position at = resume_position_of(c).window;
      if (c.window_batches > 0) {
        if (c.window_end == data::line_position{})
          return status(errc::version_mismatch,
                        who + " is inside a shuffle window, and the build that wrote it did not record where the "
                              "window ends");
        window_left w;
        w.readers = static_cast<std::uint32_t>(readers);
        w.reader = static_cast<std::uint32_t>(r);
        w.progress = progress_of_reader(files, readers, plan, r);
        w.epoch = c.epoch;
        w.start = at;
        w.handed = c.window_batches;
        next.windows.push_back(std::move(w));
        at = c.window_end;
      }
      if (at.file_index > own.size())
        return status(errc::corrupt, who + "'s window ends in its file " + std::to_string(at.file_index) + " of " +
                                         std::to_string(own.size()));
      const auto order = data::epoch_file_order(own.size(), c.epoch, job.passes.shuffle_window(), reader_seed(job, r));
      for (std::size_t q = 0; q < order.size(); ++q)
        by_commit[order[q]] = q < at.file_index    ? data::file_progress{c.epoch + 1, {}}
                              : q == at.file_index ? progress_at(c.epoch, at)
                                                   : data::file_progress{c.epoch, {}};
    }
    // A file whose own progress is further had been skipped or entered further in.
    for (std::size_t q = 0; q < own.size(); ++q) {
      auto& p = next.files[own[q]];
      if (ahead(by_commit[q], p)) p = by_commit[q];
    }
    next.examples += c.examples;
    next.bad_rows += c.bad_rows;
  }
  std::stable_sort(next.windows.begin(), next.windows.end(),
                   [](const window_left& a, const window_left& b) { return a.epoch < b.epoch; });
  return next;
}

std::vector<data::file_progress> progress_of_reader(const job_options& job, const reader_plan& plan, int index) {
  return progress_of_reader(plan.files.size(), job.readers, plan, index);
}

std::vector<window_left> windows_of_reader(const job_options& job, const reader_plan& plan, int index) {
  std::vector<window_left> out;
  for (const auto j : windows_of(plan, job.readers, index)) out.push_back(plan.windows[j]);
  return out;
}

result<std::vector<data::inherited_window>> inherited_windows(const job_options& job,
                                                              const std::vector<window_left>& windows) {
  std::vector<data::inherited_window> out;
  for (const auto& w : windows) {
    const auto files = file_indices_of_reader(job.train.size(), static_cast<int>(w.readers), static_cast<int>(w.reader));
    if (w.readers == 0 || w.reader >= w.readers || (!w.progress.empty() && w.progress.size() != files.size()))
      return status(errc::corrupt, "a shuffle window left by reader " + std::to_string(w.reader) + " of " +
                                       std::to_string(w.readers) + " with the progress of " +
                                       std::to_string(w.progress.size()) + " files: no reader of this job's " +
                                       std::to_string(job.train.size()) + " files");
    std::vector<std::string> paths;
    for (const auto f : files) paths.push_back(job.train[f]);
    auto input = reader_options(job.input, paths, static_cast<std::size_t>(job.batch_size));
    if (!input.is_ok()) return input.error();
    data::inherited_window d;
    d.input = std::move(*input);
    d.progress = w.progress;
    d.seed = reader_seed(job, static_cast<int>(w.reader));
    d.epoch = w.epoch;
    d.start = w.start;
    d.handed = w.handed;
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace ss::job
