// The delta file: round trips (fp32, int8 within its error bound, tombstones, the dense part),
// the streaming writer's contract, and every way a file can be wrong (truncated anywhere, a
// flipped byte anywhere, another format, a newer version, values a writer never writes).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "publish_test_util.hpp"
#include "ss/core/checksum.hpp"
#include "ss/core/embedding/row_precision.hpp"
#include "ss/core/io/byte_order.hpp"
#include "ss/core/publish/delta_file.hpp"
#include "support/files.hpp"
#include "support/process.hpp"

using namespace ss;
using namespace ss::publish;
using ss::test::contains;
using ss::test::read_file;
using ss::test::write_file;
namespace fs = std::filesystem;

namespace {

// What a delta holds, as written and as read back.
struct delta_content {
  std::vector<float> dense;
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<float>> rows;  // (table, id) -> values
  std::vector<std::pair<std::uint32_t, std::uint64_t>> tombstones;             // in file order
  std::vector<std::string> order;                                              // "R<table>" / "T<table>" per block
};

delta_head head_of(row_encoding e, model_shape shape = {4, 6, 37}) { return delta_head{42, 40, 41, shape, e}; }

// Writes a delta with rows in tables 0 and 2 (passed with a stride of dim + 2), tombstones in
// tables 1 and 2, and returns what it wrote.
delta_content write_sample(const std::string& path, row_encoding e, std::size_t rows_per_table = 50) {
  const delta_head h = head_of(e);
  const std::size_t dim = h.shape.dim, stride = dim + 2;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  delta_content c;
  c.dense.resize(h.shape.dense_params);
  for (auto& v : c.dense) v = u(rng);
  auto w = delta_writer::open(path, h);
  REQUIRE(w.is_ok());
  REQUIRE(w->write_dense(c.dense.data(), c.dense.size()).is_ok());
  for (std::uint32_t t : {0u, 2u}) {
    std::vector<std::uint64_t> ids(rows_per_table);
    std::vector<float> values(rows_per_table * stride);
    for (std::size_t i = 0; i < rows_per_table; ++i) {
      ids[i] = rng();
      // Rows of very different magnitudes: int8's scale is per row.
      const float magnitude = std::pow(10.0f, static_cast<float>(i % 7) - 3.0f);
      for (std::size_t k = 0; k < stride; ++k) values[i * stride + k] = u(rng) * magnitude;
      if (i == 3) std::fill(values.begin() + static_cast<long>(i * stride), values.begin() + static_cast<long>(i * stride + dim), 0.0f);
      c.rows[{t, ids[i]}] = std::vector<float>(values.begin() + static_cast<long>(i * stride),
                                               values.begin() + static_cast<long>(i * stride + dim));
    }
    REQUIRE(w->add_rows(t, ids.data(), values.data(), rows_per_table, stride).is_ok());
    c.order.push_back("R" + std::to_string(t));
    const std::uint64_t gone[3] = {rng(), rng(), ids[0]};
    const std::uint32_t tomb_table = t == 0 ? 1 : 2;
    REQUIRE(w->add_tombstones(tomb_table, gone, 3).is_ok());
    c.order.push_back("T" + std::to_string(tomb_table));
    for (auto id : gone) c.tombstones.emplace_back(tomb_table, id);
  }
  auto stats = w->finish();
  REQUIRE(stats.is_ok());
  CHECK(stats->rows == 2 * rows_per_table);
  CHECK(stats->tombstones == 6);
  CHECK(stats->row_blocks == 2);
  CHECK(stats->tombstone_blocks == 2);
  CHECK(stats->table_rows == std::vector<std::uint64_t>{rows_per_table, 0, rows_per_table, 0});
  CHECK(stats->table_tombstones == std::vector<std::uint64_t>{0, 3, 3, 0});
  CHECK(stats->bytes == fs::file_size(path));
  const std::string bytes = read_file(path);
  CHECK(stats->crc32c == crc32c(bytes.data(), bytes.size()));
  CHECK_FALSE(fs::exists(path + ".tmp"));
  return c;
}

result<delta_content> read_back(const std::string& path) {
  auto r = delta_reader::open(path);
  if (!r.is_ok()) return r.error();
  delta_content c;
  auto dense = r->read_dense();
  if (!dense.is_ok()) return dense.error();
  c.dense = *dense;
  const std::size_t dim = r->head().shape.dim;
  SS_RETURN_IF_ERROR(r->for_each_block(
      [&](std::uint32_t t, const std::uint64_t* ids, const float* values, std::size_t n) {
        c.order.push_back("R" + std::to_string(t));
        for (std::size_t i = 0; i < n; ++i) c.rows[{t, ids[i]}] = std::vector<float>(values + i * dim, values + (i + 1) * dim);
        return status::ok();
      },
      [&](std::uint32_t t, const std::uint64_t* ids, std::size_t n) {
        c.order.push_back("T" + std::to_string(t));
        for (std::size_t i = 0; i < n; ++i) c.tombstones.emplace_back(t, ids[i]);
        return status::ok();
      }));
  return c;
}

// The byte offsets of a file's sections: [start, end) of each, from the section heads.
struct section_at {
  std::string tag;
  std::size_t start, payload, end;
};
std::vector<section_at> sections_of(const std::string& bytes) {
  std::vector<section_at> out;
  std::size_t at = 12;
  while (at + 20 <= bytes.size()) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + at);
    const std::string tag(bytes.data() + at, 4);
    const std::uint64_t b = io::get_le<std::uint64_t>(p + 8);
    std::uint64_t payload_bytes = b;
    if (tag == "DENS") payload_bytes = 4 * b;
    if (tag == "TOMB") payload_bytes = 8 * b;
    if (tag == "ROWS") {
      const std::size_t dim = io::get_le<std::uint32_t>(reinterpret_cast<const unsigned char*>(bytes.data()) + 32 + 28);
      const std::uint32_t enc = io::get_le<std::uint32_t>(reinterpret_cast<const unsigned char*>(bytes.data()) + 32 + 40);
      payload_bytes = b * delta_row_bytes(static_cast<row_encoding>(enc), dim);
    }
    out.push_back({tag, at, at + 20, at + 20 + payload_bytes + 4});
    at = out.back().end;
  }
  return out;
}

// Rewrites a section's payload CRC after the test changed its payload (so the change itself is
// what the reader meets).
void reseal(std::string& bytes, const section_at& s) {
  const std::uint32_t crc = crc32c(bytes.data() + s.payload, s.end - 4 - s.payload);
  io::put_le(reinterpret_cast<unsigned char*>(&bytes[s.end - 4]), crc);
}

}  // namespace

TEST_CASE("delta file: fp32 round trip keeps the dense part, every row bit for bit and the tombstones in order",
          "[publish]") {
  test::temp_dir dir;
  const std::string path = dir.str("000000000042.delta.ssd");
  const delta_content wrote = write_sample(path, row_encoding::fp32);
  auto back = read_back(path);
  REQUIRE(back.is_ok());
  CHECK(back->dense == wrote.dense);
  CHECK(back->rows == wrote.rows);
  CHECK(back->tombstones == wrote.tombstones);
  CHECK(back->order == wrote.order);

  auto r = delta_reader::open(path);
  REQUIRE(r.is_ok());
  CHECK(r->head().sequence == 42);
  CHECK(r->head().base == 40);
  CHECK(r->head().previous == 41);
  CHECK(r->head().shape == model_shape{4, 6, 37});
  CHECK(r->head().encoding == row_encoding::fp32);
  CHECK(r->format_version() == 1);  // what version 1 readers read: no 16-bit rows in it
  auto verified = verify_delta(path);
  REQUIRE(verified.is_ok());
  CHECK(verified->rows == 100);
  CHECK(verified->crc32c == crc32c(read_file(path).data(), fs::file_size(path)));
}

TEST_CASE("delta file: int8 rows come back within half a step of their row's scale", "[publish]") {
  test::temp_dir dir;
  const std::string path = dir.str("q.ssd");
  const delta_content wrote = write_sample(path, row_encoding::int8, 200);
  auto back = read_back(path);
  REQUIRE(back.is_ok());
  CHECK(back->dense == wrote.dense);  // the dense part is always fp32
  CHECK(back->tombstones == wrote.tombstones);
  REQUIRE(back->rows.size() == wrote.rows.size());
  double worst_ratio = 0;  // largest error / bound seen: the bound must hold, and not be loose
  for (const auto& [key, values] : wrote.rows) {
    const auto it = back->rows.find(key);
    REQUIRE(it != back->rows.end());
    float max_abs = 0;
    for (float v : values) max_abs = std::max(max_abs, std::fabs(v));
    // The documented bound: scale / 2 = max|v| / 254, plus float rounding of the scale and product.
    const double bound = max_abs / 254.0 * (1 + 1e-4) + 1e-30;
    for (std::size_t k = 0; k < values.size(); ++k) {
      const double err = std::fabs(static_cast<double>(values[k]) - it->second[k]);
      INFO("table " << key.first << " id " << key.second << " value " << k);
      CHECK(err <= bound);
      if (max_abs > 0) worst_ratio = std::max(worst_ratio, err / bound);
    }
    if (max_abs == 0) CHECK(it->second == values);  // an all-zero row stays exactly zero
  }
  CHECK(worst_ratio > 0.5);  // random values use most of the half step
  // Smaller than fp32 by the per-row layout: 12 + dim bytes against 8 + 4 dim.
  const std::string fp32_path = dir.str("f.ssd");
  write_sample(fp32_path, row_encoding::fp32, 200);
  const auto q_bytes = fs::file_size(path), f_bytes = fs::file_size(fp32_path);
  CHECK(f_bytes - q_bytes == 400 * ((8 + 4 * 6) - (12 + 6)));
}

TEST_CASE("delta file: bf16 and fp16 rows come back as their nearest 16-bit values, in half fp32's row bytes",
          "[publish]") {
  test::temp_dir dir;
  const std::string fp32_path = dir.str("f.ssd");
  write_sample(fp32_path, row_encoding::fp32, 200);
  for (const auto& [e, p] : {std::pair{row_encoding::bf16, embedding::row_precision::bf16},
                             std::pair{row_encoding::fp16, embedding::row_precision::fp16}}) {
    INFO(to_string(e));
    const std::string path = dir.str(std::string(to_string(e)) + ".ssd");
    const delta_content wrote = write_sample(path, e, 200);
    auto back = read_back(path);
    REQUIRE(back.is_ok());
    CHECK(back->dense == wrote.dense);  // the dense part is always fp32
    CHECK(back->tombstones == wrote.tombstones);
    REQUIRE(back->rows.size() == wrote.rows.size());
    std::size_t changed = 0;
    for (const auto& [key, values] : wrote.rows) {
      std::vector<float> nearest = values;
      embedding::round_to_nearest(nearest.data(), nearest.size(), p);
      CHECK(back->rows.at(key) == nearest);
      changed += nearest != values;
    }
    CHECK(changed > 0);  // random fp32 values do round
    auto r = delta_reader::open(path);
    REQUIRE(r.is_ok());
    CHECK(r->head().encoding == e);
    CHECK(r->format_version() == 2);  // version 1 readers refuse it by its version, not its encoding
    // 8 + 2 dim bytes a row against 8 + 4 dim.
    CHECK(fs::file_size(fp32_path) - fs::file_size(path) == 400 * (4 * 6 - 2 * 6));
    // Rows already at that precision (a 16-bit job's) go through exactly: written again, read the same.
    const std::string again = dir.str(std::string(to_string(e)) + "-again.ssd");
    auto w = delta_writer::open(again, head_of(e));
    REQUIRE(w.is_ok());
    REQUIRE(w->write_dense(back->dense.data(), back->dense.size()).is_ok());
    for (const auto& [key, values] : back->rows) REQUIRE(w->add_rows(key.first, &key.second, values.data(), 1).is_ok());
    REQUIRE(w->finish().is_ok());
    auto twice = read_back(again);
    REQUIRE(twice.is_ok());
    CHECK(twice->rows == back->rows);
  }
  // fp16 ends at 65504: a larger value is refused with the way out, never written as infinity.
  auto w = delta_writer::open(dir.str("big.ssd"), head_of(row_encoding::fp16));
  REQUIRE(w.is_ok());
  const std::vector<float> dense(37, 0.5f);
  REQUIRE(w->write_dense(dense.data(), dense.size()).is_ok());
  const std::vector<float> big{1, 2, 3, 70000, 5, 6};
  const std::uint64_t id = 77;
  const status refused = w->add_rows(1, &id, big.data(), 1);
  CHECK(refused.code() == errc::out_of_range);
  CHECK(contains(refused.message(), "row 77 of table 1 has a value beyond fp16's range (65504)"));
  CHECK_FALSE(fs::exists(dir.str("big.ssd")));
  CHECK_FALSE(fs::exists(dir.str("big.ssd.tmp")));
  // bf16 holds FP32's range but for its last half step: a value past it would be infinity.
  auto wb = delta_writer::open(dir.str("huge.ssd"), head_of(row_encoding::bf16));
  REQUIRE(wb.is_ok());
  REQUIRE(wb->write_dense(dense.data(), dense.size()).is_ok());
  const std::vector<float> huge{1, 2, 3, 3.4e38f, 5, 6};
  const status beyond = wb->add_rows(1, &id, huge.data(), 1);
  CHECK(beyond.code() == errc::out_of_range);
  CHECK(contains(beyond.message(), "row 77 of table 1 has a value beyond bf16's range"));
  CHECK_FALSE(fs::exists(dir.str("huge.ssd")));
}

TEST_CASE("delta file: a 16-bit encoding in a version 1 file, and a NaN in a 16-bit row, are refused", "[publish]") {
  test::temp_dir dir;
  const std::string path = dir.str("h.ssd");
  write_sample(path, row_encoding::bf16, 3);
  const std::string bytes = read_file(path);
  const auto layout = sections_of(bytes);
  const std::string bad = dir.str("bad.ssd");
  std::string old = bytes;
  old[8] = 1;
  write_file(bad, old);
  auto r = delta_reader::open(bad);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.error().code() == errc::corrupt);
  CHECK(contains(r.error().message(), "the head names row encoding 2 (version 1: 0 fp32, 1 int8)"));
  std::string unknown = bytes;
  io::put_le(reinterpret_cast<unsigned char*>(&unknown[layout[0].payload + 40]), std::uint32_t{4});
  reseal(unknown, layout[0]);
  write_file(bad, unknown);
  CHECK(contains(delta_reader::open(bad).error().message(), "row encoding 4 (version 2: 0 fp32, 1 int8, 2 bf16, 3 fp16)"));
  std::string nan_row = bytes;
  io::put_le(reinterpret_cast<unsigned char*>(&nan_row[layout[2].payload + 8 + 2]), std::uint16_t{0x7fc0});
  reseal(nan_row, layout[2]);
  write_file(bad, nan_row);
  auto back = read_back(bad);
  REQUIRE_FALSE(back.is_ok());
  CHECK(contains(back.error().message(), "row block 1 (table 0): row "));
  CHECK(contains(back.error().message(), "has NaN or infinite values"));
}

TEST_CASE("delta file: an empty delta (dense part only) round trips", "[publish]") {
  test::temp_dir dir;
  const std::string path = dir.str("e.ssd");
  auto w = delta_writer::open(path, head_of(row_encoding::int8));
  REQUIRE(w.is_ok());
  std::vector<float> dense(37, 1.5f);
  REQUIRE(w->write_dense(dense.data(), dense.size()).is_ok());
  REQUIRE(w->add_rows(0, nullptr, nullptr, 0).is_ok());
  REQUIRE(w->add_tombstones(0, nullptr, 0).is_ok());
  auto stats = w->finish();
  REQUIRE(stats.is_ok());
  CHECK(stats->rows == 0);
  CHECK(stats->row_blocks == 0);
  auto back = read_back(path);
  REQUIRE(back.is_ok());
  CHECK(back->dense == dense);
  CHECK(back->rows.empty());
  CHECK(back->order.empty());
}

TEST_CASE("delta file: large calls are split into blocks of max_delta_block_rows", "[publish]") {
  test::temp_dir dir;
  const std::string path = dir.str("big.ssd");
  const delta_head h = head_of(row_encoding::fp32, {2, 2, 1});
  auto w = delta_writer::open(path, h);
  REQUIRE(w.is_ok());
  const float dense = 0.25f;
  REQUIRE(w->write_dense(&dense, 1).is_ok());
  const std::size_t n = max_delta_block_rows + 3;
  std::vector<std::uint64_t> ids(n);
  std::vector<float> values(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    ids[i] = i;
    values[2 * i] = static_cast<float>(i);
    values[2 * i + 1] = -static_cast<float>(i);
  }
  REQUIRE(w->add_rows(1, ids.data(), values.data(), n).is_ok());
  REQUIRE(w->add_tombstones(0, ids.data(), n).is_ok());
  auto stats = w->finish();
  REQUIRE(stats.is_ok());
  CHECK(stats->row_blocks == 2);
  CHECK(stats->tombstone_blocks == 2);
  std::uint64_t rows = 0, checked = 0;
  auto r = delta_reader::open(path);
  REQUIRE(r.is_ok());
  REQUIRE(r->for_each_block(
                [&](std::uint32_t t, const std::uint64_t* got, const float* v, std::size_t k) {
                  CHECK(t == 1);
                  CHECK(k <= max_delta_block_rows);
                  for (std::size_t i = 0; i < k; ++i, ++rows)
                    if (got[i] != rows || v[2 * i] != static_cast<float>(rows)) return status(errc::internal, "mismatch");
                  return status::ok();
                },
                [&](std::uint32_t, const std::uint64_t*, std::size_t k) {
                  checked += k;
                  return status::ok();
                })
              .is_ok());
  CHECK(rows == n);
  CHECK(checked == n);
}

TEST_CASE("delta file: the writer refuses misuse, fails for good and never leaves a file behind", "[publish]") {
  test::temp_dir dir;
  const std::string path = dir.str("w.ssd");
  write_file(path, "an older file stays until a new one is finished");
  const delta_head h = head_of(row_encoding::fp32);
  std::vector<float> dense(37, 0.0f);
  const std::uint64_t id = 9;
  std::vector<float> row(6, 1.0f);

  SECTION("bad heads") {
    delta_head bad = h;
    bad.shape.dim = 0;
    CHECK(delta_writer::open(path, bad).error().code() == errc::invalid_argument);
    bad = h;
    bad.base = 42;  // a delta builds on an earlier base
    CHECK(contains(delta_writer::open(path, bad).error().message(), "is not a delta's"));
    bad = h;
    bad.previous = 39;  // before its base
    CHECK(delta_writer::open(path, bad).error().code() == errc::invalid_argument);
  }
  SECTION("rows before the dense part") {
    auto w = delta_writer::open(path, h);
    REQUIRE(w.is_ok());
    CHECK(contains(w->add_rows(0, &id, row.data(), 1).message(), "before write_dense()"));
    CHECK_FALSE(w->finish().is_ok());  // failed for good
  }
  SECTION("a wrong dense count") {
    auto w = delta_writer::open(path, h);
    REQUIRE(w.is_ok());
    CHECK(contains(w->write_dense(dense.data(), 36).message(), "got 36 parameters, the head says 37"));
  }
  SECTION("NaN values: training diverged") {
    auto w = delta_writer::open(path, h);
    REQUIRE(w.is_ok());
    REQUIRE(w->write_dense(dense.data(), dense.size()).is_ok());
    row[2] = std::numeric_limits<float>::quiet_NaN();
    const status st = w->add_rows(0, &id, row.data(), 1);
    CHECK(st.code() == errc::out_of_range);
    CHECK(contains(st.message(), "row 9 of table 0 has NaN or infinite values"));
  }
  SECTION("a table the model does not have") {
    auto w = delta_writer::open(path, h);
    REQUIRE(w.is_ok());
    REQUIRE(w->write_dense(dense.data(), dense.size()).is_ok());
    CHECK(contains(w->add_tombstones(4, &id, 1).message(), "add_tombstones() for table 4, the model has 4 tables"));
    CHECK(w->add_rows(0, &id, row.data(), 1).code() == errc::invalid_argument);  // still failed
  }
  SECTION("a stride below the dim") {
    auto w = delta_writer::open(path, h);
    REQUIRE(w.is_ok());
    REQUIRE(w->write_dense(dense.data(), dense.size()).is_ok());
    CHECK(contains(w->add_rows(0, &id, row.data(), 1, 5).message(), "stride 5 is smaller than the dim 6"));
  }
  SECTION("abort, and an unfinished writer destroyed") {
    {
      auto w = delta_writer::open(path, h);
      REQUIRE(w.is_ok());
      REQUIRE(w->write_dense(dense.data(), dense.size()).is_ok());
      CHECK(fs::exists(path + ".tmp"));
      w->abort();
      CHECK(w->finish().error().code() == errc::cancelled);
    }
    {
      auto w = delta_writer::open(path, h);
      REQUIRE(w.is_ok());
    }
  }
  CHECK_FALSE(fs::exists(path + ".tmp"));
  CHECK(read_file(path) == "an older file stays until a new one is finished");
}

TEST_CASE("delta file: a cut at any offset is reported as truncation", "[publish]") {
  test::temp_dir dir;
  const std::string path = dir.str("t.ssd");
  write_sample(path, row_encoding::int8, 4);
  const std::string bytes = read_file(path);
  const std::string cut = dir.str("cut.ssd");
  int failures = 0;
  for (std::size_t n = 0; n < bytes.size() && failures < 5; ++n) {
    write_file(cut, bytes.substr(0, n));
    auto back = read_back(cut);
    // Memory and file readers agree.
    const std::string part = bytes.substr(0, n);
    auto in_memory = delta_reader::open_memory("cut", part.data(), part.size());
    const bool memory_failed_too = !in_memory.is_ok() || !in_memory->for_each_block(
        [](std::uint32_t, const std::uint64_t*, const float*, std::size_t) { return status::ok(); },
        [](std::uint32_t, const std::uint64_t*, std::size_t) { return status::ok(); }).is_ok();
    const std::string want = "truncated after " + std::to_string(n) + " bytes";
    if (back.is_ok() || back.error().code() != errc::corrupt || !contains(back.error().message(), want) ||
        !memory_failed_too) {
      ++failures;
      INFO("cut at " << n << ": " << (back.is_ok() ? std::string("read") : back.error().message()));
      CHECK(false);
    }
  }
  CHECK(failures == 0);
  // Cut at each section boundary: the message says what the file ends after.
  const auto layout = sections_of(bytes);
  REQUIRE(layout.size() == 7);  // HEAD DENS ROWS TOMB ROWS TOMB FOOT
  const std::vector<std::string> after = {"the footer of 4 tables cannot fit", "the file ends after the dense part",
                                          "the file ends after row block 1 (table 0)",
                                          "the file ends after tombstone block 1 (table 1)",
                                          "the file ends after row block 2 (table 2)",
                                          "the file ends after tombstone block 2 (table 2)"};
  for (std::size_t s = 1; s < layout.size(); ++s) {
    write_file(cut, bytes.substr(0, layout[s].start));
    auto back = read_back(cut);
    REQUIRE_FALSE(back.is_ok());
    INFO(back.error().message());
    CHECK(contains(back.error().message(), after[s - 1]));
  }
  write_file(cut, bytes + "xy");
  auto longer = verify_delta(cut);
  REQUIRE_FALSE(longer.is_ok());
  CHECK(contains(longer.error().message(), "2 unexpected bytes after the footer"));
}

TEST_CASE("delta file: a flipped byte anywhere is refused, naming the section", "[publish]") {
  test::temp_dir dir;
  const std::string path = dir.str("f.ssd");
  write_sample(path, row_encoding::fp32, 3);
  const std::string bytes = read_file(path);
  const auto layout = sections_of(bytes);
  REQUIRE(layout.size() == 7);
  REQUIRE(layout.back().end == bytes.size());
  const std::vector<std::string> names = {"the head", "the dense part", "row block 1", "tombstone block 1",
                                          "row block 2", "tombstone block 2", "the footer"};
  const std::string bad = dir.str("bad.ssd");
  int failures = 0;
  for (std::size_t i = 0; i < bytes.size() && failures < 5; ++i) {
    std::string flipped = bytes;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x21);
    write_file(bad, flipped);
    auto back = read_back(bad);
    std::string want = i < 8 ? "no SSDELTA magic" : i < 12 ? "version" : "";
    for (std::size_t s = 0; s < layout.size() && want.empty(); ++s)
      if (i < layout[s].end) want = names[s];
    // A damaged section head is met as "the section after <the previous one>".
    std::string also = want;
    for (std::size_t s = 1; s < layout.size(); ++s)
      if (i >= layout[s].start && i < layout[s].payload) also = "after " + names[s - 1];
    if (back.is_ok() || (!contains(back.error().message(), want) && !contains(back.error().message(), also))) {
      ++failures;
      INFO("byte " << i << " wants '" << want << "': " << (back.is_ok() ? std::string("read") : back.error().message()));
      CHECK(false);
    }
  }
  CHECK(failures == 0);
  std::string flipped = bytes;
  flipped[layout[4].payload + 5] ^= 1;  // inside row block 2 (table 2)
  write_file(bad, flipped);
  auto back = read_back(bad);
  REQUIRE_FALSE(back.is_ok());
  CHECK(back.error().code() == errc::corrupt);
  CHECK(back.error().message() == "delta file " + bad + ": row block 2 (table 2) fails its checksum (section at offset " +
                                      std::to_string(layout[4].start) + ")");
}

TEST_CASE("delta file: other files, newer versions and values no writer writes are refused", "[publish]") {
  test::temp_dir dir;
  const std::string path = dir.str("v.ssd");
  write_sample(path, row_encoding::int8, 3);
  const std::string bytes = read_file(path);
  const auto layout = sections_of(bytes);
  const std::string bad = dir.str("bad.ssd");

  write_file(bad, std::string("SSMODEL\0", 8) + bytes.substr(8));
  CHECK(contains(delta_reader::open(bad).error().message(), "not a shadowsync delta file (no SSDELTA magic)"));
  std::string newer = bytes;
  newer[8] = 3;
  write_file(bad, newer);
  CHECK(delta_reader::open(bad).error().code() == errc::version_mismatch);
  CHECK(contains(delta_reader::open(bad).error().message(), "written by format version 3, this build reads 2"));
  CHECK(delta_reader::open(dir.str("missing.ssd")).error().code() == errc::not_found);
  CHECK(contains(delta_reader::open(dir.str()).error().message(), "is a directory"));

  // int8 rows: a value of -128, and a scale that is not finite, each sealed with a valid CRC.
  const section_at& rows = layout[2];
  REQUIRE(rows.tag == "ROWS");
  std::string minus = bytes;
  minus[rows.payload + 12] = static_cast<char>(-128);
  reseal(minus, rows);
  write_file(bad, minus);
  auto back = read_back(bad);
  REQUIRE_FALSE(back.is_ok());
  CHECK(contains(back.error().message(), "row block 1 (table 0): row "));
  CHECK(contains(back.error().message(), "holds the int8 value -128"));
  std::string nan_scale = bytes;
  const std::uint32_t nan_bits = 0x7fc00000u;
  io::put_le(reinterpret_cast<unsigned char*>(&nan_scale[rows.payload + 8]), nan_bits);
  reseal(nan_scale, rows);
  write_file(bad, nan_scale);
  back = read_back(bad);
  REQUIRE_FALSE(back.is_ok());
  CHECK(contains(back.error().message(), "has the scale nan"));

  // fp32: a NaN in a row or in the dense part (a writer refuses both).
  const std::string fp32_path = dir.str("v32.ssd");
  write_sample(fp32_path, row_encoding::fp32, 3);
  const std::string fp32_bytes = read_file(fp32_path);
  const auto fp32_layout = sections_of(fp32_bytes);
  std::string nan_row = fp32_bytes;
  io::put_le(reinterpret_cast<unsigned char*>(&nan_row[fp32_layout[2].payload + 8 + 4]), nan_bits);
  reseal(nan_row, fp32_layout[2]);
  write_file(bad, nan_row);
  back = read_back(bad);
  REQUIRE_FALSE(back.is_ok());
  CHECK(contains(back.error().message(), "row block 1 (table 0): row "));
  CHECK(contains(back.error().message(), "has NaN or infinite values"));
  std::string nan_dense = fp32_bytes;
  io::put_le(reinterpret_cast<unsigned char*>(&nan_dense[fp32_layout[1].payload + 4 * 5]), nan_bits);
  reseal(nan_dense, fp32_layout[1]);
  write_file(bad, nan_dense);
  back = read_back(bad);
  REQUIRE_FALSE(back.is_ok());
  CHECK(contains(back.error().message(), "1 of 37 dense parameters are NaN or infinite"));

  // A footer whose counts disagree with the blocks (sealed again).
  const section_at& foot = layout.back();
  std::string lying = bytes;
  lying[foot.payload + 8] = static_cast<char>(lying[foot.payload + 8] + 1);  // rows
  reseal(lying, foot);
  write_file(bad, lying);
  back = read_back(bad);
  REQUIRE_FALSE(back.is_ok());
  CHECK(contains(back.error().message(), "the footer says 2 row blocks of 7 rows"));

  // A callback's error stops the walk and comes back as it was.
  auto r = delta_reader::open(path);
  REQUIRE(r.is_ok());
  int calls = 0;
  const status stopped = r->for_each_block(
      [&](std::uint32_t, const std::uint64_t*, const float*, std::size_t) {
        ++calls;
        return status(errc::resource_exhausted, "table full");
      },
      [](std::uint32_t, const std::uint64_t*, std::size_t) { return status::ok(); });
  CHECK(stopped.code() == errc::resource_exhausted);
  CHECK(calls == 1);
}
