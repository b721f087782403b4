// The delta file (".ssd"): what changed in a model since the previous publication, for serving
// to apply on top of the base it builds on (ss/core/publish/publication.hpp).
//
// FORMAT, version 2 (version 1 without the 16-bit row encodings; a writer writes version 1 when
// its rows are fp32 or int8, so that readers of version 1 read them). Every integer is little endian; floats are IEEE-754 binary32, little endian;
// every CRC is CRC32C (ss::crc32c). The section framing is the model file's
// (ss/core/io/section_file.hpp).
//
//   file     := preamble  HEAD-section  DENS-section  (ROWS-section | TOMB-section)*  FOOT-section
//
//   preamble (12 bytes): magic "SSDELTA\0" (53 53 44 45 4C 54 41 00), u32 format version (1 or 2).
//
//   section  := section-head (20 bytes: tag, u32 a, u64 b, u32 CRC32C of those 16)  payload
//               u32 payload-crc
//
//   HEAD (a = 0, b = payload bytes = 48):
//       u64 sequence       this publication's
//       u64 base           the base it builds on
//       u64 previous       the publication it follows directly
//       u32 tables         embedding tables
//       u32 dim            floats per row
//       u64 dense_params   floats in the DENS section
//       u32 row_encoding   0 fp32, 1 int8, 2 bf16, 3 fp16 (2 and 3: version 2 only)
//       u32 reserved       0
//   DENS (a = 0, b = float count = dense_params): every dense parameter, fp32 (they are small
//       next to the tables, and scoring needs all of them consistent).
//   ROWS (a = table < tables, b = rows in the block, 1 to max_delta_block_rows): per row
//       fp32: u64 id, dim x f32 values                         (8 + 4 dim bytes)
//       int8: u64 id, f32 scale, dim x i8 values               (12 + dim bytes)
//       bf16, fp16: u64 id, dim x u16 values                   (8 + 2 dim bytes)
//       int8 is symmetric, one scale per row: scale = max|v| / 127, q = round(v / scale) in
//       [-127, 127], read back as q x scale. The error of each value is at most half a step,
//       scale / 2 = max|v| / 254 (0.39% of the row's largest magnitude), plus float rounding. A
//       scale must be finite, >= 0 and at most FLT_MAX / 127; -128 never occurs.
//       bf16 and fp16 values are rounded to the nearest (exact for rows kept at that precision,
//       --row-precision); a value must be finite, and an fp32 value that would round to infinity
//       (beyond fp16's 65504, or bf16's largest) is refused when written.
//   TOMB (a = table, b = ids, 1 to max_delta_block_rows): u64 ids of rows removed (evicted or
//       expired) since the previous publication.
//   FOOT (a = 0, b = 32 + 16 tables): u64 row blocks, u64 rows, u64 tombstone blocks,
//       u64 tombstones, then per table u64 rows, u64 tombstones. Last in the file: a file cut at a
//       section boundary has no footer and is truncated; bytes after it are an error.
//
// Blocks apply in file order: a row block replaces (or creates) its rows, a tombstone block
// deletes its ids (an id that is not there is no error). Writers put an id at most once per table
// per delta.
//
// Errors name the file and the section: "delta file 000000000042.delta.ssd: row block 3 (table 7)
// fails its checksum", "...: truncated after 1234 bytes (in tombstone block 2 (table 0), ...)".
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ss/core/publish/publication.hpp"
#include "ss/core/status.hpp"

namespace ss::publish {

inline constexpr char delta_magic[8] = {'S', 'S', 'D', 'E', 'L', 'T', 'A', '\0'};
// The newest version this build reads; it writes the oldest that holds the file's rows.
inline constexpr std::uint32_t delta_format_version = 2;
inline constexpr std::uint32_t first_delta_version_with_halves = 2;
// Rows (or tombstones) per block a writer produces; add_rows and add_tombstones split larger calls.
inline constexpr std::size_t max_delta_block_rows = 65536;

struct delta_head {
  std::uint64_t sequence = 0;
  std::uint64_t base = 0;
  std::uint64_t previous = 0;
  model_shape shape;
  row_encoding encoding = row_encoding::fp32;
};

// What a finished (or fully read) delta file holds.
struct delta_stats {
  std::uint64_t row_blocks = 0;
  std::uint64_t rows = 0;
  std::uint64_t tombstone_blocks = 0;
  std::uint64_t tombstones = 0;
  std::vector<std::uint64_t> table_rows;        // by table
  std::vector<std::uint64_t> table_tombstones;  // by table
  std::uint64_t bytes = 0;                      // file size
  std::uint32_t crc32c = 0;                     // of the whole file: a manifest's data_crc32c
};

// Writes a delta file, streaming: open (preamble and head), write_dense (once), add_rows and
// add_tombstones (any number of times, any tables, in any order), finish (footer, fsync, rename
// PATH.tmp -> PATH, directory fsync). After any error the writer is failed: later calls return that
// error and PATH.tmp is removed; so is it when an unfinished writer is destroyed. Not thread-safe.
class delta_writer {
 public:
  delta_writer();
  ~delta_writer();
  delta_writer(delta_writer&&) noexcept;
  delta_writer& operator=(delta_writer&&) noexcept;
  delta_writer(const delta_writer&) = delete;
  delta_writer& operator=(const delta_writer&) = delete;

  static result<delta_writer> open(const std::string& path, const delta_head& head);

  // n must equal head.shape.dense_params; values must be finite (out_of_range otherwise).
  status write_dense(const float* params, std::size_t n);
  // n rows of `table`: ids[i] and its dim values at values + i * stride (stride 0 = dim). Values
  // must be finite. Encoded as the head says (int8: quantized here). n = 0 writes nothing.
  status add_rows(std::uint32_t table, const std::uint64_t* ids, const float* values, std::size_t n,
                  std::size_t stride = 0);
  // n ids of rows of `table` removed since the previous publication. n = 0 writes nothing.
  status add_tombstones(std::uint32_t table, const std::uint64_t* ids, std::size_t n);
  result<delta_stats> finish();
  void abort();  // closes and removes PATH.tmp; idempotent

  const std::string& path() const;
  std::uint64_t rows() const;
  std::uint64_t tombstones() const;
  std::uint64_t bytes() const;  // written so far

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

// Reads a delta file, streaming: open (verifies the preamble and the head), read_dense, then
// for_each_block (every row and tombstone block in file order, then the footer, checked against
// what was read, and nothing after it). Every section's checksum is verified before its content
// is used; totals().crc32c is then the CRC of the whole file. Not thread-safe.
class delta_reader {
 public:
  delta_reader();
  ~delta_reader();
  delta_reader(delta_reader&&) noexcept;
  delta_reader& operator=(delta_reader&&) noexcept;
  delta_reader(const delta_reader&) = delete;
  delta_reader& operator=(const delta_reader&) = delete;

  static result<delta_reader> open(const std::string& path);
  // The same over bytes in memory, which must outlive the reader; `name` names them in errors.
  static result<delta_reader> open_memory(const std::string& name, const void* data, std::size_t size);

  const delta_head& head() const;
  std::uint32_t format_version() const;
  std::uint64_t file_bytes() const;

  // The dense parameters (head().shape.dense_params floats). Once, right after open.
  status read_dense(float* out, std::size_t n);
  result<std::vector<float>> read_dense();

  // rows(table, ids, values, n): a row block, values = n * dim floats (int8 rows dequantized).
  // tombstones(table, ids, n): a tombstone block. A non-ok status from either stops the walk and
  // is returned. Skips (but verifies) the dense part if read_dense was not called.
  using rows_fn = std::function<status(std::uint32_t table, const std::uint64_t* ids, const float* values,
                                       std::size_t n)>;
  using tombstones_fn = std::function<status(std::uint32_t table, const std::uint64_t* ids, std::size_t n)>;
  status for_each_block(const rows_fn& rows, const tombstones_fn& tombstones);
  const delta_stats& totals() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

// Reads a whole delta file and checks every section; returns its totals.
result<delta_stats> verify_delta(const std::string& path);

}  // namespace ss::publish
