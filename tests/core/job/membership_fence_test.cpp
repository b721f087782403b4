// Which trainers' messages belong to a membership that is over.
#include <catch2/catch.hpp>

#include "ss/core/job/membership_fence.hpp"

using ss::job::membership_fence;

TEST_CASE("membership_fence: older memberships of a live trainer are fenced, its own and newer pass") {
  membership_fence fence;
  fence.follow({11, 22}, {3, 1}, {});
  CHECK(fence.membership_of(11) == 3);
  CHECK(fence.fenced(11, 2));
  CHECK(fence.fenced(11, 1));
  CHECK_FALSE(fence.fenced(11, 3));
  CHECK_FALSE(fence.fenced(11, 4));  // registered again after this view: the shard's view lags
  CHECK_FALSE(fence.fenced(22, 1));
}

TEST_CASE("membership_fence: a dropped trainer is fenced until it is live again") {
  membership_fence fence;
  fence.follow({11}, {1}, {22});
  CHECK(fence.fenced(22, 1));
  CHECK(fence.fenced(22, 5));
  CHECK(fence.membership_of(22) == 0);
  fence.follow({11, 22}, {1, 2}, {});
  CHECK(fence.fenced(22, 1));
  CHECK_FALSE(fence.fenced(22, 2));
}

TEST_CASE("membership_fence: unknown trainers and unstamped messages pass") {
  membership_fence fence;
  fence.follow({11}, {2}, {22});
  CHECK_FALSE(fence.fenced(33, 1));  // joined after the view
  CHECK_FALSE(fence.fenced(11, 0));
  CHECK_FALSE(fence.fenced(0, 1));
  CHECK_FALSE(fence.fenced(22, 0));
  // A view without memberships (an older coordinator) fences nothing of its live trainers.
  fence.follow({11}, {}, {});
  CHECK_FALSE(fence.fenced(11, 1));
}
