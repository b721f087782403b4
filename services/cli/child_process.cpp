#include "child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

extern char** environ;

namespace ss::cli {
namespace {

// How a child is spawned: its stdout to a file, no signal blocked (the supervisor blocks SIGINT
// and SIGTERM for its signal thread) and SIGINT and SIGTERM at their default actions.
class spawn_setup {
 public:
  explicit spawn_setup(const std::string& stdout_path) {
    posix_spawn_file_actions_init(&actions_);
    posix_spawn_file_actions_addopen(&actions_, STDOUT_FILENO, stdout_path.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0666);
    posix_spawnattr_init(&attributes_);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    posix_spawnattr_setsigmask(&attributes_, &none);
    posix_spawnattr_setsigdefault(&attributes_, &defaults);
    posix_spawnattr_setflags(&attributes_, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  }
  ~spawn_setup() {
    posix_spawnattr_destroy(&attributes_);
    posix_spawn_file_actions_destroy(&actions_);
  }
  spawn_setup(const spawn_setup&) = delete;
  spawn_setup& operator=(const spawn_setup&) = delete;

  const posix_spawn_file_actions_t* actions() const { return &actions_; }
  const posix_spawnattr_t* attributes() const { return &attributes_; }

 private:
  posix_spawn_file_actions_t actions_;
  posix_spawnattr_t attributes_;
};

}  // namespace

std::vector<std::string> environment_without(const std::string& prefix) {
  std::vector<std::string> kept;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, prefix.c_str(), prefix.size()) != 0) kept.emplace_back(*e);
  return kept;
}

result<child_process> child_process::start(const std::vector<std::string>& argv, const std::string& stdout_path,
                                           const std::vector<std::string>* environment) {
  if (argv.empty()) return status(errc::invalid_argument, "no program to start");
  std::vector<char*> arg_ptrs;
  for (const auto& a : argv) arg_ptrs.push_back(const_cast<char*>(a.c_str()));
  arg_ptrs.push_back(nullptr);
  std::vector<char*> envp;
  if (environment != nullptr) {
    for (const auto& e : *environment) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
  const spawn_setup setup(stdout_path);
  pid_t pid = -1;
  if (int err = posix_spawn(&pid, argv[0].c_str(), setup.actions(), setup.attributes(), arg_ptrs.data(),
                            environment != nullptr ? envp.data() : environ);
      err != 0)
    return status(errc::io_error, "cannot start " + argv[0] + ": " + std::strerror(err));
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    const int err = errno;
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return status(errc::io_error, std::string("pidfd_open: ") + std::strerror(err));
  }
  return child_process(pid, pidfd);
}

child_process::~child_process() { close_pidfd(); }

child_process::child_process(child_process&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), pidfd_(std::exchange(other.pidfd_, -1)) {}

child_process& child_process::operator=(child_process&& other) noexcept {
  if (this != &other) {
    close_pidfd();
    pid_ = std::exchange(other.pid_, -1);
    pidfd_ = std::exchange(other.pidfd_, -1);
  }
  return *this;
}

void child_process::close_pidfd() {
  if (pidfd_ >= 0) ::close(pidfd_);
  pidfd_ = -1;
}

bool child_process::wait_exit(int timeout_ms) const {
  if (!running()) return true;
  pollfd p{pidfd_, POLLIN, 0};
  int n;
  do {
    n = ::poll(&p, 1, timeout_ms);
  } while (n < 0 && errno == EINTR);
  return n > 0;
}

bool child_process::exited() const { return wait_exit(0); }

int child_process::reap() {
  int wait_status = 0;
  if (!running()) return wait_status;
  while (waitpid(pid_, &wait_status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  close_pidfd();
  return wait_status;
}

void child_process::signal(int sig) const {
  if (running()) kill(pid_, sig);
}

std::string describe_exit(int wait_status) {
  if (WIFSIGNALED(wait_status)) return "was killed by signal " + std::to_string(WTERMSIG(wait_status));
  return "exited with status " + std::to_string(WEXITSTATUS(wait_status));
}

}  // namespace ss::cli
