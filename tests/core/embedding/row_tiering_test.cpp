// Tiering's parts: the budget (row_budget), the flush generation each row was taken by
// (flush_marks) and the keys a stripe evicted last (eviction_memory).
#include <catch2/catch.hpp>

#include <cstdint>

#include "ss/core/embedding/row_tiering.hpp"

using namespace ss::embedding;

TEST_CASE("row budget: full at its rows, under pressure past a sixteenth more, the peak kept", "[core][embedding]") {
  row_budget b;
  b.max_rows = 160;
  for (int k = 0; k < 159; ++k) b.came_in();
  CHECK_FALSE(b.full());
  b.came_in();
  CHECK(b.full());
  for (int k = 0; k < 10; ++k) b.came_in();
  CHECK(b.resident.load() == 170);
  CHECK_FALSE(b.under_pressure());  // 170 = 160 + 160 / 16
  b.came_in();
  CHECK(b.under_pressure());
  b.resident.fetch_sub(50);
  CHECK(b.peak_resident.load() == 171);
  CHECK_FALSE(b.full());
  row_budget unlimited;
  unlimited.max_rows = row_budget::unlimited;
  unlimited.resident = 1u << 30;
  CHECK_FALSE(unlimited.under_pressure());
}

TEST_CASE("flush marks: a row may go once the flush that took it is stored", "[core][embedding]") {
  flush_marks f;
  CHECK_FALSE(f.kept());
  f.assign(8);
  CHECK(f.kept());
  CHECK(f.stored(3, 0));  // never taken: a row read back from storage
  f.taken_by(3, 5);
  CHECK_FALSE(f.stored(3, 4));
  CHECK(f.stored(3, 5));
  CHECK(f.stored(3, 6));
  f.move(3, 2);
  f.vacate(3);
  CHECK(f.taken(2) == 5);
  CHECK(f.taken(3) == 0);
  f.follow({row_index::moved_nowhere, row_index::moved_nowhere, 9, row_index::moved_nowhere, 0, 0, 0, 0});
  CHECK(f.taken(9) == 5);
}

TEST_CASE("eviction memory: a key evicted since a miss is seen, and a miss older than the memory rereads",
          "[core][embedding]") {
  eviction_memory m;
  const std::uint64_t then = m.count();
  CHECK_FALSE(m.evicted_since(42, then));
  m.remember(7);
  m.remember(42);
  CHECK(m.count() == 2);
  CHECK(m.evicted_since(42, then));
  CHECK(m.evicted_since(7, then));
  CHECK_FALSE(m.evicted_since(7, 1));  // 7 went before the miss noted 1
  CHECK_FALSE(m.evicted_since(8, then));
  // 64 more evictions: still within the memory for a miss noted after 42's.
  for (std::uint64_t k = 0; k < 64; ++k) m.remember(1000 + k);
  CHECK(m.count() == 66);
  CHECK_FALSE(m.evicted_since(42, 2));
  CHECK(m.evicted_since(1063, 2));
  // 65 evictions since: more than remembered, so any key may have gone.
  CHECK(m.evicted_since(5, 1));
}
