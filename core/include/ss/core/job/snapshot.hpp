// Cluster snapshots: what the coordinator writes so that a job survives the loss of any service,
// itself included, and a full stop.
//
// A snapshot is a directory <snapshot-dir>/snapshot-<id> (ids grow from 1) holding
//   job.ini    the job's configuration, as the coordinator ran it
//   dense.bin  the central dense copy and the sync state (binary, see encode_dense)
//   MANIFEST   everything else, as text (format_manifest), written LAST: a directory without a
//              MANIFEST that verifies is a half-made snapshot and is never used.
// The shards' rows are not here: each shard checkpoints its own rows on its own storage under
// the same id (its RocksDB checkpoint), and the manifest records each checkpoint's row count and
// content checksum.
//
// dense.bin: "SSDENSE2" (8 bytes), u64 n, n little-endian floats (params), u64 m, m floats
// (momentum: BMUF's block momentum or the outer optimizer's, else m = 0), u64 steps, u64 k, k
// floats (the trainers' dense optimizer state, else k = 0), u32 CRC32C of everything before it.
// "SSDENSE1" (before 2026-12-02) ends after the momentum: read as a snapshot without optimizer
// state.
// MANIFEST: "key = value" lines; the last line is "crc32c = XXXXXXXX", the CRC32C (hex) of every
// byte before that line.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ss/core/embedding/sharding.hpp"
#include "ss/core/job/reader_plan.hpp"
#include "ss/core/status.hpp"

namespace ss::job {

inline constexpr std::uint32_t snapshot_format = 1;

// Where a reader was: every row before the position was trained.
struct reader_commit {
  bool valid = false;  // false: the reader has committed nothing yet (start from the beginning)
  std::uint32_t file_index = 0;
  std::uint64_t byte_offset = 0;
  std::uint64_t line_number = 1;
  std::uint64_t examples = 0;  // good rows before the position
  std::uint64_t bad_rows = 0;  // bad rows before the position
  // What the reader checks before it resumes there (ss::data::line_position); 0: not recorded.
  std::uint32_t previous_line_crc = 0;
  std::uint64_t file_size = 0;
  // The pass over the data, and the batches of the shuffle window at the position handed out
  // (ss::data::epoch_position); both 0 in a one-pass job read in order.
  std::uint32_t epoch = 0;
  std::uint32_t window_batches = 0;
  // Inside a shuffle window of the reader's own files: where it ends (data::epoch_position);
  // and 0, or the inherited window (1-based) the position is in.
  data::line_position window_end;
  std::uint32_t inherited = 0;
  // A followed input (--follow; ss::data::follow_position): the file's name and identity; empty
  // and 0 for fixed files.
  std::string file_name;
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
};

// What a shard checkpointed for the snapshot.
struct shard_checkpoint {
  std::uint64_t checkpoint = 0;  // the checkpoint's id (the snapshot id)
  std::uint64_t rows = 0;
  std::uint64_t bytes = 0;
  std::uint64_t checksum = 0;  // the checkpoint's content checksum
  std::string path;            // on the shard's storage
};

// Progress counters of trainers: those live at snapshot time (by incarnation: a trainer that
// outlives a coordinator restart reports them again itself) and, as one entry with incarnation
// 0, those that had left.
struct trainer_counters {
  std::uint64_t incarnation = 0;
  std::uint64_t examples = 0;
  double loss_sum = 0;
  std::uint64_t clicks = 0;
  double active_seconds = 0;
};

struct snapshot_manifest {
  std::uint32_t format = snapshot_format;
  std::uint64_t job_id = 0;
  std::uint64_t snapshot_id = 0;
  std::int64_t created_unix_ms = 0;
  trainer_counters departed;               // trainers that had left (incarnation 0)
  std::vector<trainer_counters> trainers;  // trainers live at snapshot time
  std::vector<reader_commit> readers;      // by reader index
  // Since the job last resumed on another reader count: where each file stood then (the readers'
  // commits start from it); empty otherwise.
  reader_plan read_plan;
  std::vector<shard_checkpoint> shards;    // by shard index
  // How the rows were placed on the shards; "modulo" in manifests of builds before it was recorded.
  std::string placement = embedding::placement_scheme;
  // The first snapshot after the job resumed on another shard count: the count the rows came from
  // (0: none). Its checkpoints may still hold rows that moved to other shards: a job resuming
  // from it has every shard drop what it no longer owns before training.
  std::uint32_t reshaped_from = 0;
  // A live reshard (shadowsync reshard) changed the job's shard count since its coordinator
  // started: the --shards it was started with (0: none did). A coordinator restarted with that
  // same --shards keeps the count the job has (shards.size()); another --shards changes it.
  std::uint32_t shards_flag = 0;
  std::uint64_t dense_params = 0;          // floats in dense.bin
  std::uint64_t dense_momentum = 0;
  std::uint32_t dense_crc = 0;             // dense.bin's trailing CRC32C
  std::uint32_t job_crc = 0;               // CRC32C of job.ini
};

// The shard count a job resumed from `m` takes when started with --shards `shards_flag`: the
// snapshot's own when a live reshard changed the job's count from that very flag (a restart from
// the same command line, ConfigMap or compose file), else the flag (a change of count on resume).
int shards_to_resume_on(const snapshot_manifest& m, int shards_flag);

// A live reshard's switch, stored before the members are told the new count and removed once
// the snapshot of the new shape is written: from then until that snapshot, the rows trained are on
// their new owners while the newest snapshot still has the old count. A coordinator that starts
// while one is stored with base_snapshot its newest snapshot (0: none yet) switches the job to
// `to` again, not back to the snapshot's count.
struct reshard_switch {
  std::uint32_t from = 0;
  std::uint32_t to = 0;
  std::uint64_t job_id = 0;
  std::uint64_t base_snapshot = 0;
};
std::string encode_reshard_switch(const reshard_switch& s);
// Verifies the checksum and every field (counts 1 to embedding::max_shards, from != to).
result<reshard_switch> decode_reshard_switch(const std::string& text);

std::string format_manifest(const snapshot_manifest& m);
// Verifies the trailing checksum and every field; errors say which line is wrong.
result<snapshot_manifest> parse_manifest(const std::string& text);

struct dense_state {
  std::vector<float> params;    // the central copy (EASGD center, BMUF global model, MA mean, or a replica)
  std::vector<float> momentum;  // BMUF block momentum or the outer optimizer's (-nesterov); empty otherwise
  // The trainers' dense optimizer state (Adam's two moments, Adagrad's accumulators; layout of
  // train::dense_model), averaged over the trainers by the examples each trained, and the most
  // updates any of them applied (Adam's bias correction). Empty with SGD: a job resumed without
  // it starts its optimizer afresh, whose first updates are full-size steps on every parameter.
  std::vector<float> optimizer;
  std::uint64_t optimizer_steps = 0;
};

std::string encode_dense(const dense_state& d);
result<dense_state> decode_dense(const std::string& bytes);

// A complete snapshot, read back and verified.
struct loaded_snapshot {
  snapshot_manifest manifest;
  dense_state dense;
  std::string job_text;
};

// Where snapshots live. Injected into the coordinator: a directory in production, memory in tests.
// A finished job's result line and the job it belongs to (job_config_text), so that a later run
// with other settings is not answered with this job's result. Stored as the JSON line, the job
// text and a crc32c line (io::with_crc_line).
struct stored_result {
  std::string json;
  std::string job_text;
};
std::string encode_result(const stored_result& r);
result<stored_result> decode_result(const std::string& text);

// Not thread-safe: the coordinator calls it from one actor.
class snapshot_store {
 public:
  virtual ~snapshot_store() = default;
  virtual std::string location() const = 0;  // for messages: "/var/lib/shadowsync/snapshots"
  // Ids of the snapshots whose MANIFEST exists, oldest first (not verified: read() does that).
  virtual result<std::vector<std::uint64_t>> list() = 0;
  // Writes a snapshot; the manifest last, atomically (a crash leaves no MANIFEST). Fills in the
  // manifest's dense and job checksums. Fails if the id exists.
  virtual status write(snapshot_manifest manifest, const dense_state& dense, const std::string& job_text) = 0;
  // Reads and verifies snapshot `id`: errc::not_found when it is absent, errc::corrupt with
  // the reason when any part fails its checksum or does not match the manifest.
  virtual result<loaded_snapshot> read(std::uint64_t id) = 0;
  virtual status remove(std::uint64_t id) = 0;
  // Removes half-made snapshots (no MANIFEST); returns how many.
  virtual result<std::size_t> remove_incomplete() = 0;
  // The path of snapshot `id` (for messages and replies).
  virtual std::string path_of(std::uint64_t id) const = 0;
  // The job's final result, written when the job ends, so a restarted coordinator of a finished
  // job reports it instead of training again. errc::not_found while the job runs; errc::corrupt
  // when it fails its checksum.
  virtual status write_result(const stored_result& r) = 0;
  virtual result<stored_result> read_result() = 0;
  // The job's id, stored when the job starts, so a coordinator restarted before the first
  // snapshot keeps it (shards refuse stored rows of another job). errc::not_found if none.
  virtual status write_job_id(std::uint64_t id) = 0;
  virtual result<std::uint64_t> read_job_id() = 0;
  // A live reshard's switch (reshard_switch): written atomically, errc::not_found when none,
  // errc::corrupt when it fails its checksum; removing an absent one is no error.
  virtual status write_reshard_switch(const reshard_switch& s) = 0;
  virtual result<reshard_switch> read_reshard_switch() = 0;
  virtual status remove_reshard_switch() = 0;
};

// The newest snapshot that verifies, skipping newer ones that do not: one message per skipped
// snapshot in `skipped` ("snapshot 12 is corrupt: dense.bin fails its checksum; using 11").
// errc::not_found when there is none.
result<loaded_snapshot> latest_valid_snapshot(snapshot_store& store, std::vector<std::string>* skipped);

// Snapshots in a directory (POSIX file system; files are fsynced before the manifest is renamed
// into place, and the directory after).
std::unique_ptr<snapshot_store> directory_snapshot_store(const std::string& dir);
// Snapshots in memory, for tests.
std::unique_ptr<snapshot_store> memory_snapshot_store();

}  // namespace ss::job
