// A child process started from an argv vector (no shell, no quoting) and watched through a pidfd,
// so that a supervisor can wait for any of its children, a wake-up and a deadline in one poll().
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "ss/core/status.hpp"

namespace ss::cli {

// This process's environment without the variables whose names start with `prefix`.
std::vector<std::string> environment_without(const std::string& prefix);

class child_process {
 public:
  child_process() = default;
  // Starts the program at argv[0] (a path) with `argv`. Its stdout is appended to `stdout_path`
  // (created when missing; "/dev/null" drops it), its stderr is this process's, and it starts
  // with no signal blocked.
  // `environment`: its variables ("NAME=value"); this process's when null.
  static result<child_process> start(const std::vector<std::string>& argv, const std::string& stdout_path,
                                     const std::vector<std::string>* environment = nullptr);
  // Closes the pidfd; a child still running is left running.
  ~child_process();
  child_process(child_process&& other) noexcept;
  child_process& operator=(child_process&& other) noexcept;
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  bool running() const { return pid_ > 0; }  // started and not yet reaped
  pid_t pid() const { return pid_; }
  int pidfd() const { return pidfd_; }  // readable once the child has exited
  // Whether it has exited (it stays to be reaped); does not block.
  bool exited() const;
  // Waits at most `timeout_ms` for it to exit (-1: no limit); true when it has.
  bool wait_exit(int timeout_ms) const;
  // Reaps it (waiting for its exit if need be) and returns its wait status; not running afterwards.
  int reap();
  void signal(int sig) const;

 private:
  child_process(pid_t pid, int pidfd) : pid_(pid), pidfd_(pidfd) {}
  void close_pidfd();

  pid_t pid_ = -1;
  int pidfd_ = -1;
};

// "exited with status N" or "was killed by signal N", from a wait status.
std::string describe_exit(int wait_status);

}  // namespace ss::cli
