// The exported model file (".ssm"): a trained DLRM taken out of shadowsync, to score data with
// (`shadowsync predict`) or to ship elsewhere. It holds everything needed to rebuild the model
// for inference: the job's configuration, the dense parameters and every embedding row. The
// optimizer state is not exported (rows loaded back have zero optimizer state).
//
// Writers stream: `shadowsync train --export` writes its tables page by page, and the cluster's
// coordinator writes the dense part and then the pages of rows it gathers from the shards, never
// knowing a table's total in advance; so a table may appear in any number of row blocks, in any
// order, and the totals come last, in the footer.
//
// FORMAT, version 2. Every integer is little endian; floats are IEEE-754 binary32, little endian;
// every CRC is CRC32C (ss::crc32c, Castagnoli).
//
//   file     := preamble  HEAD-section  DENS-section  ROWS-section*  FOOT-section  (end of file)
//
//   preamble (12 bytes):
//     0   8  magic "SSMODEL\0" (53 53 4D 4F 44 45 4C 00)
//     8   4  u32 format version (2; version 1 is read too). A reader refuses a larger version
//            ("written by format version 3, this build reads 2"), and version 0.
//
//   section  := section-head (20 bytes)  payload  u32 payload-crc
//     section-head:
//       +0   4  tag, 4 ASCII bytes: "HEAD", "DENS", "ROWS" or "FOOT"
//       +4   4  u32 a   (ROWS: the table index; 0 otherwise)
//       +8   8  u64 b   (HEAD, FOOT: payload bytes; DENS: float count; ROWS: row count)
//       +16  4  u32 CRC32C of the 16 bytes above
//     payload-crc: CRC32C of the payload bytes. The head has its own CRC so that a damaged
//     length is reported as damage, never followed.
//
//   HEAD payload (b bytes; a string is u32 byte length + bytes, no terminator):
//       u32 tables            embedding tables (= categorical features)
//       u32 dim               floats per exported row (the embedding dim)
//       u64 dense_params      floats in the DENS section
//       f64 train_click_rate  the training data's click rate: the base of NE at predict time
//       u64 train_examples    examples the model was trained on
//       i64 created_unix_ms   when the file was written
//       str producer          who wrote it ("shadowsync train", "shadowsync coordinator job 42")
//       str config            the job's configuration as [job] INI text (job::job_config_text):
//                             model options (embedding dim, MLP widths, optimizers), seed and
//                             embedding init scale (an unseen id scores with the values training
//                             would have given its new row), buckets, the input schema and the
//                             resolved dense-features / categorical-features counts
//       str schema_text       the schema file's text when the config's schema names a file
//                             (the file may not exist where the model is used); empty for the
//                             built-in "criteo" and "avazu"
//       u32 row_precision     (version 2 only) the precision of the ROWS values, the codes of
//                             embedding::row_precision: 0 fp32, 1 bf16, 2 fp16. An unknown code
//                             is refused. A version 1 file has no such field: its rows are fp32.
//   DENS payload: b floats, the dense parameters in model::dense_layout order; b must equal the
//       header's dense_params.
//   ROWS payload (a row block): b rows, each u64 id followed by the row's dim values (no optimizer
//       state) at the header's row_precision: fp32 as 4-byte floats, bf16 and fp16 as 2-byte
//       little-endian 16-bit words (the values rounded to the nearest when written). A row is
//       8 + dim * bytes_per_value bytes (8 + 4 * dim at fp32, 8 + 2 * dim at bf16/fp16); a <
//       tables. A table may appear in several blocks; an id appears at most once per table.
//       Writers make blocks of at most max_block_rows rows.
//   FOOT payload (b = 16 + 8 * tables bytes): u64 row blocks, u64 rows, then tables x u64 rows
//       of each table. The footer is the last thing in the file: a file cut at a block boundary
//       has no footer and is reported as truncated; bytes after it are an error.
//
// Errors name the file and the section, e.g. "model file m.ssm: row block 3 (table 7) fails its
// checksum", "model file m.ssm: truncated after 1234 bytes (in row block 9)", "model file m.ssm:
// written by format version 3, this build reads 2". Writers write PATH.tmp, fsync it and rename
// it to PATH only in finish(), so a half-written file is never taken for a model (and an older
// model at PATH stays intact until then).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ss/core/data/input_schema.hpp"
#include "ss/core/embedding/local_embeddings.hpp"
#include "ss/core/embedding/row_precision.hpp"
#include "ss/core/io/model_magic.hpp"
#include "ss/core/job/job_options.hpp"
#include "ss/core/job/model_options.hpp"
#include "ss/core/status.hpp"
#include "ss/core/train/dense_model.hpp"

namespace ss::model {

// Written by every writer; readers also read version 1 (no row precision: fp32 rows).
inline constexpr std::uint32_t model_format_version = 2;
using io::model_magic;
// Rows per row block a writer produces; add_rows splits larger pages.
inline constexpr std::size_t max_block_rows = 65536;

struct model_header {
  std::uint32_t tables = 0;
  std::uint32_t dim = 0;
  std::uint64_t dense_params = 0;
  double train_click_rate = std::numeric_limits<double>::quiet_NaN();
  std::uint64_t train_examples = 0;
  std::int64_t created_unix_ms = 0;  // 0: the writer fills in the current time
  std::string producer;
  std::string config;       // [job] INI text (job::job_config_text), feature counts resolved
  std::string schema_text;  // schema file text, or empty for a built-in schema
  // The precision of the rows in the file: add_rows rounds its FP32 values to it, the reader
  // decodes them back to FP32.
  embedding::row_precision row_precision = embedding::row_precision::fp32;
};

// A header for a model trained by `job` (whose dense_features and categorical_features must be
// resolved, >= 0): config text, schema text (read from the schema file if it names one) and
// shape (tables, dim, dense_params, from job::resolve_model) and row precision (the job's
// --row-precision; an unknown name is an error).
result<model_header> header_for_job(const job::job_options& job, double train_click_rate,
                                    std::uint64_t train_examples, std::string producer);

// What a finished file holds.
struct model_file_stats {
  std::uint64_t blocks = 0;
  std::uint64_t rows = 0;
  std::vector<std::uint64_t> table_rows;  // by table
  std::uint64_t bytes = 0;                // file size
};

// Writes a model file, streaming: open (writes the preamble and header), write_dense (once),
// add_rows (any number of times, any tables), finish (footer, fsync, rename PATH.tmp -> PATH).
// After any error the writer is failed: later calls return that error and PATH.tmp is removed.
// Destroying an unfinished writer removes PATH.tmp and leaves PATH as it was. Not thread-safe.
class model_writer {
 public:
  model_writer();
  ~model_writer();
  model_writer(model_writer&&) noexcept;
  model_writer& operator=(model_writer&&) noexcept;
  model_writer(const model_writer&) = delete;
  model_writer& operator=(const model_writer&) = delete;

  // Creates PATH.tmp (replacing a stale one) and writes the preamble and the header.
  // created_unix_ms = 0 is replaced by the current time.
  static result<model_writer> open(const std::string& path, const model_header& header);

  // The dense parameters: n must equal header.dense_params. Exactly once, before add_rows.
  status write_dense(const float* params, std::size_t n);
  // n rows of `table`: ids[i] and its dim FP32 values at values + i * stride (stride 0 = dim; pass
  // row_floats() to skip optimizer state stored after the values), written rounded to the nearest
  // at the header's row_precision. One row block per call (split every max_block_rows rows); n = 0
  // writes nothing.
  status add_rows(std::uint32_t table, const std::uint64_t* ids, const float* values, std::size_t n,
                  std::size_t stride = 0);
  // A point to come back to: rewind(mark) takes back every row added after mark() (an exporter
  // dumps a shard that restarted mid-dump again from its first row, since the new process keeps
  // its rows in another order). Only between write_dense and finish.
  struct rows_mark {
    model_file_stats stats;  // stats.bytes is the file offset
  };
  rows_mark mark() const;
  status rewind(const rows_mark& m);
  // Writes the footer, flushes and fsyncs, renames PATH.tmp to PATH and fsyncs the directory.
  result<model_file_stats> finish();
  // Gives up: closes and removes PATH.tmp. Idempotent.
  void abort();

  const std::string& path() const;
  std::uint64_t rows() const;
  std::uint64_t bytes() const;  // written so far

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

// Reads a model file, streaming: open (verifies the preamble and header), then read_dense, then
// for_each_block (every row block in file order, then the footer, verified against what was read).
// Every section's checksum is verified before its content is used. Not thread-safe.
class model_reader {
 public:
  model_reader();
  ~model_reader();
  model_reader(model_reader&&) noexcept;
  model_reader& operator=(model_reader&&) noexcept;
  model_reader(const model_reader&) = delete;
  model_reader& operator=(const model_reader&) = delete;

  static result<model_reader> open(const std::string& path);

  const model_header& header() const;
  std::uint32_t format_version() const;
  std::uint64_t file_bytes() const;

  // The dense parameters (header().dense_params floats). Call once, right after open.
  status read_dense(float* out, std::size_t n);
  result<std::vector<float>> read_dense();

  // fn(table, ids, values, n): one call per row block, values = n * dim floats (decoded to FP32
  // whatever the file's row precision). A non-ok status
  // from fn stops the walk and is returned. Skips (but verifies) the dense part if read_dense was
  // not called. Ends by verifying the footer and that nothing follows it; totals() then holds it.
  using block_fn = std::function<status(std::uint32_t table, const std::uint64_t* ids, const float* values,
                                        std::size_t n)>;
  status for_each_block(const block_fn& fn);
  // fn(table, id, const float* values) per row.
  template <class Fn>
  status for_each_row(Fn&& fn) {
    const std::size_t d = row_dim();
    return for_each_block([&fn, d](std::uint32_t table, const std::uint64_t* ids, const float* values,
                                   std::size_t n) -> status {
      for (std::size_t i = 0; i < n; ++i) fn(table, ids[i], values + i * d);
      return status::ok();
    });
  }
  const model_file_stats& totals() const;

 private:
  std::size_t row_dim() const;
  struct impl;
  std::unique_ptr<impl> impl_;
};

// Reads a whole file and checks every section; returns its totals.
result<model_file_stats> verify_model(const std::string& path);

// Writes `dense` and every row of `embeddings` (values only, pages of max_block_rows) to PATH.
// The header's tables, dim and dense_params are taken from the model. Call it on a model no
// longer being trained for an exact copy.
result<model_file_stats> save_model(const std::string& path, model_header header, const train::dense_model& dense,
                                    const embedding::local_embeddings& embeddings);

// A model rebuilt from a file: the same dense_model and local_embeddings (every exported row,
// with zero optimizer state) as the job that trained it, so train::evaluate scores exactly as it
// did at the end of training, unseen ids included.
struct loaded_model {
  model_header header;
  job::job_options job;     // parsed from header.config
  job::model_setup setup;   // job::resolve_model of it
  std::unique_ptr<train::dense_model> dense;
  std::unique_ptr<embedding::local_embeddings> embeddings;
  model_file_stats stats;
};

result<loaded_model> load_model(const std::string& path);

// The input schema the model was trained with: the stored schema text if any, else the built-in
// schema its config names.
result<data::input_schema> model_schema(const model_header& header, const job::job_options& job);

}  // namespace ss::model
