#include "ss/service/memory_release.hpp"

#include <malloc.h>

namespace ss::service {

bool release_free_memory() { return ::malloc_trim(0) != 0; }

heap_usage current_heap_usage() {
  const struct mallinfo2 m = ::mallinfo2();
  heap_usage u;
  u.in_use_bytes = m.uordblks + m.hblkhd;
  u.free_bytes = m.fordblks;
  return u;
}

periodic_memory_release::periodic_memory_release(std::chrono::milliseconds interval) : interval_(interval) {
  if (interval_.count() <= 0) return;
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!wake_.wait_for(lock, interval_, [this] { return stop_; })) {
      lock.unlock();
      release_free_memory();
      lock.lock();
      ++releases_;
    }
  });
}

periodic_memory_release::~periodic_memory_release() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::uint64_t periodic_memory_release::releases() const {
  std::lock_guard<std::mutex> lock(mu_);
  return releases_;
}

}  // namespace ss::service
