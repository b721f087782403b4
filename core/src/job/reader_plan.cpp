#include "ss/core/job/reader_plan.hpp"

#include <algorithm>
#include <tuple>

#include "ss/core/job/job_options.hpp"
#include "ss/core/job/snapshot.hpp"

namespace ss::job {
namespace {

// A file read further is ahead: more passes, or further into the same one.
bool ahead(const data::file_progress& a, const data::file_progress& b) {
  return std::make_tuple(a.passes, a.at.byte_offset) > std::make_tuple(b.passes, b.at.byte_offset);
}

data::file_progress progress_at(std::uint32_t passes, const reader_commit& c) {
  data::file_progress p;
  p.passes = passes;
  if (c.byte_offset > 0) {
    p.at.byte_offset = c.byte_offset;
    p.at.line_number = c.line_number;
    p.at.previous_line_crc = c.previous_line_crc;
    p.at.file_size = c.file_size;
  }
  return p;
}

}  // namespace

std::string reader_change_refusal(const job_options& job) {
  if (job.follow.enabled)
    return "a followed input (--follow) resumes only on the reader count it ran with: its files are found as they "
           "come, by each reader";
  if (job.passes.shuffle_window() > 0)
    return "a shuffled job (--shuffle-buffer " + std::to_string(job.passes.shuffle_window()) +
           ", the default with --epochs > 1) resumes only on the reader count it ran with: a shuffle window's rows "
           "are handed out in an order only its own reader repeats (--shuffle-buffer 0 reads in order)";
  return {};
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
  for (std::size_t r = 0; r < commits.size() && r < static_cast<std::size_t>(readers); ++r) {
    const reader_commit& c = commits[r];
    if (!c.valid) continue;  // its files stand as the plan has them
    const std::string who = "reader " + std::to_string(r) + "'s committed position";
    const auto own = file_indices_of_reader(files, readers, static_cast<int>(r));
    if (c.file_index > own.size())
      return status(errc::corrupt, who + " names its file " + std::to_string(c.file_index) + " of " +
                                       std::to_string(own.size()));
    if (c.epoch >= static_cast<std::uint32_t>(job.passes.epochs))
      return status(errc::corrupt, who + " is in epoch " + std::to_string(c.epoch + 1) + " of a job of " +
                                       std::to_string(job.passes.epochs));
    // Read in order, epoch c.epoch has read the files before the position through and the one at
    // it up to there; a file whose own progress is further had been skipped or entered there.
    for (std::size_t q = 0; q < own.size(); ++q) {
      const data::file_progress by_commit = q < c.file_index    ? data::file_progress{c.epoch + 1, {}}
                                            : q == c.file_index ? progress_at(c.epoch, c)
                                                                : data::file_progress{c.epoch, {}};
      auto& p = next.files[own[q]];
      if (ahead(by_commit, p)) p = by_commit;
    }
    next.examples += c.examples;
    next.bad_rows += c.bad_rows;
  }
  return next;
}

std::vector<data::file_progress> progress_of_reader(const job_options& job, const reader_plan& plan, int index) {
  std::vector<data::file_progress> out;
  if (plan.empty()) return out;
  for (const auto f : file_indices_of_reader(plan.files.size(), job.readers, index)) out.push_back(plan.files[f]);
  return out;
}

}  // namespace ss::job
