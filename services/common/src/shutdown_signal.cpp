#include "ss/service/shutdown_signal.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>

namespace ss::service {
namespace {
sigset_t shutdown_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR2);  // private wake-up used by the destructor
  return set;
}
}  // namespace

shutdown_signal::shutdown_signal(std::function<void(int)> on_signal) : on_signal_(std::move(on_signal)) {
  sigset_t set = shutdown_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  thread_ = std::thread([this, set] {
    for (;;) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0) continue;
      if (stopping_.load()) return;
      if (sig == SIGUSR2) continue;
      if (received_.exchange(true)) std::_Exit(130);
      if (on_signal_) on_signal_(sig);
    }
  });
}

shutdown_signal::~shutdown_signal() {
  stopping_.store(true);
  pthread_kill(thread_.native_handle(), SIGUSR2);
  thread_.join();
}

}  // namespace ss::service
