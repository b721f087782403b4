// SIGINT/SIGTERM handling without async-signal-unsafe code: the constructor blocks both signals
// in the calling thread (so every thread started afterwards inherits the mask) and a dedicated
// thread waits for them with sigwait(), then runs the callback in normal thread context.
// Construct it in main() before any other thread; one instance per process.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

namespace ss::service {

class shutdown_signal {
 public:
  // on_signal runs on the signal thread for the first SIGINT/SIGTERM; a second one exits the
  // process at once with status 130 (the user insisted).
  explicit shutdown_signal(std::function<void(int)> on_signal);
  ~shutdown_signal();
  shutdown_signal(const shutdown_signal&) = delete;
  shutdown_signal& operator=(const shutdown_signal&) = delete;

  bool received() const { return received_.load(); }

 private:
  std::function<void(int)> on_signal_;
  std::atomic<bool> received_{false};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace ss::service
