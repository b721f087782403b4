#include <catch2/catch.hpp>

#include "ss/core/job/member_name.hpp"

using ss::job::default_member_name;

TEST_CASE("member name: role, host and the incarnation's high half", "[core][job]") {
  CHECK(default_member_name("trainer", "node-7", 0x7f3a0001deadbeefULL) == "trainer-node-7-7f3a0001");
  CHECK(default_member_name("shard", "", 0) == "shard-unknown-host-00000000");
  // Two processes on one host differ by incarnation.
  CHECK(default_member_name("trainer", "h", 1ULL << 32) != default_member_name("trainer", "h", 2ULL << 32));
}

TEST_CASE("member name: a host named after the role is not prefixed again", "[core][job]") {
  // compose's hostname: trainer-0; a StatefulSet pod: trainer-0.
  CHECK(default_member_name("trainer", "trainer-0", 0xabcdef0100000000ULL) == "trainer-0-abcdef01");
  CHECK(default_member_name("trainer", "trainer", 0) == "trainer-00000000");
  // Only the whole word: "trainers-pool" and "shadowsync-trainer-1" keep the prefix.
  CHECK(default_member_name("trainer", "trainers-pool", 0) == "trainer-trainers-pool-00000000");
  CHECK(default_member_name("trainer", "shadowsync-trainer-1", 0) == "trainer-shadowsync-trainer-1-00000000");
}
