// Eviction (clock_hand): the counting CLOCK's passes, what it skips, the epoch that stops a
// fruitless scan, and the sweeps a full table and a write-back make.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "ss/core/embedding/row_eviction.hpp"
#include "ss/core/embedding/row_index.hpp"

using namespace ss::embedding;

namespace {

// An index of `n` rows (ids 1..n) with a hand whose every row came in (one pass). Capacity for
// 4096 rows without growing keeps the slots put.
struct clocked {
  row_index index;
  clock_hand hand;
  std::vector<float> memory = std::vector<float>(4096);
  explicit clocked(std::uint64_t n) {
    hand.assign(index.size());
    for (std::uint64_t id = 1; id <= n; ++id) {
      const std::size_t i = index.probe(id);
      const bool full = index.place(i, id, &memory[id]);
      hand.came_in(i);
      if (full) hand.follow(index.grow());
    }
  }
  std::size_t slot(std::uint64_t id) const { return index.probe(id); }
  // Evicts as embedding_table does: finds a victim and removes it.
  std::uint64_t evict(std::uint32_t epoch = 0) {
    return evict_if(epoch, [](std::size_t) { return true; });
  }
  template <class MayGo>
  std::uint64_t evict_if(std::uint32_t epoch, MayGo&& may_go) {
    const std::size_t i = hand.find_victim(index, epoch, may_go);
    if (i == clock_hand::none) return 0;
    const std::uint64_t id = index.key(i);
    const std::size_t hole = index.erase(i, [&](std::size_t from, std::size_t to) { hand.move(from, to); });
    hand.vacate(hole);
    return id;
  }
};

}  // namespace

TEST_CASE("clock hand: lookups add passes up to three, a push leaves at least one", "[core][embedding]") {
  clock_hand h;
  h.assign(4);
  h.came_in(0);
  CHECK(h.chances(0) == 1);
  for (int k = 0; k < 5; ++k) h.looked_up(0);
  CHECK(h.chances(0) == clock_hand::touch_chances);
  h.pushed(0);
  CHECK(h.chances(0) == 3);  // a push takes none away
  h.pushed(1);
  CHECK(h.chances(1) == 1);
  h.warmed(2);
  CHECK(h.chances(2) == clock_hand::warmed_chances);
}

TEST_CASE("clock hand: every row goes once the hand took its passes, rows looked up go last", "[core][embedding]") {
  clocked c(40);
  // Rows 1..10 were looked up three times: they survive three more passes than the others.
  for (std::uint64_t id = 1; id <= 10; ++id)
    for (int k = 0; k < 3; ++k) c.hand.looked_up(c.slot(id));
  std::vector<std::uint64_t> order;
  for (std::uint64_t id = c.evict(); id != 0; id = c.evict()) order.push_back(id);
  REQUIRE(order.size() == 40);
  // The first 30 to go are the rows looked up once (one pass each, taken by the first turn).
  for (std::size_t k = 0; k < 30; ++k) CHECK(order[k] > 10);
  for (std::size_t k = 30; k < 40; ++k) CHECK(order[k] <= 10);
  CHECK(c.index.used() == 0);
  CHECK(c.hand.find_victim(c.index, 0, [](std::size_t) { return true; }) == clock_hand::none);
}

TEST_CASE("clock hand: rows that may not go are skipped, and a barren stripe is not scanned again in its epoch",
          "[core][embedding]") {
  clocked c(20);  // 32 slots
  std::size_t asked = 0;
  auto never = [&](std::size_t) {
    ++asked;
    return false;
  };
  // 32 slots x 4 turns = 128 steps: within one call's 256, the hand finds the stripe barren.
  CHECK(c.evict_if(7, never) == 0);
  CHECK(asked == 20 * 4);  // every row asked on each of the 4 turns (free slots are not asked)
  asked = 0;
  CHECK(c.evict_if(7, never) == 0);
  CHECK(asked == 0);  // barren at epoch 7: no scan
  // A new epoch (a flush stored) scans again; so does a row that may go coming in.
  CHECK(c.evict_if(8, never) == 0);
  CHECK(asked == 20 * 4);
  asked = 0;
  c.hand.rows_may_go();
  std::uint64_t only = 13;
  CHECK(c.evict_if(8, [&](std::size_t i) { return c.index.key(i) == only; }) == only);
  CHECK(c.index.used() == 19);
}

TEST_CASE("clock hand: a long stripe of rows that may not go costs a bounded scan per call", "[core][embedding]") {
  clocked c(1000);  // 2048 slots: 4 turns are 8192 steps
  std::size_t asked = 0;
  auto never = [&](std::size_t) {
    ++asked;
    return false;
  };
  CHECK(c.evict_if(1, never) == 0);
  CHECK(asked <= clock_hand::max_steps);
  // Not barren yet after one bounded call: 32 calls of 256 steps make the 4 turns, and the 33rd
  // finds them done without asking.
  int calls = 1;
  for (; calls < 40; ++calls) {
    const std::size_t before = asked;
    CHECK(c.evict_if(1, never) == 0);
    if (asked == before) break;  // barren: the call did not scan
  }
  CHECK(calls + 1 == 33);
}

TEST_CASE("clock hand: picking any row ignores what storage holds and finds one within five turns",
          "[core][embedding]") {
  clocked c(3);
  for (std::uint64_t id = 1; id <= 3; ++id) c.hand.warmed(c.slot(id));
  c.hand.looked_up(c.slot(2));  // warmed rows keep their 4 passes
  const std::size_t i = c.hand.pick_any(c.index);
  REQUIRE(i != clock_hand::none);
  CHECK(c.index.occupied(i));
  row_index empty;
  clock_hand h;
  h.assign(empty.size());
  CHECK(h.pick_any(empty) == clock_hand::none);
}

TEST_CASE("clock hand: a sweep stops at what it wants and takes passes away on its way", "[core][embedding]") {
  clocked c(10);
  for (std::uint64_t id = 1; id <= 5; ++id) c.hand.looked_up(c.slot(id));  // two passes
  std::vector<std::uint64_t> found;
  c.hand.sweep(c.index, 3, [&](std::size_t i) {
    found.push_back(c.index.key(i));
    return true;
  });
  // The first turn takes every row's first pass; rows 6..10 are found on the second.
  REQUIRE(found.size() == 3);
  for (const std::uint64_t id : found) CHECK(id > 5);
  // found(i) false does not count: a sweep that finds nothing it wants ends after 4 turns.
  std::size_t calls = 0;
  c.hand.sweep(c.index, 1, [&](std::size_t) {
    ++calls;
    return false;
  });
  CHECK(calls > 10);
  CHECK(calls <= 4 * 10);
}
