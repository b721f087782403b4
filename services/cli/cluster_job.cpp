#include "cluster_job.hpp"

#include <cstdio>
#include <filesystem>

#include "ss/core/job/preflight.hpp"

namespace ss::cli {

status preflight(const job::job_options& job, const std::string& export_path) {
  SS_RETURN_IF_ERROR(job::check_output_path(export_path, "--export"));
  SS_RETURN_IF_ERROR(job::check_input_files(job.input, job.passes.validation, "--validation"));
  return job::check_input_files(job.input, job.test, "--test");
}

status make_directory(const std::string& dir, const std::string& flag) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir, ec))
    return status(errc::invalid_argument, flag + " " + dir + ": cannot create the directory" +
                                              (ec ? ": " + ec.message() : std::string(" (a file is in the way)")));
  return job::check_writable_directory(dir, flag + " " + dir);
}

std::string export_dir_or_cwd(const std::string& flag) {
  std::error_code ec;
  return std::filesystem::absolute(flag.empty() ? std::filesystem::current_path(ec) : std::filesystem::path(flag), ec)
      .string();
}

std::function<void(const job::job_report&, const std::string&)> kept_result::keeper() {
  return [this](const job::job_report& report, const std::string& preface) {
    std::lock_guard<std::mutex> lock(mu_);
    report_ = report;
    preface_ = preface;
  };
}

int kept_result::exit_status(bool finished) const {
  std::lock_guard<std::mutex> lock(mu_);
  return finished && report_ ? report_->exit_status() : 1;
}

void kept_result::print() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!report_) return;
  if (!preface_.empty()) std::printf("%s\n", preface_.c_str());
  std::printf("%s%s\n", report_->summary().c_str(), report_->to_json().c_str());
  std::fflush(stdout);
}

}  // namespace ss::cli
