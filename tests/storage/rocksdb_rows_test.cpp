// rocksdb_rows specifics: reopening (after a clean close and after a SIGKILL), the on-disk layout,
// every corruption path verify() must catch, latest_valid_checkpoint, crash leftovers, row size.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <set>

#include <catch2/catch.hpp>

#include "ss/core/io/keyed_text.hpp"
#include "storage_fixture.hpp"
#include "support/files.hpp"

using namespace ss_storage_test;
using ss::errc;
using ss::storage::rocksdb_rows;
using ss::storage::rocksdb_rows_options;
using ss::test::read_file;
using ss::test::write_file;

namespace {

constexpr std::uint32_t kRowFloats = 17;

std::unique_ptr<rocksdb_rows> open_store(const temp_dir& dir, std::uint32_t row_floats = kRowFloats) {
  auto r = rocksdb_rows::open(dir.path.string(), row_floats, rocksdb_rows_options{});
  INFO(r.error().to_string());
  REQUIRE(r.is_ok());
  return std::move(r).value();
}

// n rows in tables 0..3 (ids spread out), plus (3, 12345).
row_map fill(rocksdb_rows& store, std::size_t n, int version = 0) {
  row_map expect;
  std::vector<std::uint32_t> tables{3};
  std::vector<std::uint64_t> ids{12345};
  for (std::size_t i = 0; i < n; ++i) {
    tables.push_back(static_cast<std::uint32_t>(i % 4));
    ids.push_back(1000000 + i * 13);
  }
  write_rows(store, tables, ids, version, &expect);
  return expect;
}

// Replaces the manifest's hash with `hash` and gives it a correct crc again.
void rewrite_manifest_hash(const fs::path& manifest, const std::string& hash) {
  auto text = ss::io::without_crc_line(read_file(manifest), "the manifest");
  REQUIRE(text.is_ok());
  const auto h = text->find("hash = ");
  REQUIRE(h != std::string::npos);
  text->replace(h + 7, 16, hash);
  write_file(manifest, ss::io::with_crc_line(*text));
}

}  // namespace

TEST_CASE("rocksdb rows reopen after a clean close keeps rows and meta", "[storage]") {
  temp_dir dir;
  row_map expect;
  {
    auto store = open_store(dir);
    expect = fill(*store, 20000);
    REQUIRE(store->set_meta("job", "j7").is_ok());
    REQUIRE(store->rows() == 20001);
  }
  auto store = open_store(dir);
  CHECK(store->rows() == 20001);
  CHECK(scan_all(*store) == expect);
  CHECK(*store->get_meta("job") == "j7");
  // Overwrites after a reopen are told from new rows too.
  const row_map more = fill(*store, 100, 1);
  for (const auto& [k, v] : more) expect[k] = v;
  CHECK(store->rows() == 20001);
  CHECK(scan_all(*store) == expect);
}

TEST_CASE("rocksdb rows report the memory RocksDB holds, within its configured bound", "[storage]") {
  temp_dir dir;
  auto store = open_store(dir);
  const rocksdb_rows_options defaults;
  CHECK(store->memory_bound_bytes() == 2 * defaults.write_buffer_size + defaults.block_cache_bytes);
  const auto before = store->memory_bytes();
  fill(*store, 20000);  // 20,001 rows of 17 floats: about 1.5 MB of records in the memtable
  const auto after = store->memory_bytes();
  CHECK(after >= before + 1000000);
  CHECK(after <= store->memory_bound_bytes());
}

TEST_CASE("rocksdb rows sized by a memory budget stay within it", "[storage]") {
  const auto defaults = rocksdb_rows_options{};
  // The defaults are the 64 MiB budget the shard's --storage-memory-mb defaults to.
  const auto budget64 = rocksdb_rows_options::with_memory_budget(std::size_t{64} << 20);
  CHECK(budget64.write_buffer_size == defaults.write_buffer_size);
  CHECK(budget64.block_cache_bytes == defaults.block_cache_bytes);
  CHECK(budget64.max_write_buffers == defaults.max_write_buffers);
  temp_dir dir;
  auto o = rocksdb_rows_options::with_memory_budget(std::size_t{8} << 20);
  CHECK(o.write_buffer_size == std::size_t{2} << 20);
  CHECK(o.block_cache_bytes == std::size_t{4} << 20);
  auto store = rocksdb_rows::open(dir.path.string(), kRowFloats, o);
  REQUIRE(store.is_ok());
  CHECK((*store)->memory_bound_bytes() == std::uint64_t{8} << 20);
  // Many times the memtables' size in overwrites: they flush, and the memory stays in the budget.
  std::uint64_t most = 0;
  for (int round = 0; round < 12; ++round) {
    fill(**store, 20000, round);
    most = std::max(most, (*store)->memory_bytes());
  }
  CHECK(most > std::uint64_t{1} << 20);
  CHECK(most <= (*store)->memory_bound_bytes());
  CHECK((*store)->rows() == 20001);
}

TEST_CASE("rocksdb rows a killed process loses nothing it wrote", "[storage]") {
  temp_dir dir;
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The child writes (WAL on, no sync), reports, and waits to be killed: no clean close.
    ::close(fds[0]);
    auto r = rocksdb_rows::open(dir.path.string(), kRowFloats, rocksdb_rows_options{});
    if (!r) ::_exit(2);
    std::vector<std::uint32_t> tables;
    std::vector<std::uint64_t> ids;
    std::vector<float> rows;
    for (std::uint64_t i = 0; i < 50000; ++i) {
      tables.push_back(static_cast<std::uint32_t>(i % 3));
      ids.push_back(i);
      auto row = make_row(tables.back(), i, 0, kRowFloats);
      rows.insert(rows.end(), row.begin(), row.end());
    }
    for (std::size_t page = 0; page < 5; ++page) {
      const std::size_t at = page * 10000;
      if (!(*r)->write(&tables[at], &ids[at], &rows[at * kRowFloats], 10000)) ::_exit(3);
    }
    if (!(*r)->set_meta("job", "killed")) ::_exit(4);
    const char done = 'x';
    if (::write(fds[1], &done, 1) != 1) ::_exit(5);
    for (;;) ::pause();
  }
  ::close(fds[1]);
  char got = 0;
  REQUIRE(::read(fds[0], &got, 1) == 1);
  ::close(fds[0]);
  REQUIRE(::kill(child, SIGKILL) == 0);
  int wstatus = 0;
  REQUIRE(::waitpid(child, &wstatus, 0) == child);
  REQUIRE(WIFSIGNALED(wstatus));

  auto store = open_store(dir);
  CHECK(store->rows() == 50000);
  const row_map rows = scan_all(*store);
  REQUIRE(rows.size() == 50000);
  for (std::uint64_t i = 0; i < 50000; i += 997) {
    const auto t = static_cast<std::uint32_t>(i % 3);
    CHECK(rows.at({t, i}) == make_row(t, i, 0, kRowFloats));
  }
  CHECK(*store->get_meta("job") == "killed");
}

TEST_CASE("rocksdb rows on-disk layout and manifest", "[storage]") {
  temp_dir dir;
  auto store = open_store(dir);
  fill(*store, 1000);
  auto info = store->checkpoint(42);
  REQUIRE(info.is_ok());
  CHECK(info->path == (dir.path / "checkpoints" / "42").string());
  CHECK(info->rows == 1001);
  CHECK(info->bytes > 1001 * 68);
  CHECK(fs::is_directory(dir.path / "live"));
  CHECK_FALSE(fs::exists(dir.path / "checkpoints" / "42.tmp"));
  const std::string manifest = read_file(dir.path / "checkpoints" / "42" / "SHADOWSYNC-CHECKPOINT");
  CHECK_THAT(manifest, Catch::StartsWith("# shadowsync shard checkpoint\nformat = 1\nid = 42\nrows = 1001\n"
                                         "row_floats = 17\nhash = "));
  char hash[32];
  std::snprintf(hash, sizeof hash, "hash = %016llx\n", static_cast<unsigned long long>(info->checksum));
  CHECK_THAT(manifest, Catch::Contains(hash));
  auto list = store->checkpoints();
  REQUIRE(list.is_ok());
  REQUIRE(list->size() == 1);
  CHECK(list->front().checksum == info->checksum);
  CHECK(list->front().rows == 1001);
  CHECK(list->front().bytes > 0);

  // The same content gives the same hash whatever the write order.
  temp_dir other;
  auto store2 = open_store(other);
  std::vector<std::uint32_t> tables;
  std::vector<std::uint64_t> ids;
  for (std::size_t i = 1000; i-- > 0;) {
    tables.push_back(static_cast<std::uint32_t>(i % 4));
    ids.push_back(1000000 + i * 13);
  }
  write_rows(*store2, tables, ids, 0, nullptr);
  write_rows(*store2, {3}, {12345}, 0, nullptr);
  auto info2 = store2->checkpoint(1);
  REQUIRE(info2.is_ok());
  CHECK(info2->checksum == info->checksum);
}

TEST_CASE("rocksdb rows verify catches a flipped byte inside a record", "[storage]") {
  temp_dir dir;
  auto store = open_store(dir);
  fill(*store, 5000);
  REQUIRE(store->checkpoint(12).is_ok());
  flip_byte_in_checkpoint_row(store->checkpoint_path(12), 3, 12345);
  const ss::status s = store->verify(12);
  CHECK(s.code() == errc::corrupt);
  CHECK(s.message() == "checkpoint 12 is corrupt: row (3, 12345) fails its checksum");
}

TEST_CASE("rocksdb rows verify catches a row missing versus the manifest", "[storage]") {
  temp_dir dir;
  auto store = open_store(dir);
  fill(*store, 5000);
  REQUIRE(store->checkpoint(3).is_ok());
  delete_checkpoint_row(store->checkpoint_path(3), 3, 12345);
  const ss::status s = store->verify(3);
  CHECK(s.code() == errc::corrupt);
  CHECK(s.message() == "checkpoint 3 is corrupt: its manifest promises 5001 rows, found 5000");
}

TEST_CASE("rocksdb rows verify catches a manifest with a wrong hash or a bad checksum", "[storage]") {
  temp_dir dir;
  auto store = open_store(dir);
  fill(*store, 100);
  REQUIRE(store->checkpoint(4).is_ok());
  const fs::path manifest = fs::path(store->checkpoint_path(4)) / "SHADOWSYNC-CHECKPOINT";
  const std::string good = read_file(manifest);

  rewrite_manifest_hash(manifest, "0123456789abcdef");
  ss::status s = store->verify(4);
  CHECK(s.code() == errc::corrupt);
  CHECK_THAT(s.message(), Catch::StartsWith("checkpoint 4 is corrupt: its content hash "));
  CHECK_THAT(s.message(), Catch::EndsWith("differs from its manifest's 0123456789abcdef"));

  std::string edited = good;
  edited[edited.find("rows = 101") + 7] = '2';  // rows 201, crc not updated
  write_file(manifest, edited);
  s = store->verify(4);
  CHECK(s.code() == errc::corrupt);
  CHECK_THAT(s.message(), Catch::StartsWith("checkpoint 4 is corrupt: its manifest SHADOWSYNC-CHECKPOINT fails its "
                                            "checksum (stored "));

  // A field that is not a number, with a correct crc: named, not read as zero.
  auto body = ss::io::without_crc_line(good, "the manifest");
  REQUIRE(body.is_ok());
  std::string bad_rows = *body;
  bad_rows.replace(bad_rows.find("rows = 101") + 7, 3, "1o1");
  write_file(manifest, ss::io::with_crc_line(bad_rows));
  s = store->verify(4);
  CHECK(s.code() == errc::corrupt);
  CHECK(s.message() == "checkpoint 4 is corrupt: its manifest SHADOWSYNC-CHECKPOINT: rows has '1o1' where a number "
                       "belongs");

  // The line syntax of earlier builds is named as such.
  write_file(manifest, "shadowsync-checkpoint 1\nid 4\nrows 101\nrow_floats 17\nhash 0123456789abcdef\ncrc 00000000\n");
  s = store->verify(4);
  CHECK(s.code() == errc::version_mismatch);
  CHECK_THAT(s.message(), Catch::Contains("in the line syntax of shadowsync builds before"));

  fs::remove(manifest);
  s = store->verify(4);
  CHECK(s.code() == errc::corrupt);
  CHECK(s.message() == "checkpoint 4 is corrupt: its manifest SHADOWSYNC-CHECKPOINT is missing");

  write_file(manifest, good);
  CHECK(store->verify(4).is_ok());
}

TEST_CASE("rocksdb rows verify catches a deleted SST file", "[storage]") {
  temp_dir dir;
  auto store = open_store(dir);
  const row_map expect = fill(*store, 20000);
  REQUIRE(store->checkpoint(6).is_ok());
  int removed = 0;
  for (const auto& e : fs::directory_iterator(store->checkpoint_path(6))) {
    if (e.path().extension() == ".sst") {
      fs::remove(e.path());
      ++removed;
      break;
    }
  }
  REQUIRE(removed == 1);
  const ss::status s = store->verify(6);
  CHECK(s.code() == errc::corrupt);
  CHECK_THAT(s.message(), Catch::StartsWith("checkpoint 6 is corrupt: "));
  CHECK_THAT(s.message(), Catch::Contains("No such file"));
  // The live rows do not share the fate of the checkpoint's hard link.
  CHECK(store->restore(6).code() == errc::corrupt);
  CHECK(scan_all(*store) == expect);
}

TEST_CASE("rocksdb rows a leftover tmp checkpoint is never listed and is cleaned on open", "[storage]") {
  temp_dir dir;
  {
    auto store = open_store(dir);
    fill(*store, 10);
    REQUIRE(store->checkpoint(1).is_ok());
  }
  const fs::path tmp = dir.path / "checkpoints" / "2.tmp";
  fs::create_directories(tmp);
  write_file(tmp / "CURRENT", "half made");
  {
    auto store = open_store(dir);
    CHECK_FALSE(fs::exists(tmp));
    auto list = store->checkpoints();
    REQUIRE(list.is_ok());
    REQUIRE(list->size() == 1);
    CHECK(list->front().id == 1);
    CHECK(store->verify(2).code() == errc::not_found);
    // A tmp dir that appears while the store is open is ignored, and checkpoint(2) replaces it.
    fs::create_directories(tmp);
    list = store->checkpoints();
    REQUIRE(list.is_ok());
    CHECK(list->size() == 1);
    REQUIRE(store->checkpoint(2).is_ok());
    CHECK(store->verify(2).is_ok());
    CHECK_FALSE(fs::exists(tmp));
  }
}

TEST_CASE("rocksdb rows latest valid checkpoint skips a corrupt newest one and says why", "[storage]") {
  temp_dir dir;
  auto store = open_store(dir);
  std::vector<std::string> skipped;
  auto none = store->latest_valid_checkpoint(&skipped);
  CHECK(none.error().code() == errc::not_found);
  CHECK(skipped.empty());

  fill(*store, 300);
  REQUIRE(store->checkpoint(10).is_ok());
  fill(*store, 400, 1);
  REQUIRE(store->checkpoint(11).is_ok());
  fill(*store, 500, 2);
  REQUIRE(store->checkpoint(12).is_ok());

  auto best = store->latest_valid_checkpoint(&skipped);
  REQUIRE(best.is_ok());
  CHECK(best->id == 12);
  CHECK(skipped.empty());

  flip_byte_in_checkpoint_row(store->checkpoint_path(12), 3, 12345);
  best = store->latest_valid_checkpoint(&skipped);
  REQUIRE(best.is_ok());
  CHECK(best->id == 11);
  CHECK(best->rows == 401);
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0] == "checkpoint 12 is corrupt: row (3, 12345) fails its checksum; using checkpoint 11");

  // When none verifies: errc::corrupt, and each one says why.
  flip_byte_in_checkpoint_row(store->checkpoint_path(11), 3, 12345);
  fs::remove(fs::path(store->checkpoint_path(10)) / "SHADOWSYNC-CHECKPOINT");
  skipped.clear();
  auto bad = store->latest_valid_checkpoint(&skipped);
  CHECK(bad.error().code() == errc::corrupt);
  REQUIRE(skipped.size() == 3);
  CHECK(skipped[2] == "checkpoint 10 is corrupt: its manifest SHADOWSYNC-CHECKPOINT is missing; no valid checkpoint remains");
}

TEST_CASE("rocksdb rows restore replaces live rows and survives reopen", "[storage]") {
  temp_dir dir;
  row_map at_checkpoint;
  {
    auto store = open_store(dir);
    at_checkpoint = fill(*store, 30000);
    REQUIRE(store->checkpoint(1).is_ok());
    fill(*store, 40000, 1);
    REQUIRE(store->rows() == 40001);
    REQUIRE(store->restore(1).is_ok());
    CHECK(store->rows() == 30001);
    CHECK_FALSE(fs::exists(dir.path / "live.old"));
    CHECK_FALSE(fs::exists(dir.path / "live.restore"));
  }
  auto store = open_store(dir);
  CHECK(store->rows() == 30001);
  CHECK(scan_all(*store) == at_checkpoint);
  CHECK(store->verify(1).is_ok());  // writing to the restored copy leaves the checkpoint intact
  fill(*store, 100, 5);
  CHECK(store->verify(1).is_ok());
}

namespace {

// What restore_loading handed to load and to unload, from whichever threads.
struct handed_rows {
  std::mutex mu;
  std::multiset<std::pair<std::uint32_t, std::uint64_t>> loaded, unloaded;
  row_map values;
  ss::embedding::row_visitor load(std::uint32_t rf) {
    return [this, rf](std::uint32_t t, std::uint64_t id, const float* row) {
      std::lock_guard<std::mutex> lock(mu);
      loaded.insert({t, id});
      values[{t, id}] = std::vector<float>(row, row + rf);
    };
  }
  ss::embedding::row_visitor unload() {
    return [this](std::uint32_t t, std::uint64_t id, const float*) {
      std::lock_guard<std::mutex> lock(mu);
      unloaded.insert({t, id});
    };
  }
};

std::unique_ptr<rocksdb_rows> open_store_reading_with(const temp_dir& dir, std::size_t threads) {
  rocksdb_rows_options o;
  o.read_threads = threads;
  o.write_buffer_size = 256 << 10;  // several files
  auto r = rocksdb_rows::open(dir.path.string(), kRowFloats, o);
  REQUIRE(r.is_ok());
  return std::move(r).value();
}

}  // namespace

TEST_CASE("rocksdb rows restore_loading hands every row of the checkpoint once as it checks it, on several threads",
          "[storage]") {
  temp_dir dir;
  auto store = open_store_reading_with(dir, 4);
  row_map at_checkpoint;
  for (int part = 0; part < 4; ++part) {  // several writes: several memtables, several files
    std::vector<std::uint32_t> tables;
    std::vector<std::uint64_t> ids;
    for (std::uint64_t i = 0; i < 10000; ++i) {
      tables.push_back(static_cast<std::uint32_t>(i % 5));
      ids.push_back(static_cast<std::uint64_t>(part) * 1000003 + i * 7919);
    }
    write_rows(*store, tables, ids, part, &at_checkpoint);
  }
  REQUIRE(store->checkpoint(1).is_ok());
  fill(*store, 5000, 9);  // live rows that differ
  handed_rows handed;
  const ss::status s = store->restore_loading(1, handed.load(kRowFloats), handed.unload());
  INFO(s.to_string());
  REQUIRE(s.is_ok());
  CHECK(handed.loaded.size() == at_checkpoint.size());  // once each
  CHECK(handed.values == at_checkpoint);
  CHECK(handed.unloaded.empty());
  CHECK(scan_all(*store) == at_checkpoint);
  CHECK(store->rows() == at_checkpoint.size());
}

TEST_CASE("rocksdb rows restore_loading of a checkpoint that fails its check takes back every row it handed out",
          "[storage]") {
  temp_dir dir;
  auto store = open_store_reading_with(dir, 3);
  fill(*store, 20000);
  REQUIRE(store->checkpoint(7).is_ok());
  std::string expected;
  SECTION("a record fails its checksum") {
    flip_byte_in_checkpoint_row(store->checkpoint_path(7), 3, 12345);
    expected = "checkpoint 7 is corrupt: row (3, 12345) fails its checksum";
  }
  SECTION("a row is missing (every record passes; the count does not)") {
    delete_checkpoint_row(store->checkpoint_path(7), 3, 12345);
    expected = "checkpoint 7 is corrupt: its manifest promises 20001 rows, found 20000";
  }
  fill(*store, 3000, 4);
  const row_map live_before = scan_all(*store);
  handed_rows handed;
  const ss::status s = store->restore_loading(7, handed.load(kRowFloats), handed.unload());
  CHECK(s.code() == errc::corrupt);
  CHECK(s.message() == expected);
  CHECK(s.message() == store->verify(7).message());
  CHECK(handed.unloaded == handed.loaded);  // each row handed out, taken back
  CHECK(scan_all(*store) == live_before);   // the live rows as they were
}

TEST_CASE("rocksdb rows open puts back the live DB a crashed restore had moved aside", "[storage]") {
  temp_dir dir;
  row_map expect;
  {
    auto store = open_store(dir);
    expect = fill(*store, 100);
  }
  fs::rename(dir.path / "live", dir.path / "live.old");  // crash between the two renames
  fs::create_directories(dir.path / "live.restore");
  auto store = open_store(dir);
  CHECK(store->rows() == 101);
  CHECK(scan_all(*store) == expect);
  CHECK_FALSE(fs::exists(dir.path / "live.old"));
  CHECK_FALSE(fs::exists(dir.path / "live.restore"));
}

TEST_CASE("rocksdb rows a corrupt CURRENT sets the live DB aside and says why; the checkpoint restores it",
          "[storage]") {
  temp_dir dir;
  row_map at_checkpoint;
  {
    auto store = open_store(dir);
    at_checkpoint = fill(*store, 2000);
    REQUIRE(store->checkpoint(1).is_ok());
    CHECK(store->live_damage().empty());
  }
  write_file(dir.path / "live" / "CURRENT", "garbage\n");
  auto store = open_store(dir);  // opens instead of failing at every start
  const std::string damage = store->live_damage();
  CHECK(damage.find("CURRENT") != std::string::npos);
  CHECK(damage.find("live.damaged-") != std::string::npos);
  CHECK(store->rows() == 0);
  bool kept = false;
  for (const auto& e : fs::directory_iterator(dir.path))
    kept = kept || e.path().filename().string().rfind("live.damaged-", 0) == 0;
  CHECK(kept);  // kept for a post-mortem
  REQUIRE(store->restore(1).is_ok());
  CHECK(scan_all(*store) == at_checkpoint);
}

TEST_CASE("rocksdb rows refuses a live DB of another row size", "[storage]") {
  temp_dir dir;
  {
    auto store = open_store(dir, 17);
    fill(*store, 10);
  }
  auto r = rocksdb_rows::open(dir.path.string(), 9, rocksdb_rows_options{});
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.error().code() == errc::invalid_argument);
  CHECK_THAT(r.error().message(), Catch::Contains("holds rows of 17 floats, opened for rows of 9 floats"));
  CHECK(rocksdb_rows::open(dir.path.string(), 0, rocksdb_rows_options{}).error().code() == errc::invalid_argument);
  auto store = open_store(dir, 17);  // the right size still opens
  CHECK(store->rows() == 11);
}

TEST_CASE("rocksdb rows refuses a live DB of another row layout, even of the same size", "[storage]") {
  // 16 fp32 values and an Adagrad value take 17 slots, as do 32 bf16 values and one: only the
  // layout tells them apart.
  temp_dir dir;
  rocksdb_rows_options made;
  made.row_layout = "16 fp32 values, 1 fp32 optimizer value";
  {
    auto store = rocksdb_rows::open(dir.path.string(), 17, made);
    REQUIRE(store.is_ok());
    fill(**store, 10);
  }
  rocksdb_rows_options other = made;
  other.row_layout = "32 bf16 values, 1 fp32 optimizer value";
  auto r = rocksdb_rows::open(dir.path.string(), 17, other);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.error().code() == errc::invalid_argument);
  CHECK_THAT(r.error().message(),
             Catch::Contains("holds rows of 16 fp32 values, 1 fp32 optimizer value, opened for rows of 32 bf16 "
                             "values, 1 fp32 optimizer value (was --row-precision or the model changed?"));
  // The layout it was made with opens, rows intact.
  auto again = rocksdb_rows::open(dir.path.string(), 17, made);
  REQUIRE(again.is_ok());
  CHECK((*again)->rows() == 11);  // fill(10) writes 11
}

TEST_CASE("rocksdb rows takes on the layout of a store made before layouts were kept", "[storage]") {
  temp_dir dir;
  {
    auto store = open_store(dir, 17);  // no layout
    fill(*store, 10);
  }
  rocksdb_rows_options named;
  named.row_layout = "16 fp32 values, 1 fp32 optimizer value";
  REQUIRE(rocksdb_rows::open(dir.path.string(), 17, named).is_ok());
  named.row_layout = "32 bf16 values, 1 fp32 optimizer value";
  auto r = rocksdb_rows::open(dir.path.string(), 17, named);  // the layout it took on is kept
  REQUIRE_FALSE(r.is_ok());
  CHECK_THAT(r.error().message(), Catch::Contains("holds rows of 16 fp32 values"));
}

TEST_CASE("rocksdb rows scan reports a corrupt live record", "[storage]") {
  temp_dir dir;
  {
    auto store = open_store(dir);
    fill(*store, 10);
  }
  flip_byte_in_checkpoint_row((dir.path / "live").string(), 3, 12345);
  auto store = open_store(dir);
  const ss::status s = store->scan([](std::uint32_t, std::uint64_t, const float*) {});
  CHECK(s.code() == errc::corrupt);
  CHECK_THAT(s.message(), Catch::Contains("row (3, 12345) fails its checksum"));
  // A checkpoint of corrupt live rows is refused rather than blessed by a manifest.
  auto cp = store->checkpoint(1);
  CHECK(cp.error().code() == errc::corrupt);
  CHECK(store->checkpoints()->empty());
}

TEST_CASE("rocksdb rows options lz4 and synced writes work", "[storage]") {
  temp_dir dir;
  rocksdb_rows_options o;
  o.compression = ss::storage::rocksdb_compression::lz4;
  o.sync_writes = true;
  o.bloom_bits_per_key = 0;
  o.write_buffer_size = 1 << 20;  // several flushes
  auto r = rocksdb_rows::open(dir.path.string(), kRowFloats, o);
  REQUIRE(r.is_ok());
  auto& store = **r;
  row_map expect = fill(store, 30000);
  const row_map more = fill(store, 30000, 1);
  for (const auto& [k, v] : more) expect[k] = v;
  CHECK(store.rows() == 30001);
  CHECK(scan_all(store) == expect);
  REQUIRE(store.checkpoint(1).is_ok());
  CHECK(store.verify(1).is_ok());
}

TEST_CASE("rocksdb rows without an exact count store, overwrite and erase alike, and estimate rows", "[storage]") {
  temp_dir dir;
  rocksdb_rows_options o;
  o.exact_count = false;  // what a shard with a memory budget opens
  auto r = rocksdb_rows::open(dir.path.string(), kRowFloats, o);
  REQUIRE(r.is_ok());
  auto& store = **r;
  row_map expect = fill(store, 20000);
  const row_map more = fill(store, 20000, 1);  // overwrites, and one new row
  for (const auto& [k, v] : more) expect[k] = v;
  // Erasing stored rows and absent ones.
  std::vector<std::uint32_t> tables;
  std::vector<std::uint64_t> ids;
  for (auto it = expect.begin(); tables.size() < 5000; ++it) {
    tables.push_back(it->first.first);
    ids.push_back(it->first.second);
  }
  tables.push_back(77);
  ids.push_back(1);
  REQUIRE(store.erase(tables.data(), ids.data(), tables.size()).is_ok());
  for (std::size_t i = 0; i + 1 < tables.size(); ++i) expect.erase({tables[i], ids[i]});
  CHECK(scan_all(store) == expect);
  // An estimate: within a quarter of the 15,001 rows (RocksDB counts keys per memtable and file).
  const auto estimate = static_cast<double>(store.rows());
  CHECK(estimate > 0.75 * 15001);
  CHECK(estimate < 1.25 * (20001 + 20001 + 5001));  // overwrites and deletions may count until compacted
  REQUIRE(store.checkpoint(1).is_ok());
  CHECK(store.verify(1).is_ok());
}
