#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "ss/core/embedding/batch_rows.hpp"
#include "ss/core/embedding/memory_rows.hpp"
#include "ss/core/embedding/shard_store.hpp"
#include "ss/core/embedding/sharding.hpp"

using namespace ss::embedding;

TEST_CASE("sharding: a fixed, balanced mapping of rows to shards", "[core][embedding]") {
  const placement four(4), again(4);
  std::vector<int> count(4, 0);
  for (std::uint64_t id = 0; id < 40000; ++id) {
    const auto s = four.shard_of(static_cast<std::uint32_t>(id % 26), id * 0x9e3779b97f4a7c15ULL);
    REQUIRE(s < 4);
    ++count[s];
    CHECK(again.shard_of(static_cast<std::uint32_t>(id % 26), id * 0x9e3779b97f4a7c15ULL) == s);  // stable
  }
  for (int c : count) CHECK(c > 9000);  // within 10% of even
  CHECK(placement(1).shard_of(0, 1) == 0);
  // Pinned: a change of the placement would put stored and checkpointed rows on the wrong shards,
  // so it must come with a new placement_scheme (which storage and snapshots record).
  CHECK(std::string(placement_scheme) == "ranges-16384-even");
  CHECK(range_of(0, 1) == 9390U);
  CHECK(range_of(3, 0x68fd1e64ULL) == 2935U);
  CHECK(placement(8).owner_of_range(2935) == 2U);
  CHECK(placement(8).shard_of(3, 0x68fd1e64ULL) == 2U);
  CHECK(placement(3).owner_of_range(0) == 2U);
  CHECK(placement(3).owner_of_range(16383) == 1U);
  // Counts outside 1..max_shards are refused by the job's checks; the table clamps them.
  CHECK(placement(0).shards() == 1);
  CHECK(placement(max_shards + 1).shards() == max_shards);
}

TEST_CASE("placement: each shard owns an even share of the ranges, within one", "[core][embedding]") {
  for (std::uint32_t shards = 1; shards <= 130; shards += (shards < 24 ? 1 : 13)) {
    const auto n = placement(shards).ranges_per_shard();
    const auto [lo, hi] = std::minmax_element(n.begin(), n.end());
    INFO(shards << " shards: " << *lo << " to " << *hi << " ranges");
    CHECK(*hi - *lo <= 1);
    CHECK(*lo == placement_ranges / shards);
  }
}

TEST_CASE("placement: a change of shard count moves only the ranges of the shards that come or go",
          "[core][embedding]") {
  std::vector<placement> by_count;
  for (std::uint32_t s = 1; s <= 20; ++s) by_count.emplace_back(s);
  for (std::uint32_t from = 1; from <= 20; ++from) {
    for (std::uint32_t to = 1; to <= 20; ++to) {
      const auto& a = by_count[from - 1];
      const auto& b = by_count[to - 1];
      std::uint32_t moved = 0;
      bool only_needed = true;
      for (std::uint32_t r = 0; r < placement_ranges; ++r) {
        const auto x = a.owner_of_range(r), y = b.owner_of_range(r);
        if (x == y) continue;
        ++moved;
        // Growing: a range moves only to a new shard. Shrinking: only a removed shard's move.
        only_needed &= from < to ? y >= from : x >= to;
      }
      INFO(from << " -> " << to << " shards: " << moved << " of " << placement_ranges << " ranges moved");
      CHECK(only_needed);
      // Exactly what the new shards hold (growing) or the removed ones held (shrinking).
      std::uint32_t least = 0;
      const auto& bigger = from < to ? b : a;
      const auto counts = bigger.ranges_per_shard();
      for (std::uint32_t s = std::min(from, to); s < std::max(from, to); ++s) least += counts[s];
      CHECK(moved == least);
    }
  }
}

TEST_CASE("placement cache: the last placement asked for is kept, another count builds its own", "[core][embedding]") {
  placement_cache cache;
  const auto three = cache.of(3);
  CHECK(three->shards() == 3);
  CHECK(cache.of(3) == three);  // page after page under one placement: built once
  const auto five = cache.of(5);
  CHECK(five->shards() == 5);
  CHECK(five->shard_of(3, 0x68fd1e64ULL) == placement(5).shard_of(3, 0x68fd1e64ULL));
  CHECK(cache.of(3) != three);  // only the last one is kept
  CHECK(cache.of(3)->owner_of_range(2935) == three->owner_of_range(2935));
}

TEST_CASE("placement: the rows a shard gains come from the shards that held them, and only those",
          "[core][embedding]") {
  using sources = std::vector<std::vector<std::uint32_t>>;
  // Growing, only the new shards gain rows, from every shard there was; shrinking, the shards that
  // stay gain the leaving shards' rows; the same count moves nothing.
  CHECK(move_sources(placement(2), placement(3)) == sources{{}, {}, {0, 1}});
  CHECK(move_sources(placement(2), placement(4)) == sources{{}, {}, {0, 1}, {0, 1}});
  CHECK(move_sources(placement(4), placement(2)) == sources{{2, 3}, {2, 3}});
  CHECK(move_sources(placement(3), placement(1)) == sources{{1, 2}});
  CHECK(move_sources(placement(5), placement(5)) == sources(5));
  // Every range whose owner changes is covered: for any pair of counts, each moving range's old
  // owner is among its new owner's sources.
  for (std::uint32_t a = 1; a <= 9; ++a) {
    for (std::uint32_t b = 1; b <= 9; ++b) {
      const placement from(a), to(b);
      const auto src = move_sources(from, to);
      for (std::uint32_t r = 0; r < placement_ranges; ++r) {
        const auto was = from.owner_of_range(r), now = to.owner_of_range(r);
        if (was == now) continue;
        const auto& s = src[now];
        REQUIRE(std::find(s.begin(), s.end(), was) != s.end());
      }
    }
  }
}

TEST_CASE("placement: rows spread over the ranges evenly", "[core][embedding]") {
  std::vector<std::uint32_t> per_range(placement_ranges, 0);
  const std::uint64_t rows = 1 << 20;
  for (std::uint64_t i = 0; i < rows; ++i) ++per_range[range_of(static_cast<std::uint32_t>(i % 26), ss::mix64(i))];
  // 64 rows a range on average: a Poisson spread, none empty, none over twice the mean.
  for (auto n : per_range) {
    CHECK(n > 0);
    CHECK(n < 128);
  }
}

TEST_CASE("shard split: one request per shard and replies land on the right rows", "[core][embedding]") {
  ss::data::example_batch b;
  b.reset(0, 2);
  for (std::uint64_t e = 0; e < 50; ++e) {
    b.begin_example(0);
    b.add_id(e);
    b.end_feature();
    b.add_id(e % 7);
    b.end_feature();
  }
  batch_rows rows;
  rows.build(b, {}, 2);
  shard_split split;
  split.build(rows, 3);
  std::size_t total = 0;
  for (std::uint32_t s = 0; s < 3; ++s) {
    const auto& p = split.of(s);
    total += p.ids.size();
    std::vector<float> reply;
    for (std::size_t i = 0; i < p.ids.size(); ++i) {
      CHECK(placement(3).shard_of(p.tables[i], p.ids[i]) == s);
      reply.push_back(static_cast<float>(p.ids[i]));
      reply.push_back(static_cast<float>(p.tables[i]));
    }
    REQUIRE(split.scatter_values(s, reply, rows));
    CHECK_FALSE(split.scatter_values(s, std::vector<float>(reply.size() + 2), rows));  // wrong size
  }
  CHECK(total == rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    CHECK(rows.values()[r * 2] == static_cast<float>(rows.keys()[r].id));
    CHECK(rows.values()[r * 2 + 1] == static_cast<float>(rows.keys()[r].table));
  }
  for (std::size_t r = 0; r < rows.size() * 2; ++r) rows.grads()[r] = static_cast<float>(r);
  const auto g = split.gather_grads(1, rows);
  const auto& p1 = split.of(1);
  REQUIRE(g.size() == p1.rows.size() * 2);
  for (std::size_t i = 0; i < p1.rows.size(); ++i) CHECK(g[i * 2] == static_cast<float>(p1.rows[i] * 2));
}

TEST_CASE("shard store: lookups create rows, peeks do not, pushes apply the optimizer", "[core][embedding]") {
  shard_store_options o;
  o.dim = 2;
  o.init_scale = 0.5f;
  o.optimizer.learning_rate = 1.0f;
  shard_store store(o);
  const std::uint32_t tables[] = {0, 5, 0};
  const std::uint64_t ids[] = {10, 10, 11};
  std::vector<float> peek(6), values(6);
  REQUIRE(store.lookup(tables, ids, 3, false, peek.data()).is_ok());
  CHECK(store.stats().rows == 0);
  REQUIRE(store.lookup(tables, ids, 3, true, values.data()).is_ok());
  CHECK(store.stats().rows == 3);
  CHECK(store.stats().tables == 2);
  CHECK(values == peek);  // a peek reads exactly the values the row is created with
  // The values equal those of a local table with the same options (any process agrees).
  table_options to;
  to.table = 5;
  to.dim = 2;
  to.init_scale = 0.5f;
  float expect[2];
  init_row(to, 10, expect);
  CHECK(values[2] == expect[0]);
  CHECK(values[3] == expect[1]);
  const float grads[] = {1, 1, 0, 0, 2, 2};
  REQUIRE(store.push(tables, ids, 3, grads).is_ok());
  std::vector<float> after(6);
  REQUIRE(store.lookup(tables, ids, 3, true, after.data()).is_ok());
  CHECK(after[0] == Approx(values[0] - 1));
  CHECK(after[2] == Approx(values[2]));
  CHECK(after[4] == Approx(values[4] - 2));
  const std::uint32_t bad_tables[] = {5000};
  auto st = store.lookup(bad_tables, ids, 1, true, values.data());
  CHECK(st.code() == ss::errc::out_of_range);
}

TEST_CASE("shard store: rows that moved to another shard leave RAM; a budget's row count is set from storage",
          "[core][embedding]") {
  shard_store_options o;
  o.dim = 4;
  shard_store ram(o);
  const std::vector<std::uint32_t> tables(3, 0);
  const std::vector<std::uint64_t> ids = {11, 12, 13};
  std::vector<float> values(3 * 4);
  REQUIRE(ram.lookup(tables.data(), ids.data(), 3, true, values.data()).is_ok());
  REQUIRE(ram.stats().rows == 3);
  ram.forget_moved(0, 12);
  ram.forget_moved(0, 99);  // never held: nothing
  ram.forget_moved(5, 11);  // a table that does not exist: nothing
  CHECK(ram.stats().rows == 2);
  CHECK(ram.stats().rows_held == 2);
  ram.set_held({7});  // without a budget RAM counts its own rows
  CHECK(ram.stats().rows_held == 2);
  // With a budget the rows in RAM go, and the count of both tiers is what storage says is left.
  o.max_rows_in_memory = 1000;
  o.cold = std::make_shared<memory_rows>(o.dim + o.optimizer.state_floats());
  shard_store tiered(o);
  REQUIRE(tiered.lookup(tables.data(), ids.data(), 3, true, values.data()).is_ok());
  tiered.forget_moved(0, 13);
  CHECK(tiered.stats().rows == 2);
  tiered.set_held({5});
  CHECK(tiered.stats().rows_held == 5);
}
