// connection_limit: the accounting shared by the ZAP thread (admit) and the poll thread
// (accepted/closed), without sockets.
#include <catch2/catch.hpp>

#include "ss/transport/connection_limit.hpp"

using ss::transport::connection_limit;

TEST_CASE("connection_limit admits while at most max connections are open", "[transport]") {
  connection_limit limit(2);
  limit.accepted(10);
  CHECK(limit.admit());  // the one asking is counted: 1 of 2
  limit.accepted(11);
  CHECK(limit.admit());  // 2 of 2
  limit.accepted(12);
  CHECK_FALSE(limit.admit());  // 3 > 2
  CHECK(limit.refused() == 1);
  limit.closed(12);  // libzmq closes the refused one
  CHECK(limit.open() == 2);
  limit.closed(10);
  limit.accepted(10);  // descriptors are reused
  CHECK(limit.admit());
  CHECK(limit.open() == 2);
}

TEST_CASE("connection_limit ignores closes of connections it never saw accepted", "[transport]") {
  connection_limit limit(1);
  limit.closed(7);
  CHECK(limit.open() == 0);
  limit.accepted(7);
  limit.closed(7);
  limit.closed(7);
  CHECK(limit.open() == 0);
  limit.accepted(8);
  CHECK(limit.admit());
}

TEST_CASE("connection_limit 0 never refuses but still counts", "[transport]") {
  connection_limit limit(0);
  for (int fd = 0; fd < 100; ++fd) limit.accepted(fd);
  CHECK(limit.admit());
  CHECK(limit.open() == 100);
  CHECK(limit.refused() == 0);
}
