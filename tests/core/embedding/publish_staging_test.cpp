// publish_staging: what a shard hands the publisher for each delta, with the rows of a delta that
// was never written staged again, and no delta before a base.
#include <catch2/catch.hpp>

#include <set>
#include <utility>
#include <vector>

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
  CHECK(store.publishable());
  auto limited = store_options();
  limited.max_rows_per_table = 10;  // rows may then leave RAM for good
  CHECK_FALSE(shard_store(limited).publishable());
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
