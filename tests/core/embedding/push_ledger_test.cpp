// The shard's record of applied pushes: a resend is recognized, in any order within the window,
// per trainer; refused pushes can be sent again; trainers gone for good are forgotten.
#include <catch2/catch.hpp>

#include "ss/core/embedding/push_ledger.hpp"

using ss::embedding::push_ledger;

TEST_CASE("push_ledger: each number is applied once, resends are recognized") {
  push_ledger ledger;
  CHECK(ledger.record(7, 1));
  CHECK(ledger.record(7, 2));
  CHECK_FALSE(ledger.record(7, 1));
  CHECK_FALSE(ledger.record(7, 2));
  // Out of order within the window: a later number first, the earlier one still applies once.
  CHECK(ledger.record(7, 10));
  CHECK(ledger.record(7, 5));
  CHECK_FALSE(ledger.record(7, 5));
  CHECK(ledger.record(7, 9));
  CHECK_FALSE(ledger.record(7, 10));
}

TEST_CASE("push_ledger: trainers are apart, and unnumbered pushes always apply") {
  push_ledger ledger;
  CHECK(ledger.record(1, 3));
  CHECK(ledger.record(2, 3));
  CHECK_FALSE(ledger.record(1, 3));
  CHECK(ledger.record(1, 0));
  CHECK(ledger.record(1, 0));
  CHECK(ledger.trainers() == 2);
}

TEST_CASE("push_ledger: numbers older than the window are not applied, and the window slides") {
  push_ledger ledger;
  const auto w = push_ledger::window;
  CHECK(ledger.record(1, 100));
  CHECK(ledger.record(1, 100 + w - 1));
  CHECK_FALSE(ledger.record(1, 100));   // recorded, and still inside the window
  CHECK(ledger.record(1, 100 + w));     // slides past 100
  CHECK_FALSE(ledger.record(1, 100));   // now older than the window
  CHECK(ledger.record(1, 101 + w / 2)); // never seen, inside the window
  // The bits of numbers that left the window are cleared when it slides over them again.
  CHECK(ledger.record(1, 100 + 3 * w));
  CHECK(ledger.record(1, 100 + 3 * w - 1));
  CHECK(ledger.record(1, 100 + 2 * w + 1));
  CHECK_FALSE(ledger.record(1, 100 + 2 * w));  // exactly one window below the high: too old
}

TEST_CASE("push_ledger: a push taken back may come again") {
  push_ledger ledger;
  CHECK(ledger.record(4, 8));
  ledger.forget(4, 8);
  CHECK(ledger.record(4, 8));
  CHECK_FALSE(ledger.record(4, 8));
  ledger.forget(9, 1);  // unknown trainer: nothing happens
  CHECK(ledger.trainers() == 1);
}

TEST_CASE("push_ledger: trainers neither kept nor heard from since the last prune are forgotten") {
  push_ledger ledger;
  CHECK(ledger.record(1, 1));
  CHECK(ledger.record(2, 1));
  ledger.prune({1});  // 2 was active: kept once more
  CHECK(ledger.trainers() == 2);
  ledger.prune({1});  // 2 silent since: gone
  CHECK(ledger.trainers() == 1);
  CHECK(ledger.record(2, 1));  // a forgotten trainer starts afresh
  CHECK_FALSE(ledger.record(1, 1));
}
