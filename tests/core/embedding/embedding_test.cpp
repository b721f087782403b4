#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "ss/core/embedding/batch_rows.hpp"
#include "ss/core/embedding/embedding_table.hpp"
#include "ss/core/embedding/local_embeddings.hpp"

using namespace ss::embedding;

TEST_CASE("embedding table: rows are created on first touch, deterministically", "[core][embedding]") {
  table_options o;
  o.table = 3;
  o.dim = 4;
  o.state_floats = 1;
  o.init_scale = 0.5f;
  o.seed = 9;
  embedding_table a(o), b(o);
  CHECK(a.find(42) == nullptr);
  float* r1 = a.find_or_create(42);
  REQUIRE(r1 != nullptr);
  CHECK(a.rows() == 1);
  CHECK(a.find_or_create(42) == r1);  // same row, not a new one
  CHECK(a.rows() == 1);
  // Another table with the same options creates identical values, whatever the order.
  b.find_or_create(7);
  b.find_or_create(1000);
  const float* r2 = b.find_or_create(42);
  for (int d = 0; d < 4; ++d) {
    CHECK(r1[d] == r2[d]);
    CHECK(r1[d] >= -0.5f);
    CHECK(r1[d] < 0.5f);
  }
  CHECK(r1[4] == 0.0f);  // optimizer state starts at zero
  // A different table index gives different values for the same id.
  o.table = 4;
  embedding_table c(o);
  const float* r3 = c.find_or_create(42);
  CHECK_FALSE(std::equal(r1, r1 + 4, r3));
}

TEST_CASE("embedding table: grows to many rows and pointers stay valid", "[core][embedding]") {
  table_options o;
  o.dim = 2;
  embedding_table t(o);
  std::vector<float*> ptrs;
  for (std::uint64_t id = 0; id < 100000; ++id) {
    float* r = t.find_or_create(id * 7919);
    r[0] = static_cast<float>(id);
    ptrs.push_back(r);
  }
  CHECK(t.rows() == 100000);
  for (std::uint64_t id = 0; id < 100000; id += 997) {
    CHECK(t.find(id * 7919) == ptrs[id]);
    CHECK(ptrs[id][0] == static_cast<float>(id));
  }
  std::size_t visited = 0;
  t.for_each([&](std::uint64_t, const float*) { ++visited; });
  CHECK(visited == 100000);
  CHECK(t.bytes() >= 100000 * 2 * sizeof(float));
}

TEST_CASE("embedding table: put restores a row exactly; max_rows is enforced", "[core][embedding]") {
  table_options o;
  o.dim = 2;
  o.state_floats = 1;
  o.max_rows = 2;
  embedding_table t(o);
  const float row[3] = {1.5f, -2.0f, 0.25f};
  REQUIRE(t.put(5, row));
  const float* got = t.find(5);
  REQUIRE(got != nullptr);
  CHECK(std::equal(row, row + 3, got));
  REQUIRE(t.find_or_create(6) != nullptr);
  CHECK(t.find_or_create(7) == nullptr);  // full
  CHECK_FALSE(t.put(8, row));
  CHECK(t.put(5, row));  // overwriting an existing row is fine when full
  CHECK(t.rows() == 2);
}

TEST_CASE("embedding table: erase removes a row for good, its memory reused and its id new again", "[core][embedding]") {
  table_options o;
  o.dim = 2;
  o.state_floats = 1;
  o.max_rows = 300;
  embedding_table t(o), fresh(o);
  const float row[3] = {1.5f, -2.0f, 0.25f};
  for (std::uint64_t id = 0; id < 300; ++id) REQUIRE(t.put(id * 7919, row));
  REQUIRE(t.find_or_create(1) == nullptr);  // full
  const std::size_t bytes = t.bytes();
  for (std::uint64_t id = 0; id < 300; id += 2) CHECK(t.erase(id * 7919));
  CHECK_FALSE(t.erase(0));  // gone already
  CHECK_FALSE(t.erase(12345));  // never there
  CHECK(t.rows() == 150);
  CHECK(t.held_rows() == 150);
  for (std::uint64_t id = 0; id < 300; ++id) CHECK((t.find(id * 7919) == nullptr) == (id % 2 == 0));
  // Erased ids come back with their initial values; the other rows kept theirs.
  const float* again = t.find_or_create(0);
  REQUIRE(again != nullptr);
  CHECK(std::equal(again, again + 3, fresh.find_or_create(0)));
  CHECK(std::equal(row, row + 3, t.find(7919)));
  // New rows take the erased rows' memory (of their stripe): the same ids back, the same size.
  for (std::uint64_t id = 2; id < 300; id += 2) REQUIRE(t.put(id * 7919, row));
  CHECK(t.rows() == 300);
  CHECK(t.find_or_create(2) == nullptr);
  CHECK(t.bytes() == bytes);
}

TEST_CASE("embedding table: batch lookups match single lookups and create rows once", "[core][embedding]") {
  table_options o;
  o.dim = 3;
  o.max_rows = 1500;
  embedding_table t(o);
  std::vector<std::uint64_t> ids;
  for (std::uint64_t i = 0; i < 1000; ++i) ids.push_back(i * 2654435761ULL);
  ids.push_back(ids[5]);  // a duplicate within the batch
  std::vector<float*> rows(ids.size());
  embedding_table::batch_scratch scratch;
  CHECK(t.find_or_create_batch(ids.data(), ids.size(), rows.data(), scratch) == 0);
  CHECK(t.rows() == 1000);
  CHECK(rows.back() == rows[5]);
  for (std::size_t i = 0; i < ids.size(); ++i) CHECK(t.find(ids[i]) == rows[i]);
  // find_batch never creates; absent ids give nullptr.
  std::vector<std::uint64_t> probe = {ids[0], 12345, ids[999]};
  std::vector<float*> found(3);
  t.find_batch(probe.data(), probe.size(), found.data(), scratch);
  CHECK(found[0] == rows[0]);
  CHECK(found[1] == nullptr);
  CHECK(found[2] == rows[999]);
  CHECK(t.rows() == 1000);
  // Past max_rows the batch reports how many rows it could not create.
  std::vector<std::uint64_t> more;
  for (std::uint64_t i = 0; i < 600; ++i) more.push_back(7 + i * 1000003ULL);
  std::vector<float*> more_rows(more.size());
  CHECK(t.find_or_create_batch(more.data(), more.size(), more_rows.data(), scratch) == 100);
  CHECK(t.rows() == 1500);
}

TEST_CASE("embedding table: created rows are dirty once, so storage holds every row after a flush",
          "[core][embedding]") {
  table_options o;
  o.dim = 2;
  embedding_table t(o);
  embedding_table::batch_scratch scratch;
  std::vector<std::uint64_t> ids;
  for (std::uint64_t i = 0; i < 300; ++i) ids.push_back(i * 40503ULL + 11);  // enough to grow the index
  std::vector<float*> rows(ids.size());
  REQUIRE(t.find_or_create_batch(ids.data(), ids.size(), rows.data(), scratch) == 0);
  CHECK(t.dirty_rows() == ids.size());
  std::vector<std::uint64_t> taken;
  std::vector<float> values;
  for (std::size_t s = 0; s < embedding_table::stripe_count; ++s) t.take_dirty(s, taken, values);
  std::sort(taken.begin(), taken.end());
  CHECK(taken == ids);  // each created row once (ids are ascending)
  CHECK(values.size() == ids.size() * t.row_floats());
  CHECK(t.dirty_rows() == 0);
  // Looking them up again creates nothing and marks nothing.
  REQUIRE(t.find_or_create_batch(ids.data(), ids.size(), rows.data(), scratch) == 0);
  CHECK(t.dirty_rows() == 0);
}

TEST_CASE("embedding table: concurrent first touches create each row once", "[core][embedding]") {
  table_options o;
  o.dim = 4;
  embedding_table t(o);
  std::vector<std::thread> threads;
  std::vector<std::vector<float*>> seen(4);
  for (int w = 0; w < 4; ++w) {
    threads.emplace_back([&t, &seen, w] {
      for (std::uint64_t id = 0; id < 20000; ++id) seen[w].push_back(t.find_or_create((id * 31 + w % 2) % 30000));
    });
  }
  for (auto& th : threads) th.join();
  std::set<std::uint64_t> distinct;
  for (int w = 0; w < 4; ++w)
    for (std::uint64_t id = 0; id < 20000; ++id) distinct.insert((id * 31 + w % 2) % 30000);
  CHECK(t.rows() == distinct.size());
  // Threads that asked for the same id got the same row.
  for (std::uint64_t id = 0; id < 20000; ++id) CHECK(seen[0][id] == seen[2][id]);
}

namespace {
ss::data::example_batch two_examples() {
  // 2 examples, 2 tables; example 1 has two ids in table 0 (a bag) and none in table 1.
  ss::data::example_batch b;
  b.reset(0, 2);
  b.begin_example(1.0f);
  b.add_id(10); b.end_feature();
  b.add_id(20); b.end_feature();
  b.begin_example(0.0f);
  b.add_id(10); b.add_id(11); b.end_feature();
  b.end_feature();
  return b;
}
}  // namespace

// Copies the table page by page; after each page, adds `per_page` new rows to the stripe the page
// ended in (training that goes on during an export, at its worst: that stripe's index grows
// mid-copy). Returns every id the pages brought, and those `filter` lets through (when given).
struct copy_result {
  std::uint64_t copies = 0;
  std::multiset<std::uint64_t> passed;
};
copy_result copy_while_growing(embedding_table& t, std::size_t page, std::uint64_t per_page, std::uint64_t next_id,
                               copied_rows_filter* filter) {
  copy_result out;
  std::uint64_t position = 0, pages = 0;
  do {
    REQUIRE(++pages < 100000);  // a copy that never ends fails here, not by running out of memory
    std::vector<std::uint64_t> ids;
    std::vector<float> rows;
    position = t.copy_rows(position, page, ids, rows);
    REQUIRE(rows.size() == ids.size() * t.row_floats());
    out.copies += ids.size();
    for (std::uint64_t id : ids)
      if (filter == nullptr || filter->first_time(0, id)) out.passed.insert(id);
    if (ids.empty()) continue;
    const std::size_t stripe = embedding_table::stripe_of(ids.back());
    for (std::uint64_t added = 0; added < per_page; ++next_id)
      if (embedding_table::stripe_of(next_id) == stripe) {
        t.find_or_create(next_id);
        ++added;
      }
  } while (position != 0);
  return out;
}

TEST_CASE("embedding table: a copy taken while rows are added has every earlier row exactly once",
          "[core][embedding]") {
  table_options o;
  o.dim = 2;
  const std::uint64_t before = 20000;
  auto filled = [&o, before] {
    auto t = std::make_unique<embedding_table>(o);
    for (std::uint64_t id = 1; id <= before; ++id) t->find_or_create(id);
    return t;
  };
  auto t = filled();
  copied_rows_filter filter;
  // Pages of 50 rows, 20 new rows in the page's stripe after each: its index grows mid-copy.
  const auto got = copy_while_growing(*t, 50, 20, before + 1, &filter);
  for (std::uint64_t id = 1; id <= before; ++id) REQUIRE(got.passed.count(id) == 1);
  for (std::uint64_t id : got.passed) REQUIRE(got.passed.count(id) == 1);  // rows added meanwhile: at most once
  CHECK(got.copies > got.passed.size());  // the pages did repeat rows: the filter had work to do

  // Unfiltered, the same copy repeats rows (what the filter is for), and still misses none.
  auto u = filled();
  const auto raw = copy_while_growing(*u, 50, 20, before + 1, nullptr);
  for (std::uint64_t id = 1; id <= before; ++id) REQUIRE(raw.passed.count(id) >= 1);
  CHECK(std::set<std::uint64_t>(raw.passed.begin(), raw.passed.end()).size() < raw.passed.size());
}

TEST_CASE("embedding table: a reshard's copy while rows change, then the rows changed since, is every row as it "
          "stands", "[core][embedding]") {
  table_options o;
  o.dim = 2;
  embedding_table t(o);
  embedding_table::batch_scratch scratch;
  const auto create = [&](std::uint64_t first, std::uint64_t count) {
    std::vector<std::uint64_t> ids;
    for (std::uint64_t id = first; id < first + count; ++id) ids.push_back(id);
    std::vector<float*> rows(ids.size());
    REQUIRE(t.find_or_create_batch(ids.data(), ids.size(), rows.data(), scratch) == 0);
  };
  const auto bump = [&](std::vector<std::uint64_t> ids) {
    t.update_batch(ids.data(), ids.size(), [](void*, float* row, std::size_t) { row[0] += 1.0f; }, nullptr, scratch);
  };
  create(1, 20000);
  // This shard's rows under the new placement: a third of them.
  const std::function<bool(std::uint64_t)> mine = [](std::uint64_t id) { return id % 3 == 0; };
  std::map<std::uint64_t, std::vector<float>> moved;  // what the new owner holds
  const auto take = [&](const std::vector<std::uint64_t>& ids, const std::vector<float>& rows) {
    for (std::size_t i = 0; i < ids.size(); ++i) {
      REQUIRE(mine(ids[i]));
      moved[ids[i]].assign(rows.begin() + static_cast<std::ptrdiff_t>(i * t.row_floats()),
                           rows.begin() + static_cast<std::ptrdiff_t>((i + 1) * t.row_floats()));
    }
  };
  // The copy while the job trains: between its pages rows are changed (some copied already, some
  // not) and made (some growing a stripe's index).
  std::uint64_t position = 0, next_new = 1000000, pages = 0;
  do {
    std::vector<std::uint64_t> ids;
    std::vector<float> rows;
    position = t.copy_rows_to_move(position, 50, true, mine, ids, rows);
    take(ids, rows);
    bump({pages * 7 + 3, pages * 7 + 6, 19999 - pages});
    create(next_new, 5);
    next_new += 5;
    ++pages;
  } while (position != 0);
  const std::size_t copied = moved.size();
  // Under the hold: only the rows changed or made since their copy.
  std::vector<std::uint64_t> ids;
  std::vector<float> rows;
  REQUIRE(t.copy_rows_to_move(0, 1u << 20, false, mine, ids, rows) == 0);
  CHECK(ids.size() > 0);
  CHECK(ids.size() < copied / 4);  // far fewer than every row
  take(ids, rows);
  // The new owner holds every row of its own as the table has it now, and no other.
  std::size_t mine_now = 0;
  t.for_each([&](std::uint64_t id, const float* row) {
    if (!mine(id)) return;
    ++mine_now;
    auto it = moved.find(id);
    REQUIRE(it != moved.end());
    CHECK(std::equal(it->second.begin(), it->second.end(), row));
  });
  CHECK(moved.size() == mine_now);
  // A second look under the hold finds the same rows (the pass under the hold keeps its marks, so
  // that it can be asked again).
  std::vector<std::uint64_t> again;
  rows.clear();
  REQUIRE(t.copy_rows_to_move(0, 1u << 20, false, mine, again, rows) == 0);
  CHECK(again == ids);
}

TEST_CASE("copied rows filter: a row again in the same table and stripe is dropped; a new stripe starts afresh",
          "[core][embedding]") {
  copied_rows_filter f;
  std::uint64_t a = 1, b = 2;
  while (embedding_table::stripe_of(b) != embedding_table::stripe_of(a)) ++b;
  std::uint64_t other = 2;
  while (embedding_table::stripe_of(other) == embedding_table::stripe_of(a)) ++other;
  CHECK(f.first_time(0, a));
  CHECK(f.first_time(0, b));
  CHECK_FALSE(f.first_time(0, a));
  CHECK(f.first_time(1, a));  // another table
  CHECK(f.first_time(1, other));
  CHECK(f.first_time(1, a));  // its stripe was left: the copy moved on
  f.reset();
  CHECK(f.first_time(1, a));
}

TEST_CASE("batch rows: distinct rows, sum pooling and summed gradients", "[core][embedding]") {
  auto batch = two_examples();
  batch_rows rows;
  rows.build(batch, {}, 2);
  REQUIRE(rows.size() == 3);  // (0,10), (1,20), (0,11)
  CHECK(rows.keys()[0] == row_key{0, 10});
  CHECK(rows.keys()[1] == row_key{1, 20});
  CHECK(rows.keys()[2] == row_key{0, 11});
  CHECK(rows.occurrence_rows() == std::vector<std::uint32_t>{0, 1, 0, 2});
  float* v = rows.values();
  const float values[] = {1, 2, 10, 20, 100, 200};
  std::copy(values, values + 6, v);
  rows.use_values();
  // slots: per example 2 tables x dim 2, example stride 4
  std::vector<float> slots(8, -1.0f);
  rows.pool(batch, slots.data(), 4);
  CHECK(slots == std::vector<float>{1, 2, 10, 20, 101, 202, 0, 0});
  std::vector<float> slot_grads = {1, 1, 2, 2, 0.5f, -1, 9, 9};
  rows.accumulate_grads(batch, slot_grads.data(), 4);
  // row (0,10) is used by example 0 table 0 and example 1 table 0
  CHECK(std::vector<float>(rows.grads(), rows.grads() + 6) == std::vector<float>{1.5f, 0, 2, 2, 0.5f, -1});
}

TEST_CASE("batch rows: a fixed bucket count folds ids onto shared rows", "[core][embedding]") {
  auto batch = two_examples();
  batch_rows rows;
  rows.build(batch, {10, 0}, 2);  // table 0 has 10 buckets: ids 10 and 20 -> 0, 11 -> 1
  REQUIRE(rows.size() == 3);
  CHECK(rows.keys()[0] == row_key{0, 0});
  CHECK(rows.keys()[2] == row_key{0, 1});
  CHECK(rows.keys()[1] == row_key{1, 20});
}

TEST_CASE("local embeddings: fetch creates rows, apply runs the optimizer", "[core][embedding]") {
  embedding_options o;
  o.tables = 2;
  o.dim = 2;
  o.optimizer.learning_rate = 0.5f;
  local_embeddings store(o);
  auto batch = two_examples();
  batch_rows rows;
  rows.build(batch, o.buckets, o.dim);
  REQUIRE(store.fetch(rows).is_ok());
  CHECK(store.total_rows() == 3);
  const float before = store.table(0).find(10)[0];
  CHECK(rows.row_pointers()[0] == store.table(0).find(10));  // the table's own row, no copy
  std::vector<float> slot_grads = {1, 1, 2, 2, 0.5f, -1, 9, 9};
  rows.accumulate_grads(batch, slot_grads.data(), 4);
  store.apply(rows);
  CHECK(store.table(0).find(10)[0] == Approx(before - 0.5f * 1.5f));
  CHECK(store.total_bytes() > 0);

  o.max_rows_per_table = 1;
  local_embeddings small(o);
  auto st = small.fetch(rows);
  CHECK(st.code() == ss::errc::resource_exhausted);
}
