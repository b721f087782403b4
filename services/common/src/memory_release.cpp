#include "ss/service/memory_release.hpp"

#include <malloc.h>

#include <cstring>

namespace ss::service {

bool apply_allocator_policy(const allocator_policy& policy, const char* glibc_tunables) {
  if (glibc_tunables != nullptr && std::strstr(glibc_tunables, "glibc.malloc.") != nullptr) return false;
  ::mallopt(M_MMAP_THRESHOLD, static_cast<int>(policy.mmap_threshold_bytes));
  ::mallopt(M_TRIM_THRESHOLD, static_cast<int>(policy.trim_threshold_bytes));
  return true;
}

allocator_policy allocator_policy_for(const char* command) {
  allocator_policy p;
  const bool holds_no_dense_model =
      command != nullptr && (std::strcmp(command, "shard") == 0 || std::strcmp(command, "reader") == 0);
  if (holds_no_dense_model) p.trim_threshold_bytes = std::size_t{2} << 20;
  return p;
}

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
