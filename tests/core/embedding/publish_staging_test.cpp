// publish_staging: what a shard hands the publisher for each delta, with the rows of a delta that
// was never written staged again, and no delta before a base.
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "ss/core/embedding/memory_rows.hpp"
#include "ss/core/embedding/publish_staging.hpp"
#include "store_helpers.hpp"

using namespace ss::embedding;
using namespace ss::embedding::testing;

namespace {

using row_key = std::pair<std::uint32_t, std::uint64_t>;

void touch(shard_store& store, std::uint32_t table, std::vector<std::uint64_t> ids) {
  std::vector<std::uint32_t> tables(ids.size(), table);
  std::vector<float> grads(ids.size() * kDim, 0.5f);
  REQUIRE(store.push(tables.data(), ids.data(), ids.size(), grads.data()).is_ok());
}

std::vector<row_key> all_pages(const publish_staging& staging, std::size_t page_rows) {
  std::vector<row_key> rows;
  for (std::size_t at = 0;;) {
    std::vector<std::uint32_t> tables;
    std::vector<std::uint64_t> ids;
    const std::size_t next = staging.page(at, page_rows, tables, ids);
    REQUIRE(tables.size() == ids.size());
    REQUIRE(ids.size() <= page_rows);
    for (std::size_t i = 0; i < ids.size(); ++i) rows.emplace_back(tables[i], ids[i]);
    if (next == at) break;
    at = next;
  }
  return rows;
}

// A model as serving holds it: values by row.
using served_rows = std::map<row_key, std::vector<float>>;

// Every row the store holds now (values only): those in RAM, and with a cold tier those in
// storage after a flush (a base's copy reads storage, as the shard's export does).
served_rows held_rows(shard_store& store, durable_rows* cold) {
  served_rows rows;
  if (cold != nullptr) {
    REQUIRE(flush(store, *cold).is_ok());
    REQUIRE(cold->scan([&](std::uint32_t t, std::uint64_t id, const float* row) {
                    rows[{t, id}] = std::vector<float>(row, row + kDim);
                  }).is_ok());
  }
  for (std::uint32_t t = 0; t < store.options().max_tables; ++t)
    if (const embedding_table* tab = store.existing_table(t))
      tab->for_each([&](std::uint64_t id, const float* row) { rows[{t, id}] = std::vector<float>(row, row + kDim); });
  return rows;
}

// Applies the staged delta to `served` as serving applies the file: rows read as the shard's page
// reads them (read_published), a row the shard no longer holds removed. Returns the tombstones.
std::size_t apply_staged(const shard_store& store, const publish_staging& staging, served_rows& served) {
  std::size_t tombstones = 0;
  for (const auto& [t, id] : all_pages(staging, 3)) {
    std::vector<float> values(kDim);
    std::uint8_t present = 9;
    REQUIRE(store.read_published(t, &id, 1, values.data(), &present).is_ok());
    REQUIRE(present <= 1);
    if (present == 1) {
      served[{t, id}] = values;
    } else {
      served.erase({t, id});
      ++tombstones;
    }
  }
  return tombstones;
}

std::vector<std::uint64_t> range(std::uint64_t from, std::uint64_t to) {
  std::vector<std::uint64_t> ids;
  for (std::uint64_t id = from; id < to; ++id) ids.push_back(id);
  return ids;
}

}  // namespace

TEST_CASE("publish staging: no delta before a base, then the rows changed since", "[core][embedding]") {
  shard_store store(store_options());
  publish_staging staging;
  touch(store, 0, {1, 2, 3});
  auto first = staging.stage(store, 1, 0);
  REQUIRE(first.is_ok());
  CHECK(*first == publish_staging::stage_result::needs_base);
  staging.start_base(store, 1);
  CHECK(staging.has_base());
  touch(store, 0, {2});
  touch(store, 1, {2, 9});
  REQUIRE(*staging.stage(store, 2, 1) == publish_staging::stage_result::staged);
  CHECK(all_pages(staging, 2) == std::vector<row_key>{{0, 2}, {1, 2}, {1, 9}});
  // A retried request for the same sequence stages nothing new.
  touch(store, 0, {5});
  REQUIRE(*staging.stage(store, 2, 1) == publish_staging::stage_result::staged);
  CHECK(staging.staged() == 3);
  // Delta 2 written: delta 3 holds only what changed since it was staged.
  REQUIRE(*staging.stage(store, 3, 2) == publish_staging::stage_result::staged);
  CHECK(all_pages(staging, 100) == std::vector<row_key>{{0, 5}});
}

TEST_CASE("publish staging: a delta never written is staged again with the next", "[core][embedding]") {
  shard_store store(store_options());
  publish_staging staging;
  staging.start_base(store, 1);
  touch(store, 0, {1, 2});
  REQUIRE(staging.stage(store, 2, 1).is_ok());
  // The publisher died before delta 2 was in place: its successor asks for 2 again or for 3
  // saying 1 was the last written. Either way rows 1 and 2 come out, once each.
  touch(store, 0, {2, 4});
  REQUIRE(staging.stage(store, 3, 1).is_ok());
  CHECK(all_pages(staging, 3) == std::vector<row_key>{{0, 1}, {0, 2}, {0, 4}});
  auto stale = staging.stage(store, 2, 1);
  REQUIRE_FALSE(stale.is_ok());
  CHECK(stale.error().code() == ss::errc::internal);
}

TEST_CASE("publish staging: a base clears every mark, so only later changes follow it", "[core][embedding]") {
  shard_store store(store_options());
  publish_staging staging;
  touch(store, 0, {1, 2, 3});
  staging.start_base(store, 4);
  REQUIRE(staging.stage(store, 5, 4).is_ok());
  CHECK(staging.staged() == 0);
  touch(store, 0, {3});
  REQUIRE(staging.stage(store, 6, 5).is_ok());
  CHECK(all_pages(staging, 10) == std::vector<row_key>{{0, 3}});
}

TEST_CASE("publish staging: a base never written makes the next delta a base", "[core][embedding]") {
  shard_store store(store_options());
  publish_staging staging;
  staging.start_base(store, 1);
  touch(store, 0, {1});
  REQUIRE(staging.stage(store, 2, 1).is_ok());
  // Base 3 cleared the marks, then its publisher died before writing it: its successor, which
  // saw 2 as the newest, must not get a delta that lacks what changed before the base.
  touch(store, 0, {7});
  staging.start_base(store, 3);
  auto next = staging.stage(store, 3, 2);
  REQUIRE(next.is_ok());
  CHECK(*next == publish_staging::stage_result::needs_base);
  staging.start_base(store, 3);
  REQUIRE(*staging.stage(store, 4, 3) == publish_staging::stage_result::staged);
}

TEST_CASE("publish staging: rows a full table drops for good go out as tombstones", "[core][embedding]") {
  auto options = store_options();
  options.max_rows_per_table = 8;  // a new row takes the place of one dropped for good
  shard_store store(options);
  publish_staging staging;
  touch(store, 0, range(0, 20));  // drops before the first base are no one's concern
  staging.start_base(store, 1);
  served_rows served = held_rows(store, nullptr);
  REQUIRE(served.size() == 8);
  touch(store, 0, range(100, 104));  // four rows of the base dropped for them
  touch(store, 1, {7});
  REQUIRE(*staging.stage(store, 2, 1) == publish_staging::stage_result::staged);
  CHECK(apply_staged(store, staging, served) == 4);
  CHECK(served == held_rows(store, nullptr));
  // A dropped id that comes back is a row again in the next delta.
  std::uint64_t back = 0;
  while (served.count({0, back}) != 0) ++back;
  touch(store, 0, {back});
  REQUIRE(*staging.stage(store, 3, 2) == publish_staging::stage_result::staged);
  apply_staged(store, staging, served);
  CHECK(served.count({0, back}) == 1);
  CHECK(served == held_rows(store, nullptr));
}

TEST_CASE("publish staging: rows that expire go out as tombstones, the rest as they stand", "[core][embedding]") {
  auto options = store_options();
  options.ttl.ticks = 1000;
  options.ttl.clock = ttl_clock::examples;
  shard_store store(options);
  publish_staging staging;
  store.advance_clock(128);
  touch(store, 0, range(0, 10));
  staging.start_base(store, 1);
  served_rows served = held_rows(store, nullptr);
  store.advance_clock(1200);  // rows 0..9 are 1200 old
  touch(store, 0, range(10, 15));
  REQUIRE(*store.sweep_expired(1 << 20) == 10);
  REQUIRE(*staging.stage(store, 2, 1) == publish_staging::stage_result::staged);
  CHECK(staging.staged() == 15);
  CHECK(apply_staged(store, staging, served) == 10);
  CHECK(served == held_rows(store, nullptr));
  CHECK(served.size() == 5);
}

TEST_CASE("publish staging: changed rows a memory budget evicted are read from storage", "[core][embedding]") {
  auto cold = std::make_shared<memory_rows>(kDim);  // sgd keeps no optimizer state
  shard_store store(store_options(4, cold));
  publish_staging staging;
  for (std::uint64_t from = 0; from < 16; from += 4) {
    touch(store, 0, range(from, from + 4));
    REQUIRE(flush(store, *cold).is_ok());
    store.shrink_to_budget();
  }
  staging.start_base(store, 1);
  served_rows served = held_rows(store, cold.get());
  REQUIRE(served.size() == 16);
  const std::uint64_t evicted_before = store.stats().evictions;
  // Every row changed, most of them then evicted (storage holds them as they are) before the
  // publisher takes them: they leave RAM marked, and the delta reads them from storage.
  for (std::uint64_t from = 0; from < 16; from += 4) {
    touch(store, 0, range(from, from + 4));
    REQUIRE(flush(store, *cold).is_ok());
    store.shrink_to_budget();
  }
  CHECK(store.stats().evictions >= evicted_before + 8);
  CHECK(store.stats().rows <= 8);
  REQUIRE(*staging.stage(store, 2, 1) == publish_staging::stage_result::staged);
  CHECK(staging.staged() == 16);
  CHECK(apply_staged(store, staging, served) == 0);
  CHECK(served == held_rows(store, cold.get()));
}

TEST_CASE("publish staging: a read for a publication names every row's state and moves nothing", "[core][embedding]") {
  auto cold = std::make_shared<memory_rows>(kDim);
  shard_store store(store_options(2, cold));
  touch(store, 0, range(0, 6));
  REQUIRE(flush(store, *cold).is_ok());
  store.shrink_to_budget();
  const auto before = store.stats();
  const std::vector<std::uint64_t> ids{0, 5, 77};  // 77 was never made
  std::vector<float> values(ids.size() * kDim, -1.0f);
  std::vector<std::uint8_t> present(ids.size(), 9);
  REQUIRE(store.read_published(0, ids.data(), ids.size(), values.data(), present.data()).is_ok());
  CHECK(present == std::vector<std::uint8_t>{1, 1, 0});
  const served_rows held = held_rows(store, cold.get());
  CHECK(std::vector<float>(values.begin(), values.begin() + kDim) == held.at({0, 0}));
  CHECK(std::vector<float>(values.begin() + kDim, values.begin() + 2 * kDim) == held.at({0, 5}));
  const auto after = store.stats();
  CHECK(after.hits == before.hits);
  CHECK(after.misses == before.misses);
  CHECK(after.rows == before.rows);
  // A table that does not exist holds no row.
  REQUIRE(store.read_published(3, ids.data(), 1, values.data(), present.data()).is_ok());
  CHECK(present[0] == 0);
}
