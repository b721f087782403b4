// rocksdb_rows restoring a checkpoint made at another row layout (a resume at another
// --row-precision): the live rows of that layout set aside at open, the checkpoint's rows
// converted, loaded and stored at the store's layout with its metadata; a failure (a row that does
// not convert, a corrupt checkpoint) takes back every row it loaded and leaves the live rows.
#include <filesystem>
#include <mutex>

#include <catch2/catch.hpp>

#include "ss/core/embedding/row_layout.hpp"
#include "storage_fixture.hpp"

using namespace ss_storage_test;
using ss::errc;
using ss::embedding::row_layout;
using ss::embedding::row_precision;
using ss::storage::rocksdb_rows;
using ss::storage::rocksdb_rows_options;

namespace {

const row_layout kFp32{4, row_precision::fp32, 1, true};  // 6 slots
const row_layout kBf16{4, row_precision::bf16, 1, true};  // 4 slots
const row_layout kFp16{4, row_precision::fp16, 1, true};

std::unique_ptr<rocksdb_rows> open_at(const temp_dir& dir, const row_layout& l, bool set_aside = false) {
  rocksdb_rows_options o;
  o.row_layout = describe(l);
  o.set_aside_other_layout = set_aside;
  auto r = rocksdb_rows::open(dir.path.string(), l.slots(), o);
  INFO(r.error().to_string());
  REQUIRE(r.is_ok());
  return std::move(r).value();
}

ss::embedding::row_conversion conversion(const row_layout& from, const row_layout& to) {
  ss::embedding::row_conversion c;
  c.from_layout = describe(from);
  c.from_row_floats = from.slots();
  c.convert = [from, to](const float* in, float* out) { return ss::embedding::convert_row(from, to, in, out); };
  c.refusal = "has a value beyond fp16's range";
  return c;
}

// What a restore handed out and took back, from its threads.
struct handed {
  std::mutex mu;
  row_map loaded, unloaded;
  std::uint32_t row_floats;
  explicit handed(std::uint32_t rf) : row_floats(rf) {}
  ss::embedding::row_visitor load() {
    return [this](std::uint32_t t, std::uint64_t id, const float* row) {
      std::lock_guard<std::mutex> lock(mu);
      loaded[{t, id}] = std::vector<float>(row, row + row_floats);
    };
  }
  ss::embedding::row_visitor unload() {
    return [this](std::uint32_t t, std::uint64_t id, const float* row) {
      std::lock_guard<std::mutex> lock(mu);
      unloaded[{t, id}] = std::vector<float>(row, row + row_floats);
    };
  }
};

// n fp32 rows with values that convert exactly or round, state and stamp that must survive as bits.
row_map fp32_rows(rocksdb_rows& store, int n) {
  row_map expect;
  std::vector<std::uint32_t> tables;
  std::vector<std::uint64_t> ids;
  std::vector<float> flat;
  for (int i = 0; i < n; ++i) {
    tables.push_back(static_cast<std::uint32_t>(i % 3));
    ids.push_back(static_cast<std::uint64_t>(i) * 977 + 5);
    std::vector<float> row{0.1f * static_cast<float>(i), -1.0f / static_cast<float>(i + 3), 1.5f, 0.0f,
                           1e-7f * static_cast<float>(i + 1), static_cast<float>(i)};
    flat.insert(flat.end(), row.begin(), row.end());
    expect[{tables.back(), ids.back()}] = row;
  }
  REQUIRE(store.write(tables.data(), ids.data(), flat.data(), tables.size()).is_ok());
  return expect;
}

std::vector<float> converted(const row_layout& from, const row_layout& to, const std::vector<float>& row) {
  std::vector<float> out(to.slots());
  REQUIRE(ss::embedding::convert_row(from, to, row.data(), out.data()));
  return out;
}

}  // namespace

TEST_CASE("rocksdb rows restores a checkpoint of another precision converted, and keeps its metadata", "[storage]") {
  temp_dir dir;
  row_map fp32;
  {
    auto store = open_at(dir, kFp32);
    fp32 = fp32_rows(*store, 500);
    REQUIRE(store->set_meta("job_id", "00000000000000ab").is_ok());
    REQUIRE(store->checkpoint(7).is_ok());
  }
  // A resume at bf16: without leave to set the fp32 live rows aside, they are refused.
  rocksdb_rows_options refused;
  refused.row_layout = describe(kBf16);
  CHECK(rocksdb_rows::open(dir.path.string(), kBf16.slots(), refused).error().code() == errc::invalid_argument);
  auto store = open_at(dir, kBf16, true);
  CHECK_THAT(store->live_damage(), Catch::Contains("holds rows of 4 fp32 values") &&
                                       Catch::Contains("live.other-layout"));
  CHECK(std::filesystem::is_directory(dir.path / "live.other-layout"));
  CHECK(store->rows() == 0);
  REQUIRE(*store->checkpoint_row_layout(7) == describe(kFp32));

  handed h(kBf16.slots());
  const ss::status s = store->restore_converting(7, conversion(kFp32, kBf16), h.load(), h.unload());
  INFO(s.to_string());
  REQUIRE(s.is_ok());
  row_map expect;
  for (const auto& [key, row] : fp32) expect[key] = converted(kFp32, kBf16, row);
  CHECK(h.loaded == expect);
  CHECK(h.unloaded.empty());
  CHECK(store->rows() == 500);
  CHECK(scan_all(*store) == expect);
  CHECK(*store->get_meta("job_id") == "00000000000000ab");
  // The optimizer state and the stamp are the fp32 row's bits; the values are rounded.
  const auto& first = expect.begin()->second;
  const auto& original = fp32.begin()->second;
  CHECK(first[2] == original[4]);
  CHECK(first[3] == original[5]);
  CHECK_FALSE(std::filesystem::exists(dir.path / "live.restore"));
  // The checkpoint is as it was; the live rows are bf16 for good.
  CHECK(*store->checkpoint_row_layout(7) == describe(kFp32));
  REQUIRE(store->checkpoint(8).is_ok());
  CHECK(*store->checkpoint_row_layout(8) == describe(kBf16));
  store.reset();
  auto reopened = open_at(dir, kBf16);
  CHECK(reopened->live_damage().empty());
  CHECK(scan_all(*reopened) == expect);
  reopened.reset();
  rocksdb_rows_options as_fp32;
  as_fp32.row_layout = describe(kFp32);
  CHECK(rocksdb_rows::open(dir.path.string(), kFp32.slots(), as_fp32).error().code() == errc::invalid_argument);

  // And back: the bf16 checkpoint to fp32, exactly.
  auto back = open_at(dir, kFp32, true);
  handed b(kFp32.slots());
  REQUIRE(back->restore_converting(8, conversion(kBf16, kFp32), b.load(), b.unload()).is_ok());
  for (const auto& [key, row] : expect) CHECK(b.loaded.at(key) == converted(kBf16, kFp32, row));
  CHECK(scan_all(*back) == b.loaded);
}

TEST_CASE("rocksdb rows takes back every row of a conversion that fails, live rows untouched", "[storage]") {
  temp_dir dir;
  row_map fp32;
  {
    auto store = open_at(dir, kFp32);
    fp32 = fp32_rows(*store, 300);
    // One value fp16 cannot hold.
    const std::uint32_t t = 2;
    const std::uint64_t id = 123456;
    const std::vector<float> big{1e6f, 0, 0, 0, 0, 0};
    REQUIRE(store->write(&t, &id, big.data(), 1).is_ok());
    REQUIRE(store->checkpoint(3).is_ok());
    fp32_rows(*store, 10);
    REQUIRE(store->checkpoint(4).is_ok());
  }
  auto store = open_at(dir, kFp16, true);
  // Rows of the fp16 store before the restore: they stay.
  const std::uint32_t t = 9;
  const std::uint64_t id = 1;
  const std::vector<float> live_row{1, 2, 3, 4};
  REQUIRE(store->write(&t, &id, live_row.data(), 1).is_ok());
  const row_map live = scan_all(*store);

  handed h(kFp16.slots());
  ss::status s = store->restore_converting(3, conversion(kFp32, kFp16), h.load(), h.unload());
  CHECK(s.code() == errc::out_of_range);
  CHECK_THAT(s.message(), Catch::Contains("converting checkpoint 3: row (2, 123456) has a value beyond fp16's range"));
  CHECK(h.loaded == h.unloaded);
  CHECK(scan_all(*store) == live);
  CHECK_FALSE(std::filesystem::exists(dir.path / "live.restore"));

  // A corrupt checkpoint: found as it is read, its rows taken back.
  flip_byte_in_checkpoint_row(store->checkpoint_path(4), 0, 5);
  handed c(kFp16.slots());
  s = store->restore_converting(4, conversion(kFp32, kFp16), c.load(), c.unload());
  CHECK(s.code() == errc::corrupt);
  CHECK_THAT(s.message(), Catch::Contains("checkpoint 4 is corrupt"));
  CHECK(c.loaded == c.unloaded);
  CHECK(scan_all(*store) == live);

  // A checkpoint of another layout than the conversion says: refused before anything is read.
  handed w(kFp16.slots());
  s = store->restore_converting(3, conversion(kBf16, kFp16), w.load(), w.unload());
  CHECK(s.code() == errc::invalid_argument);
  CHECK(w.loaded.empty());
}
