// A publish directory: numbered publications of a model being trained, for `shadowsync serve` to
// load and follow (docs/online.md, "Publication format").
//
//   <seq>.base.ssm        a full model, the model file format (ss/core/model_file/model_file.hpp)
//   <seq>.base.manifest   its manifest
//   <seq>.delta.ssd       the rows changed since the previous publication, tombstones for rows
//                         removed, and all dense parameters (ss/core/publish/delta_file.hpp)
//   <seq>.delta.manifest  its manifest
//
// <seq> is the sequence number, 12 decimal digits (000000000042). A publication exists iff its
// manifest exists: the data file is written first (PATH.tmp, fsync, rename), the manifest last
// (the same, then the directory fsynced). A data file without a manifest, or a *.tmp, is debris
// of a crash mid-publish: readers ignore it, prune() deletes it.
//
// A manifest is keyed text (ss/core/io/keyed_text.hpp): the publication's identity (job, sequence,
// kind, the base it builds on and the publication it follows), the data file's name, size and
// CRC32C, and the model's shape and config digest, so that a reader refuses a publication of
// another job or another model.
//
// Publishing, step by step (a publisher's loop):
//   1. at start: next = next_sequence(dir, job_id) (after a restart: one past the highest
//      manifest; next.newest is what a next delta would follow, if the rows it has are complete);
//   2. a delta: delta_writer::open(dir / data_file_name(seq, delta), {seq, base, previous, shape,
//      encoding}), write_dense, add_rows / add_tombstones, finish() -> stats (bytes, crc32c, rows,
//      tombstones); a base: model::model_writer to dir / data_file_name(seq, base), then
//      digest_file() for its bytes and CRC;
//   3. write_manifest(dir, m) with those and job_id, sequence, kind, base, previous,
//      examples_trained, wall_unix_ms, shape, config_digest (model_config_digest(job)): from here
//      the publication exists;
//   4. prune(dir, retain) now and then.
// A crash anywhere before 3 leaves debris that the next publish of the same sequence replaces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ss/core/job/job_options.hpp"
#include "ss/core/status.hpp"

namespace ss::publish {

inline constexpr std::uint32_t manifest_format_version = 1;
// Sequence numbers are 12 digits; 0 is "none" (a base's `previous`), so the first is 1.
inline constexpr std::uint64_t first_sequence = 1;
inline constexpr std::uint64_t max_sequence = 999'999'999'999ULL;

enum class publication_kind : std::uint8_t { base, delta };
const char* to_string(publication_kind k);  // "base", "delta"

// How a delta stores its rows: fp32, int8 with one fp32 scale per row, or 16-bit floats (bf16,
// fp16: exact for a job whose rows are at that precision, embedding/row_precision.hpp).
enum class row_encoding : std::uint8_t { fp32 = 0, int8 = 1, bf16 = 2, fp16 = 3 };
const char* to_string(row_encoding e);  // "fp32", "int8", "bf16", "fp16"
// One of to_string's words; invalid_argument naming the word otherwise.
result<row_encoding> parse_row_encoding(std::string_view word);
// Bytes a row of `dim` values takes in a delta's row block: its id and its values.
constexpr std::size_t delta_row_bytes(row_encoding e, std::size_t dim) {
  return e == row_encoding::fp32 ? 8 + 4 * dim : e == row_encoding::int8 ? 12 + dim : 8 + 2 * dim;
}

// What a publication's rows and dense part must fit: embedding tables, floats per row, dense
// parameters (the model file's header has the same three).
struct model_shape {
  std::uint32_t tables = 0;
  std::uint32_t dim = 0;
  std::uint64_t dense_params = 0;

  friend bool operator==(const model_shape& a, const model_shape& b) {
    return a.tables == b.tables && a.dim == b.dim && a.dense_params == b.dense_params;
  }
  friend bool operator!=(const model_shape& a, const model_shape& b) { return !(a == b); }
  std::string describe() const;  // "26 tables of dim 16, 12345 dense parameters"
};

// One publication's manifest.
struct manifest {
  std::uint32_t format_version = manifest_format_version;
  std::string job_id;  // one word (no whitespace), not empty
  std::uint64_t sequence = 0;
  publication_kind kind = publication_kind::delta;
  std::uint64_t base = 0;      // the base it builds on; a base: its own sequence
  std::uint64_t previous = 0;  // the publication it follows directly; a base: 0
  std::uint64_t examples_trained = 0;
  // The training data's click rate then: the base of NE when the model is scored (a model file's
  // header has it; a delta's scoring needs the newest).
  double train_click_rate = 0;
  std::int64_t wall_unix_ms = 0;  // when it was published
  std::string data_file;          // data_file_name(sequence, kind): a name in the same directory
  std::uint64_t data_bytes = 0;
  std::uint32_t data_crc32c = 0;  // of the data file's bytes, all of them
  model_shape shape;
  std::uint64_t config_digest = 0;  // config_digest() of the model's configuration
  std::uint64_t rows = 0;           // rows in the data file
  std::uint64_t tombstones = 0;     // a base: 0
  row_encoding encoding = row_encoding::fp32;  // a base: fp32
};

// File names. sequence_text(42) == "000000000042"; data_file_name(42, delta) ==
// "000000000042.delta.ssd"; manifest_file_name(42, base) == "000000000042.base.manifest".
std::string sequence_text(std::uint64_t sequence);
std::string data_file_name(std::uint64_t sequence, publication_kind kind);
std::string manifest_file_name(std::uint64_t sequence, publication_kind kind);

// What a file name in a publish directory is; nullopt for a name that is none of these (such files
// are left alone).
struct publish_file_name {
  std::uint64_t sequence = 0;
  publication_kind kind = publication_kind::delta;
  bool is_manifest = false;  // else a data file
  bool is_tmp = false;       // NAME.tmp: a write that did not finish
};
std::optional<publish_file_name> parse_file_name(std::string_view name);

// The manifest as keyed text, and back. parse_manifest is strict: every field present, of its
// type, no unknown field, a format version this build reads, and consistent (a base's base is its
// sequence and its previous 0; a delta's base and previous are below its sequence; data_file is
// data_file_name(sequence, kind)). Errors are errc::corrupt (errc::version_mismatch for a newer
// format) and name the file and the field: "manifest 000000000042.delta.manifest: sequence has
// 'x' where a number belongs". `file_name` is the manifest's name (for messages, and checked
// against its sequence and kind when it is a publication's name).
std::string manifest_text(const manifest& m);
result<manifest> parse_manifest(const std::string& text, const std::string& file_name);
result<manifest> read_manifest(const std::filesystem::path& path);

// Writes dir/manifest_file_name(m.sequence, m.kind) atomically and durably (temporary, fsync,
// rename, directory fsync): the publication exists from then on. Refuses (invalid_argument) a
// manifest parse_manifest would refuse, or whose data file is missing or not data_bytes long.
status write_manifest(const std::filesystem::path& dir, const manifest& m);

// A file's size and CRC32C, read whole (a base's model file, whose writer computes no CRC).
struct file_digest {
  std::uint64_t bytes = 0;
  std::uint32_t crc32c = 0;
};
result<file_digest> digest_file(const std::filesystem::path& path);

// A digest of a model's configuration text: publications whose digests differ are of different
// models and never mix. model_config_digest digests what scoring depends on: the model options
// (sizes, optimizers, seed, buckets), the input options (schema, hashing) and the feature counts;
// not the data files, the cluster's size or the publishing settings, so a job restarted with
// other files or intervals continues its chain.
std::uint64_t config_digest(std::string_view config_text);
std::uint64_t model_config_digest(const job::job_options& job);

// Where numbering continues in `dir` (created if missing): one past the highest sequence of any
// manifest (parseable or not), first_sequence in an empty directory; `newest` is the newest
// manifest that parses (the publication a next delta would follow). Refuses (already_exists) a
// directory whose newest publication belongs to another job_id, unless adopt_other_job.
struct next_publication {
  std::uint64_t sequence = first_sequence;
  std::optional<manifest> newest;
  std::optional<manifest> newest_base;  // the newest base that parses, of any job
};
result<next_publication> next_sequence(const std::filesystem::path& dir, const std::string& job_id,
                                       bool adopt_other_job = false);

// Deletes what serving no longer needs: keeps the newest `retain` publications (retain >= 1), and
// always the newest base and every publication after it; a delta whose base goes goes too (it can
// no longer be applied). Deletes debris (data files without a manifest, *.tmp) of sequences up to
// the newest publication's; later ones may be a publish in progress. Manifests go before their
// data files, then the directory is fsynced.
struct prune_stats {
  std::uint64_t publications_removed = 0;
  std::uint64_t debris_removed = 0;
  std::uint64_t bytes_freed = 0;
  std::vector<std::string> removed;  // file names, in the order deleted
};
result<prune_stats> prune(const std::filesystem::path& dir, std::size_t retain);

}  // namespace ss::publish
