// The stripe index (row_index): probing, backward-shift erase, growth, and the columns that
// follow its rows (slot_column).
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <vector>

#include "ss/core/embedding/row_index.hpp"

using namespace ss::embedding;

namespace {

// An index with a column that records each row's key, so that a test can check the column moved
// with the rows; rows point into `memory`, one float per id.
struct indexed {
  row_index index;
  slot_column<std::uint64_t> keys;
  std::vector<float> memory = std::vector<float>(4096);
  indexed() { keys.assign(index.size()); }

  void add(std::uint64_t id) {
    const std::size_t i = index.probe(id);
    REQUIRE_FALSE(index.occupied(i));
    const bool full = index.place(i, id, &memory[id % memory.size()]);
    keys[i] = id;
    if (full) keys.follow(index.grow());
  }
  void erase(std::uint64_t id) {
    const std::size_t i = index.probe(id);
    REQUIRE(index.occupied(i));
    const std::size_t hole = index.erase(i, [&](std::size_t from, std::size_t to) { keys.move(from, to); });
    keys.vacate(hole);
  }
  // Every row is found at its slot, and the column holds its key there.
  void check(const std::vector<std::uint64_t>& ids) {
    for (const std::uint64_t id : ids) {
      const std::size_t i = index.probe(id);
      REQUIRE(index.occupied(i));
      CHECK(index.key(i) == id);
      CHECK(index.row(i) == &memory[id % memory.size()]);
      CHECK(keys[i] == id);
    }
    std::size_t occupied = 0;
    for (std::size_t i = 0; i < index.size(); ++i) {
      if (index.occupied(i)) ++occupied;
      else CHECK(keys[i] == 0);
    }
    CHECK(occupied == index.used());
    CHECK(occupied == ids.size());
  }
};

}  // namespace

TEST_CASE("row index: grows past a 0.7 load factor and finds every row after", "[core][embedding]") {
  indexed t;
  CHECK(t.index.size() == 16);
  std::vector<std::uint64_t> ids;
  for (std::uint64_t id = 1; id <= 11; ++id) {
    t.add(id);
    ids.push_back(id);
  }
  CHECK(t.index.size() == 16);  // 11 of 16 is 0.69
  t.add(12);                    // 12 of 16 is 0.75
  ids.push_back(12);
  CHECK(t.index.size() == 32);
  for (std::uint64_t id = 13; id <= 1000; ++id) {
    t.add(id);
    ids.push_back(id);
  }
  CHECK(t.index.size() == 2048);  // 1000 rows: 0.49 of 2048, 0.98 of 1024
  t.check(ids);
  CHECK(t.index.probe(5000) < t.index.size());
  CHECK_FALSE(t.index.occupied(t.index.probe(5000)));
}

TEST_CASE("row index: erasing keeps every other row reachable and the columns in step", "[core][embedding]") {
  indexed t;
  std::vector<std::uint64_t> ids;
  for (std::uint64_t id = 1; id <= 300; ++id) t.add(id);
  // Erase every third id: runs of linear probing get holes that backward shifts must close.
  for (std::uint64_t id = 1; id <= 300; ++id) {
    if (id % 3 == 0) t.erase(id);
    else ids.push_back(id);
  }
  t.check(ids);
  for (std::uint64_t id = 3; id <= 300; id += 3) CHECK_FALSE(t.index.occupied(t.index.probe(id)));
  // And back in: each takes a free slot again.
  for (std::uint64_t id = 3; id <= 300; id += 3) {
    t.add(id);
    ids.push_back(id);
  }
  t.check(ids);
}

TEST_CASE("row index: a full run wrapping round the end of the slots erases correctly", "[core][embedding]") {
  // Ids whose home slot (of 16) is 15: their run wraps to slots 0, 1, ...
  indexed t;
  std::vector<std::uint64_t> wrapping;
  for (std::uint64_t id = 1; wrapping.size() < 4; ++id)
    if ((ss::mix64(id) & 15) == 15) wrapping.push_back(id);
  for (const std::uint64_t id : wrapping) t.add(id);
  CHECK(t.index.size() == 16);
  CHECK(t.index.key(15) == wrapping[0]);
  CHECK(t.index.key(0) == wrapping[1]);
  CHECK(t.index.key(2) == wrapping[3]);
  t.erase(wrapping[0]);  // the three others shift back by one, across the end
  CHECK(t.index.key(15) == wrapping[1]);
  CHECK(t.index.key(1) == wrapping[3]);
  CHECK_FALSE(t.index.occupied(2));
  t.check({wrapping[1], wrapping[2], wrapping[3]});
}

TEST_CASE("slot column: an unkept column stays empty when the index grows", "[core][embedding]") {
  slot_column<std::uint8_t> unkept;
  CHECK_FALSE(unkept.kept());
  unkept.follow({0, row_index::moved_nowhere, 1});
  CHECK_FALSE(unkept.kept());
  slot_column<std::uint8_t> kept;
  kept.assign(4);
  kept[0] = 7;
  kept[2] = 9;
  kept.follow({5, row_index::moved_nowhere, 1, row_index::moved_nowhere});
  CHECK(kept[5] == 7);
  CHECK(kept[1] == 9);
  CHECK(kept[0] == 0);
  CHECK(kept[2] == 0);
}
