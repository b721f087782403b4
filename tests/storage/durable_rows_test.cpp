// Behavioural tests of the durable_rows port, written once and run against both implementations:
// memory_rows (core) and rocksdb_rows (services/storage, real RocksDB in a temp dir).
#include <atomic>
#include <thread>

#include <catch2/catch.hpp>

#include "storage_fixture.hpp"

using namespace ss_storage_test;
using ss::errc;

namespace {

constexpr std::uint32_t kDurableRowFloats = 17;  // 16 values + 1 optimizer state float

// 100k rows over 4 tables (the same ids in several tables), in pages of 10k.
void write_100k(ss::embedding::durable_rows& store, row_map* expect) {
  std::vector<std::uint32_t> tables;
  std::vector<std::uint64_t> ids;
  for (std::uint64_t i = 0; i < 100000; ++i) {
    tables.push_back(static_cast<std::uint32_t>(i % 4));
    ids.push_back((i / 4) * 7919 + (i % 4 == 3 ? (std::uint64_t{1} << 40) : 0));
    if (tables.size() == 10000) {
      write_rows(store, tables, ids, 0, expect);
      tables.clear();
      ids.clear();
    }
  }
}

}  // namespace

TEMPLATE_TEST_CASE("durable rows write and scan round trip with overwrites", "[storage]", memory_impl, rocks_impl) {
  TestType impl;
  auto store = impl.open(kDurableRowFloats);
  REQUIRE(store->row_floats() == kDurableRowFloats);
  REQUIRE(store->rows() == 0);
  REQUIRE(scan_all(*store).empty());

  row_map expect;
  write_100k(*store, &expect);
  REQUIRE(expect.size() == 100000);
  REQUIRE(store->rows() == 100000);

  // Overwrite 30k existing rows mixed with 5k new ones; one key appears twice in the call (the
  // later row wins and it counts once).
  std::vector<std::uint32_t> tables;
  std::vector<std::uint64_t> ids;
  for (std::uint64_t i = 0; i < 30000; ++i) {
    tables.push_back(static_cast<std::uint32_t>(i % 4));
    ids.push_back((i / 4) * 7919 + (i % 4 == 3 ? (std::uint64_t{1} << 40) : 0));
  }
  for (std::uint64_t i = 0; i < 5000; ++i) {
    tables.push_back(9);
    ids.push_back(i);
  }
  write_rows(*store, tables, ids, 1, &expect);
  REQUIRE(store->rows() == 105000);
  write_rows(*store, {9, 9, 2}, {77, 77, 7919}, 2, nullptr);
  {
    // (9, 77) written twice in one call: the second row (version 3) wins.
    std::vector<float> flat;
    for (int v : {2, 3}) {
      auto r = make_row(9, 77, v, kDurableRowFloats);
      flat.insert(flat.end(), r.begin(), r.end());
    }
    const std::uint32_t t[2] = {9, 9};
    const std::uint64_t d[2] = {77, 77};
    REQUIRE(store->write(t, d, flat.data(), 2).is_ok());
    expect[{9, 77}] = make_row(9, 77, 3, kDurableRowFloats);
    expect[{2, 7919}] = make_row(2, 7919, 2, kDurableRowFloats);
  }
  REQUIRE(store->rows() == 105000);
  REQUIRE(store->write(nullptr, nullptr, nullptr, 0).is_ok());
  REQUIRE(store->rows() == 105000);

  const row_map got = scan_all(*store);
  REQUIRE(got.size() == 105000);
  REQUIRE(got == expect);
}

TEMPLATE_TEST_CASE("durable rows checkpoint then writes then restore gives the checkpointed rows", "[storage]",
                   memory_impl, rocks_impl) {
  TestType impl;
  auto store = impl.open(kDurableRowFloats);
  row_map at_checkpoint;
  write_rows(*store, {1, 1, 2, 3}, {10, 11, 10, 12345}, 0, &at_checkpoint);
  REQUIRE(store->set_meta("job", "job-a").is_ok());

  auto info = store->checkpoint(5);
  INFO(info.error().to_string());
  REQUIRE(info.is_ok());
  CHECK(info->id == 5);
  CHECK(info->rows == 4);

  // A second checkpoint with the same id is refused.
  auto again = store->checkpoint(5);
  REQUIRE_FALSE(again.is_ok());
  CHECK(again.error().code() == errc::invalid_argument);

  row_map later = at_checkpoint;
  write_rows(*store, {1, 4, 4}, {10, 1, 2}, 1, &later);  // one overwrite, two new rows
  REQUIRE(store->set_meta("job", "job-b").is_ok());
  REQUIRE(store->set_meta("extra", "x").is_ok());
  REQUIRE(store->rows() == 6);
  REQUIRE(scan_all(*store) == later);

  auto list = store->checkpoints();
  REQUIRE(list.is_ok());
  REQUIRE(list->size() == 1);
  CHECK(list->front().id == 5);
  CHECK(list->front().rows == 4);
  CHECK(list->front().checksum == info->checksum);
  REQUIRE(store->verify(5).is_ok());

  REQUIRE(store->restore(5).is_ok());
  CHECK(store->rows() == 4);
  CHECK(scan_all(*store) == at_checkpoint);
  auto job = store->get_meta("job");
  REQUIRE(job.is_ok());
  CHECK(*job == "job-a");
  CHECK(store->get_meta("extra").error().code() == errc::not_found);

  // The store keeps working after a restore, and the checkpoint is still there.
  write_rows(*store, {7}, {7}, 0, &at_checkpoint);
  CHECK(store->rows() == 5);
  CHECK(scan_all(*store) == at_checkpoint);
  CHECK(store->verify(5).is_ok());
}

TEMPLATE_TEST_CASE("durable rows checkpoints are listed oldest first and dropped", "[storage]", memory_impl,
                   rocks_impl) {
  TestType impl;
  auto store = impl.open(4);
  for (std::uint64_t id : {30, 4, 12}) {
    write_rows(*store, {0}, {id}, 0, nullptr);
    REQUIRE(store->checkpoint(id).is_ok());
  }
  auto list = store->checkpoints();
  REQUIRE(list.is_ok());
  REQUIRE(list->size() == 3);
  CHECK((*list)[0].id == 4);
  CHECK((*list)[1].id == 12);
  CHECK((*list)[2].id == 30);
  CHECK((*list)[0].rows == 2);
  CHECK((*list)[1].rows == 3);
  CHECK((*list)[2].rows == 1);

  REQUIRE(store->drop(12).is_ok());
  CHECK(store->drop(12).code() == errc::not_found);
  CHECK(store->verify(12).code() == errc::not_found);
  CHECK(store->restore(12).code() == errc::not_found);
  list = store->checkpoints();
  REQUIRE(list.is_ok());
  REQUIRE(list->size() == 2);
  CHECK((*list)[0].id == 4);
  CHECK((*list)[1].id == 30);
  // The id can be used again once dropped.
  REQUIRE(store->checkpoint(12).is_ok());
  CHECK(store->verify(12).is_ok());
}

TEMPLATE_TEST_CASE("durable rows a missing checkpoint is not_found", "[storage]", memory_impl, rocks_impl) {
  TestType impl;
  auto store = impl.open(4);
  CHECK(store->verify(99).code() == errc::not_found);
  CHECK(store->restore(99).code() == errc::not_found);
  CHECK(store->drop(99).code() == errc::not_found);
  auto list = store->checkpoints();
  REQUIRE(list.is_ok());
  CHECK(list->empty());
}

TEMPLATE_TEST_CASE("durable rows meta set get and clear", "[storage]", memory_impl, rocks_impl) {
  TestType impl;
  auto store = impl.open(4);
  CHECK(store->get_meta("job").error().code() == errc::not_found);
  REQUIRE(store->set_meta("job", "j1").is_ok());
  REQUIRE(store->set_meta("empty", "").is_ok());
  REQUIRE(store->set_meta("binary", std::string("a\0b\xff", 4)).is_ok());
  REQUIRE(store->set_meta("job", "j2").is_ok());
  CHECK(*store->get_meta("job") == "j2");
  CHECK(*store->get_meta("empty") == "");
  CHECK(*store->get_meta("binary") == std::string("a\0b\xff", 4));

  row_map expect;
  write_rows(*store, {1, 2, 3}, {1, 2, 3}, 0, &expect);
  REQUIRE(store->checkpoint(1).is_ok());
  REQUIRE(store->clear().is_ok());
  CHECK(store->rows() == 0);
  CHECK(scan_all(*store).empty());
  CHECK(store->get_meta("job").error().code() == errc::not_found);
  CHECK(store->get_meta("binary").error().code() == errc::not_found);
  // Checkpoints stay, and rows written after a clear count from zero.
  CHECK(store->verify(1).is_ok());
  write_rows(*store, {1, 5}, {1, 5}, 1, nullptr);
  CHECK(store->rows() == 2);
  REQUIRE(store->restore(1).is_ok());
  CHECK(scan_all(*store) == expect);
  CHECK(*store->get_meta("job") == "j2");
}

TEMPLATE_TEST_CASE("durable rows restore of a corrupt checkpoint leaves the live rows untouched", "[storage]",
                   memory_impl, rocks_impl) {
  TestType impl;
  auto store = impl.open(kDurableRowFloats);
  row_map expect;
  write_rows(*store, {3, 3, 1}, {12345, 12346, 1}, 0, &expect);
  REQUIRE(store->checkpoint(8).is_ok());
  write_rows(*store, {3, 2}, {12345, 2}, 1, &expect);
  REQUIRE(store->set_meta("job", "live").is_ok());
  impl.corrupt_row(*store, 8, 3, 12345);

  const ss::status v = store->verify(8);
  CHECK(v.code() == errc::corrupt);
  CHECK_THAT(v.message(), Catch::Contains("checkpoint 8 is corrupt"));
  const ss::status r = store->restore(8);
  CHECK(r.code() == errc::corrupt);
  CHECK(store->rows() == 4);
  CHECK(scan_all(*store) == expect);
  CHECK(*store->get_meta("job") == "live");
}

TEMPLATE_TEST_CASE("durable rows scans run while the writer writes", "[storage]", memory_impl, rocks_impl) {
  TestType impl;
  auto store = impl.open(8);
  row_map expect;
  std::vector<std::uint32_t> tables(1000, 1);
  std::vector<std::uint64_t> ids(1000);
  for (std::uint64_t i = 0; i < 1000; ++i) ids[i] = i;
  write_rows(*store, tables, ids, 0, &expect);
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::thread reader([&] {
    while (!done.load()) {
      std::size_t n = 0;
      const ss::status s = store->scan([&](std::uint32_t, std::uint64_t, const float*) { ++n; });
      // Each write call is atomic: a scan sees whole pages of 1000 rows.
      if (!s || n % 1000 != 0 || n < 1000) ++bad;
      if (store->rows() < 1000) ++bad;
    }
  });
  for (int page = 1; page < 20; ++page) {
    for (std::uint64_t i = 0; i < 1000; ++i) ids[i] = static_cast<std::uint64_t>(page) * 1000 + i;
    write_rows(*store, tables, ids, page, &expect);
  }
  done = true;
  reader.join();
  CHECK(bad.load() == 0);
  CHECK(store->rows() == 20000);
  CHECK(scan_all(*store) == expect);
}

TEMPLATE_TEST_CASE("durable rows read a batch: stored rows found, absent ones not, their slots untouched", "[storage]",
                   memory_impl, rocks_impl) {
  TestType impl;
  auto store = impl.open(kDurableRowFloats);
  row_map expect;
  write_100k(*store, &expect);
  // Stored keys, absent ids and an absent table, one key twice.
  const std::vector<std::uint32_t> tables = {0, 1, 3, 2, 5, 0, 0};
  const std::vector<std::uint64_t> ids = {0, 7919, std::uint64_t{1} << 40, 7918, 0, 7919 * 100, 0};
  std::vector<float> rows(tables.size() * kDurableRowFloats, -7.0f);
  std::vector<std::uint8_t> found(tables.size(), 9);
  REQUIRE(store->read(tables.data(), ids.data(), tables.size(), rows.data(), found.data()).is_ok());
  for (std::size_t i = 0; i < tables.size(); ++i) {
    const auto it = expect.find({tables[i], ids[i]});
    INFO("row " << i << " = (" << tables[i] << ", " << ids[i] << ")");
    REQUIRE(found[i] == (it != expect.end() ? 1 : 0));
    const std::vector<float> got(rows.begin() + static_cast<std::ptrdiff_t>(i * kDurableRowFloats),
                                 rows.begin() + static_cast<std::ptrdiff_t>((i + 1) * kDurableRowFloats));
    if (it != expect.end()) CHECK(got == it->second);
    else CHECK(got == std::vector<float>(kDurableRowFloats, -7.0f));
  }
  CHECK(found[0] == 1);
  CHECK(found[3] == 0);
  CHECK(found[4] == 0);
  CHECK(store->read(nullptr, nullptr, 0, nullptr, nullptr).is_ok());
}

TEMPLATE_TEST_CASE("durable rows erase deletes the stored rows named, ignores absent ones, and counts exactly",
                   "[storage]", memory_impl, rocks_impl) {
  TestType impl;
  auto store = impl.open(kDurableRowFloats);
  // Nothing stored yet: erasing is a no-op.
  const std::uint32_t t0[1] = {0};
  const std::uint64_t i0[1] = {0};
  REQUIRE(store->erase(t0, i0, 1).is_ok());
  REQUIRE(store->rows() == 0);

  row_map expect;
  write_100k(*store, &expect);
  // Stored keys (one named twice), an absent id and an absent table, and the same id in another
  // table, which stays.
  const std::vector<std::uint32_t> tables = {0, 1, 1, 2, 5, 0};
  const std::vector<std::uint64_t> ids = {0, 7919, 7919, 7918, 0, 7919 * 2};
  REQUIRE(store->erase(tables.data(), ids.data(), tables.size()).is_ok());
  for (const auto& key : std::vector<std::pair<std::uint32_t, std::uint64_t>>{{0, 0}, {1, 7919}, {0, 7919 * 2}})
    REQUIRE(expect.erase(key) == 1);
  CHECK(store->rows() == 100000 - 3);
  CHECK(scan_all(*store) == expect);
  std::vector<float> row(kDurableRowFloats);
  std::uint8_t found = 9;
  const std::uint32_t t1[1] = {1};
  const std::uint64_t i1[1] = {7919};
  REQUIRE(store->read(t1, i1, 1, row.data(), &found).is_ok());
  CHECK(found == 0);
  // Erased, then written again: stored anew, counted once.
  write_rows(*store, {1}, {7919}, 4, &expect);
  CHECK(store->rows() == 100000 - 2);
  CHECK(scan_all(*store) == expect);
  CHECK(store->erase(nullptr, nullptr, 0).is_ok());
}

TEMPLATE_TEST_CASE("durable rows erase_stored deletes rows a scan found, each counted once", "[storage]", memory_impl,
                   rocks_impl) {
  TestType impl;
  auto store = impl.open(kDurableRowFloats);
  row_map expect;
  write_100k(*store, &expect);
  // Every row of table 1, as a scan hands them out.
  std::vector<std::uint32_t> tables;
  std::vector<std::uint64_t> ids;
  REQUIRE(store->scan([&](std::uint32_t t, std::uint64_t id, const float*) {
                 if (t != 1) return;
                 tables.push_back(t);
                 ids.push_back(id);
               })
              .is_ok());
  REQUIRE(ids.size() > 1000);
  REQUIRE(store->erase_stored(tables.data(), ids.data(), ids.size()).is_ok());
  for (std::size_t i = 0; i < ids.size(); ++i) REQUIRE(expect.erase({tables[i], ids[i]}) == 1);
  CHECK(store->rows() == 100000 - ids.size());
  CHECK(scan_all(*store) == expect);
}

TEMPLATE_TEST_CASE("durable rows scan_from pages through every row once, in key order", "[storage]", memory_impl,
                   rocks_impl) {
  TestType impl;
  auto store = impl.open(kDurableRowFloats);
  row_map expect;
  write_100k(*store, &expect);
  row_map got;
  std::uint32_t table = 0;
  std::uint64_t id = 0;
  std::pair<std::uint32_t, std::uint64_t> last{0, 0};
  bool first = true, ordered = true;
  for (int page = 0; page < 1000; ++page) {
    std::size_t in_page = 0;
    auto n = store->scan_from(table, id, 7000, [&](std::uint32_t t, std::uint64_t i, const float* row) {
      const std::pair<std::uint32_t, std::uint64_t> key{t, i};
      if (!first && !(last < key)) ordered = false;
      first = false;
      last = key;
      got[key] = std::vector<float>(row, row + kDurableRowFloats);
      ++in_page;
    });
    REQUIRE(n.is_ok());
    REQUIRE(*n == in_page);
    if (*n < 7000) break;
    table = last.first;
    id = last.second + 1;
  }
  CHECK(ordered);
  CHECK(got == expect);
  // From a key past every row: nothing.
  auto none = store->scan_from(1000, 0, 10, [](std::uint32_t, std::uint64_t, const float*) { FAIL("a row past the end"); });
  REQUIRE(none.is_ok());
  CHECK(*none == 0);
}

TEST_CASE("rocksdb rows count their reads and writes: rows, bytes, read latency", "[storage]") {
  rocks_impl impl;
  auto store = impl.open(kDurableRowFloats);
  REQUIRE(store->io().reads == 0);
  row_map expect;
  write_100k(*store, &expect);
  auto io = store->io();
  CHECK(io.rows_written == 100000);
  CHECK(io.bytes_written >= 100000 * kDurableRowFloats * 4);
  CHECK(io.reads == 0);
  const std::vector<std::uint32_t> tables = {0, 1, 3, 2, 5};
  const std::vector<std::uint64_t> ids = {0, 7919, std::uint64_t{1} << 40, 7918, 0};  // 3 stored, 2 absent
  std::vector<float> rows(tables.size() * kDurableRowFloats);
  std::vector<std::uint8_t> found(tables.size());
  REQUIRE(store->read(tables.data(), ids.data(), tables.size(), rows.data(), found.data()).is_ok());
  io = store->io();
  CHECK(io.reads == 1);
  CHECK(io.rows_read == 3);
  CHECK(io.bytes_read >= 3 * kDurableRowFloats * 4);
  CHECK(io.read_p50_ms > 0);
  CHECK(io.read_p99_ms >= io.read_p50_ms);
}
