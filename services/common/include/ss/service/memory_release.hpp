// Gives the allocator's free memory back to the operating system every few seconds.
//
// glibc's malloc keeps memory a thread freed in that thread's arena, and a non-main arena only
// shrinks from its top: a 6 MB buffer that passed through a CAF worker, the ZeroMQ I/O thread and
// the transport's poll thread (a dense-model snapshot, a large sync reply) leaves a 6 MB hole in
// each of their arenas, so a service's RSS climbs in steps to threads x largest transient
// buffer while the memory in use stays flat (malloc_stats of a coordinator in the soak: 17.7 MB
// in use throughout, arenas 35 -> 71 MB). malloc_trim(0) returns the whole free pages of every
// arena (madvise), so the RSS a container limit and `top` see is what is really in use.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace ss::service {

// Releases the free heap once now; true when the allocator gave memory back.
bool release_free_memory();

// The heap as the allocator sees it (glibc mallinfo2, every arena).
struct heap_usage {
  std::uint64_t in_use_bytes = 0;  // allocated and not yet freed (small and mmapped chunks)
  std::uint64_t free_bytes = 0;    // held by the allocator, not in use
};
heap_usage current_heap_usage();

// A thread that calls release_free_memory() every `interval` until destroyed (construct it
// after shutdown_signal, like every thread). A zero interval starts nothing.
class periodic_memory_release {
 public:
  explicit periodic_memory_release(std::chrono::milliseconds interval);
  ~periodic_memory_release();
  periodic_memory_release(const periodic_memory_release&) = delete;
  periodic_memory_release& operator=(const periodic_memory_release&) = delete;

  std::uint64_t releases() const;  // calls made so far

 private:
  std::chrono::milliseconds interval_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::uint64_t releases_ = 0;
  std::thread thread_;
};

}  // namespace ss::service
