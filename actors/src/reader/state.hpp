// The reader actor's state and what its units share (private to ss_actors):
//   reader.cpp   the actor: pulls, acks and commits, requeues, status; batches of files by epoch
//   follow.cpp   batches of a followed input (--follow): partial batches, "waiting for input", its end
#pragma once

#include <caf/all.hpp>

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "ss/actors/actors.hpp"
#include "ss/actors/messages.hpp"
#include "ss/actors/reader.hpp"

namespace ss::actors::reader_detail {

using clock_type = caf::actor_clock;

struct reader_state {
  static inline const char* name = "reader";
  std::unique_ptr<data::epoch_reader> reader;         // files, by epoch
  std::unique_ptr<data::follow_batch_reader> follow;  // or a followed input
  reader_options options;
  std::shared_ptr<reader_counters> counters;
  std::uint64_t next_sequence = 0;
  // Batches handed out and not yet committed, by sequence. A batch is committed once it and
  // every batch before it were acked: the committed position only moves over a trained prefix.
  struct handed_out {
    batch_ptr message;                 // kept until acked, to hand out again
    std::uint64_t examples_through = 0;  // good rows up to the batch's end, all incarnations
    std::uint64_t bad_through = 0;       // bad rows up to the batch's end, all incarnations
    std::uint64_t holder = 0;          // incarnation of the trainer that has it
    std::uint64_t pull = 0;            // the holder's pull it answered (pull_request::pull)
    clock_type::time_point handed_at;  // when it was (last) handed out
    bool acked = false;
    bool queued = false;               // waiting in `requeue` for another trainer
  };
  std::map<std::uint64_t, handed_out> in_flight;
  std::uint64_t unacked = 0;
  std::deque<std::uint64_t> requeue;  // sequences to hand out again, oldest first
  // Trainers in the latest view, and since when a holder has been missing from it.
  std::set<std::uint64_t> live_trainers;
  // Every trainer incarnation the views named, with its name: a name that comes back with a new
  // incarnation means the old process died (a restart), so its batches need not wait.
  std::map<std::uint64_t, std::string> trainer_names;
  std::set<std::string> live_names;
  bool have_view = false;
  std::map<std::uint64_t, clock_type::time_point> missing_since;
  // The coordinator behind the views (its incarnation) and since when: a coordinator that just
  // (re)started has not heard from every trainer yet, so one missing from its first views may be
  // alive; a settled coordinator's view has dropped it (for --member-timeout of silence).
  std::uint64_t coordinator = 0;
  clock_type::time_point coordinator_since;
  // The coordinator's word on epochs (the view's epochs_open and epochs_stop).
  std::uint32_t epochs_open = 0, epochs_stop = 0;
  // A live reshard: no batch is handed out (not even one handed out before) until it is lifted.
  bool hold_input = false;
  status failure;
  // Following: the view closed the input (the job was stopped); when the pending rows' first one
  // was read; when the reader last had read all there was; the examples handed out by this process.
  bool input_closed = false;
  std::optional<clock_type::time_point> pending_since;
  std::optional<clock_type::time_point> caught_up_at;
  std::uint64_t follow_examples = 0;
};

using reader_self = reader_actor::stateful_pointer<reader_state>;

// Shared by both kinds of input (reader.cpp).
void update_progress(reader_state& st);
void report_bad_rows(reader_state& st, const std::vector<std::string>& reports);
body_ptr reading_failed(reader_state& st, status why);
// Numbers batch `m` (ending at `m->end`), keeps it until acked, and hands it to the trainer of `pull`.
body_ptr hand_new(reader_self self, std::shared_ptr<wire::batch_message> m, std::uint64_t examples_through,
                  std::uint64_t bad_through, const wire::pull_request& pull);
body_ptr serve_pull(reader_self self, const wire::pull_request& pull);

// A followed input (follow.cpp).
body_ptr serve_follow_pull(reader_self self, const wire::pull_request& pull);
// No new batches: the view closed the input, or the limit was reached.
void end_following(reader_state& st, const std::string& why);
// The periodic look at the input: bytes behind, lag, notices to log.
void follow_tick(reader_self self);
void follow_progress(reader_state& st);

}  // namespace ss::actors::reader_detail
