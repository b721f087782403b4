// Every message exchanged between shadowsync services, as plain C++ values. The Cap'n Proto
// schema (schema/*.capnp) is their wire form and the codec (codec.hpp) the only code that
// translates; actors and services never see Cap'n Proto types.
//
// Conversation overview (who sends what to whom):
//   member -> coordinator   register_request / register_reply, heartbeat / heartbeat_reply, leave
//   trainer -> reader       pull_request (credits) ; reader -> trainer: batch_message, end_of_data
//   trainer -> reader       batch_ack (the batch was trained; the reader may commit past it)
//   coordinator -> reader   position_request / position_reply (its committed position now)
//   trainer -> shard        lookup_request / lookup_reply, push_request / push_reply,
//                           warm_request / warm_reply
//   trainer -> coordinator  dense_request / dense_reply (the central copy), dense_report (a replica)
//   trainer -> sync server  sync_request / sync_reply (one slice of the dense model per server)
//   client -> coordinator   snapshot_now ; coordinator -> shard: snapshot_request / snapshot_reply
//   coordinator -> shard    dump_request / dump_reply (the rows of the exported model)
//   coordinator -> shard    publish_rows_request / publish_rows_reply (a published delta's rows)
//   coordinator -> shard    take_rows_request / take_rows_reply, drop_rows_request / drop_rows_reply
//                           (a job resumed on another shard count; the taker pulls dump pages from
//                           the other shards)
//   coordinator -> sync     sync_restore (a resumed job's sync state) ; dense_request / dense_reply
//   client -> coordinator   export_request / export_reply (write the model file)
//   anyone -> any service   status_request / status_reply ; client -> coordinator: stop_request
//   client -> coordinator   reshard_request / reshard_reply (change a running job's shard count)
//   any -> any              error_reply (to any request that cannot be served)
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "ss/core/data/example_batch.hpp"
#include "ss/core/embedding/row_precision.hpp"
#include "ss/core/status.hpp"
#include "ss/core/sync/quantize.hpp"

namespace ss::wire {

// Bumped on any incompatible change. Peers with another version are refused with a clear error.
// 2: sync rounds carry closing rounds and quantized deltas.
// 3: rows are placed on shards by key ranges (embedding::placement), not by hash modulo the shard
//    count, so a member of an earlier build would send rows to the wrong shards; dump pages carry
//    the whole rows a placement gives to one shard, with their width and a checksum.
// 4: a job resumes on another shard count: a shard restores under the snapshot's shape
//    (register_reply restore_shards) and rows move (take_rows_request, drop_rows_request).
// 5: a job resumes on another reader count: a reader enters its files where the plan says
//    (register_reply file_passes ...), which a reader of an earlier build would read whole.
// 6: embedding values travel at the job's row precision (lookup_reply halves, push_request
//    grad_halves), which a member of an earlier build would read as no values.
// 7: a running job changes its shard count: readers hold their input (cluster_view hold_input) and
//    shards and trainers follow cluster_view placement_shards, which a member of an earlier build
//    would ignore, handing out batches and routing rows under the old count.
// 8: a shuffled job resumes on another reader count: a reader finishes the shuffle windows the
//    readers before the change left (register_reply windows_left), and its positions say where a
//    window ends and which inherited window they are in (read_position window_end_*, inherited),
//    which a reader of an earlier build would not finish nor report.
// 9: a live reshard copies rows from shards whose rows leave for good (a row TTL, a full table)
//    while the job trains, and the rows given up since their copy go as tombstones (dump_reply
//    gone_tables, gone_ids), which a shard of an earlier build would not delete.
inline constexpr std::uint16_t protocol_version = 9;

enum class role : std::uint8_t { coordinator = 0, shard = 1, trainer = 2, reader = 3, client = 4, sync = 5 };
const char* to_string(role r);

// ---- errors ------------------------------------------------------------------------------

struct error_reply {
  errc code = errc::internal;
  std::string message;
};

// ---- membership --------------------------------------------------------------------------

struct register_request {
  role from = role::client;
  std::string name;             // unique per member, e.g. "shard-0", "trainer-7f3a"
  std::int32_t index = -1;      // shard and reader index (0-based); -1 for trainers and clients
  std::string endpoint;         // where peers reach this member's listening socket ("" if none)
  std::uint64_t incarnation = 0;  // random per process start: tells a restart from a duplicate
  // How often it heartbeats (0: unknown, 1 s): the coordinator's wait for a sign of life from it
  // before another process may take its name or index.
  std::uint32_t heartbeat_interval_ms = 0;
  std::string host;        // named in a refused claim, with the process id
  std::uint32_t pid = 0;
  // A trainer: the membership it held before (0: none yet); the reply says which it holds now.
  std::uint64_t membership = 0;
};

// Where every indexed member listens; epoch grows with every change.
struct cluster_view {
  std::uint64_t epoch = 0;
  std::vector<std::string> shards;   // endpoint of shard i ("" while absent)
  std::vector<std::string> readers;  // endpoint of reader i ("" while absent)
  std::vector<std::string> trainers; // names of live trainers
  std::vector<std::string> syncs;    // endpoint of sync server k (slice k; 0 = the coordinator)
  std::vector<std::uint64_t> trainer_incarnations;  // parallel to trainers
  std::vector<std::uint64_t> shard_incarnations;    // parallel to shards (0 while absent)
  std::vector<std::uint64_t> sync_incarnations;     // parallel to syncs (0 while absent)
  std::vector<std::uint64_t> reader_incarnations;   // parallel to readers (0 while absent)
  // With validation between epochs: readers hand out epochs below epochs_open (a count) and wait
  // at its end for the coordinator's scoring (0: no barrier); epochs_stop > 0 ends the job after
  // that many epochs (an early stop).
  std::uint32_t epochs_open = 0;
  std::uint32_t epochs_stop = 0;
  // The coordinator that made it: a new one has not heard from every member yet.
  std::uint64_t coordinator = 0;
  std::vector<std::uint64_t> trainer_memberships;  // parallel to trainers: each one's membership
  std::vector<std::uint64_t> dropped_trainers;     // incarnations dropped for silence, not back
  // A following job was stopped: readers hand out no new batches (the job ends once those
  // handed out are trained).
  bool input_closed = false;
  // A live reshard: readers hand out no batches until it is lifted.
  bool hold_input = false;
  // The shard count rows are placed over, when a live reshard changed it; 0: the job's --shards.
  std::uint32_t placement_shards = 0;
  // A live reshard is under way: members heartbeat every 50 ms until it ends (its stages wait for
  // every member to apply a view).
  bool reshaping = false;
};

enum class job_state : std::uint8_t {
  waiting = 0,   // members are still registering
  running = 1,
  draining = 2,  // input exhausted; trainers finish what they hold
  done = 3,      // finished: members may exit
  failed = 4,    // stopped by an error; the coordinator's status says which
};
const char* to_string(job_state s);

// Where a reader is in its files: the position after the last row of a batch.
struct read_position {
  std::uint32_t file_index = 0;
  std::uint64_t byte_offset = 0;
  std::uint64_t line_number = 1;
  std::uint32_t previous_line_crc = 0;  // of the line ending at byte_offset; 0: not recorded
  std::uint64_t file_size = 0;          // on disk, when read; 0: not recorded
  std::uint32_t epoch = 0;              // the pass over the data (0-based), whose file order file_index indexes
  std::uint32_t window_batches = 0;     // of the shuffle window starting here, handed out; 0: a window's end
  // Inside a window of the reader's own files: where the window ends (see the schema).
  std::uint32_t window_end_file = 0;
  std::uint64_t window_end_offset = 0;
  std::uint64_t window_end_line = 1;
  std::uint32_t window_end_crc = 0;
  std::uint64_t window_end_size = 0;
  std::uint32_t inherited = 0;  // 0: the reader's own files; k: the k-th window it inherited (1-based)
  // A followed input (--follow; see data::follow_position): the file's name in its directory and
  // its identity; inode 0: between files. Empty and 0 for fixed files (file_index says which).
  std::string file_name;
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
};

// A shuffle window a reader of the job's earlier reader count left unfinished, for the reader that
// finishes it (see the schema): the old reader by its count and index, its files' progress when it
// began (five vectors of one length, empty when nothing was read before), where the window starts
// and the batches of it handed out.
struct window_left {
  std::uint32_t readers = 0;
  std::uint32_t reader = 0;
  std::uint32_t epoch = 0;
  std::uint32_t handed = 0;
  read_position start;
  std::vector<std::uint32_t> file_passes;
  std::vector<std::uint64_t> file_offsets;
  std::vector<std::uint64_t> file_lines;
  std::vector<std::uint32_t> file_crcs;
  std::vector<std::uint64_t> file_sizes;
};

struct register_reply {
  std::uint64_t member_id = 0;
  // The job's configuration as INI text ([job] section): the one place model, data and sync
  // settings come from, so members cannot disagree about them.
  std::string job_config;
  cluster_view view;
  job_state state = job_state::waiting;
  std::uint64_t restore_snapshot = 0;  // shard: load this checkpoint; 0 = none (see the schema)
  read_position resume_position;       // reader: start here ...
  bool has_resume_position = false;    // ... when set
  std::uint64_t resume_examples = 0;   // reader: examples before resume_position
  std::uint64_t job_id = 0;            // the same across coordinator restarts
  std::uint64_t resume_bad_rows = 0;   // reader: bad rows before resume_position
  bool job_was_running = false;        // the job had started before this registration (a restart)
  std::uint64_t membership = 0;        // trainer: its membership from now on (see the schema)
  std::uint32_t restore_shards = 0;    // shard: the shard count of restore_snapshot (0: the job's)
  // Reader, when the job resumed on another reader count: how far each of its files had been read
  // (see the schema); five vectors of one length, empty otherwise.
  std::vector<std::uint32_t> file_passes;
  std::vector<std::uint64_t> file_offsets;
  std::vector<std::uint64_t> file_lines;
  std::vector<std::uint32_t> file_crcs;
  std::vector<std::uint64_t> file_sizes;
  std::uint64_t schedule_examples = 0;  // reader: its share of the examples committed before the change
  std::vector<window_left> windows_left;  // reader: the shuffle windows it finishes first, by epoch
};

// A trainer's progressive evaluation window (ss/core/metrics/progressive.hpp) as its heartbeat
// carries it: per slice, its times (as ages before the heartbeat, so clocks need not agree) and
// sums; then the nonzero buckets of each slice's two histograms, slice after slice
// (ss/wire/progressive.hpp converts and checks).
struct progressive_window {
  std::vector<double> start_ages, end_ages;  // seconds before the heartbeat: first and newest example
  std::vector<std::uint64_t> examples, clicks;
  std::vector<double> prediction_sums, log_loss_sums;
  std::vector<std::uint32_t> bucket_counts;  // per slice: its entries in the three lists below
  std::vector<std::uint32_t> buckets, bucket_clicks, bucket_non_clicks;
};

// What a member reports with each heartbeat (cumulative counters since it started).
struct member_progress {
  std::uint64_t examples = 0;       // trainer: trained; reader: sent; shard: rows served
  std::uint64_t batches = 0;
  double loss_sum = 0;              // trainer: sum of per-example log loss (progressive)
  std::uint64_t clicks = 0;         // trainer: positive labels trained
  std::uint64_t window_examples = 0;  // trainer: its progressive window's examples (sums of `progressive`)
  double window_loss_sum = 0;
  std::uint64_t window_clicks = 0;
  std::uint64_t bytes_done = 0;     // reader: input bytes consumed
  std::uint64_t bytes_total = 0;    // reader: input bytes in its files
  std::uint64_t bad_rows = 0;       // reader
  std::uint64_t rows = 0;           // shard: rows held
  std::uint64_t row_bytes = 0;      // shard: bytes held
  bool finished = false;            // reader: all files read and acked; trainer: drained
  std::string detail;               // free-form JSON for status output
  double active_seconds = 0;        // trainer: wall seconds from its first batch to its latest
  std::string error;                // why the member cannot go on; "" while all is well
  std::uint64_t sync_rounds = 0;    // trainer: sync rounds completed
  double sync_gap = 0;              // trainer: mean batches between two of its syncs
  double sync_latency_p50_ms = 0;   // trainer: sync round time, request to applied result
  double sync_latency_p99_ms = 0;
  double sync_distance = 0;         // trainer: replica's relative distance from center/mean, latest
  double sync_wait_seconds = 0;     // trainer: worker-seconds stopped for foreground syncs
  std::uint64_t sync_bytes = 0;     // trainer: bytes its sync rounds sent and received
  read_position committed;          // reader: every row before it was trained ...
  bool has_committed = false;       // ... when set
  std::uint64_t committed_examples = 0;  // reader: examples before it, all incarnations
  std::uint64_t committed_bad_rows = 0;  // reader: bad rows before it, all incarnations
  std::uint32_t epochs_done = 0;         // reader: epochs whose every batch was handed out and trained
  progressive_window progressive;        // trainer: its progressive evaluation window
  std::uint32_t batches_in_flight = 0;   // reader: handed out, not yet trained
  std::uint64_t view_epoch = 0;          // the newest view this member applied
};

struct heartbeat {
  std::uint64_t member_id = 0;
  member_progress progress;
};

struct heartbeat_reply {
  job_state state = job_state::waiting;
  cluster_view view;
  bool known = true;  // false: the coordinator does not know this member (restarted); re-register
};

struct leave {
  std::uint64_t member_id = 0;
  std::string reason;
};

// ---- data --------------------------------------------------------------------------------

struct pull_request {
  std::uint32_t credits = 1;     // how many more batches the trainer can take now
  std::uint64_t trainer = 0;     // the asking trainer's incarnation
  std::uint64_t pull = 0;        // this pull's number, per trainer (0: not numbered)
  // Earlier pulls to this reader the trainer stopped waiting for: their batches never reach it.
  std::vector<std::uint64_t> abandoned;
};

struct batch_message {
  std::uint32_t reader_index = 0;
  std::uint64_t sequence = 0;  // per reader, from 0, no gaps
  data::example_batch batch;
  read_position end;           // resume here to continue after this batch
  std::uint64_t incarnation = 0;  // the reader process that numbered it
  std::uint64_t examples_before = 0;  // the reader's examples before it, every epoch and incarnation
};

struct end_of_data {
  std::uint32_t reader_index = 0;
  std::uint64_t batches = 0;   // batches this reader sent in all
};

struct batch_ack {
  std::uint32_t reader_index = 0;
  std::uint64_t sequence = 0;
  std::uint64_t incarnation = 0;  // of the reader that numbered the batch
  std::uint64_t trainer = 0;      // the acking trainer's incarnation (0: not said)
};

// A snapshot's start: the reader's committed position now (a heartbeat's can be an interval old).
struct position_request {};

struct position_reply {
  read_position committed;        // every row before it was trained (valid when has_committed)
  bool has_committed = false;     // false: nothing committed since the reader started
  std::uint64_t committed_examples = 0;  // before it, earlier incarnations included
  std::uint64_t committed_bad_rows = 0;
};

// ---- embeddings --------------------------------------------------------------------------

struct lookup_request {
  bool create = true;               // false: never create rows (evaluation); absent rows read
                                    // as their initial values
  std::vector<std::uint32_t> tables;  // parallel to ids
  std::vector<std::uint64_t> ids;
  std::uint32_t examples = 0;  // of the training batch (0: not counted); a row TTL's clock
};

// Values travel at the job's row precision (bf16 and fp16 as 16-bit words, half the bytes); the
// codec converts, so both ends hold FP32 here.
struct lookup_reply {
  std::uint32_t dim = 0;
  std::vector<float> values;  // ids.size() x dim, in request order
  embedding::row_precision precision = embedding::row_precision::fp32;  // on the wire
};

struct push_request {
  std::vector<std::uint32_t> tables;
  std::vector<std::uint64_t> ids;
  std::vector<float> grads;  // ids.size() x dim
  float lr_scale = 1.0f;     // the learning-rate schedule's multiplier, in [0, 1]
  std::uint64_t trainer = 0;     // the pushing trainer's incarnation (0: not checked)
  std::uint64_t membership = 0;  // its membership when it took the batch (fenced once over)
  std::uint64_t number = 0;      // its push number (from 1): a resend is not applied twice
  // The gradients on the wire: bf16 and fp16 halve the bytes (rounded to the nearest).
  embedding::row_precision precision = embedding::row_precision::fp32;
};

struct push_reply {
  std::uint64_t rows = 0;      // rows updated
  bool duplicate = false;      // applied before (a resend): nothing applied now
};

// A hint ahead of a lookup: rows a coming batch will look up, which a shard with a memory budget
// reads from storage into RAM meanwhile (creating, counting and changing nothing).
struct warm_request {
  std::vector<std::uint32_t> tables;  // parallel to ids
  std::vector<std::uint64_t> ids;
};

struct warm_reply {
  std::uint64_t rows = 0;  // rows read from storage into RAM
  bool tiered = true;      // false: every row is in RAM already; hints are not wanted
};

// ---- the dense model ---------------------------------------------------------------------

struct dense_request {
  bool optimizer = false;  // also the dense optimizer's state (a snapshot asks the trainers for it)
};

struct dense_reply {
  std::uint64_t version = 0;  // bumps whenever the central copy changes
  std::vector<float> params;
  std::vector<float> momentum;  // a BMUF sync server's block momentum (its slice); else empty
  // The dense optimizer's state (train::dense_model's layout) and its update count: a trainer's
  // when asked; to a starting trainer, the snapshot's or the latest gathered. Empty: start afresh.
  std::vector<float> optimizer;
  std::uint64_t optimizer_steps = 0;
  // A trainer's replica: the examples it was trained on, its weight in an average (0: not said).
  std::uint64_t examples = 0;
};

// A sync server's state, sent to it when a job resumes from a snapshot.
struct sync_restore {
  std::uint32_t slice = 0;
  std::vector<float> params;
  std::vector<float> momentum;
};

// ---- background and foreground synchronization ---------------------------------------------

struct sync_request {
  std::uint64_t trainer = 0;   // the trainer's incarnation (stable across coordinator restarts)
  std::uint32_t slice = 0;     // which sync server's slice
  std::uint64_t offset = 0;    // the slice's first parameter in the flat dense vector
  std::uint64_t batches = 0;   // the trainer's batches so far (sync gap)
  std::vector<float> params;   // the slice as snapshotted when the round started
  std::uint32_t closing = 0;   // 0: a regular round; g > 0: the trainer's closing round g
  // Quantized rounds (params empty): the replica less the mirror of exchange `base`
  // (core/include/ss/core/sync/replica_mirror.hpp). base 0 with params: the full slice.
  std::uint64_t base = 0;
  sync::quantized_vector quantized;
  std::uint64_t membership = 0;  // the trainer's membership: a round of one that is over is refused
};

struct sync_reply {
  std::uint64_t round = 0;
  bool is_delta = false;       // true: EASGD's d, subtract it; false: the round's target
  std::uint32_t participants = 0;
  double distance = 0;         // relative distance of the sent slice from the center or mean
  std::vector<float> params;   // the delta or the target (empty when quantized)
  std::uint64_t sequence = 0;  // quantized rounds: this exchange, the base of the next request
  sync::quantized_vector quantized;  // quantized rounds: the delta, or target - replica
};

// A trainer's replica, sent when it finishes (the cluster's final model is built from these).
struct dense_report {
  std::uint64_t trainer = 0;   // the trainer's incarnation
  std::uint64_t examples = 0;  // examples this replica was trained on
  std::vector<float> params;
};

// ---- operations --------------------------------------------------------------------------

struct status_request {};

struct status_reply {
  std::string json;  // one JSON object describing the service (and, at the coordinator, the job)
};

// ---- snapshots and export ------------------------------------------------------------------

struct snapshot_now {};

struct snapshot_request {
  std::uint64_t snapshot_id = 0;
  std::vector<std::uint64_t> keep;  // other snapshot ids to keep (retention)
};

struct snapshot_reply {
  std::uint64_t snapshot_id = 0;
  std::string path;
  std::uint64_t rows = 0;
  std::uint64_t bytes = 0;
  std::uint64_t checksum = 0;
  double seconds = 0;
};

// Which rows a page of rows that move takes (schema/control.capnp MovePass): every row (a resume,
// or a move under the hold); every row, clearing each one's move mark as it is copied (a live
// reshard's copy while the job trains); only the rows marked since (its copy under the hold).
enum class move_pass : std::uint8_t { whole = 0, copy = 1, changed = 2 };

struct dump_request {
  std::uint32_t table = 0;
  std::uint64_t position = 0;
  std::uint32_t max_rows = 65536;
  // Only the rows the placement over placement_shards shards gives to shard placement_index (0
  // shards: every row), each whole (values, optimizer state, TTL stamp) with whole_rows: the read
  // side of moving rows to another shard count.
  std::uint32_t placement_shards = 0;
  std::uint32_t placement_index = 0;
  bool whole_rows = false;
  move_pass pass = move_pass::whole;  // with a placement
};

struct dump_reply {
  std::vector<std::uint32_t> tables;
  std::vector<std::uint64_t> ids;
  std::vector<float> values;  // ids.size() x row_floats
  std::uint32_t next_table = 0;
  std::uint64_t next_position = 0;
  bool done = false;
  std::uint32_t row_floats = 0;  // dim, or the whole row's floats
  std::uint32_t crc32c = 0;      // of tables, ids, values, gone_tables and gone_ids (dump_page_crc)
  // A live reshard's rows under the hold that the shard gave up for good since their copy (a row
  // TTL, a full table): the taking shard deletes them.
  std::vector<std::uint32_t> gone_tables;
  std::vector<std::uint64_t> gone_ids;
};
// The checksum a dump page carries: CRC32C of its tables, ids, values, gone_tables and gone_ids,
// little-endian.
std::uint32_t dump_page_crc(const dump_reply& page);

// Coordinator -> shard: a page of the rows of publication `sequence` (delta publishing; see
// schema/control.capnp for each field).
struct publish_rows_request {
  std::uint64_t sequence = 0;
  std::uint64_t last_written = 0;
  bool base = false;
  std::uint64_t position = 0;
  std::uint32_t max_rows = 65536;
};

struct publish_rows_reply {
  bool needs_base = false;
  std::vector<std::uint32_t> tables;
  std::vector<std::uint64_t> ids;
  std::vector<float> values;  // ids.size() x dim
  std::uint64_t next_position = 0;
  std::uint64_t staged = 0;
  std::vector<std::uint32_t> gone_tables;  // tombstones: gone_ids.size() of them
  std::vector<std::uint64_t> gone_ids;
};

// Coordinator -> shard, while a job resumes on another shard count: pull the rows that move to it
// from `sources` and store them (see schema/control.capnp).
struct take_rows_request {
  std::vector<std::string> sources;
  std::uint32_t placement_shards = 0;
  move_pass pass = move_pass::whole;  // passed on in each dump_request
};

struct take_rows_reply {
  std::uint64_t rows = 0;
  std::uint64_t bytes = 0;
  double seconds = 0;
};

// Coordinator -> shard, once the snapshot of the new shape is written: drop the rows it no longer
// owns (all of them, and leave the job, when its index is placement_shards or above).
struct drop_rows_request {
  std::uint32_t placement_shards = 0;
};

struct drop_rows_reply {
  std::uint64_t dropped = 0;
  std::uint64_t kept = 0;
};

// Coordinator -> trainer: run closing round `generation` (a scored epoch ended); answered by an ack.
struct sync_close {
  std::uint32_t generation = 0;
};

struct export_request {
  std::string path;  // on the coordinator's file system
};

struct export_reply {
  std::string path;
  std::uint64_t rows = 0;
  std::uint64_t bytes = 0;
  double seconds = 0;
};

struct stop_request {
  std::string reason;
};

// Change the running job's shard count (shadowsync reshard): answered once accepted or refused.
struct reshard_request {
  std::uint32_t shards = 0;
};

struct reshard_reply {
  bool accepted = false;
  std::string message;  // why it was refused, or what happens now
  std::uint32_t from = 0;
  std::uint32_t to = 0;
};

struct ack {};

// ---- the envelope --------------------------------------------------------------------------

using body = std::variant<error_reply, register_request, register_reply, heartbeat, heartbeat_reply, leave,
                          pull_request, batch_message, end_of_data, batch_ack, lookup_request, lookup_reply,
                          push_request, push_reply, dense_request, dense_reply, dense_report, status_request,
                          status_reply, stop_request, ack, sync_request, sync_reply, snapshot_now,
                          snapshot_request, snapshot_reply, dump_request, dump_reply, sync_restore,
                          export_request, export_reply, sync_close, warm_request, warm_reply,
                          publish_rows_request, publish_rows_reply, take_rows_request, take_rows_reply,
                          drop_rows_request, drop_rows_reply, reshard_request, reshard_reply, position_request,
                          position_reply>;

struct envelope {
  std::uint16_t version = protocol_version;
  // Set by the sender of a request; a reply carries the request's id. 0 for one-way messages.
  std::uint64_t request_id = 0;
  body message;
};

// The name of the message an envelope holds ("lookup_request"), for logs and counters.
const char* message_name(const body& b);

}  // namespace ss::wire
