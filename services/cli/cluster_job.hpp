// What the coordinator command and `shadowsync local` share about a cluster job: the checks
// before it starts, its directories, and its result, kept until the services have stopped.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "ss/core/job/job_options.hpp"
#include "ss/core/job/job_report.hpp"
#include "ss/core/status.hpp"

namespace ss::cli {

// Before anything trains: the final model's path can be written and every test and validation file
// is data of the job's schema, so that no such mistake is found only after the training.
status preflight(const job::job_options& job, const std::string& export_path);

// Creates `dir` (and its parents) if needed and checks that this process can write there; `flag`
// names it in the error.
status make_directory(const std::string& dir, const std::string& flag);

// The export directory of a coordinator: the flag, else the working directory.
std::string export_dir_or_cwd(const std::string& flag);

// The job's result as the coordinator reported it, kept (from an actor thread) until the
// services have stopped, then printed: the human summary, then the JSON line.
class kept_result {
 public:
  std::function<void(const job::job_report&, const std::string&)> keeper();
  // 0: finished and its last snapshot holds it; 3: finished, the last snapshot failed; 1: failed.
  int exit_status(bool finished) const;
  void print() const;

 private:
  mutable std::mutex mu_;
  std::optional<job::job_report> report_;
  std::string preface_;
};

}  // namespace ss::cli
