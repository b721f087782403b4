// Row TTL (--row-ttl): parsing, the touch slot each row carries, and the sweep that deletes rows
// not touched for longer than the TTL from RAM and storage, with and without a memory budget.
#include <catch2/catch.hpp>

#include <vector>

#include "ss/core/embedding/memory_rows.hpp"
#include "ss/core/embedding/row_ttl.hpp"
#include "ss/core/embedding/shard_store.hpp"
#include "store_helpers.hpp"

using namespace ss::embedding;
using namespace ss::embedding::testing;

namespace {

shard_store_options ttl_options(std::uint32_t ttl_examples, std::uint64_t budget_rows, std::shared_ptr<durable_rows> cold) {
  shard_store_options o = store_options(budget_rows, std::move(cold));
  o.persisted = true;
  o.ttl.ticks = ttl_examples;
  o.ttl.clock = ttl_clock::examples;
  return o;
}

// A training step over `ids` of table 0: the lookup (which advances the examples clock by
// `examples`, as the shard does for a training lookup) and the push.
void train(shard_store& store, const std::vector<std::uint64_t>& ids, std::uint32_t examples) {
  store.advance_clock(examples);
  const std::vector<std::uint32_t> tables(ids.size(), 0);
  std::vector<float> values(ids.size() * kDim), grads(ids.size() * kDim, 1.0f);
  REQUIRE(store.lookup(tables.data(), ids.data(), ids.size(), true, values.data()).is_ok());
  REQUIRE(store.push(tables.data(), ids.data(), ids.size(), grads.data()).is_ok());
}

std::vector<float> look_up(shard_store& store, std::uint64_t id, bool create = false) {
  const std::uint32_t t = 0;
  std::vector<float> values(kDim);
  REQUIRE(store.lookup(&t, &id, 1, create, values.data()).is_ok());
  return values;
}

std::vector<float> initial_values(const shard_store& store, std::uint64_t id) {
  return ss::embedding::testing::initial_values(store, 0, id);
}

std::vector<std::uint64_t> range(std::uint64_t from, std::uint64_t to) {
  std::vector<std::uint64_t> ids;
  for (std::uint64_t id = from; id < to; ++id) ids.push_back(id);
  return ids;
}

}  // namespace

TEST_CASE("row ttl: parsed with its unit, refused without one or past 2^31 ticks", "[core][embedding]") {
  CHECK_FALSE(parse_row_ttl("0")->enabled());
  CHECK_FALSE(parse_row_ttl("")->enabled());
  CHECK(parse_row_ttl("2000000ex")->ticks == 2000000);
  CHECK(parse_row_ttl("2000000ex")->clock == ttl_clock::examples);
  CHECK(parse_row_ttl("500examples")->ticks == 500);
  CHECK(parse_row_ttl("90s")->ticks == 90);
  CHECK(parse_row_ttl("90s")->clock == ttl_clock::seconds);
  CHECK(parse_row_ttl("30m")->ticks == 1800);
  CHECK(parse_row_ttl("12h")->ticks == 43200);
  CHECK(parse_row_ttl("7d")->ticks == 604800);
  CHECK(describe(*parse_row_ttl("7d")) == "604800 s");
  CHECK(describe(*parse_row_ttl("5ex")) == "5 examples");
  CHECK(describe(row_ttl{}) == "off");
  for (const char* bad : {"100", "ex", "-5s", "1.5h", "10 s", "10y", "3000000000ex", "25000d", "99999999999999999999s"}) {
    INFO(bad);
    auto parsed = parse_row_ttl(bad);
    REQUIRE_FALSE(parsed.is_ok());
    CHECK(parsed.error().code() == ss::errc::invalid_argument);
    CHECK(parsed.error().message().find("--row-ttl") != std::string::npos);
  }
  CHECK(parse_row_ttl("2147483647ex")->ticks == max_ttl_ticks);
}

TEST_CASE("row ttl: ages wrap modulo 2^32", "[core][embedding]") {
  CHECK_FALSE(expired(10, 20, 10));
  CHECK(expired(10, 21, 10));
  CHECK_FALSE(expired(0xfffffff0u, 5, 100));  // the clock wrapped: 21 ticks old
  CHECK(expired(0xfffffff0u, 200, 100));
  float slot = 0;
  set_touch(&slot, 0xdeadbeefu);
  CHECK(touch_of(&slot) == 0xdeadbeefu);
}

TEST_CASE("row ttl: rows untouched for longer than the ttl are deleted from RAM and storage", "[core][embedding]") {
  auto storage = std::make_shared<memory_rows>(kDim + 1);  // values and the touch slot (sgd keeps no state)
  shard_store store(ttl_options(1000, 0, nullptr));
  REQUIRE(store.row_floats() == kDim + 1);
  train(store, range(0, 100), 128);    // rows 0..99 touched at 128
  train(store, range(100, 200), 600);  // rows 100..199 at 728
  REQUIRE(flush(store, *storage).is_ok());
  REQUIRE(storage->rows() == 200);
  const std::vector<float> trained_150 = look_up(store, 150);

  store.advance_clock(500);  // now 1228: rows 0..99 are 1100 old, 100..199 are 500 old
  auto swept = store.sweep_expired(1 << 20);
  REQUIRE(swept.is_ok());
  CHECK(*swept == 100);
  auto s = store.stats();
  CHECK(s.rows_expired == 100);
  CHECK(s.rows == 100);
  CHECK(s.rows_held == 100);
  CHECK(s.ttl_clock_now == 1228);
  REQUIRE(flush(store, *storage).is_ok());
  CHECK(storage->rows() == 100);  // deleted from storage at the flush
  // An expired id starts over from its initial values; a live one kept its training.
  CHECK(look_up(store, 5) == initial_values(store, 5));
  CHECK(look_up(store, 150) == trained_150);
  CHECK(look_up(store, 150) != initial_values(store, 150));

  // A sweep with no training since the last expires nothing, even with the clock moved on.
  store.advance_clock(100000);
  swept = store.sweep_expired(1 << 20);
  REQUIRE(swept.is_ok());
  CHECK(*swept == 0);
  store.set_clock(1228);
  // Touching a row keeps it alive; an evaluation's lookup (create = false) does not touch.
  train(store, {150}, 400);                       // 150 touched at 1628
  for (int k = 0; k < 3; ++k) look_up(store, 160);  // evaluation only
  store.advance_clock(200);                       // now 1828: 100..199 but 150 are 1100 old
  swept = store.sweep_expired(1 << 20);
  REQUIRE(swept.is_ok());
  CHECK(*swept == 99);
  CHECK(store.stats().rows == 1);
  CHECK(store.existing_table(0)->find(150) != nullptr);
}

TEST_CASE("row ttl under a memory budget: stored rows out of RAM expire too, and only when old", "[core][embedding]") {
  auto storage = std::make_shared<memory_rows>(kDim + 1);
  shard_store store(ttl_options(1000, 50, storage));  // RAM holds 50 rows
  train(store, range(0, 200), 100);                  // touched at 100
  REQUIRE(flush(store, *storage).is_ok());
  store.shrink_to_budget();
  train(store, range(200, 260), 800);  // touched at 900; pushes rows 0..199 out of RAM
  REQUIRE(flush(store, *storage).is_ok());
  store.shrink_to_budget();
  REQUIRE(storage->rows() == 260);
  REQUIRE(store.stats().rows <= 60);

  store.advance_clock(300);  // now 1200: rows 0..199 are 1100 old, 200..259 are 300 old
  // A small sweep reads few stored rows; sweeps go on from where the last stopped.
  std::uint64_t expired_rows = 0;
  for (int sweep = 0; sweep < 200 && expired_rows < 200; ++sweep) {
    train(store, {1000}, 0);  // training goes on between sweeps (one more row, touched now)
    auto swept = store.sweep_expired(16);
    REQUIRE(swept.is_ok());
    expired_rows += *swept;
  }
  CHECK(expired_rows == 200);
  CHECK(store.stats().rows_held == 61);
  // Until the flush deletes them, the expired rows' stored copies are not read back.
  CHECK(look_up(store, 3) == initial_values(store, 3));
  REQUIRE(flush(store, *storage).is_ok());
  CHECK(storage->rows() == 61);
  CHECK(look_up(store, 230) != initial_values(store, 230));
}

TEST_CASE("row ttl: a row's touch travels with it through storage and a restore", "[core][embedding]") {
  auto storage = std::make_shared<memory_rows>(kDim + 1);
  {
    shard_store store(ttl_options(1000, 0, nullptr));
    train(store, {1, 2}, 700);
    train(store, {2}, 600);  // 1 at 700, 2 at 1300
    REQUIRE(flush(store, *storage).is_ok());
  }
  // A restarted shard: the rows put back as stored, the clock where it was.
  shard_store store(ttl_options(1000, 0, nullptr));
  REQUIRE(storage->scan([&](std::uint32_t t, std::uint64_t id, const float* row) { REQUIRE(store.put(t, id, row).is_ok()); }).is_ok());
  store.set_clock(1800);  // 1 is 1100 old, 2 is 500
  auto swept = store.sweep_expired(0);
  REQUIRE(swept.is_ok());
  CHECK(*swept == 0);  // nothing trained since it started: the model stays as it was
  train(store, {3}, 0);
  swept = store.sweep_expired(0);
  REQUIRE(swept.is_ok());
  CHECK(*swept == 1);
  CHECK(store.existing_table(0)->find(1) == nullptr);
  CHECK(store.existing_table(0)->find(2) != nullptr);
}

TEST_CASE("row ttl: each clock takes what its TTL counts and ignores the other", "[core][embedding]") {
  shard_store by_examples(ttl_options(1000, 0, nullptr));
  by_examples.count_examples(128);
  by_examples.read_wall_clock(1795706375);
  CHECK(by_examples.clock() == 128);
  shard_store_options o = ttl_options(1000, 0, nullptr);
  o.ttl.clock = ttl_clock::seconds;
  shard_store by_seconds(o);
  by_seconds.read_wall_clock(1795706375);
  by_seconds.count_examples(128);
  CHECK(by_seconds.clock() == 1795706375u);
  shard_store_options none = ttl_options(0, 0, nullptr);
  shard_store without(none);
  without.count_examples(128);
  CHECK(without.clock() == 0);
}

TEST_CASE("row touch: the slot after values and state, read modulo 2^32, nothing without one", "[core][embedding]") {
  row_touch t{6, true};  // dim 4 + 2 floats of state
  std::vector<float> row(7, 1.5f);
  t.touch(row.data(), 4000000000u);
  CHECK(touch_of(row.data() + 6) == 4000000000u);
  for (int f = 0; f < 6; ++f) CHECK(row[f] == 1.5f);  // values and state untouched
  CHECK_FALSE(t.expired_at(row.data(), 4000000100u, 100));
  CHECK(t.expired_at(row.data(), 4000000101u, 100));
  CHECK(t.expired_at(row.data(), 5, 100));  // the clock wrapped: 294,967,301 ticks old
  CHECK_FALSE(t.expired_at(row.data(), 5, 0));  // no TTL
  row_touch none;
  std::vector<float> plain(6, 2.0f);
  none.touch(plain.data(), 7);
  CHECK_FALSE(none.expired_at(plain.data(), 1000, 1));
  for (float v : plain) CHECK(v == 2.0f);
}

TEST_CASE("row ttl: rows moved in from a shard whose examples clock ran ahead move this shard's clock up to them",
          "[core][embedding]") {
  auto cold = std::make_shared<memory_rows>(kDim + 1);
  shard_store store(ttl_options(1000, 0, cold));
  train(store, {1, 2}, 500);
  REQUIRE(store.clock() == 500);
  const std::uint32_t floats = store.row_floats();
  std::vector<float> rows(3 * floats, 0.0f);
  set_touch(&rows[1 * floats - 1], 400);    // behind the clock: it stays
  set_touch(&rows[2 * floats - 1], 90000);  // ahead: the clock follows
  set_touch(&rows[3 * floats - 1], 89500);
  store.catch_up_clock(rows.data(), 3);
  CHECK(store.clock() == 90000);
  // Put and swept: the moved rows are young on the new clock, not aged by 2^32.
  const std::vector<std::uint32_t> tables(2, 0);
  const std::vector<std::uint64_t> ids = {7, 8};
  REQUIRE(store.put(0, 7, &rows[1 * floats]).is_ok());
  REQUIRE(store.put(0, 8, &rows[2 * floats]).is_ok());
  train(store, {9}, 1);
  REQUIRE(store.sweep_expired(1 << 20).is_ok());
  std::vector<float> values(2 * kDim);
  REQUIRE(store.lookup(tables.data(), ids.data(), 2, false, values.data()).is_ok());
  CHECK(values[0] == 0.0f);  // the moved values, not initial ones
  CHECK(values[kDim] == 0.0f);
  // Across the wrap of 2^32 ticks, "ahead" is modulo 2^32.
  store.set_clock(0xfffffff0u);
  set_touch(&rows[floats - 1], 0x10u);
  store.catch_up_clock(rows.data(), 1);
  CHECK(store.clock() == 0x10u);
}
