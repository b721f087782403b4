// The allocator policy (what a thread's freed buffer leaves resident under each trim threshold;
// GLIBC_TUNABLES stepping it aside) and the periodic release of free heap memory.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "ss/service/memory_release.hpp"

using namespace ss::service;

// These are about glibc's allocator: a sanitizer build replaces it with its own, so they are
// only compiled without one (the periodic thread below is tested in every build).
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
namespace {

std::uint64_t resident_bytes() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmRSS:") {
      std::uint64_t kib = 0;
      in >> kib;
      return kib * 1024;
    }
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

}  // namespace


TEST_CASE("memory a thread freed inside its arena goes back to the system", "[service][memory]") {
  // A worker thread (its own arena) fills 48 MB in blocks below the mmap threshold, keeps the last
  // one (so the arena cannot simply shrink from its top), and frees the rest: the pages stay
  // resident in the arena until they are released.
  constexpr std::size_t block = 96 * 1024, blocks = 512;
  void* kept = nullptr;
  std::thread([&] {
    std::vector<void*> v;
    for (std::size_t i = 0; i < blocks; ++i) {
      v.push_back(std::malloc(block));
      std::memset(v.back(), 0x5a, block);
    }
    kept = v.back();
    v.pop_back();
    for (void* p : v) std::free(p);
  }).join();
  const auto before = resident_bytes();
  const auto free_before = current_heap_usage().free_bytes;
  CHECK(free_before >= (blocks - 1) * block);
  release_free_memory();
  const auto after = resident_bytes();
  INFO("resident before " << before << ", after " << after);
  CHECK(after + (blocks / 2) * block < before);  // most of the 48 MB went back
  std::free(kept);
}

// RSS change across one worker thread that fills and frees a buffer (below the mmap threshold,
// so from its arena): what the arena kept of it.
std::int64_t resident_kept_by_a_thread(std::size_t bytes = 16 << 20) {
  const auto before = static_cast<std::int64_t>(resident_bytes());
  std::thread([bytes] {
    void* p = std::malloc(bytes);
    std::memset(p, 0x5a, bytes);
    asm volatile("" : : "r"(p) : "memory");  // or GCC drops the memset, and malloc with it
    std::free(p);
  }).join();
  return static_cast<std::int64_t>(resident_bytes()) - before;
}

TEST_CASE("the trim threshold decides whether a thread's transient buffer stays resident", "[service][memory]") {
  constexpr std::int64_t mib = 1 << 20;
  // The old policy (256 MiB): the freed buffer is the arena's free top, which malloc_trim does
  // not return for a thread's arena - this is the coordinator's step per snapshot in the soak.
  REQUIRE(apply_allocator_policy(allocator_policy{64 << 20, 256 << 20}, nullptr));
  const auto kept_high = resident_kept_by_a_thread();
  release_free_memory();
  INFO("kept with a 256 MiB trim threshold: " << kept_high / mib << " MiB");
  CHECK(kept_high >= 12 * mib);
  // The services' policy: a free top above the threshold is given back when the buffer is freed.
  REQUIRE(apply_allocator_policy(allocator_policy{}, nullptr));
  const auto kept_default = resident_kept_by_a_thread();
  INFO("kept with the default trim threshold: " << kept_default / mib << " MiB");
  CHECK(kept_default < 4 * mib);
  // Shards and readers keep less: a 3 MB buffer stays with the default policy and goes with the
  // shard's.
  CHECK(allocator_policy_for("reader").trim_threshold_bytes == allocator_policy_for("shard").trim_threshold_bytes);
  CHECK(allocator_policy_for("trainer").trim_threshold_bytes == allocator_policy{}.trim_threshold_bytes);
  const auto kept_3mb_default = resident_kept_by_a_thread(3 << 20);
  REQUIRE(apply_allocator_policy(allocator_policy_for("shard"), nullptr));
  const auto kept_3mb_shard = resident_kept_by_a_thread(3 << 20);
  INFO("a 3 MB buffer kept: " << kept_3mb_default / 1024 << " KiB (default), " << kept_3mb_shard / 1024 << " KiB (shard)");
  CHECK(kept_3mb_default >= 2 * mib);
  CHECK(kept_3mb_shard < mib);
  REQUIRE(apply_allocator_policy(allocator_policy{}, nullptr));
}

TEST_CASE("heap usage counts what is allocated", "[service][memory]") {
  const auto base = current_heap_usage().in_use_bytes;
  void* p = std::malloc(8 << 20);
  std::memset(p, 1, 8 << 20);
  CHECK(current_heap_usage().in_use_bytes >= base + (8 << 20));
  std::free(p);
}
#endif

TEST_CASE("the allocator policy leaves glibc.malloc tunables the operator set alone", "[service][memory]") {
  CHECK_FALSE(apply_allocator_policy(allocator_policy{}, "glibc.malloc.trim_threshold=8388608"));
  CHECK_FALSE(apply_allocator_policy(allocator_policy{}, "glibc.rtld.nns=2:glibc.malloc.arena_max=2"));
  CHECK(apply_allocator_policy(allocator_policy{}, "glibc.rtld.nns=2"));
  CHECK(apply_allocator_policy(allocator_policy{}, ""));
  CHECK(apply_allocator_policy(allocator_policy{}, nullptr));
}

TEST_CASE("periodic release runs on its interval and stops promptly", "[service][memory]") {
  {
    periodic_memory_release off(std::chrono::milliseconds(0));
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    CHECK(off.releases() == 0);
  }
  const auto start = std::chrono::steady_clock::now();
  {
    periodic_memory_release every(std::chrono::milliseconds(5));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (every.releases() < 3 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    CHECK(every.releases() >= 3);
  }
  {
    // An hour's interval: the destructor wakes the thread instead of waiting it out.
    periodic_memory_release hourly(std::chrono::hours(1));
  }
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}
