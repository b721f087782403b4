// Dirty tracking (dirty_marks): a mark counts once until taken, and moves with its row.
#include <catch2/catch.hpp>

#include <vector>

#include "ss/core/embedding/dirty_marks.hpp"

using namespace ss::embedding;

TEST_CASE("dirty marks: marking twice counts once, unmarking says whether there was a mark", "[core][embedding]") {
  dirty_marks d;
  d.assign(16);
  std::size_t dirty = 0;
  for (const std::size_t i : {3, 5, 3, 7, 5, 3}) dirty += d.mark(i) ? 1 : 0;
  CHECK(dirty == 3);
  CHECK(d.marked(3));
  CHECK_FALSE(d.marked(4));
  CHECK(d.unmark(5));
  CHECK_FALSE(d.unmark(5));
  CHECK_FALSE(d.unmark(4));
  CHECK(d.mark(5));  // changed again after it was taken
}

TEST_CASE("dirty marks: follow the index when rows shift and when it grows", "[core][embedding]") {
  dirty_marks d;
  d.assign(4);
  d.mark(1);
  d.mark(3);
  d.move(3, 2);  // the row of slot 3 shifted back into slot 2
  d.vacate(3);
  CHECK(d.marked(1));
  CHECK(d.marked(2));
  CHECK_FALSE(d.marked(3));
  d.follow({row_index::moved_nowhere, 6, 0, row_index::moved_nowhere});
  CHECK(d.marked(6));
  CHECK(d.marked(0));
  for (const std::size_t i : {1, 2, 3, 4, 5, 7}) CHECK_FALSE(d.marked(i));
}

TEST_CASE("dirty marks: the publisher's mark is set with storage's and cleared on its own", "[core][embedding]") {
  dirty_marks d;
  d.assign(8);
  d.mark(2);
  CHECK(d.marked_for_publisher(2));
  CHECK(d.unmark(2));  // storage took it: the publisher has not
  CHECK_FALSE(d.marked(2));
  CHECK(d.marked_for_publisher(2));
  CHECK(d.unmark_for_publisher(2));
  CHECK_FALSE(d.unmark_for_publisher(2));
  CHECK(d.mark(2));  // changed again: marked for both, one more dirty row
  CHECK_FALSE(d.mark(2));
  CHECK(d.unmark_for_publisher(2));
  CHECK(d.marked(2));  // the publisher's take leaves storage's mark
  d.move(2, 5);
  CHECK(d.marked(5));
  CHECK_FALSE(d.marked_for_publisher(5));
}
