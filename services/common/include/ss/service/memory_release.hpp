// The allocator policy every service starts with, and the periodic return of free heap memory.
//
// glibc's malloc keeps memory a thread freed in that thread's arena. Two ways it stays resident
// while the memory in use is flat (malloc_stats of a soak coordinator: 17.7 MB in use throughout,
// arenas 35 -> 71 MB):
// - a free top: a non-main arena gives its top back only when it exceeds the trim threshold, so
//   a 6 MB buffer (a dense-model snapshot, a large sync reply) that passed through a CAF worker,
//   the ZeroMQ I/O thread and the poll thread leaves a 6 MB top in each of their arenas; the
//   policy's trim threshold (allocator_policy_for: 8 MiB, 2 MiB for shards and readers) is what
//   bounds that, and malloc_trim cannot help (it trims only the main arena's top);
// - free chunks inside an arena, below live ones: malloc_trim(0) returns their whole pages
//   (madvise), which periodic_memory_release does every few seconds.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>

namespace ss::service {

// How large a request goes to mmap instead of the heap, and how large a free top an arena keeps
// before giving it back. A high mmap threshold keeps the 50 KB - few MB frames, lookup replies
// and batches on the heap instead of mmap/munmap and page faults per message.
// A buffer larger than the trim threshold is paid for in page faults each time it is allocated
// again (this VM: about 0.5 µs per KiB, 1.4 ms for 2.5 MB, against 27 µs below the threshold),
// so the threshold sits above the buffers a service handles routinely, and no higher.
struct allocator_policy {
  std::size_t mmap_threshold_bytes = std::size_t{64} << 20;
  // Trainers and the coordinator: dense-model buffers (1.9 MB for the default model, 5.9 MB for
  // the soak's large one) stay cheap. bench/soak/soak.sh fast-reader, 256 MiB vs 8 MiB: coordinator
  // 90.0 vs 39.8 MiB, trainer 85.9 vs 47.4 MiB in the late window, same throughput.
  std::size_t trim_threshold_bytes = std::size_t{8} << 20;
};

// The policy for one shadowsync command. Shards and readers never hold a dense model: their
// largest routine buffers are lookup replies, pushes and batches (200 KB at batch 128), so they
// keep at most 2 MiB per arena; with 8 MiB, shards in the 64-member soak kept 4-5 MiB steps from
// RocksDB's background work, and the hammer soak's reader a 2 MiB one.
allocator_policy allocator_policy_for(const char* command);

// Applies the policy with mallopt, unless `glibc_tunables` (the GLIBC_TUNABLES variable, may be
// null) already tunes glibc.malloc: mallopt would silently override what the operator set.
// Returns true when the policy was applied.
bool apply_allocator_policy(const allocator_policy& policy, const char* glibc_tunables);

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
