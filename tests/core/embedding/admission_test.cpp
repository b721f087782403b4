// Id admission (--admit-after): the sketch's counting, and a shard store that keeps one-off ids
// out of its tables, serving them their initial values and dropping their gradients, with and
// without a memory budget.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "ss/core/embedding/admission.hpp"
#include "ss/core/embedding/memory_rows.hpp"
#include "ss/core/embedding/shard_store.hpp"
#include "store_helpers.hpp"

using namespace ss::embedding;

TEST_CASE("admission filter: an id passes on its k-th sighting", "[core][embedding][admission]") {
  admission_filter f(3, 1 << 12);
  REQUIRE(f.k() == 3);
  REQUIRE(f.counters() == 4096);
  REQUIRE(f.bytes() == 4 * 4096);
  REQUIRE_FALSE(f.admitted(0, 77));
  REQUIRE_FALSE(f.see(0, 77));
  REQUIRE_FALSE(f.see(0, 77));
  REQUIRE_FALSE(f.admitted(0, 77));
  REQUIRE(f.count(0, 77) == 2);
  REQUIRE(f.see(0, 77));
  REQUIRE(f.admitted(0, 77));
  // The same id in another table is another key.
  REQUIRE(f.count(1, 77) == 0);
  REQUIRE_FALSE(f.see(1, 77));
}

TEST_CASE("admission filter: k = 1 admits everything at once", "[core][embedding][admission]") {
  admission_filter f(1, 64);
  REQUIRE(f.admitted(0, 1));
  REQUIRE(f.see(0, 2));
}

TEST_CASE("admission filter: ids seen once rarely pass by collision", "[core][embedding][admission]") {
  // 20,000 distinct ids in 65,536 cells per row: conservative update over 4 rows keeps false
  // admissions of single sightings well under 1%.
  admission_filter f(2, 1 << 16);
  int passed = 0;
  for (std::uint64_t id = 0; id < 20000; ++id) passed += f.see(3, id * 7919 + 13) ? 1 : 0;
  INFO(passed << " of 20000 one-off ids passed");
  REQUIRE(passed < 200);
  // An id seen twice passes, whatever the others did.
  REQUIRE_FALSE(f.see(3, 999999937));
  REQUIRE(f.see(3, 999999937));
}

TEST_CASE("admission filter: every `counters` sightings the counts are halved", "[core][embedding][admission]") {
  admission_filter f(8, 64);
  for (int i = 0; i < 6; ++i) f.see(0, 5);
  REQUIRE(f.count(0, 5) == 6);
  REQUIRE(f.halvings.load() == 0);
  // Sightings of other ids until 64 in all: one halving.
  for (std::uint64_t id = 100; f.halvings.load() == 0; ++id) f.see(0, id);
  REQUIRE(f.halvings.load() == 1);
  REQUIRE(f.count(0, 5) <= 3);  // 6 / 2, unless later sightings collided with it
  // Admission now needs sightings again: the old ones have decayed.
  REQUIRE_FALSE(f.admitted(0, 5));
}

namespace {

shard_store_options admitting(std::uint32_t k, std::uint64_t budget_rows = 0, std::shared_ptr<durable_rows> cold = {}) {
  shard_store_options o = ss::embedding::testing::store_options(budget_rows, std::move(cold));
  o.admit_after = k;
  o.admission_counters = 1 << 12;
  return o;
}

// One id's life under --admit-after 2: looked up once (initial values, no row), a push dropped,
// looked up again (a row with the initial values), a push applied.
void check_admission(shard_store& store) {
  const std::uint32_t table = 1;
  const std::uint64_t id = 4242;
  std::vector<float> first(4), again(4), after(4), grads(4, 1.0f);
  REQUIRE(store.lookup(&table, &id, 1, true, first.data()).is_ok());
  REQUIRE(store.stats().admission_refused == 1);
  REQUIRE(store.stats().admissions == 0);
  REQUIRE(store.push(&table, &id, 1, grads.data()).is_ok());
  REQUIRE(store.stats().gradients_dropped == 1);
  REQUIRE(store.existing_table(table)->rows() == 0);

  REQUIRE(store.lookup(&table, &id, 1, true, again.data()).is_ok());
  REQUIRE(again == first);  // the initial values, the dropped gradient applied nowhere
  REQUIRE(store.stats().admissions == 1);
  REQUIRE(store.existing_table(table)->rows() == 1);
  REQUIRE(store.push(&table, &id, 1, grads.data()).is_ok());
  REQUIRE(store.stats().gradients_dropped == 1);
  REQUIRE(store.lookup(&table, &id, 1, true, after.data()).is_ok());
  for (int k = 0; k < 4; ++k) REQUIRE(after[k] == Approx(first[k] - 0.25f));
  // Lookups that do not create (scoring) count no sighting.
  const std::uint64_t other = 777;
  std::vector<float> v(4);
  REQUIRE(store.lookup(&table, &other, 1, false, v.data()).is_ok());
  REQUIRE(store.lookup(&table, &other, 1, false, v.data()).is_ok());
  REQUIRE(store.lookup(&table, &other, 1, true, v.data()).is_ok());
  REQUIRE(store.existing_table(table)->rows() == 1);
  REQUIRE(store.stats().admit_after == 2);
  REQUIRE(store.stats().admission_bytes == 4 * 4096);
}

}  // namespace

TEST_CASE("shard store with admission: rows only for ids seen twice", "[core][embedding][admission]") {
  shard_store store(admitting(2));
  check_admission(store);
}

TEST_CASE("tiered shard store with admission: the same, over a cold tier", "[core][embedding][admission]") {
  auto cold = std::make_shared<memory_rows>(4);
  shard_store store(admitting(2, 64, cold));
  REQUIRE(store.tiered());
  check_admission(store);
}

TEST_CASE("shard store without admission: every id gets a row at once", "[core][embedding][admission]") {
  shard_store store(admitting(1));
  const std::uint32_t table = 0;
  const std::uint64_t id = 9;
  std::vector<float> v(4);
  REQUIRE(store.lookup(&table, &id, 1, true, v.data()).is_ok());
  REQUIRE(store.existing_table(table)->rows() == 1);
  REQUIRE(store.stats().admit_after == 1);
  REQUIRE(store.stats().admission_refused == 0);
}
