// A shard_store with a memory budget over a cold tier (memory_rows here; RocksDB in the shard):
// the same values as every row in RAM, eviction only of rows storage holds as they are, misses
// read back, and a failing cold tier an error, never a silent zero row.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "ss/core/embedding/forwarding_rows.hpp"
#include "ss/core/embedding/memory_rows.hpp"
#include "ss/core/embedding/shard_store.hpp"
#include "store_helpers.hpp"

using namespace ss::embedding;
using ss::embedding::testing::flush;
using ss::embedding::testing::store_options;

namespace {

// memory_rows whose reads or writes can be made to fail.
class failing_rows final : public forwarding_rows {
 public:
  explicit failing_rows(std::uint32_t row_floats) : forwarding_rows(std::make_unique<memory_rows>(row_floats)) {}
  std::atomic<bool> fail_reads{false}, fail_writes{false};

  ss::status write(const std::uint32_t* t, const std::uint64_t* i, const float* r, std::size_t n) override {
    if (fail_writes) return {ss::errc::io_error, "disk full"};
    return forwarding_rows::write(t, i, r, n);
  }
  ss::status read(const std::uint32_t* t, const std::uint64_t* i, std::size_t n, float* r,
                  std::uint8_t* f) const override {
    if (fail_reads) return {ss::errc::io_error, "a bad sector"};
    return forwarding_rows::read(t, i, n, r, f);
  }
};


// A long-tailed id stream: a few hot ids, many cold ones.
struct id_stream {
  std::mt19937_64 rng{42};
  std::uint64_t next() {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    return static_cast<std::uint64_t>(20000.0 * u * u * u);  // ids 0..19999, dense near 0
  }
};

}  // namespace

TEST_CASE("tiered shard store: a fifth of the rows in RAM, the same values as all of them", "[core][embedding]") {
  auto cold = std::make_shared<memory_rows>(4 + 0);
  shard_store all(store_options(0, nullptr)), tiered(store_options(1500, cold));
  REQUIRE_FALSE(all.tiered());
  REQUIRE(tiered.tiered());
  id_stream stream;
  constexpr std::size_t batch = 48;
  std::vector<std::uint32_t> tables(batch);
  std::vector<std::uint64_t> ids(batch);
  std::vector<float> a(batch * 4), b(batch * 4), grads(batch * 4);
  for (int step = 0; step < 400; ++step) {
    for (std::size_t i = 0; i < batch; ++i) {
      tables[i] = static_cast<std::uint32_t>(i % 3);
      ids[i] = stream.next();
    }
    const bool create = step % 7 != 0;  // some lookups only peek
    REQUIRE(all.lookup(tables.data(), ids.data(), batch, create, a.data()).is_ok());
    REQUIRE(tiered.lookup(tables.data(), ids.data(), batch, create, b.data()).is_ok());
    REQUIRE(a == b);
    for (std::size_t k = 0; k < grads.size(); ++k) grads[k] = static_cast<float>((k * 7 + step) % 5) - 2.0f;
    REQUIRE(all.push(tables.data(), ids.data(), batch, grads.data()).is_ok());
    REQUIRE(tiered.push(tables.data(), ids.data(), batch, grads.data()).is_ok());
    if (step % 10 == 9) REQUIRE(flush(tiered, *cold).is_ok());
  }
  // Every row the all-in-RAM store holds, looked up in both.
  std::vector<std::uint32_t> every_table;
  std::vector<std::uint64_t> every_id;
  for (std::uint32_t t = 0; t < 3; ++t)
    all.existing_table(t)->for_each([&](std::uint64_t id, const float*) {
      every_table.push_back(t);
      every_id.push_back(id);
    });
  std::vector<float> want(every_id.size() * 4), got(every_id.size() * 4);
  REQUIRE(all.lookup(every_table.data(), every_id.data(), every_id.size(), false, want.data()).is_ok());
  REQUIRE(tiered.lookup(every_table.data(), every_id.data(), every_id.size(), false, got.data()).is_ok());
  CHECK(got == want);
  const auto s = tiered.stats();
  INFO("rows in RAM " << s.rows << " of " << every_id.size() << ", evictions " << s.evictions << ", misses "
                      << s.misses << ", loaded " << s.loaded << ", over budget " << s.over_budget);
  CHECK(every_id.size() > 6000);
  CHECK(s.max_rows_in_memory == 1500);
  CHECK(s.evictions > 0);
  CHECK(s.loaded > 0);  // evicted rows came back from storage
  CHECK(s.hits > 0);
  CHECK(s.rows < every_id.size() / 4);
  // Between two flushes the new and changed rows cannot go: RAM exceeds the budget by at most
  // what ten steps touch.
  CHECK(s.rows <= 1500 + 10 * batch);
  // After a flush and a batch of cold ids, RAM is back within the budget.
  REQUIRE(flush(tiered, *cold).is_ok());
  std::vector<std::uint64_t> fresh(batch);
  for (std::size_t i = 0; i < batch; ++i) fresh[i] = 100000 + i;
  for (int round = 0; round < 20; ++round) {
    REQUIRE(tiered.lookup(tables.data(), fresh.data(), batch, true, b.data()).is_ok());
    REQUIRE(flush(tiered, *cold).is_ok());
    for (auto& id : fresh) id += batch;
  }
  CHECK(tiered.stats().rows <= 1500 + batch);
  CHECK(cold->rows() >= every_id.size());
}

TEST_CASE("tiered shard store: a row changed since its last flush stays in RAM", "[core][embedding]") {
  auto cold = std::make_shared<memory_rows>(4);
  shard_store store(store_options(8, cold));
  std::vector<std::uint32_t> tables(64, 0);
  std::vector<std::uint64_t> ids(64);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = i;
  std::vector<float> v(64 * 4), grads(64 * 4, 1.0f);
  REQUIRE(store.lookup(tables.data(), ids.data(), 64, true, v.data()).is_ok());
  const std::vector<float> first = v;
  // 64 new rows, none flushed: nothing may go.
  CHECK(store.stats().rows == 64);
  CHECK(store.stats().evictions == 0);
  CHECK(store.stats().over_budget > 0);
  REQUIRE(flush(store, *cold).is_ok());
  REQUIRE(store.push(tables.data(), ids.data(), 8, grads.data()).is_ok());  // rows 0-7 changed again
  for (std::uint64_t& id : ids) id += 1000;
  REQUIRE(store.lookup(tables.data(), ids.data(), 64, true, v.data()).is_ok());
  // The changed rows are still in RAM with their update: looking them up is a hit.
  const auto hits = store.stats().hits;
  std::vector<std::uint64_t> changed = {0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<float> after(8 * 4);
  REQUIRE(store.lookup(tables.data(), changed.data(), 8, false, after.data()).is_ok());
  CHECK(store.stats().hits == hits + 8);
  for (std::size_t k = 0; k < after.size(); ++k) CHECK(after[k] == Approx(first[k] - 0.25f));  // lr 0.25 x gradient 1
}


TEST_CASE("tiered shard store: rows looked up often outlast a scan of rows looked up once", "[core][embedding]") {
  // Each lookup of a row in RAM gives it one more pass of the CLOCK hand to survive (up to
  // touch_chances), so a burst of one-off ids longer than the budget evicts the one-offs before
  // the rows every batch uses. With one chance per row (plain CLOCK), the burst evicts most of them.
  constexpr std::size_t budget = 600, hot = 200, scan = 650;
  auto cold = std::make_shared<memory_rows>(4);
  shard_store store(store_options(budget, cold));
  auto look_up = [&](std::uint64_t first, std::size_t n) {
    std::vector<std::uint32_t> tables(n, 0);
    std::vector<std::uint64_t> ids(n);
    for (std::size_t i = 0; i < n; ++i) ids[i] = first + i;
    std::vector<float> v(n * 4);
    REQUIRE(store.lookup(tables.data(), ids.data(), n, true, v.data()).is_ok());
    REQUIRE(flush(store, *cold).is_ok());  // new rows may go once stored
  };
  for (int pass = 0; pass < 3; ++pass) look_up(0, hot);
  for (std::uint64_t first = 100000; first < 100000 + scan; first += 50) look_up(first, 50);
  const auto misses = store.stats().misses;
  look_up(0, hot);
  const auto hot_misses = store.stats().misses - misses;
  INFO("hot rows read back after the scan: " << hot_misses << " of " << hot);
  CHECK(store.stats().evictions >= hot + scan - budget);
  CHECK(hot_misses <= hot / 5);  // 27 measured; 88 with one chance per row
}

TEST_CASE("tiered shard store: a failing cold tier is an error, never a zero row", "[core][embedding]") {
  auto cold = std::make_shared<failing_rows>(4);
  shard_store store(store_options(16, cold));
  std::vector<std::uint32_t> tables(64, 1);
  std::vector<std::uint64_t> ids(64);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = i;
  std::vector<float> v(64 * 4), again(64 * 4);
  REQUIRE(store.lookup(tables.data(), ids.data(), 64, true, v.data()).is_ok());
  REQUIRE(flush(store, *cold).is_ok());
  for (std::uint64_t& id : ids) id += 64;
  REQUIRE(store.lookup(tables.data(), ids.data(), 64, true, again.data()).is_ok());  // evicts the first 64
  REQUIRE(store.stats().evictions > 0);
  cold->fail_reads = true;
  for (std::uint64_t& id : ids) id -= 64;
  auto st = store.lookup(tables.data(), ids.data(), 64, true, again.data());
  CHECK(st.code() == ss::errc::io_error);
  CHECK_THAT(st.message(), Catch::Contains("a bad sector"));
  std::vector<float> grads(64 * 4, 1.0f);
  CHECK(store.push(tables.data(), ids.data(), 64, grads.data()).code() == ss::errc::io_error);
  // A hint that cannot read: the error (the shard counts it and answers it), and nothing placed.
  const auto rows_before = store.stats().rows;
  auto hint = store.warm(tables.data(), ids.data(), 64);
  REQUIRE_FALSE(hint.is_ok());
  CHECK(hint.error().code() == ss::errc::io_error);
  CHECK_THAT(hint.error().message(), Catch::Contains("reading rows ahead"));
  CHECK(store.stats().rows == rows_before);
  CHECK(store.stats().warmed == 0);
  cold->fail_reads = false;
  REQUIRE(store.lookup(tables.data(), ids.data(), 64, true, again.data()).is_ok());
  CHECK(again == v);  // the rows as they were stored, none lost to the failed reads
  // A failed flush: its rows may be missing from storage, so nothing is evicted any more.
  REQUIRE(store.push(tables.data(), ids.data(), 64, grads.data()).is_ok());
  cold->fail_writes = true;
  CHECK(flush(store, *cold).code() == ss::errc::io_error);
  const auto evictions = store.stats().evictions;
  for (std::uint64_t& id : ids) id += 5000;
  REQUIRE(store.lookup(tables.data(), ids.data(), 64, true, again.data()).is_ok());
  CHECK(store.stats().evictions == evictions);
}

namespace {

// A tiered store (256 rows in RAM over memory storage) for hogwild pushers: sgd at learning rate 1,
// so that each push (gradient 1) moves every value of its row by exactly -1. `pushed` counts each
// id's pushes; the threads count their failures in `errors` (Catch's assertions are not
// thread-safe: counted, checked after); `done` stops the threads that run beside the pushers.
struct hogwild_store {
  explicit hogwild_store(std::uint64_t id_count) : pushed(id_count) {}

  static shard_store_options options(std::shared_ptr<durable_rows> cold) {
    shard_store_options o = store_options(256, std::move(cold));
    o.optimizer.learning_rate = 1.0f;
    return o;
  }

  // `threads` threads each look up and push `pushes` times 6 random ids of `table` below
  // pushed.size(). Every `pause_every` pushes a thread calls `pause` (to let a flusher catch up
  // however the machine schedules it).
  void push_from_threads(std::uint32_t table, int threads, int pushes, std::uint64_t seed, int pause_every,
                         const std::function<void()>& pause) {
    constexpr std::size_t ids_per_push = 6;
    const std::uint64_t id_count = pushed.size();
    std::vector<std::thread> workers;
    for (int w = 0; w < threads; ++w)
      workers.emplace_back([&, w] {
        std::mt19937_64 rng(static_cast<std::uint64_t>(w) + seed);
        std::vector<std::uint32_t> tables(ids_per_push, table);
        std::vector<std::uint64_t> ids(ids_per_push);
        std::vector<float> grads(ids_per_push * 4, 1.0f), values(ids_per_push * 4);
        for (int p = 0; p < pushes; ++p) {
          for (auto& id : ids) id = rng() % id_count;
          if (!store.lookup(tables.data(), ids.data(), ids.size(), true, values.data()).is_ok()) ++errors;
          if (!store.push(tables.data(), ids.data(), ids.size(), grads.data()).is_ok()) ++errors;
          for (auto id : ids) pushed[id].fetch_add(1);
          if (p % pause_every == pause_every - 1) pause();
        }
      });
    for (auto& t : workers) t.join();
  }

  // Every id of `table` below pushed.size() holds its initial values less its pushes.
  void check_every_push_applied(std::uint32_t table) {
    const std::size_t id_count = pushed.size();
    std::vector<std::uint32_t> tables(id_count, table);
    std::vector<std::uint64_t> ids(id_count);
    for (std::uint64_t i = 0; i < id_count; ++i) ids[i] = i;
    std::vector<float> values(id_count * 4);
    REQUIRE(store.lookup(tables.data(), ids.data(), id_count, false, values.data()).is_ok());
    table_options to;
    to.table = table;
    to.dim = 4;
    to.init_scale = 0.5f;
    for (std::uint64_t i = 0; i < id_count; ++i) {
      float init[4];
      init_row(to, i, init);
      INFO("id " << i << " pushed " << pushed[i].load() << " times");
      for (int d = 0; d < 4; ++d)
        REQUIRE(values[i * 4 + static_cast<std::size_t>(d)] ==
                Approx(init[d] - static_cast<float>(pushed[i].load())).margin(1e-2));
    }
  }

  std::shared_ptr<memory_rows> cold = std::make_shared<memory_rows>(4);
  shard_store store{options(cold)};
  std::vector<std::atomic<int>> pushed;
  std::atomic<bool> done{false};
  std::atomic<int> errors{0};
};

}  // namespace

TEST_CASE("tiered shard store: concurrent pushes with a flusher and heavy eviction lose no update",
          "[core][embedding]") {
  hogwild_store h(20000);
  constexpr int threads = 4, pushes = 3000;
  std::atomic<int> flushes{0};
  std::thread flusher([&] {
    while (!h.done) {
      if (!flush(h.store, *h.cold).is_ok()) ++h.errors;
      ++flushes;
    }
  });
  // Now and then, wait for a whole flush: rows become evictable however the machine schedules
  // the flusher (on a loaded machine it once flushed too rarely to evict much).
  h.push_from_threads(2, threads, pushes, 1, 250, [&] {
    const int seen = flushes.load();
    while (flushes.load() < seen + 2) std::this_thread::yield();
  });
  h.done = true;
  flusher.join();
  REQUIRE(h.errors == 0);
  const auto s = h.store.stats();
  INFO("evictions " << s.evictions << ", loaded " << s.loaded << ", misses " << s.misses << ", rows " << s.rows
                     << ", over budget " << s.over_budget << ", stored " << s.rows_stored);
  CHECK(s.evictions > 1000);
  h.check_every_push_applied(2);
}

TEST_CASE("tiered shard store: a prefetch hint reads stored rows into RAM and creates none", "[core][embedding]") {
  auto cold = std::make_shared<memory_rows>(4);
  shard_store all(store_options(0, nullptr)), store(store_options(64, cold));
  std::vector<std::uint32_t> tables(200, 0);
  std::vector<std::uint64_t> ids(200);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = i;
  std::vector<float> v(200 * 4), w(200 * 4), grads(200 * 4, 1.0f);
  REQUIRE(store.lookup(tables.data(), ids.data(), 200, true, v.data()).is_ok());
  REQUIRE(store.push(tables.data(), ids.data(), 200, grads.data()).is_ok());
  REQUIRE(all.lookup(tables.data(), ids.data(), 200, true, w.data()).is_ok());
  REQUIRE(all.push(tables.data(), ids.data(), 200, grads.data()).is_ok());
  REQUIRE(flush(store, *cold).is_ok());
  CHECK(store.shrink_to_budget() > 0);  // what the persister does after a flush
  CHECK(store.stats().rows <= 64);
  // A hint for 16 stored rows that went and 16 ids never seen.
  std::vector<std::uint32_t> hint_tables(32, 0);
  std::vector<std::uint64_t> hint(32);
  std::size_t stored_out = 0;
  for (std::uint64_t id = 0; id < 200 && stored_out < 16; ++id) {
    std::uint64_t one = id;
    const std::uint32_t t = 0;
    float row[4];
    // Out of RAM: a lookup that does not create counts a miss.
    const auto misses = store.stats().misses;
    REQUIRE(store.lookup(&t, &one, 1, false, row).is_ok());
    if (store.stats().misses > misses) hint[stored_out++] = id;
  }
  REQUIRE(stored_out == 16);
  for (std::size_t i = 16; i < 32; ++i) hint[i] = 5000 + i;
  const auto stored = cold->rows();
  auto warmed = store.warm(hint_tables.data(), hint.data(), hint.size());
  REQUIRE(warmed.is_ok());
  CHECK(*warmed == 16);
  CHECK(store.stats().warmed == 16);
  CHECK(store.stats().rows <= 64);  // room made by eviction, never past the budget
  CHECK(cold->rows() == stored);    // nothing created
  // The lookup after the hint: hits, with the trained values.
  const auto before = store.stats();
  std::vector<float> got(16 * 4), want(16 * 4);
  REQUIRE(store.lookup(hint_tables.data(), hint.data(), 16, true, got.data()).is_ok());
  REQUIRE(all.lookup(hint_tables.data(), hint.data(), 16, true, want.data()).is_ok());
  CHECK(got == want);
  CHECK(store.stats().hits == before.hits + 16);
  CHECK(store.stats().misses == before.misses);
  // RAM full of rows changed since the last flush: a hint places nothing rather than pass the budget.
  std::vector<std::uint64_t> fresh(128);
  for (std::size_t i = 0; i < fresh.size(); ++i) fresh[i] = 9000 + i;
  std::vector<float> fresh_values(128 * 4);
  REQUIRE(store.lookup(std::vector<std::uint32_t>(128, 0).data(), fresh.data(), 128, true, fresh_values.data()).is_ok());
  std::vector<std::uint64_t> other(8);
  for (std::size_t i = 0; i < other.size(); ++i) other[i] = 100 + i;
  auto none = store.warm(tables.data(), other.data(), other.size());
  REQUIRE(none.is_ok());
  CHECK(*none == 0);
  CHECK(store.stats().warm_skipped == 8);
  // Without a budget a hint has nothing to do.
  CHECK(*all.warm(hint_tables.data(), hint.data(), hint.size()) == 0);
}

TEST_CASE("tiered shard store: writing back what eviction takes next brings RAM under the budget",
          "[core][embedding]") {
  auto cold = std::make_shared<memory_rows>(4);
  shard_store all(store_options(0, nullptr)), store(store_options(100, cold));
  std::vector<std::uint32_t> tables(1000, 1);
  std::vector<std::uint64_t> ids(1000);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = i * 7;
  std::vector<float> v(1000 * 4), grads(1000 * 4, 0.5f);
  for (auto* s : {&store, &all}) {
    REQUIRE(s->lookup(tables.data(), ids.data(), 1000, true, v.data()).is_ok());
    REQUIRE(s->push(tables.data(), ids.data(), 1000, grads.data()).is_ok());
  }
  // 1000 changed rows, none stored: none could go.
  CHECK(store.stats().rows == 1000);
  CHECK(store.under_pressure());
  std::uint64_t sunk = 0;
  auto written = store.write_back([&](std::uint32_t t, const std::uint64_t* i, const float* r, std::size_t n) {
    sunk += n;
    std::vector<std::uint32_t> tabs(n, t);
    return cold->write(tabs.data(), i, r, n);
  });
  REQUIRE(written.is_ok());
  CHECK(*written == sunk);
  CHECK(*written >= 900);
  CHECK(store.stats().rows <= 100);
  CHECK_FALSE(store.under_pressure());
  CHECK(store.dirty_rows() == 1000 - *written);
  // Nothing lost: every row, in RAM or written back, has its update.
  std::vector<float> got(1000 * 4), want(1000 * 4);
  REQUIRE(store.lookup(tables.data(), ids.data(), 1000, false, got.data()).is_ok());
  REQUIRE(all.lookup(tables.data(), ids.data(), 1000, false, want.data()).is_ok());
  CHECK(got == want);
  // A failed write-back: an error, and nothing evicted any more (storage may lack the rows).
  REQUIRE(store.push(tables.data(), ids.data(), 1000, grads.data()).is_ok());
  auto failed = store.write_back([](std::uint32_t, const std::uint64_t*, const float*, std::size_t) {
    return ss::status(ss::errc::io_error, "disk full");
  });
  CHECK(failed.error().code() == ss::errc::io_error);
  CHECK(store.shrink_to_budget() == 0);
}

TEST_CASE("tiered shard store: at twice the budget a batch waits for the next flush, and RAM comes back",
          "[core][embedding]") {
  auto cold = std::make_shared<memory_rows>(4);
  auto o = store_options(100, cold);
  o.ceiling_wait = std::chrono::milliseconds(5000);
  shard_store store(o);
  std::vector<std::uint32_t> tables(300, 1);
  std::vector<std::uint64_t> ids(300), more(300);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ids[i] = i;
    more[i] = 1000 + i;
  }
  std::vector<float> v(300 * 4), grads(300 * 4, 0.5f);
  // Under the ceiling nothing waits: 300 new rows, none evictable, three times the budget.
  REQUIRE(store.lookup(tables.data(), ids.data(), 300, true, v.data()).is_ok());
  REQUIRE(store.stats().rows == 300);
  CHECK(store.stats().flush_waits == 0);
  // Past it, the push waits until a flush is stored (here by another thread, after a while); the
  // flush makes the rows evictable, and the next batch's new rows take their place.
  // (Catch's assertions are for the test's own thread: the flusher only records.)
  std::atomic<bool> flushed{false}, flush_ok{false};
  std::thread flusher([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    flushed = true;
    flush_ok = flush(store, *cold).is_ok();
  });
  REQUIRE(store.push(tables.data(), ids.data(), 300, grads.data()).is_ok());
  CHECK(flushed.load());
  flusher.join();
  REQUIRE(flush_ok.load());
  auto s = store.stats();
  CHECK(s.flush_waits == 1);
  CHECK(s.flush_wait_seconds >= 0.15);
  CHECK(s.flush_wait_seconds < 4.0);  // woken by the flush, not by the time limit
  REQUIRE(flush(store, *cold).is_ok());  // the push's changes
  REQUIRE(store.lookup(tables.data(), more.data(), 300, true, v.data()).is_ok());
  CHECK(store.stats().rows < 400);  // the new rows evicted stored ones (600 without)
  // A persister that never flushes slows a batch by the limit, never stops it.
  o.ceiling_wait = std::chrono::milliseconds(100);
  o.cold = std::make_shared<memory_rows>(4);  // the rows are new here too
  shard_store stalled(o);
  REQUIRE(stalled.lookup(tables.data(), ids.data(), 300, true, v.data()).is_ok());
  REQUIRE(stalled.push(tables.data(), ids.data(), 300, grads.data()).is_ok());
  s = stalled.stats();
  CHECK(s.flush_waits == 1);
  CHECK(s.flush_wait_seconds >= 0.09);
  // A failed flush wakes a waiter at once: the shard is stopping with that error.
  o.ceiling_wait = std::chrono::milliseconds(5000);
  o.cold = std::make_shared<memory_rows>(4);
  shard_store failing(o);
  REQUIRE(failing.lookup(tables.data(), ids.data(), 300, true, v.data()).is_ok());
  std::thread failer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    (void)failing.write_back([](std::uint32_t, const std::uint64_t*, const float*, std::size_t) {
      return ss::status(ss::errc::io_error, "disk full");
    });
  });
  REQUIRE(failing.push(tables.data(), ids.data(), 300, grads.data()).is_ok());
  failer.join();
  CHECK(failing.stats().flush_wait_seconds < 4.0);
}

TEST_CASE("tiered shard store: hints and write-backs running beside pushes lose no update", "[core][embedding]") {
  constexpr int threads = 2, pushes = 2000;
  constexpr std::uint64_t id_count = 5000;
  hogwild_store h(id_count);
  auto sink = [&](std::uint32_t t, const std::uint64_t* ids, const float* rows, std::size_t n) {
    std::vector<std::uint32_t> tables(n, t);
    return h.cold->write(tables.data(), ids, rows, n);
  };
  // What the persister does: flushes now and then, write-backs whenever RAM is past the budget,
  // and a sweep after each; and what the prefetcher does: hints for ids about to be pushed.
  std::atomic<int> rounds{0};
  std::thread persister([&] {
    for (int round = 0; !h.done; ++round, ++rounds) {
      if (round % 8 == 0) {
        if (!flush(h.store, *h.cold).is_ok()) ++h.errors;
        h.store.shrink_to_budget();
      } else if (h.store.under_pressure()) {
        if (!h.store.write_back(sink).is_ok()) ++h.errors;
      }
      std::this_thread::yield();
    }
  });
  std::thread prefetcher([&] {
    std::mt19937_64 rng(99);
    std::vector<std::uint32_t> tables(32, 3);
    std::vector<std::uint64_t> ids(32);
    while (!h.done) {
      for (auto& id : ids) id = rng() % id_count;
      if (!h.store.warm(tables.data(), ids.data(), ids.size()).is_ok()) ++h.errors;
    }
  });
  // Now and then, wait for the persister: rows go and come back however the machine schedules it.
  h.push_from_threads(3, threads, pushes, 11, 200, [&] {
    const int seen = rounds.load();
    while (rounds.load() < seen + 9) std::this_thread::yield();
  });
  h.done = true;
  persister.join();
  prefetcher.join();
  REQUIRE(h.errors == 0);
  const auto s = h.store.stats();
  INFO("evictions " << s.evictions << ", loaded " << s.loaded << ", warmed " << s.warmed << ", rows " << s.rows
                     << ", peak " << s.peak_rows_in_memory);
  CHECK(s.evictions > 100);
  CHECK(s.loaded > 0);
  h.check_every_push_applied(3);
}

TEST_CASE("tiered shard store: a reshard's copy from storage while rows change, then the rows marked since (in RAM "
          "or left RAM marked), is every row as it stands",
          "[core][embedding]") {
  using ss::embedding::testing::kDim;
  auto cold = std::make_shared<memory_rows>(kDim);
  shard_store store(store_options(6, cold));
  const std::uint32_t floats = store.row_floats();
  std::mt19937_64 rng(7);
  auto touch = [&](std::size_t n) {  // n pushes to ids drawn from 0..39 (some made new)
    std::vector<std::uint32_t> tables(n, 0);
    std::vector<std::uint64_t> ids(n);
    for (auto& id : ids) id = rng() % 40;
    std::vector<float> grads(n * kDim, 0.25f);
    REQUIRE(store.push(tables.data(), ids.data(), n, grads.data()).is_ok());
  };
  auto settle = [&] {  // the persister's flush, then eviction back to the budget
    REQUIRE(flush(store, *cold).is_ok());
    store.shrink_to_budget();
  };
  for (int i = 0; i < 8; ++i) {
    touch(4);
    settle();
  }
  // Every row as the source holds it now: storage after a flush (RAM then matches it).
  auto held = [&] {
    REQUIRE(flush(store, *cold).is_ok());
    std::map<std::uint64_t, std::vector<float>> rows;
    REQUIRE(cold->scan([&](std::uint32_t, std::uint64_t id, const float* row) {
                    rows[id] = std::vector<float>(row, row + floats);
                  }).is_ok());
    return rows;
  };
  // The copy while training, as the persister serves it: flush, read storage a few rows at a
  // time, and clear the marks of those RAM holds unchanged; rows change between pages.
  std::map<std::uint64_t, std::vector<float>> new_owner;
  store.track_moves(true);
  embedding_table* tab = store.existing_table(0);
  REQUIRE(tab != nullptr);
  std::size_t cleared = 0;
  for (std::uint64_t from = 0; from < 40; from += 5) {
    settle();
    std::vector<std::uint64_t> page;
    REQUIRE(cold->scan([&](std::uint32_t, std::uint64_t id, const float* row) {
                    if (id < from || id >= from + 5) return;
                    page.push_back(id);
                    new_owner[id] = std::vector<float>(row, row + floats);
                  }).is_ok());
    cleared += tab->unmark_copied_if_clean(page.data(), page.size());
    touch(3);  // training goes on between pages: changes, rows read back, evictions
  }
  CHECK(cleared > 0);
  for (int i = 0; i < 4; ++i) {
    touch(3);
    settle();
  }
  // Rows left RAM marked since the copy (changed, flushed, evicted): remembered.
  std::vector<std::uint64_t> out;
  REQUIRE(tab->moved_out(0, 1000, out) == 0);
  CHECK_FALSE(out.empty());
  // Under the hold (nothing changes): the rows marked in RAM, then those that left RAM marked, read
  // from storage. The new owner then holds every row as the source does.
  const auto now = held();
  std::vector<std::uint64_t> ids;
  std::vector<float> rows;
  const std::function<bool(std::uint64_t)> all = [](std::uint64_t) { return true; };
  REQUIRE(tab->copy_rows_to_move(0, 1u << 20, false, all, ids, rows) == 0);
  for (std::size_t i = 0; i < ids.size(); ++i)
    new_owner[ids[i]] = std::vector<float>(rows.begin() + i * floats, rows.begin() + (i + 1) * floats);
  for (std::uint64_t id : out) new_owner[id] = now.at(id);
  CHECK(new_owner == now);
  // Without the rows that left RAM marked, the new owner would be stale: the list is needed.
  std::size_t stale_without = 0;
  for (std::uint64_t id : out)
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ++stale_without;
  CHECK(stale_without > 0);
  // No reshard under way: the list is forgotten.
  store.track_moves(false);
  out.clear();
  CHECK(tab->moved_out(0, 1000, out) == 0);
  CHECK(out.empty());
}
