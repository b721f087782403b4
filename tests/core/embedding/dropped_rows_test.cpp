// Rows given up for good (dropped_rows): hidden from storage's reads until their deletion is
// stored, handed to one flush, forgotten after it, and revived by a new row.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ss/core/embedding/dropped_rows.hpp"

using namespace ss::embedding;

TEST_CASE("dropped rows: hidden until the flush that took their deletion is stored", "[core][embedding]") {
  dropped_rows d;
  CHECK(d.empty());
  CHECK(d.drop(10));
  CHECK(d.drop(11));
  CHECK_FALSE(d.drop(10));  // waiting already
  CHECK(d.hides(10, 0));
  CHECK(d.hides(10, 100));  // untaken: hidden whatever is stored
  CHECK_FALSE(d.hides(12, 0));
  std::vector<std::uint64_t> erased;
  CHECK(d.take(3, 2, erased) == 2);  // flush 3 takes both; flush 2 is the newest stored
  std::sort(erased.begin(), erased.end());
  CHECK(erased == std::vector<std::uint64_t>{10, 11});
  CHECK(d.hides(10, 2));
  CHECK_FALSE(d.hides(10, 3));  // flush 3 stored: storage has no copy any more
  // Dropped again while its deletion is in flight: waits for the next take.
  CHECK(d.drop(11));
  erased.clear();
  CHECK(d.take(4, 3, erased) == 1);  // 11 again; 10's deletion stored: forgotten
  CHECK(erased == std::vector<std::uint64_t>{11});
  CHECK(d.size() == 1);
  erased.clear();
  CHECK(d.take(5, 4, erased) == 0);
  CHECK(d.empty());
}

TEST_CASE("dropped rows: a new row for a dropped id cancels its deletion", "[core][embedding]") {
  dropped_rows d;
  CHECK_FALSE(d.revive(1));
  d.drop(1);
  d.drop(2);
  CHECK(d.revive(1));  // was untaken: one untaken deletion fewer
  CHECK_FALSE(d.hides(1, 0));
  std::vector<std::uint64_t> erased;
  d.take(1, 0, erased);
  CHECK_FALSE(d.revive(2));  // taken by flush 1 already: nothing untaken to cancel
  CHECK(d.empty());
}
