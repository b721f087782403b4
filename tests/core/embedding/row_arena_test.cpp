// The memory of a stripe's rows (row_arena): chunks that double up to a bound, rows that never
// move, and released rows reused first.
#include <catch2/catch.hpp>

#include <set>
#include <vector>

#include "ss/core/embedding/row_arena.hpp"

using namespace ss::embedding;

TEST_CASE("row arena: chunks double from 16 rows up to 4096 and rows never overlap", "[core][embedding]") {
  row_arena arena(5);
  std::vector<float*> rows;
  rows.push_back(arena.allocate());
  CHECK(arena.allocated_floats() == 16 * 5);
  for (int k = 1; k < 16; ++k) rows.push_back(arena.allocate());
  CHECK(arena.allocated_floats() == 16 * 5);  // the first chunk is full, no second yet
  rows.push_back(arena.allocate());
  CHECK(arena.allocated_floats() == (16 + 32) * 5);
  // 16 + 32 + ... + 2048 = 4080 rows, then chunks of 4096.
  while (rows.size() < 4080) rows.push_back(arena.allocate());
  CHECK(arena.allocated_floats() == 4080 * 5);
  rows.push_back(arena.allocate());
  CHECK(arena.allocated_floats() == (4080 + 4096) * 5);
  while (rows.size() < 4080 + 4096 + 1) rows.push_back(arena.allocate());
  CHECK(arena.allocated_floats() == (4080 + 4096 + 4096) * 5);
  // Each row is its own 5 floats: writing one leaves the others alone.
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (int f = 0; f < 5; ++f) rows[r][f] = static_cast<float>(r * 5 + f);
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (int f = 0; f < 5; ++f) REQUIRE(rows[r][f] == static_cast<float>(r * 5 + f));
}

TEST_CASE("row arena: a released row is the next one handed out", "[core][embedding]") {
  row_arena arena(3);
  float* a = arena.allocate();
  float* b = arena.allocate();
  float* c = arena.allocate();
  arena.release(b);
  arena.release(a);
  CHECK(arena.free_rows() == 2);
  CHECK(arena.allocate() == a);  // last released, first reused
  CHECK(arena.allocate() == b);
  CHECK(arena.free_rows() == 0);
  float* d = arena.allocate();
  CHECK(d == c + 3);  // then the chunk goes on
  CHECK(arena.allocated_floats() == 16 * 3);
}
