# Operations: status queries and stopping the job.
#
#   anyone -> any service    StatusRequest -> StatusReply
#   client -> coordinator    StopRequest -> Ack
#   client -> coordinator    ReshardRequest -> ReshardReply

@0xbb542c284e026210;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("ss::wire::schema");

struct StatusRequest {
# Asks a service to describe itself.
}

struct StatusReply {
# A service's description of itself.

  json @0 :Text;
  # One JSON object describing the service (and, at the coordinator, the job).
}

struct SnapshotNow {
# Client -> coordinator: take a cluster snapshot now; the reply is a SnapshotReply for the whole
# cluster (path: the snapshot's directory; rows, bytes: summed over the shards).
}

struct SnapshotRequest {
# Coordinator -> shard: flush, then checkpoint every row under this snapshot id; drop the
# checkpoints not in `keep` (retention).

  snapshotId @0 :UInt64;
  # The snapshot being taken.
  keep @1 :List(UInt64);
  # Snapshot ids to keep besides this one.
}

struct SnapshotReply {
# Shard -> coordinator: the checkpoint is durable.

  snapshotId @0 :UInt64;
  path @1 :Text;
  # Where the checkpoint lives on the shard's own storage.
  rows @2 :UInt64;
  bytes @3 :UInt64;
  checksum @4 :UInt64;
  # The checkpoint's content hash (verified on restore).
  seconds @5 :Float64;
  # How long flushing and checkpointing took.
}

struct DumpRequest {
# Coordinator -> shard: a page of rows for the exported model (after training). Also the read side
# of moving rows to another shard count: only the rows a placement gives to one shard, whole.

  table @0 :UInt32;
  # Where to continue: the table ...
  position @1 :UInt64;
  # ... and the position within it (0 to start a table).
  maxRows @2 :UInt32;
  # At most this many rows in the reply.
  placementShards @3 :UInt32;
  # 0: every row. Else only the rows that the placement over this many shards gives to ...
  placementIndex @4 :UInt32;
  # ... this shard.
  wholeRows @5 :Bool;
  # Each row whole (values, optimizer state, TTL stamp: rowFloats floats) instead of its values.
  movePass @6 :MovePass;
  # A live reshard's copies (with a placement): which of the rows, and what it does to their marks.
}

enum MovePass {
# Which rows a page of rows that move takes (ss::wire::move_pass).

  whole @0;
  # Every row, the marks untouched (a resume on another shard count, or a move under the hold).
  copy @1;
  # Every row, each one's move mark cleared as it is copied: while the job trains.
  changed @2;
  # Only the rows marked since their copy (changed or made after it): under the hold.
}

struct PublishRowsRequest {
# Coordinator -> shard: the rows of publication `sequence` (delta publishing), a page at a time.

  sequence @0 :UInt64;
  # The publication being written.
  lastWritten @1 :UInt64;
  # The last publication the publisher has in place (0: none): rows staged for a later one that
  # was never written are staged again.
  base @2 :Bool;
  # A base starts: clear every row's publisher mark; no rows in the reply.
  position @3 :UInt64;
  # Where the page starts among the staged rows (0 first: stages them).
  maxRows @4 :UInt32;
}

struct PublishRowsReply {
# Shard -> coordinator: a page of the rows changed since the last publication (values only).

  needsBase @0 :Bool;
  # This shard process saw no base since it started: publish a base first.
  tables @1 :List(UInt32);
  ids @2 :List(UInt64);
  values @3 :List(Float32);
  # ids.size() x dim.
  nextPosition @4 :UInt64;
  staged @5 :UInt64;
  # Rows staged for the publication in all; the page is the last when nextPosition reaches it.
  goneTables @6 :List(UInt32);
  goneIds @7 :List(UInt64);
  # Staged rows of this page the shard no longer holds (dropped for a row limit, expired): the
  # publication's tombstones.
}

struct DumpReply {
# Shard -> coordinator: a page of rows (values only, no optimizer state, unless wholeRows).

  tables @0 :List(UInt32);
  ids @1 :List(UInt64);
  values @2 :List(Float32);
  # ids.size() x dim, or x rowFloats with wholeRows.
  nextTable @3 :UInt32;
  nextPosition @4 :UInt64;
  done @5 :Bool;
  # True when every row was sent.
  rowFloats @6 :UInt32;
  # Floats per row in values.
  crc32c @7 :UInt32;
  # CRC32C of the page's tables, ids, values, goneTables and goneIds (little-endian), so that a
  # moved row arrives as sent.
  goneTables @8 :List(UInt32);
  goneIds @9 :List(UInt64);
  # A live reshard's rows under the hold that the shard gave up for good since their copy (a row
  # TTL, a full table's evictions): the taking shard deletes them.
}

struct ExportRequest {
# Client -> coordinator: write the current model to `path` (on the coordinator's file system).

  path @0 :Text;
}

struct ExportReply {
# Coordinator -> client: the model file is complete.

  path @0 :Text;
  rows @1 :UInt64;
  # Embedding rows written.
  bytes @2 :UInt64;
  seconds @3 :Float64;
}

struct StopRequest {
# Asks the coordinator to stop the job.

  reason @0 :Text;
  # Why, for logs and status.
}

struct TakeRowsRequest {
# Coordinator -> shard, while a job resumes on another shard count: pull from every source shard
# the whole rows the placement over placementShards shards gives to this shard (DumpRequest pages),
# store them, and answer once all are stored (TakeRowsReply). Pulling again stores the same rows.

  sources @0 :List(Text);
  # The endpoints of the shards of the snapshot's shape to pull from.
  placementShards @1 :UInt32;
  # The job's new shard count.
  movePass @2 :MovePass;
  # Passed on in each DumpRequest: a live reshard copies every row while the job trains (copy),
  # then under the hold only those changed since (changed).
}

struct TakeRowsReply {
# Shard -> coordinator: every row that moves to this shard is stored.

  rows @0 :UInt64;
  bytes @1 :UInt64;
  # Rows taken and their size.
  seconds @2 :Float64;
}

struct DropRowsRequest {
# Coordinator -> shard, once the job's snapshot of its new shape is written: drop every row the
# placement over placementShards shards gives to another shard (in RAM and storage), and record
# the new shape. A shard whose index is placementShards or above drops all and leaves the job.

  placementShards @0 :UInt32;
}

struct DropRowsReply {
# Shard -> coordinator: what it dropped and what it holds now.

  dropped @0 :UInt64;
  kept @1 :UInt64;
}

struct ReshardRequest {
# Client -> coordinator: change the running job's shard count to `shards` (shadowsync reshard).
# Answered once the change is accepted or refused (ReshardReply), not when it is done: its progress
# is in the coordinator's status.

  shards @0 :UInt32;
}

struct ReshardReply {
# Coordinator -> client.

  accepted @0 :Bool;
  message @1 :Text;
  # Why it was refused, or what happens now.
  from @2 :UInt32;
  to @3 :UInt32;
  # The shard counts before and after.
}
