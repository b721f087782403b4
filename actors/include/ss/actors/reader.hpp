// The data reader's actor: serves pull_request with the next batch of its files (parsed and
// hashed by the core batch_reader, epoch after epoch and shuffled by the core epoch_reader),
// numbers batches per reader, and tracks which were trained (batch_ack) so it knows its committed
// position: every row before it was trained.
//
// Nothing is lost: a batch stays in memory until it is acked. When the trainer holding it leaves
// the cluster view (the coordinator dropped it: at once; in the first `requeue_after` of a new
// coordinator, which has not heard from everyone yet, once it was missing that long), the batch
// goes to the next trainer that asks (a replay if the first trainer had trained it), and only that
// trainer's ack counts. So does a batch its live trainer never got: the trainer names the pulls it
// gave up waiting for in its next pull, or it acked a batch handed to it later; and any batch held
// past the lease. A restarted reader starts at the committed position the coordinator last heard
// of, so it replays the batches after it. With validation between epochs (epoch_barrier), the
// reader waits at the end of each epoch until the view's epochs_open lets the next one begin.
//
// Following (--follow: a data::follow_batch_reader instead of files): a pull takes the rows there
// are; a full batch goes at once, a partial one once its first row has waited follow_batch_wait,
// and with fewer rows than that the pull is answered "waiting for input" (unavailable: the trainer
// asks again shortly). The input ends when the view says input_closed (the job was stopped) or at
// the reader's share of --follow-limit-examples; then it is handed out as at the end of files.
// Messages besides the wire requests (serve_atom), typed as reader_actor in actors.hpp:
//   (view_atom, cluster_view)   the live trainers, and the epochs the coordinator opened
//   (tick_atom)                 periodic: requeue the batches of trainers that are gone, and
//                               those held past the lease
#pragma once

#include <caf/fwd.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "ss/actors/actors.hpp"
#include "ss/core/data/epoch_reader.hpp"
#include "ss/core/data/follow_batch_reader.hpp"
#include "ss/core/metrics/counter_set.hpp"
#include "ss/wire/messages.hpp"

namespace ss::actors {

struct reader_options {
  std::string name = "reader";
  std::uint32_t index = 0;
  std::uint64_t incarnation = 0;      // this process; acks for another one are refused
  std::uint64_t resume_examples = 0;  // examples before the position the reader starts at
  std::uint64_t resume_bad_rows = 0;  // bad rows before it
  // Since the job resumed on another reader count: this reader's share of the examples committed
  // before, which the learning-rate schedule counts as done (a batch's examples_before), not the
  // reader's commits.
  std::uint64_t schedule_examples = 0;
  // How long a trainer may be missing from a new coordinator's view before its batches go to others.
  std::chrono::milliseconds requeue_after{10000};
  // A batch its trainer never got (the answer to the pull came after the trainer gave up): one
  // handed out this long ago, to a trainer that acked a batch handed to it later.
  std::chrono::milliseconds lost_after{20000};
  // Any batch not acked this long after it was handed out goes to the next trainer.
  std::chrono::milliseconds lease{120000};
  // Validation between epochs: at the end of an epoch, wait for the view to open the next.
  bool epoch_barrier = false;
  // Following: how long a partial batch waits for more rows, and this reader's share of
  // --follow-limit-examples (0: none).
  std::chrono::milliseconds follow_batch_wait{200};
  std::uint64_t follow_limit = 0;
};

// What a reader hands out: files, epoch after epoch; or a followed input; neither: nothing (a
// reader with no files, done from the start).
struct reader_input {
  reader_input() = default;
  reader_input(std::unique_ptr<data::epoch_reader> f) : files(std::move(f)) {}          // NOLINT: implicit
  reader_input(std::unique_ptr<data::follow_batch_reader> f) : follow(std::move(f)) {}  // NOLINT: implicit
  std::unique_ptr<data::epoch_reader> files;
  std::unique_ptr<data::follow_batch_reader> follow;
};

// Progress the membership agent reports; written by the reader actor only. The counters are each
// declared once: status key, help and type (see ss/core/metrics/counter_set.hpp).
struct reader_counters : metrics::counter_set {
  using counter = metrics::counter;
  static constexpr auto gauge = metrics::metric_type::gauge;
  counter batches_sent{*this, "batches_sent", "Batches handed to trainers."};
  counter examples_sent{*this, "examples_sent", "Examples handed to trainers."};
  counter batches_acked{*this, "batches_acked", "Batches trainers acknowledged."};
  counter examples_acked{*this, "examples_acked", "Examples trainers acknowledged."};
  counter batches_requeued{*this, "batches_requeued", "Batches handed out again (their trainer went away)."};
  counter examples_requeued{*this, "examples_requeued", "Examples handed out again."};
  counter rows_read{*this, "rows_read", "Rows read from the input files."};
  counter bad_rows{*this, "bad_rows", "Malformed rows skipped."};
  counter bytes_done{*this, "bytes_done", "Input bytes read in this epoch.", gauge};
  counter bytes_total{*this, "bytes_total", "Input bytes of an epoch.", gauge};
  // A followed input (--follow).
  static constexpr auto ns = metrics::counter_unit::nanoseconds;
  counter follow_lines{*this, "follow_lines", "Lines read from a followed input."};
  counter follow_waits{*this, "follow_waits",
                       "Pulls answered \"waiting for input\": the followed input had no new rows, or fewer than a "
                       "batch that had not waited --follow-batch-wait."};
  counter follow_files{*this, "follow_files", "Files of the followed input opened."};
  counter follow_rotations{*this, "follow_rotations", "Rotations of a followed file (its name came to hold another file)."};
  counter follow_truncations{*this, "follow_truncations",
                             "Followed files found shorter than the position (copytruncate) or rewritten: read again "
                             "from their start."};
  counter follow_files_refused{*this, "follow_files_refused",
                               "Files of a followed directory not read: they appeared with a name sorting before the "
                               "file being read."};
  counter follow_tails_lost{*this, "follow_tails_lost",
                            "Followed files gone when the reader resumed in them (rotated away and removed while it "
                            "was down): their rows after the position were not read."};
  counter follow_bytes_behind{*this, "follow_bytes_behind", "Bytes of the followed input not read yet.", gauge};
  counter follow_lag{*this, "follow_lag_seconds",
                     "Seconds since the reader last had read all of its followed input (0 while it has): the oldest "
                     "unread row is at most this old.",
                     gauge, ns};
  std::atomic<bool> exhausted{false};  // no more batches to hand out
  std::atomic<bool> finished{false};   // exhausted and every batch acked
  std::atomic<std::uint64_t> examples_before{0};  // good rows before where this process started reading
  std::atomic<std::uint32_t> epoch{0};             // the pass being handed out, 0-based
  std::atomic<std::uint32_t> epochs_done{0};       // epochs handed out and trained in full
  std::atomic<std::uint32_t> batches_in_flight{0};  // handed out, not yet acknowledged
  std::atomic<std::uint64_t> view_epoch{0};         // the newest view the reader applied
  mutable std::mutex mu;
  // The committed position (under mu): every row before it was trained.
  bool has_committed = false;
  wire::read_position committed;
  std::uint64_t committed_examples = 0;  // good rows before it, over all incarnations
  std::uint64_t committed_bad_rows = 0;
  std::string error;                   // why reading stopped, if it failed
  std::string bad_row_reports;         // the first bad rows, one per line

  // The committed position as it stands (the four fields above, read under mu): what heartbeats,
  // the status and a snapshot's position_request report.
  wire::position_reply committed_now() const;
};

reader_actor spawn_reader(caf::actor_system& sys, const gateway_actor& gateway, reader_input input,
                          const reader_options& options, std::shared_ptr<reader_counters> counters);

}  // namespace ss::actors
