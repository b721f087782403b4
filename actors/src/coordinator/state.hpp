// The coordinator's state and the functions its source files share: coordinator.cpp (the job's
// life cycle, progress, status, the final evaluation), members.cpp (registration,
// heartbeats, the cluster view), snapshot.cpp
// (the central dense copy, cluster snapshots, resuming), export.cpp (model export) and
// epochs.cpp (validation between epochs). Private to ss_actors.
#pragma once

#include <caf/all.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ss/actors/coordinator.hpp"
#include "ss/actors/publisher.hpp"
#include "ss/actors/messages.hpp"
#include "ss/core/job/job_report.hpp"
#include "ss/core/job/snapshot.hpp"
#include "ss/core/log_limiter.hpp"
#include "ss/core/metrics/counter_set.hpp"
#include "ss/core/metrics/metrics.hpp"
#include "ss/core/metrics/progressive.hpp"
#include "ss/core/metrics/status_metrics.hpp"

namespace ss::actors::coordinator_detail {

// The actor clock, not the wall clock: on the deterministic test scheduler time moves only when
// the test advances it, so member timeouts are testable without sleeping.
using clock_type = caf::actor_clock;

// The coordinator's counters, each declared once: status key, help and type (see
// ss/core/metrics/counter_set.hpp). The rest of its status is read from its state.
struct coordinator_counters : metrics::counter_set {
  using counter = metrics::counter;
  counter snapshots_taken{*this, "snapshots", "Cluster snapshots taken."};
  counter snapshots_failed{*this, "snapshots_failed", "Cluster snapshots that failed."};
  counter claims_refused{*this, "registrations_refused",
                         "Registrations refused because a live process held the name or index they claimed."};
  counter publications{*this, "publications", "Publications written to --publish-dir (bases and deltas)."};
  counter publications_failed{*this, "publications_failed", "Publications that failed (tried again at the next interval)."};
  counter published_rows{*this, "published_rows", "Embedding rows written to publications."};
  counter published_tombstones{*this, "published_tombstones",
                               "Rows deltas said are gone (dropped for a row limit, expired)."};
  counter published_bytes{*this, "published_bytes", "Bytes of the publications written."};
  counter reshapes{*this, "reshapes", "Changes of the shard count completed (a job resumed on another, or resharded live)."};
  counter reshapes_refused{*this, "reshapes_refused",
                           "Live reshard requests refused (the job not running, another under way, a count no job "
                           "can have) or rolled back (new shards that did not register, input that did not settle)."};
  counter rows_moved{*this, "rows_moved", "Rows moved to other shards by changes of the shard count."};
  counter windows_refused{*this, "progressive_windows_refused",
                          "Trainer heartbeats whose progressive window did not add up (the window was left out)."};
};

struct member_info {
  wire::role role = wire::role::client;
  std::string name;
  std::int32_t index = -1;
  std::string endpoint;
  std::uint64_t incarnation = 0;
  std::chrono::milliseconds heartbeat_interval{1000};
  std::string host;  // its host name and process id, named when another process claims its place
  std::uint32_t pid = 0;
  clock_type::time_point last_seen;
  wire::member_progress progress;
  bool reported_replica = false;
  bool replica_asked = false;  // the coordinator asked it for its replica (see collect_replicas)
  // What its registration was told, told again to a copy of that registration (a retry whose
  // first answer was lost, e.g. while the coordinator was paused).
  bool joined_running = false;
  std::uint64_t restore_snapshot = 0;
  // A trainer's membership (job/membership_fence.hpp): what it sends under an older one is refused.
  std::uint64_t membership = 0;
};

// One snapshot on its way: shards checkpoint, the dense state is gathered, then the manifest.
struct snapshot_in_progress {
  std::uint64_t id = 0;
  // This attempt at it, unique in the coordinator's life: an abandoned attempt's answers still on
  // their way (its id is taken again by the next one) must not count for the next.
  std::uint64_t attempt = 0;
  bool cut_taken = false;  // the reader positions are in and the shards and trainers asked
  clock_type::time_point started;
  job::snapshot_manifest manifest;
  job::dense_state dense;
  bool dense_done = false;
  std::size_t shards_pending = 0;
  std::vector<std::uint64_t> shard_members;  // who holds each shard slot: a restart voids the snapshot
  std::string failure;  // the first thing that went wrong; the snapshot is then abandoned
  std::vector<caf::response_promise> waiters;  // snapshot_now requests
};

// A job resuming on another shard count: its rows move before it trains; or a running job's
// shard count changed by `shadowsync reshard` (live): the new shards join, the input is held
// until nothing is being trained, the rows move, members switch to the new count, the input is
// released, and then as on a resume the snapshot and the drop (reshape.cpp).
struct reshape_in_progress {
  enum class stage_kind { joining, copying, holding, moving, switching, snapshot, dropping };
  bool live = false;
  std::uint64_t view_epoch = 0;  // holding, switching: the view every member must have applied
  std::uint64_t request_epoch = 0;  // live: the first view that said a reshard is under way
  std::uint32_t from = 0, to = 0;  // shard counts: the snapshot's, the job's
  stage_kind stage = stage_kind::moving;
  std::uint64_t old_snapshot = 0;  // the snapshot resumed from
  std::uint64_t expected_rows = 0;  // its rows: what the shards must hold, once each, after the move (0: unknown)
  bool asked = false;  // the stage's requests are out
  std::uint64_t attempt = 0;  // answers to an earlier attempt do not count
  int failures = 0;           // of the current stage, in a row
  std::string last_error;
  std::size_t pending = 0;
  std::string stage_failure;  // the first shard's failure in the stage under way
  errc stage_failure_code = errc::ok;
  std::vector<std::uint64_t> stage_members;  // the shard slots when the stage was asked: a restart redoes it
  clock_type::time_point started, stage_started, retry_at;
  // Since when a shard the stage needs has been absent, and since when the stage's shards have
  // answered that they are not serving yet: each waited for at most --peer-wait.
  std::optional<clock_type::time_point> missing_since, unavailable_since;
  std::uint64_t rows_moved = 0, bytes_moved = 0;  // by this coordinator's moving stage (else 0)
  // Per shard, from the dropping stage: the rows it holds, and the most it said it dropped in any
  // attempt (a shard that dropped before a retry says 0 the second time; one that restarted
  // restored the snapshot and drops them again).
  std::vector<std::uint64_t> kept_by, dropped_by;
  double move_seconds = 0;
  // Live: when the input was held (until the members switched).
  clock_type::time_point hold_started;
  // Live: the copy while the job trains is over (copied: it succeeded, by the shards in
  // copied_members, so that under the hold only the rows changed since move), its rows and time.
  bool copy_over = false, copied = false;
  std::vector<std::uint64_t> copied_members;
  // Live: taken up at the switch by a coordinator that started to a stored one (the rows had
  // moved under its predecessor).
  bool resumed_at_switch = false;
  std::uint64_t rows_copied = 0;
  double copy_seconds = 0;
};

// A model being scored: the validation files after an epoch, then (when it is the best so far)
// the test files. One at a time; the evaluator's result goes to the stage named here.
enum class scoring_stage { none, validation, test, periodic };

struct coordinator_state {
  static inline const char* name = "coordinator";
  coordinator_options options;
  std::string job_text;
  gateway_actor gateway;
  std::map<std::uint64_t, member_info> members;
  std::vector<std::uint64_t> shard_slots, reader_slots;  // member id per index, 0 = vacant
  std::vector<std::uint64_t> sync_slots;                 // sync servers 1..K-1 (slot 0 is ours)
  // Since when a slot ("shard 0", "reader 1", "sync server 2") has been vacant in a job that runs:
  // the job waits for its successor at most --peer-wait.
  std::map<std::string, clock_type::time_point> vacant_since;
  // Another process claims a place a member holds (a trainer's name, a shard's index): since when
  // that incarnation has been asking. The holder's heartbeat after that proves it alive and the
  // claim is refused; its silence for its claim window hands the place over (members.cpp).
  struct place_claim {
    std::uint64_t incarnation = 0;
    clock_type::time_point since;
  };
  std::map<std::string, place_claim> claims;
  // Members dropped for silence, by incarnation (their place and endpoint): perhaps only cut off,
  // so a finished job's coordinator waits a while for them to come back and be told that it is
  // done. Forgotten when they, or another process for their place or at their endpoint (a
  // container restarted under a new trainer name: the old process is gone), register.
  struct dropped_member {
    std::string place, endpoint;
  };
  std::map<std::uint64_t, dropped_member> dropped;
  // Trainers dropped for silence (incarnations, the newest 64), until they register again: the
  // view names them, and shards and sync servers refuse what they still send. Kept when another
  // process takes the name: the dropped one may still be running, cut off.
  std::vector<std::uint64_t> dropped_trainers;
  std::uint64_t next_member_id = 1;
  wire::cluster_view view;
  wire::job_state state = wire::job_state::waiting;
  std::string failure;
  // A following job: why its input ended (view.input_closed), "" while it is followed.
  std::string input_closed_why;
  std::uint64_t job_id = 0;
  // Training replicas reported at the end (trainer incarnation -> params, examples), averaged
  // into the final model for MA and none.
  std::map<std::uint64_t, std::pair<std::vector<float>, std::uint64_t>> replicas;
  // Each trainer incarnation's replica as last gathered (a snapshot, an export, an epoch's
  // model), with the examples it had trained: without a central copy (none, MA) it is all that
  // is left of a trainer killed before it reported.
  struct seen_replica {
    std::string trainer;  // its name
    std::vector<float> params;
    std::uint64_t examples = 0;
  };
  std::map<std::uint64_t, seen_replica> last_seen_replicas;
  std::vector<float> central;  // the final model's dense part, once the job is evaluated
  clock_type::time_point started_at, running_at, drained_at;
  bool running_seen = false, drained_seen = false;
  // When tick() last ran: a long gap means the coordinator itself did not run (paused, starved).
  std::optional<clock_type::time_point> last_tick;
  // Progress line bookkeeping.
  clock_type::time_point last_progress;
  std::uint64_t last_examples = 0;
  // Trainers that left keep counting towards the totals; so do, after a resume, the trainers of
  // the snapshot that have not come back (`ghosts`, by incarnation).
  job::trainer_counters departed;
  std::map<std::uint64_t, job::trainer_counters> ghosts;
  // Trainers that left (stopped, dropped for missed heartbeats, replaced), by incarnation: in
  // case they come back, and for the result's trainer_stats.
  struct retired_trainer {
    std::string name;
    wire::member_progress progress;
  };
  std::map<std::uint64_t, retired_trainer> retired_trainers;
  // Progressive evaluation: the window slices of trainers that left (by incarnation, on this
  // coordinator's clock), in the job's window until newer examples or time push them out.
  std::map<std::uint64_t, std::vector<metrics::window_slice>> departed_windows;
  log_limiter window_refusals{60'000'000'000};  // a line a minute per trainer whose window is refused
  // Each reader's committed position, as last reported (or as the snapshot recorded it): where a
  // restarted reader starts, and the job's exact count of examples trained.
  std::vector<job::reader_commit> reader_commits;
  // Since the job resumed on another reader count: where each file stood then (the commits above
  // start from it); empty otherwise.
  job::reader_plan read_plan;
  // Resuming: the snapshot this coordinator started from (0: none) and its dense state, which
  // trainers start from until a live central copy exists.
  std::uint64_t resumed_from = 0;
  std::optional<job::dense_state> resumed_dense;
  // The trainers' dense optimizer state as last gathered (each snapshot asks; a resume starts from
  // the snapshot's), averaged by the examples each trained: what snapshots keep and a starting
  // trainer takes. Empty until gathered, and with SGD.
  struct optimizer_state {
    std::vector<float> values;
    std::uint64_t steps = 0;
  };
  std::uint64_t snapshot_attempts = 0;  // snapshot_in_progress::attempt of the newest
  optimizer_state gathered_optimizer;
  // Resuming on another shard count, until the rows have moved (then reset).
  std::optional<reshape_in_progress> reshape;
  std::uint32_t reshaped_from = 0;  // the shard count a completed reshape moved the rows from (0: none)
  // The --shards this coordinator was started with; options.job.shards differs from it once a live
  // reshard changed the count (or the job kept such a count: coordinator_options::shards_flag).
  std::uint32_t shards_flag = 0;
  // A live reshard: readers hand out nothing (the view's hold_input), and the count rows are placed
  // over once the rows moved (the view's placement_shards; 0: the job's --shards).
  bool hold_input = false;
  std::uint32_t placement_shards = 0;
  std::string last_reshape_error;  // why the last live reshard was refused or rolled back
  // Snapshots.
  std::optional<snapshot_in_progress> snapshot;
  std::uint64_t last_snapshot_id = 0;
  clock_type::time_point last_snapshot_at;
  coordinator_counters counters;
  // Why the newest snapshot attempt failed, "" once one completes: when set at the end, the state
  // on disk is older than the job (a full disk, say), which the result and exit status say.
  std::string last_snapshot_error;
  double last_snapshot_seconds = 0;
  std::uint64_t last_snapshot_rows = 0, last_snapshot_bytes = 0;
  // Result.
  bool evaluating = false;
  // Training is over: one last snapshot writes every shard's rows to storage before the scoring,
  // so a shard restarted during the scoring or the export serves the rows that were scored.
  // An attempt that fails (a shard restarted meanwhile, a full disk) is made again a second
  // later, 10 attempts in all; while a shard is away it waits for it (bounded by --peer-wait).
  int final_snapshot_attempts = 0;
  std::uint64_t final_snapshot_id = 0;  // of the last attempt; complete when last_snapshot_id equals it
  std::optional<job::job_report> result;  // once the job ended (or had ended before)
  // The export at the job's end (options.export_path): 0 not started, 1 writing, 2 done; the test
  // metrics wait here meanwhile.
  double recent_eps = 0;  // examples/s over the last progress interval
  int export_stage = 0;
  std::optional<metrics::summary> final_test;
  std::uint64_t final_test_bad_rows = 0;
  std::optional<wire::export_reply> exported;
  std::string export_error;
  // Validation between epochs (--validation): each scored epoch, the best one (lowest validation
  // log loss) with its test metrics, and the model being scored.
  std::vector<job::epoch_score> epoch_scores;
  int best_epoch = 0, since_best = 0;
  double best_loss = 0;
  std::optional<metrics::summary> best_test;
  std::uint64_t best_test_bad_rows = 0, validation_bad_rows = 0;
  bool best_exported = false;  // --export holds the best epoch's model
  bool stopped_early = false;
  scoring_stage scoring = scoring_stage::none;
  int scoring_epoch = 0;
  bool scoring_final = false;  // the model after training (the final path), not between epochs
  bool exporting_epoch = false;  // the exporter writes the best epoch's model (between epochs)
  std::vector<float> scored_model;
  // --eval-every: the validation files scored while the job trains, and when next.
  std::vector<job::evaluation> evaluations;
  std::uint64_t next_evaluation_at = 0;
  std::uint64_t evaluation_examples = 0;
  // Delta publishing (options.publish_dir): the publisher, whether it works on a publication,
  // when the last was asked for, the newest written, and the job's last publication: 0 not
  // asked, 1 being written (the result waits), 2 done or given up.
  publisher_actor publisher;
  bool publishing = false;
  std::optional<clock_type::time_point> last_publish_at;
  std::uint64_t examples_at_last_publish = 0;  // trainings reported when it was asked for
  std::optional<publication_outcome> last_publication;
  std::string publish_error;  // why the newest publication failed, "" once one is written
  int final_publish_stage = 0;
  // The status's history (options.history): when it was last recorded, and whether the job's
  // final state has been (after that, nothing changes).
  std::optional<clock_type::time_point> last_history;
  bool history_final = false;
};
// The coordinator as its own functions see it: its state behind its typed interface
// (ss::actors::coordinator_actor of actors.hpp, which this name stands for in coordinator_detail).
using coordinator_actor = ::ss::actors::coordinator_actor::stateful_base<coordinator_state>;

double seconds_between(clock_type::time_point a, clock_type::time_point b);

// Sends `body` to the service at `endpoint` and calls exactly one of on_reply / on_error.
void call_endpoint(coordinator_actor* self, const std::string& endpoint, body_ptr body, caf::timespan timeout,
                   std::function<void(const envelope_ptr&)> on_reply, std::function<void(const std::string&)> on_error);

// ---- coordinator.cpp ----

struct totals {
  // Example-trainings the trainers report (a replayed batch counts again), and the examples
  // behind the readers' committed positions (each once per epoch).
  std::uint64_t examples = 0, committed = 0, committed_bad_rows = 0;
  std::uint64_t clicks = 0;
  double loss = 0;
  std::uint64_t bytes_done = 0, bytes_total = 0, bad_rows = 0, sent = 0, trainers = 0;
  double active_seconds = 0;  // the longest a trainer was training
  bool readers_finished = false, trainers_finished = false;
  std::string error;
};
totals sum_up(const coordinator_state& st);
// The training click rate: the base of NE (the evaluator's and an exported model's).
double click_rate_of(const totals& t);
void fail_job(coordinator_actor* self, const std::string& why);
// The trainers' replicas averaged by the examples each trained: those reported at the end, and
// for an incarnation that never reported (killed first), its replica as last gathered.
std::vector<float> average_replicas(const coordinator_state& st);
// The job's end: the final export (when due), then the result. `test`: the metrics to report.
void finish(coordinator_actor* self, const metrics::summary* test, std::uint64_t test_bad_rows);
// Scores `dense` with the shards' rows on `files`; the evaluator reports (scored_atom, summary,
// bad rows) or (unscored_atom, error) to the coordinator. False (the job failed) when the model
// cannot be built.
bool score_model(coordinator_actor* self, const std::vector<float>& dense, const std::vector<std::string>& files,
                 const std::string& what);

// The coordinator's periodic work (every 250 ms at most, and after each registration).
void tick(coordinator_actor* self);

// ---- progressive.cpp ----

// The job's progressive window at `now`: the live trainers' slices and the departed ones, merged;
// NE against `base_click_rate` (the job's training click rate).
metrics::progressive_summary job_progressive(const coordinator_state& st, clock_type::time_point now,
                                             double base_click_rate);
// A heartbeat's progressive window, checked before it is kept: one that does not add up is left
// out (the rest of the heartbeat is taken), counted and logged.
void take_window(coordinator_actor* self, const member_info& m, wire::member_progress& p);
// A trainer leaves (or is dropped): its slices stay in the job's window until they fall out.
void keep_departed_window(coordinator_state& st, const member_info& m);
// It registers again: its heartbeats carry its window from now on.
void forget_departed_window(coordinator_state& st, std::uint64_t incarnation);
// Periodic while the job trains: drops the departed slices the window no longer holds.
void expire_departed_windows(coordinator_state& st, clock_type::time_point now);

// ---- status.cpp ----

// The coordinator's status at `now`: what `shadowsync status` shows, /metrics exports and the
// history keeps.
std::string status_json(const coordinator_state& st, clock_type::time_point now);

// ---- publishing.cpp ----

// Starts the publisher (options.publish_dir); false (the job failed) when it cannot.
bool start_publishing(coordinator_actor* self);
// Periodic while the job trains: asks for a publication every --publish-interval.
void publish_tick(coordinator_actor* self, const totals& t);
// The job's end: its last publication, of the final model (st.central). False when there is none
// to wait for (no publishing, or it is done).
bool publish_final(coordinator_actor* self, const totals& t);
void on_published(coordinator_actor* self, const publication_outcome& outcome);

// ---- history.cpp ----

// Records the status in options.history every options.history_interval, and once more when the
// job has ended (its final state); nothing without a history.
void record_history(coordinator_actor* self, clock_type::time_point now);

// ---- reshape.cpp ----

// The job resumes from snapshot `m`: when it has another shard count than the job (or is the
// first of a new count), the rows move before training, and the shard slots cover both counts.
void plan_reshape(coordinator_actor* self, const job::snapshot_manifest& m);
// Periodic: moves the reshape along. True while it holds the job's start.
bool reshape_tick(coordinator_actor* self);
// `shadowsync reshard`: a running job's shard count changed to `shards`; refused (the job goes on
// as it was) or accepted, the change then under way.
wire::reshard_reply request_reshard(coordinator_actor* self, std::uint32_t shards);
// A live reshard is under way: snapshots, publications, exports and scoring wait for it (a shard
// count that is changing, rows held by two shards until the drop).
bool live_reshape(const coordinator_state& st);
// A coordinator that starts to a stored live reshard switch (coordinator_options::switched).
void resume_switch(coordinator_actor* self, const job::reshard_switch& sw);
// A member's heartbeat was heard: a live reshard waiting for every member to apply a view (before
// the hold, the hold, the switch) checks at once rather than at the next tick.
void reshape_heard(coordinator_actor* self);
// The shard count a registering shard restores its snapshot under (0: the job's).
std::uint32_t restore_shards_of(const coordinator_state& st);
// The snapshot of the new shape was written (or not: why).
void reshape_snapshot_done(coordinator_actor* self, bool written, const std::string& why);
// Membership changed: a stage a shard restarted during starts over.
void check_reshape_members(coordinator_actor* self);
// For the status: "2 -> 3 shards: moving rows", or "".
std::string reshape_status(const coordinator_state& st);

// ---- members.cpp ----

// Membership or the epochs' barrier changed: a new view for the members.
void change_view(coordinator_actor* self);
// A following job (--follow) ends as at the end of its data: the view tells the readers to hand
// out no new batches; the job drains, takes its last snapshot, scores and exports as usual.
// Nothing for a job over fixed files, or when the input is closed already.
void close_input(coordinator_actor* self, const std::string& why);
// A following job's --follow-for: its input closes that long after training started.
void follow_tick(coordinator_actor* self, clock_type::time_point now);
// Adds a trainer's progress to `into` (the departed trainers' totals, or a sum).
void add_counters(job::trainer_counters& into, const wire::member_progress& p);
body_ptr on_register(coordinator_actor* self, const wire::register_request& r);
body_ptr on_heartbeat(coordinator_actor* self, const wire::heartbeat& hb);
body_ptr on_leave(coordinator_actor* self, const wire::leave& l);
// A trainer's replica at its end (the final model averages them where no central copy exists).
body_ptr on_dense_report(coordinator_actor* self, const wire::dense_report& rep);
// Drops the members whose heartbeats stopped for --member-timeout (a pause of this process itself
// does not count against them).
void drop_silent_members(coordinator_actor* self, clock_type::time_point now);
// Every shard, reader and extra sync server slot has a member.
bool every_slot_taken(const coordinator_state& st);
// Tracks the vacant slots of a job that has run; names one vacant longer than --peer-wait (a
// service that never comes back: the job would wait for it forever), or returns "".
std::string vacant_too_long(coordinator_state& st, clock_type::time_point now);

// ---- epochs.cpp ----

// True when the job scores --validation after each epoch (readers wait between epochs).
bool validates(const coordinator_state& st);
// Periodic while the job runs: once every reader has finished the open epoch, score it; every
// --eval-every examples, score the validation files while the job trains on.
void epochs_tick(coordinator_actor* self, const totals& t);
// Training is over: the final model (st.central) is scored for validation unless it already was
// (an early stop), and the job finishes with the best epoch's test metrics.
void finish_validated(coordinator_actor* self);
// The evaluator reported on the stage in st.scoring.
void on_scored(coordinator_actor* self, const metrics::summary& m, std::uint64_t bad_rows);
// The exporter of an epoch's model reported.
void on_epoch_exported(coordinator_actor* self, const body_ptr& reply);

// ---- snapshot.cpp ----

// Applies a snapshot the coordinator resumes from (counters, reader positions, dense state).
void adopt_snapshot(coordinator_actor* self, const job::loaded_snapshot& snapshot);
// Unix time in milliseconds (coordinator_options::wall_clock_ms, else the system clock).
std::int64_t wall_ms(const coordinator_state& st);
// The live central dense copy, gathered from the sync servers; slices they do not have (no sync,
// or none yet) come from the trainers' replicas (gather_replicas), else from the snapshot
// resumed from. A caller that has just gathered the replicas passes their average
// (`replicas`), which then fills those slices instead of a second gathering.
void gather_central(coordinator_actor* self, std::function<void(job::dense_state)> done,
                    std::vector<float> replicas = {});
// Asks every live trainer for its replica, keeps each as its incarnation's last seen, and hands
// on average_replicas (empty when no trainer ever answered). with_optimizer: their optimizer
// states too, averaged into gathered_optimizer (kept as it was when none answers with one).
void gather_replicas(coordinator_actor* self, std::function<void(std::vector<float>)> done,
                     bool with_optimizer = false);
// A trainer asks for the central copy (it starts or restarts).
caf::result<body_ptr> serve_dense_request(coordinator_actor* self);
// Writes the current model (the central dense state and every shard's rows) to `path` and
// answers with an export_reply (or an error_reply): `shadowsync export`.
caf::result<body_ptr> serve_export(coordinator_actor* self, const wire::export_request& req, double click_rate,
                                   std::uint64_t examples);
// Starts the export of a model (dense = `dense`) to --export: the final one, or the best epoch's
// between epochs; the exporter reports to the coordinator.
void start_export(coordinator_actor* self, const std::vector<float>& dense, double click_rate,
                        std::uint64_t examples);
// A sync server registered while the job resumes: send it its slice of the snapshot's state
// (again, `attempt` times so far, while it answers that its role is still starting).
void restore_sync_server(coordinator_actor* self, std::uint32_t slice, const std::string& endpoint, int attempt = 0);
// Periodic: start a snapshot when one is due; ask finished trainers for replicas never reported.
void snapshot_tick(coordinator_actor* self);
// Start a snapshot now; `waiter` (optional) is answered with a snapshot_reply or an error_reply.
void begin_snapshot(coordinator_actor* self, std::optional<caf::response_promise> waiter);
// Membership changed: a snapshot whose shard restarted (or left) is abandoned at once, since the
// restarted shard cannot answer for its predecessor's checkpoint.
void check_snapshot_members(coordinator_actor* self);

}  // namespace ss::actors::coordinator_detail
