// Durable embedding rows (services/storage, RocksDB): what a shard's persistence costs. Writes
// --rows rows of --dim values + --state optimizer floats in pages of --page rows (like the shard's
// background flusher), rewrites them all (the flusher's steady state: dirty rows already stored),
// then times a checkpoint (and its size on disk), verify, a full scan (the load of a restart),
// a reopen (which counts the rows) and a restore. Times are also given per million rows. Last, a
// resume as a shard does it (restore, then a scan that loads every row) against reading the
// checkpoint's files straight from the disk (O_DIRECT, 1 MiB reads): MB/s of checkpoint each.
//
//   snapshot_bench [--rows N] [--dim D] [--state S] [--page P] [--tables T] [--dir DIR]
//                  [--compression none|lz4|zstd] [--bloom-bits B] [--sync] [--threads N]
//
// --threads: the store's read_threads (checks and loads by ranges of keys; 0, the default: one
// per CPU). The resume loads the rows into a shard_store on those threads, as a shard does.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <fcntl.h>
#include <unistd.h>
#include <vector>

#include "ss/core/embedding/shard_store.hpp"
#include "ss/core/hash.hpp"
#include "ss/storage/rocksdb_rows.hpp"

using clock_type = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

std::uint64_t tree_bytes(const fs::path& p) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2)) total += it->file_size(e2);
  }
  return total;
}

// Reads every file under `p` with O_DIRECT (past the page cache) in 1 MiB reads: bytes per second,
// or 0 where the file system refuses O_DIRECT.
double direct_read_bytes_per_s(const fs::path& p) {
  constexpr std::size_t chunk = 1 << 20;
  void* buf = nullptr;
  if (posix_memalign(&buf, 4096, chunk) != 0) return 0;
  std::uint64_t total = 0;
  const auto t0 = clock_type::now();
  std::error_code ec;
  for (fs::recursive_directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (!it->is_regular_file(e2)) continue;
    const int fd = ::open(it->path().c_str(), O_RDONLY | O_DIRECT);
    if (fd < 0) {
      std::free(buf);
      return 0;
    }
    for (ssize_t n; (n = ::read(fd, buf, chunk)) > 0;) total += static_cast<std::uint64_t>(n);
    ::close(fd);
  }
  std::free(buf);
  return static_cast<double>(total) / seconds_since(t0);
}

[[noreturn]] void die(const std::string& what, const ss::status& s) {
  std::fprintf(stderr, "snapshot_bench: %s: %s\n", what.c_str(), s.to_string().c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t rows = 1000000;
  std::uint32_t dim = 16, state = 1, tables = 26;
  std::size_t page = 65536;
  std::string dir;
  ss::storage::rocksdb_rows_options options;
  std::string compression = "none";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "snapshot_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--rows") {
      rows = std::strtoull(next().c_str(), nullptr, 10);
    } else if (a == "--dim") {
      dim = static_cast<std::uint32_t>(std::strtoul(next().c_str(), nullptr, 10));
    } else if (a == "--state") {
      state = static_cast<std::uint32_t>(std::strtoul(next().c_str(), nullptr, 10));
    } else if (a == "--page") {
      page = std::strtoull(next().c_str(), nullptr, 10);
    } else if (a == "--tables") {
      tables = static_cast<std::uint32_t>(std::strtoul(next().c_str(), nullptr, 10));
    } else if (a == "--dir") {
      dir = next();
    } else if (a == "--compression") {
      compression = next();
      if (compression == "none") {
        options.compression = ss::storage::rocksdb_compression::none;
      } else if (compression == "lz4") {
        options.compression = ss::storage::rocksdb_compression::lz4;
      } else if (compression == "zstd") {
        options.compression = ss::storage::rocksdb_compression::zstd;
      } else {
        std::fprintf(stderr, "snapshot_bench: --compression is none, lz4 or zstd\n");
        return 2;
      }
    } else if (a == "--bloom-bits") {
      options.bloom_bits_per_key = std::atoi(next().c_str());
    } else if (a == "--sync") {
      options.sync_writes = true;
    } else if (a == "--threads") {
      options.read_threads = std::strtoull(next().c_str(), nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: snapshot_bench [--rows N] [--dim D] [--state S] [--page P] [--tables T] "
                           "[--dir DIR] [--compression none|lz4|zstd] [--bloom-bits B] [--sync] [--threads N]\n");
      return 2;
    }
  }
  if (rows == 0 || page == 0 || tables == 0 || dim + state == 0) {
    std::fprintf(stderr, "snapshot_bench: sizes must be positive\n");
    return 2;
  }
  const bool own_dir = dir.empty();
  if (own_dir) dir = (fs::temp_directory_path() / ("ss-snapshot-bench-" + std::to_string(::getpid()))).string();
  fs::remove_all(dir);
  const std::uint32_t rf = dim + state;

  auto opened = ss::storage::rocksdb_rows::open(dir, rf, options);
  if (!opened) die("open", opened.error());
  std::unique_ptr<ss::storage::rocksdb_rows> store = std::move(opened).value();

  // Keys: hashed ids over `tables` tables (random key order, like a shard's dirty rows).
  std::vector<std::uint32_t> tbl(rows);
  std::vector<std::uint64_t> ids(rows);
  for (std::uint64_t i = 0; i < rows; ++i) {
    tbl[i] = static_cast<std::uint32_t>(i % tables);
    ids[i] = ss::mix64(i + 1);
  }
  std::vector<float> data(page * rf);
  auto write_all = [&](float version) {
    for (std::uint64_t at = 0; at < rows; at += page) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(page, rows - at));
      for (std::size_t i = 0; i < n; ++i) {
        for (std::uint32_t j = 0; j < rf; ++j) {
          data[i * rf + j] = static_cast<float>(static_cast<double>((ids[at + i] >> (j * 3)) & 0xFFFFF) * 1e-6) + version;
        }
      }
      const ss::status s = store->write(&tbl[at], &ids[at], data.data(), n);
      if (!s) die("write", s);
    }
  };

  auto t0 = clock_type::now();
  write_all(0.0f);
  const double write_s = seconds_since(t0);
  if (store->rows() != rows) die("rows after write", ss::status(ss::errc::internal, std::to_string(store->rows())));

  t0 = clock_type::now();
  write_all(1.0f);
  const double overwrite_s = seconds_since(t0);
  if (store->rows() != rows) die("rows after overwrite", ss::status(ss::errc::internal, std::to_string(store->rows())));

  t0 = clock_type::now();
  auto cp = store->checkpoint(1);
  if (!cp) die("checkpoint", cp.error());
  const double checkpoint_s = seconds_since(t0);
  const std::uint64_t checkpoint_bytes = cp->bytes;
  const std::uint64_t live_bytes = tree_bytes(fs::path(dir) / "live");

  t0 = clock_type::now();
  ss::status s = store->verify(1);
  if (!s) die("verify", s);
  const double verify_s = seconds_since(t0);

  std::uint64_t scanned = 0;
  double checksum = 0;
  t0 = clock_type::now();
  s = store->scan([&](std::uint32_t, std::uint64_t, const float* row) {
    ++scanned;
    checksum += row[0];
  });
  if (!s) die("scan", s);
  const double scan_s = seconds_since(t0);
  if (scanned != rows) die("scan count", ss::status(ss::errc::internal, std::to_string(scanned)));

  store.reset();
  t0 = clock_type::now();
  opened = ss::storage::rocksdb_rows::open(dir, rf, options);
  if (!opened) die("reopen", opened.error());
  store = std::move(opened).value();
  const double reopen_s = seconds_since(t0);

  write_all(2.0f);  // something to replace
  t0 = clock_type::now();
  s = store->restore(1);
  if (!s) die("restore", s);
  const double restore_s = seconds_since(t0);
  if (store->rows() != rows) die("rows after restore", ss::status(ss::errc::internal, std::to_string(store->rows())));

  // A resume as a shard does it: the checkpoint's rows into a shard_store, checked as they load
  // (restore_loading, one pass); then as it did before, the check and then the load (two passes);
  // then the disk's own rate.
  ss::embedding::shard_store_options so;
  so.dim = rf - so.optimizer.state_floats();
  auto timed_resume = [&](bool one_pass) {
    write_all(one_pass ? 3.0f : 4.0f);
    ss::embedding::shard_store shard(so);
    std::atomic<bool> put_failed{false};
    const ss::embedding::row_visitor load = [&](std::uint32_t t, std::uint64_t id, const float* row) {
      if (!shard.put(t, id, row).is_ok()) put_failed = true;
    };
    const auto start = clock_type::now();
    ss::status r = one_pass ? store->restore_loading(1, load, [](std::uint32_t, std::uint64_t, const float*) {})
                            : store->restore(1);
    if (r && !one_pass) r = store->scan_concurrently(load);
    if (!r) die("resume", r);
    if (put_failed || shard.stats().rows != rows)
      die("resume", ss::status(ss::errc::internal, std::to_string(shard.stats().rows) + " rows loaded"));
    return seconds_since(start);
  };
  const std::size_t threads = store->read_threads();
  const double resume_s = timed_resume(true);
  const double two_pass_s = timed_resume(false);
  const double resume_mb_s = static_cast<double>(checkpoint_bytes) / resume_s / 1e6;
  const double disk_mb_s = direct_read_bytes_per_s(fs::path(dir) / "checkpoints") / 1e6;

  const double m = static_cast<double>(rows) / 1e6;
  std::printf("snapshot_bench: %llu rows of %u floats (%u values + %u state), pages of %zu rows, %u tables, "
              "compression %s, bloom %d bits, sync %s\n",
              static_cast<unsigned long long>(rows), rf, dim, state, page, tables, compression.c_str(),
              options.bloom_bits_per_key, options.sync_writes ? "on" : "off");
  std::printf("  write (new rows)    %7.3f s  %10.0f rows/s  %6.3f s per million rows\n", write_s, rows / write_s, write_s / m);
  std::printf("  write (overwrites)  %7.3f s  %10.0f rows/s  %6.3f s per million rows\n", overwrite_s, rows / overwrite_s,
              overwrite_s / m);
  std::printf("  checkpoint          %7.3f s  %6.3f s per million rows, %.1f MB on disk (%.1f bytes/row; live DB %.1f MB)\n",
              checkpoint_s, checkpoint_s / m, checkpoint_bytes / 1e6, static_cast<double>(checkpoint_bytes) / rows,
              live_bytes / 1e6);
  std::printf("  verify              %7.3f s  %6.3f s per million rows\n", verify_s, verify_s / m);
  std::printf("  scan (load)         %7.3f s  %6.3f s per million rows (%.0f rows/s)\n", scan_s, scan_s / m, rows / scan_s);
  std::printf("  reopen (count)      %7.3f s  %6.3f s per million rows\n", reopen_s, reopen_s / m);
  std::printf("  restore             %7.3f s  %6.3f s per million rows\n", restore_s, restore_s / m);
  std::printf("  resume (restore + load, %zu threads) %7.3f s  %6.3f s per million rows, %.0f MB/s of checkpoint; the "
              "disk reads it at %.0f MB/s (O_DIRECT): %.0f%%; in two passes (check, then load) %.3f s: %.2fx\n",
              threads, resume_s, resume_s / m, resume_mb_s, disk_mb_s, disk_mb_s > 0 ? 100 * resume_mb_s / disk_mb_s : 0.0,
              two_pass_s, two_pass_s / resume_s);
  std::printf("{\"bench\":\"snapshot\",\"rows\":%llu,\"row_floats\":%u,\"page\":%zu,\"compression\":\"%s\","
              "\"bloom_bits\":%d,\"sync\":%s,\"write_rows_per_sec\":%.0f,\"overwrite_rows_per_sec\":%.0f,"
              "\"write_s_per_m\":%.4f,\"overwrite_s_per_m\":%.4f,\"checkpoint_s_per_m\":%.4f,\"checkpoint_bytes\":%llu,"
              "\"checkpoint_bytes_per_row\":%.2f,\"verify_s_per_m\":%.4f,\"scan_s_per_m\":%.4f,\"reopen_s_per_m\":%.4f,"
              "\"restore_s_per_m\":%.4f,\"resume_threads\":%zu,\"resume_s_per_m\":%.4f,\"resume_two_pass_s_per_m\":%.4f,\"resume_mb_per_s\":%.1f,\"disk_direct_mb_per_s\":%.1f,"
              "\"scan_checksum\":%.1f}\n",
              static_cast<unsigned long long>(rows), rf, page, compression.c_str(), options.bloom_bits_per_key,
              options.sync_writes ? "true" : "false", rows / write_s, rows / overwrite_s, write_s / m, overwrite_s / m,
              checkpoint_s / m, static_cast<unsigned long long>(checkpoint_bytes),
              static_cast<double>(checkpoint_bytes) / rows, verify_s / m, scan_s / m, reopen_s / m, restore_s / m,
              threads, resume_s / m, two_pass_s / m, resume_mb_s, disk_mb_s, checksum);
  store.reset();
  if (own_dir) fs::remove_all(dir);
  return 0;
}
