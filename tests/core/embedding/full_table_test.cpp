// A shard table at --max-rows-per-table: each new row takes the place of one the CLOCK hand picks,
// which is dropped for good from RAM and, by the next flush, from storage; the job goes on. With
// and without a memory budget, the table's rows in both tiers never pass the limit, a row used
// all along survives, and an evicted id comes back with its initial values.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "ss/core/embedding/forwarding_rows.hpp"
#include "ss/core/embedding/memory_rows.hpp"
#include "ss/core/embedding/shard_store.hpp"
#include "store_helpers.hpp"

using namespace ss::embedding;
using namespace ss::embedding::testing;

namespace {

shard_store_options full_options(std::uint64_t max_rows, std::uint64_t budget_rows, std::shared_ptr<durable_rows> cold) {
  shard_store_options o = store_options(budget_rows, std::move(cold));
  o.max_rows_per_table = max_rows;
  o.persisted = true;
  return o;
}

// The rows the trim of full tables dropped (the trim must work).
std::uint64_t trim(shard_store& store) {
  auto trimmed = store.trim_full_tables();
  REQUIRE(trimmed.is_ok());
  return *trimmed;
}

std::vector<float> look_up(shard_store& store, std::uint32_t t, std::uint64_t id) {
  std::vector<float> values(kDim);
  REQUIRE(store.lookup(&t, &id, 1, true, values.data()).is_ok());
  return values;
}

void push_one(shard_store& store, std::uint32_t t, std::uint64_t id) {
  const std::vector<float> grad(kDim, 1.0f);
  REQUIRE(store.push(&t, &id, 1, grad.data()).is_ok());
}

// Streams `batches` batches of 64 new ids into tables 0 and 1, touching (and pushing) the hot id
// 7 of table 0 in every batch, flushing every `flush_every` batches.
void stream(shard_store& store, durable_rows& storage, int batches, int flush_every) {
  std::uint64_t next_id = 1000;
  for (int b = 0; b < batches; ++b) {
    std::vector<std::uint32_t> tables;
    std::vector<std::uint64_t> ids;
    for (int k = 0; k < 64; ++k) {
      tables.push_back(static_cast<std::uint32_t>(k % 2));
      ids.push_back(next_id++);
    }
    tables.push_back(0);
    ids.push_back(7);
    std::vector<float> values(ids.size() * kDim), grads(ids.size() * kDim, 0.01f);
    REQUIRE(store.lookup(tables.data(), ids.data(), ids.size(), true, values.data()).is_ok());
    REQUIRE(store.push(tables.data(), ids.data(), ids.size(), grads.data()).is_ok());
    if ((b + 1) % flush_every == 0) REQUIRE(flush(store, storage).is_ok());
  }
  REQUIRE(flush(store, storage).is_ok());
}

// Memory storage that runs `during_next_read` once, on a thread of its own, after its next read
// took the stored rows: what another thread does while a lookup or a publisher's read waits on
// storage. (Its own thread: the store keeps scratch memory per thread.)
class racing_rows final : public forwarding_rows {
 public:
  racing_rows() : forwarding_rows(std::make_unique<memory_rows>(kDim)) {}
  mutable std::function<void()> during_next_read;

  ss::status read(const std::uint32_t* t, const std::uint64_t* i, std::size_t n, float* r,
                  std::uint8_t* f) const override {
    ss::status st = forwarding_rows::read(t, i, n, r, f);
    if (auto hook = std::move(during_next_read)) {
      during_next_read = nullptr;
      std::thread(hook).join();
    }
    return st;
  }
};

// A full table (two rows, one in RAM) over `storage` holding the pushed rows 1 and 2, both out of
// RAM, and row 3 in RAM only: one row over its limit until the next trim.
void two_cold_rows_and_one_over(shard_store& store, durable_rows& storage) {
  push_one(store, 0, 1);
  push_one(store, 0, 2);
  REQUIRE(flush(store, storage).is_ok());
  store.shrink_to_budget();
  look_up(store, 0, 3);
  REQUIRE(store.existing_table(0)->find(1) == nullptr);
  REQUIRE(store.existing_table(0)->find(2) == nullptr);
  REQUIRE(store.stats().rows_held == 3);
}

// Whether the publisher's read of (0, id) finds a row.
bool published_present(const shard_store& store, std::uint64_t id) {
  std::vector<float> values(kDim);
  std::uint8_t present = 9;
  REQUIRE(store.read_published(0, &id, 1, values.data(), &present).is_ok());
  return present == 1;
}

}  // namespace

TEST_CASE("a full table evicts for good instead of failing: RAM and storage stay at the limit", "[core][embedding]") {
  auto storage = std::make_shared<memory_rows>(kDim);
  const std::uint64_t max_rows = 500;
  shard_store store(full_options(max_rows, 0, nullptr));
  const std::vector<float> hot_start = look_up(store, 0, 7);
  stream(store, *storage, 100, 3);  // 3,200 new ids per table

  const auto s = store.stats();
  CHECK(s.rows_held == 2 * max_rows);
  CHECK(s.rows == 2 * max_rows);
  // Every row past the limit, and each that came back after its eviction (a row a batch looks up
  // may be evicted before its push, in stripes of 8 rows).
  CHECK(s.table_evictions >= 2 * 3200 - 2 * max_rows);
  CHECK(storage->rows() == 2 * max_rows);                  // deleted from storage too
  // The row used in every batch kept its updates (its second chance saved it every time).
  CHECK(look_up(store, 0, 7) != hot_start);
  // An early id was evicted; it comes back with its initial values.
  CHECK(look_up(store, 1, 1001) == initial_values(store, 1, 1001));
}

TEST_CASE("a full table under a memory budget counts its rows in both tiers", "[core][embedding]") {
  auto storage = std::make_shared<memory_rows>(kDim);
  const std::uint64_t max_rows = 400;
  shard_store store(full_options(max_rows, 100, storage));  // RAM holds 100 rows of the 800
  const std::vector<float> hot_start = look_up(store, 0, 7);
  stream(store, *storage, 60, 2);
  // Over the limit now: new rows came in, and the cold ones give way at the flush.
  CHECK(store.stats().rows_held > 2 * max_rows);
  CHECK(trim(store) > 0);
  REQUIRE(flush(store, *storage).is_ok());
  store.shrink_to_budget();

  const auto s = store.stats();
  CHECK(s.rows_held == 2 * max_rows);
  CHECK(s.rows <= 2 * max_rows);
  CHECK(s.table_evictions > 0);
  REQUIRE(flush(store, *storage).is_ok());
  CHECK(storage->rows() == 2 * max_rows);  // storage holds every row of the tables, and no other
  CHECK(look_up(store, 0, 7) != hot_start);
  // An early id was cold, so trimmed; it comes back with its initial values.
  CHECK(look_up(store, 1, 1001) == initial_values(store, 1, 1001));
}

TEST_CASE("a row evicted for good is not read back from storage before its deletion is stored",
          "[core][embedding]") {
  auto storage = std::make_shared<memory_rows>(kDim);
  shard_store store(full_options(2, 1, storage));  // tiered: one row in RAM, two per table
  const std::uint32_t t = 0;
  push_one(store, t, 1);
  push_one(store, t, 2);
  REQUIRE(flush(store, *storage).is_ok());  // both pushed rows stored
  store.shrink_to_budget();
  look_up(store, t, 3);  // over the limit until the next trim
  CHECK(store.stats().rows_held == 3);
  CHECK(store.stats().table_evictions == 0);
  REQUIRE(trim(store) == 1);
  CHECK(store.stats().rows_held == 2);
  // The dropped row is a cold one (out of RAM); its pushed copy is still in storage, as no flush
  // ran since. A lookup must start it from its initial values.
  const embedding_table* table = store.existing_table(t);
  std::uint64_t dropped = 0;
  for (std::uint64_t id : {1, 2})
    if (table->find(id) == nullptr && look_up(store, t, id) == initial_values(store, t, id)) dropped = id;
  CHECK(dropped != 0);
  CHECK(store.stats().rows_held == 3);  // it came back as new: over again until the next trim
  REQUIRE(store.trim_full_tables().is_ok());
  REQUIRE(flush(store, *storage).is_ok());
  CHECK(store.stats().rows_held == 2);
  CHECK(storage->rows() == 2);
}

TEST_CASE("a row dropped for good is not read back when its deletion is stored during the read",
          "[core][embedding]") {
  auto storage = std::make_shared<racing_rows>();
  shard_store store(full_options(2, 1, storage));
  two_cold_rows_and_one_over(store, *storage);
  const std::uint32_t t = 0;
  std::uint64_t id = 1;
  SECTION("dropped before the read") {
    REQUIRE(trim(store) == 1);  // row 1, the first stored out of RAM
    // Its stored copy is still there; the flush storing its deletion runs while a read waits,
    // and leaves RAM room for a hint's row.
    storage->during_next_read = [&] {
      REQUIRE(flush(store, *storage).is_ok());
      store.shrink_to_budget();
    };
    SECTION("the publisher's read") { CHECK_FALSE(published_present(store, id)); }
    SECTION("a prefetch hint") {
      auto warmed = store.warm(&t, &id, 1);
      REQUIRE(warmed.is_ok());
      CHECK(*warmed == 0);
      CHECK(look_up(store, t, id) == initial_values(store, t, id));
    }
    SECTION("a lookup") { CHECK(look_up(store, t, id) == initial_values(store, t, id)); }
    storage->during_next_read = nullptr;  // not needed when the dropped row is not read
  }
  SECTION("dropped, and its deletion stored, during the read") {
    storage->during_next_read = [&] {
      REQUIRE(trim(store) == 1);
      REQUIRE(flush(store, *storage).is_ok());
    };
    SECTION("the publisher's read") { CHECK_FALSE(published_present(store, id)); }
    SECTION("a lookup") { CHECK(look_up(store, t, id) == initial_values(store, t, id)); }
    CHECK_FALSE(storage->during_next_read);  // the race ran
  }
  REQUIRE(flush(store, *storage).is_ok());
  CHECK(storage->rows() <= 3);
  CHECK_FALSE(storage->during_next_read);
}

TEST_CASE("a full table with few rows makes room in another stripe", "[core][embedding]") {
  // 5 rows over 64 stripes: most new ids land in a stripe with none to drop.
  shard_store store(full_options(5, 0, nullptr));
  for (std::uint64_t id = 0; id < 200; ++id) look_up(store, 0, id);
  CHECK(store.stats().rows_held == 5);
  CHECK(store.stats().table_evictions == 195);
}

TEST_CASE("restoring counts stored rows a tiered shard leaves in storage against the limit", "[core][embedding]") {
  auto storage = std::make_shared<memory_rows>(kDim);
  shard_store store(full_options(10, 4, storage));
  // What a tiered shard's restart does: 10 stored rows, the first 4 put in RAM, the rest counted.
  const std::vector<float> rows(10 * kDim, 0.5f);
  const std::vector<std::uint32_t> tables(10, 0);
  std::vector<std::uint64_t> ids;
  for (std::uint64_t id = 0; id < 10; ++id) ids.push_back(id);
  REQUIRE(storage->write(tables.data(), ids.data(), rows.data(), 10).is_ok());
  for (std::uint64_t id = 0; id < 4; ++id) REQUIRE(store.put(0, id, rows.data()).is_ok());
  for (int k = 0; k < 6; ++k) REQUIRE(store.count_stored(0).is_ok());
  CHECK(store.stats().rows_held == 10);
  look_up(store, 0, 100);  // a new id in a full table: in, and one cold row goes at the trim
  CHECK(store.stats().rows_held == 11);
  CHECK(trim(store) == 1);
  CHECK(store.stats().rows_held == 10);
  CHECK(store.stats().table_evictions == 1);
  CHECK(store.existing_table(0)->find(0) != nullptr);  // the rows in RAM stayed
  REQUIRE(flush(store, *storage).is_ok());
  CHECK(storage->rows() == 10);
  CHECK_FALSE(store.count_stored(5000).is_ok());  // beyond max_tables
}

TEST_CASE("a full table's evictions race lookups, pushes and flushes without losing count", "[core][embedding]") {
  auto storage = std::make_shared<memory_rows>(kDim);
  shard_store store(full_options(300, 0, nullptr));
  std::atomic<bool> done{false};
  std::atomic<int> errors{0};
  std::thread persister([&] {
    while (!done) {
      if (!flush(store, *storage).is_ok()) ++errors;
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> workers;
  for (int w = 0; w < 2; ++w)
    workers.emplace_back([&, w] {
      std::uint64_t id = static_cast<std::uint64_t>(w) << 32;
      for (int b = 0; b < 300; ++b) {
        std::vector<std::uint32_t> tables(32, 0);
        std::vector<std::uint64_t> ids;
        for (int k = 0; k < 32; ++k) ids.push_back(k % 4 == 0 ? static_cast<std::uint64_t>(k) : id++);
        std::vector<float> values(ids.size() * kDim), grads(ids.size() * kDim, 0.01f);
        if (!store.lookup(tables.data(), ids.data(), ids.size(), true, values.data()).is_ok()) ++errors;
        if (!store.push(tables.data(), ids.data(), ids.size(), grads.data()).is_ok()) ++errors;
      }
    });
  for (auto& t : workers) t.join();
  done = true;
  persister.join();
  REQUIRE(flush(store, *storage).is_ok());
  CHECK(errors == 0);
  const auto s = store.stats();
  CHECK(s.rows_held == 300);
  CHECK(s.rows == 300);
  CHECK(storage->rows() == 300);
  std::uint64_t in_storage_not_ram = 0;
  REQUIRE(storage
              ->scan([&](std::uint32_t, std::uint64_t id, const float*) {
                if (store.existing_table(0)->find(id) == nullptr) ++in_storage_not_ram;
              })
              .is_ok());
  CHECK(in_storage_not_ram == 0);
}

TEST_CASE("trimming falls back on rows in RAM when storage holds none out of it", "[core][embedding]") {
  auto storage = std::make_shared<memory_rows>(kDim);
  shard_store store(full_options(5, 1000, storage));  // tiered, but every row fits in RAM
  for (std::uint64_t id = 0; id < 100; ++id) look_up(store, 0, id);
  CHECK(store.stats().rows_held == 100);
  CHECK(trim(store) == 95);
  CHECK(store.stats().rows_held == 5);
  CHECK(store.stats().rows == 5);
  REQUIRE(flush(store, *storage).is_ok());
  CHECK(storage->rows() == 5);
}
