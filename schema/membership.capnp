# Membership: members register with the coordinator, report progress with heartbeats and leave.
#
#   member -> coordinator   RegisterRequest -> RegisterReply
#   member -> coordinator   Heartbeat -> HeartbeatReply
#   member -> coordinator   Leave (one-way)

@0x8f1e9795d08d5096;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("ss::wire::schema");

using Common = import "common.capnp";
using Data = import "data.capnp";

struct RegisterRequest {
# A member announces itself to the coordinator.

  from @0 :Common.Role = client;
  # What kind of member this is.
  name @1 :Text;
  # Unique per member, e.g. "shard-0", "trainer-7f3a".
  index @2 :Int32 = -1;
  # Shard and reader index (0-based); -1 for trainers and clients.
  endpoint @3 :Text;
  # Where peers reach this member's listening socket; empty if it has none.
  incarnation @4 :UInt64;
  # Random per process start: tells a restart from a duplicate.
  heartbeatIntervalMs @5 :UInt32;
  # How often this member heartbeats (0: unknown, taken as 1 s): how long the coordinator waits
  # for a sign of life from it before another process may take its name or index.
  host @6 :Text;
  # The host name this member runs on, and its process id: named in a refused claim.
  pid @7 :UInt32;
  membership @8 :UInt64;
  # A trainer: the membership it held before (0: none yet). The coordinator answers with the one it
  # holds from now on: a new one when the job went on without it (see RegisterReply.membership).
}

struct ClusterView {
# Where every indexed member listens.

  epoch @0 :UInt64;
  # Grows with every change of the view.
  shards @1 :List(Text);
  # Endpoint of shard i; empty while shard i is absent.
  readers @2 :List(Text);
  # Endpoint of reader i; empty while reader i is absent.
  trainers @3 :List(Text);
  # Names of the live trainers.
  syncs @4 :List(Text);
  # Endpoint of sync server k (slice k of the dense parameters; k = 0 is the coordinator).
  trainerIncarnations @5 :List(UInt64);
  # The live trainers' incarnations, parallel to trainers (readers hand the batches of a trainer
  # that is gone to others).
  shardIncarnations @6 :List(UInt64);
  # Parallel to shards (0 while absent): a restarted shard is a new incarnation even at the same
  # endpoint, and calls to the one before will never be answered.
  syncIncarnations @7 :List(UInt64);
  # Parallel to syncs (0 while absent; slice 0's is the coordinator's).
  epochsOpen @8 :UInt32;
  # With validation between epochs: readers hand out epochs below this count (1-based) and wait
  # at the end of the last one for the coordinator to score it. 0: no such barrier.
  epochsStop @9 :UInt32;
  # Nonzero: the job ends after this many epochs (validation stopped it early).
  readerIncarnations @10 :List(UInt64);
  # Parallel to readers (0 while absent): a reader restarted at the same endpoint is a new
  # incarnation, and pulls sent to the one before will never be answered.
  coordinator @11 :UInt64;
  # The incarnation of the coordinator that made this view: a new one has not heard from every
  # member yet, so a member missing from its first views may still be alive.
  trainerMemberships @12 :List(UInt64);
  # Parallel to trainers: each one's membership. A shard or sync server refuses what a trainer
  # sends under an older one (it was dropped and came back; its old batches went to others).
  droppedTrainers @13 :List(UInt64);
  # Incarnations of trainers dropped for missed heartbeats that have not come back: what they
  # still send is refused.
  inputClosed @14 :Bool;
  # A following job (--follow) was stopped: readers hand out no new batches, and the job ends as
  # at the end of its data once the batches handed out are trained.
  holdInput @15 :Bool;
  # A running job changes its shard count (shadowsync reshard): readers hand out no batches until
  # it is lifted, and report how many of theirs are still being trained (batchesInFlight).
  placementShards @16 :UInt32;
  # The shard count rows are placed over, when a live reshard changed it from the job's --shards;
  # 0: the job's. Shards serve and trainers route by it from the view that carries it.
  reshaping @17 :Bool;
  # A live reshard is under way: members heartbeat every 50 ms until it ends, so that its stages,
  # each of which waits for every member to apply a view, take milliseconds rather than heartbeats.
  # Only a matter of speed: a member of an earlier build heartbeats at its interval.
}

struct RegisterReply {
# The coordinator's answer to a RegisterRequest.

  memberId @0 :UInt64;
  # The id the member uses in every later Heartbeat and Leave.
  jobConfig @1 :Text;
  # The job's configuration as INI text ([job] section): the one place model, data and sync
  # settings come from, so members cannot disagree about them.
  view @2 :ClusterView;
  # The cluster as the coordinator sees it now.
  state @3 :Common.JobState;
  # Where the job is now.
  restoreSnapshot @4 :UInt64;
  # Non-zero on a job resumed from a snapshot: a shard loads this snapshot's checkpoint, a
  # reader starts at the position the snapshot recorded for it, a sync server waits for the
  # snapshot's state before its first round.
  resumePosition @5 :Data.ReadPosition;
  # Reader: where to start reading (its committed position); valid when hasResumePosition.
  hasResumePosition @6 :Bool;
  # True when resumePosition is set.
  resumeExamples @7 :UInt64;
  # Reader: examples before resumePosition (already trained).
  jobId @8 :UInt64;
  # Identifies the job across coordinator restarts: a shard refuses stored rows of another job.
  resumeBadRows @9 :UInt64;
  # Reader: bad rows before resumePosition.
  jobWasRunning @10 :Bool;
  # The job had started before this registration (so a shard registering now is a restart: storage
  # holding nothing of the job means its rows were lost). False for the registration that starts it.
  membership @11 :UInt64;
  # A trainer: its membership from now on. The one it asked for, unless the job went on without it
  # (it was dropped, or this coordinator settled without it): then the next one, and whatever it
  # trained or sent under the old one is not its to finish.
  restoreShards @12 :UInt32;
  # A shard restoring restoreSnapshot: the shard count that snapshot was taken with, when the job
  # resumes on another (0: the job's own). Shards below it restore their checkpoint of that shape;
  # the others start empty. Rows then move to their owners (TakeRowsRequest, DropRowsRequest).
  filePasses @13 :List(UInt32);
  # Reader, when the job resumed on another reader count: how far each of its files had been
  # read (by its place in the reader's files): the passes over it done, and where the next one
  # goes on (byte offset 0: the file's start), with the line number, the CRC32C of the line
  # before and the file's size there. Five lists of one length; empty otherwise.
  fileOffsets @14 :List(UInt64);
  fileLines @15 :List(UInt64);
  fileCrcs @16 :List(UInt32);
  fileSizes @17 :List(UInt64);
  scheduleExamples @18 :UInt64;
  # Reader, when the job resumed on another reader count: its share of the examples the readers
  # before the change committed, which the learning-rate schedule counts as done before its
  # batches (a batch's examplesBefore); 0 otherwise.
  windowsLeft @19 :List(WindowLeft);
  # Reader, when a shuffled job resumed on another reader count: the shuffle windows the readers
  # before the change left unfinished that this reader finishes, each at the start of its epoch,
  # before its own files. Ordered by epoch.
}

struct WindowLeft {
# A shuffle window a reader of the job's earlier reader count left unfinished. Its rows go out in
# an order only that reader's files, progress and seed give, so the reader finishing it reads it
# as that reader would have.

  readers @0 :UInt32;
  # The old reader's count and index: its files (i, i + readers, ...) and its seed.
  reader @1 :UInt32;
  epoch @2 :UInt32;
  # The pass the window is in (0-based).
  handed @3 :UInt32;
  # Batches of the window the old reader handed out (at least 1).
  start @4 :Data.ReadPosition;
  # Where the window starts, in that epoch's order of the old reader's files.
  filePasses @5 :List(UInt32);
  # The old reader's files' progress when it began, as RegisterReply.filePasses ... have it;
  # empty: nothing of them was read before.
  fileOffsets @6 :List(UInt64);
  fileLines @7 :List(UInt64);
  fileCrcs @8 :List(UInt32);
  fileSizes @9 :List(UInt64);
}

struct MemberProgress {
# What a member reports with each heartbeat: cumulative counters since it started.

  examples @0 :UInt64;
  # Trainer: examples trained; reader: examples sent; shard: rows served.
  batches @1 :UInt64;
  # Batches trained (trainer) or sent (reader).
  lossSum @2 :Float64;
  # Trainer: sum of the per-example log loss, each example scored before training on it.
  clicks @3 :UInt64;
  # Trainer: positive labels trained.
  windowExamples @4 :UInt64;
  # Trainer: examples in its progressive window (the sums of `progressive`, for older peers).
  windowLossSum @5 :Float64;
  # Trainer: sum of the log loss over the recent window.
  windowClicks @6 :UInt64;
  # Trainer: positive labels in the recent window.
  bytesDone @7 :UInt64;
  # Reader: input bytes consumed.
  bytesTotal @8 :UInt64;
  # Reader: input bytes in its files.
  badRows @9 :UInt64;
  # Reader: malformed rows skipped.
  rows @10 :UInt64;
  # Shard: embedding rows held.
  rowBytes @11 :UInt64;
  # Shard: bytes held by those rows.
  finished @12 :Bool;
  # Reader: all files read and acknowledged; trainer: drained.
  detail @13 :Text;
  # Free-form JSON for status output.
  activeSeconds @14 :Float64;
  # Trainer: wall seconds from its first batch to its latest one (its share of the job's time).
  error @15 :Text;
  # Why the member cannot go on (a reader's unreadable input, a trainer's refused batch); empty
  # while all is well. The coordinator fails the job with it.
  syncRounds @16 :UInt64;
  # Trainer: sync rounds completed.
  syncGap @17 :Float64;
  # Trainer: mean batches trained between two of its syncs (the sync gap).
  syncLatencyP50Ms @18 :Float64;
  # Trainer: median time of a sync round, request to applied result.
  syncLatencyP99Ms @19 :Float64;
  # Trainer: 99th percentile of the same.
  syncDistance @20 :Float64;
  # Trainer: relative distance of its replica from the central copy or the mean at its latest sync.
  syncWaitSeconds @21 :Float64;
  # Trainer: worker-seconds spent stopped for foreground syncs.
  committed @22 :Data.ReadPosition;
  # Reader: every row before this position was trained (valid when hasCommitted).
  hasCommitted @23 :Bool;
  # True when committed is set.
  committedExamples @24 :UInt64;
  # Reader: examples before the committed position, including those of earlier incarnations.
  committedBadRows @25 :UInt64;
  # Reader: bad rows before the committed position, including those of earlier incarnations.
  epochsDone @26 :UInt32;
  # Reader: epochs whose every batch was handed out and trained.
  syncBytes @27 :UInt64;
  # Trainer: bytes its sync rounds sent and received (slices, quantized or not).
  progressive @28 :ProgressiveWindow;
  # Trainer: its progressive evaluation window (each example scored before it was trained on).
  batchesInFlight @29 :UInt32;
  # Reader: batches handed out and not yet trained (acknowledged).
  viewEpoch @30 :UInt64;
  # The newest view this member applied (a live reshard waits until its shards and trainers did).
}

struct ProgressiveWindow {
# A trainer's progressive evaluation window, in slices: per slice its times and sums, then the
# nonzero buckets of each slice's two prediction histograms (clicks, non-clicks), slice after
# slice. Buckets are 1/32 wide in logit over [-16, 16] (ss/core/metrics/progressive.hpp).

  startAges @0 :List(Float64);
  # Per slice: seconds from its first example to the heartbeat (the receiver's clock need not agree).
  endAges @1 :List(Float64);
  # Per slice: seconds from its newest example to the heartbeat.
  examples @2 :List(UInt64);
  # Per slice: examples scored.
  clicks @3 :List(UInt64);
  # Per slice: of those, clicks.
  predictionSums @4 :List(Float64);
  # Per slice: the sum of the predictions.
  logLossSums @5 :List(Float64);
  # Per slice: the sum of the log loss (nats, predictions clipped to [1e-7, 1 - 1e-7]).
  bucketCounts @6 :List(UInt32);
  # Per slice: how many entries of the three lists below are its.
  buckets @7 :List(UInt32);
  # The nonzero buckets, ascending within a slice.
  bucketClicks @8 :List(UInt32);
  # Clicks in each of those buckets.
  bucketNonClicks @9 :List(UInt32);
  # Non-clicks in each of those buckets.
}

struct Heartbeat {
# Sent periodically by every member to the coordinator.

  memberId @0 :UInt64;
  # From the member's RegisterReply.
  progress @1 :MemberProgress;
  # The member's counters now.
}

struct HeartbeatReply {
# The coordinator's answer to a Heartbeat.

  state @0 :Common.JobState;
  # Where the job is now.
  view @1 :ClusterView;
  # The current view of the cluster.
  known @2 :Bool = true;
  # False: the coordinator does not know this member (it restarted); the member re-registers.
}

struct Leave {
# A member leaves the job for good (one-way).

  memberId @0 :UInt64;
  # From the member's RegisterReply.
  reason @1 :Text;
  # Why, for logs and status ("input done", "SIGTERM").
}
