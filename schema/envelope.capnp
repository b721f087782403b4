# The envelope: the root of every frame exchanged between shadowsync services.
#
# `version` and `requestId` are the first two fields and stay where they are in every future
# version of the protocol: a receiver reads them before anything else (ss::wire::peek_header), so
# it can refuse a peer of another version, or a body it cannot decode, with an answer to the right
# request.
#
# The body is a union with one member per message type. New members are appended with the next
# ordinal; ordinals are never reused or renumbered. Sync rounds are @23 and @24; cluster
# snapshots and restarts (issue 5) come next. A receiver that
# finds a member it does not know (a newer sender) refuses the frame as "unknown message type N".

@0xf76eaafe567898c7;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("ss::wire::schema");

using Common = import "common.capnp";
using Membership = import "membership.capnp";
using Data = import "data.capnp";
using Embedding = import "embedding.capnp";
using Model = import "model.capnp";
using Control = import "control.capnp";

struct Envelope {
  version @0 :UInt16;
  # The sender's protocol version (ss::wire::protocol_version). Receivers refuse any other.
  requestId @1 :UInt64;
  # Set by the sender of a request; a reply carries the request's id. 0 for one-way messages.

  body :union {
  # The message itself.

    errorReply @2 :Common.ErrorReply;
    # Any -> any: the request cannot be served.
    registerRequest @3 :Membership.RegisterRequest;
    # Member -> coordinator.
    registerReply @4 :Membership.RegisterReply;
    # Coordinator -> member.
    heartbeat @5 :Membership.Heartbeat;
    # Member -> coordinator.
    heartbeatReply @6 :Membership.HeartbeatReply;
    # Coordinator -> member.
    leave @7 :Membership.Leave;
    # Member -> coordinator, one-way.
    pullRequest @8 :Data.PullRequest;
    # Trainer -> reader: credits.
    batchMessage @9 :Data.BatchMessage;
    # Reader -> trainer.
    endOfData @10 :Data.EndOfData;
    # Reader -> trainer.
    batchAck @11 :Data.BatchAck;
    # Trainer -> reader.
    lookupRequest @12 :Embedding.LookupRequest;
    # Trainer -> shard.
    lookupReply @13 :Embedding.LookupReply;
    # Shard -> trainer.
    pushRequest @14 :Embedding.PushRequest;
    # Trainer -> shard.
    pushReply @15 :Embedding.PushReply;
    # Shard -> trainer.
    denseRequest @16 :Model.DenseRequest;
    # Trainer -> coordinator.
    denseReply @17 :Model.DenseReply;
    # Coordinator -> trainer.
    denseReport @18 :Model.DenseReport;
    # Trainer -> coordinator.
    statusRequest @19 :Control.StatusRequest;
    # Anyone -> any service.
    statusReply @20 :Control.StatusReply;
    # Service -> asker.
    stopRequest @21 :Control.StopRequest;
    # Client -> coordinator.
    ack @22 :Common.Ack;
    # Any -> any: done, nothing to return.
    syncRequest @23 :Model.SyncRequest;
    # Trainer -> sync server (the coordinator, or another sync instance).
    syncReply @24 :Model.SyncReply;
    # Sync server -> trainer.
    snapshotNow @25 :Control.SnapshotNow;
    # Client -> coordinator.
    snapshotRequest @26 :Control.SnapshotRequest;
    # Coordinator -> shard.
    snapshotReply @27 :Control.SnapshotReply;
    # Shard -> coordinator.
    dumpRequest @28 :Control.DumpRequest;
    # Coordinator -> shard.
    dumpReply @29 :Control.DumpReply;
    # Shard -> coordinator.
    syncRestore @30 :Model.SyncRestore;
    # Coordinator -> sync server.
    exportRequest @31 :Control.ExportRequest;
    # Client -> coordinator.
    exportReply @32 :Control.ExportReply;
    # Coordinator -> client.
    syncClose @33 :Model.SyncClose;
    # Coordinator -> trainer.
    warmRequest @34 :Embedding.WarmRequest;
    # Trainer -> shard.
    warmReply @35 :Embedding.WarmReply;
    # Shard -> trainer.
    publishRowsRequest @36 :Control.PublishRowsRequest;
    # Coordinator -> shard.
    publishRowsReply @37 :Control.PublishRowsReply;
    # Shard -> coordinator.
    takeRowsRequest @38 :Control.TakeRowsRequest;
    # Coordinator -> shard.
    takeRowsReply @39 :Control.TakeRowsReply;
    # Shard -> coordinator.
    dropRowsRequest @40 :Control.DropRowsRequest;
    # Coordinator -> shard.
    dropRowsReply @41 :Control.DropRowsReply;
    # Shard -> coordinator.
    reshardRequest @42 :Control.ReshardRequest;
    # Client -> coordinator.
    reshardReply @43 :Control.ReshardReply;
    # Coordinator -> client.
    positionRequest @44 :Data.PositionRequest;
    # Coordinator -> reader.
    positionReply @45 :Data.PositionReply;
    # Reader -> coordinator.
  }
}
