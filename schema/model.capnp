# The dense model: the coordinator's central copy and the trainers' replicas.
#
#   trainer -> coordinator   DenseRequest -> DenseReply
#   trainer -> coordinator   DenseReport (a finished replica)

@0xeb6a96cd4cbe60a3;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("ss::wire::schema");

struct DenseRequest {
# Asks for the coordinator's central copy of the dense parameters (a trainer: its replica).

  optimizer @0 :Bool;
  # Also the dense optimizer's state (a snapshot keeps the trainers'; the others need no copy).
}

struct DenseReply {
# The central copy of the dense parameters.

  version @0 :UInt64;
  # Bumps whenever the central copy changes.
  params @1 :List(Float32);
  # Every dense parameter, in the model's flat order (a sync server: its slice).
  momentum @2 :List(Float32);
  # A BMUF sync server: the block momentum of its slice (snapshots keep it); else empty.
  optimizer @3 :List(Float32);
  # The dense optimizer's state (Adam's moments, Adagrad's accumulators): a trainer's, when asked
  # for it; the coordinator's answer to a trainer that starts, the snapshot's (averaged over the
  # trainers). Empty with SGD, or when none is kept.
  optimizerSteps @4 :UInt64;
  # The updates applied with that state (Adam's bias correction).
  examples @5 :UInt64;
  # A trainer's replica: the examples it was trained on (its weight in an average; a heartbeat's
  # count can be an interval old). 0: not said.
}

struct SyncRestore {
# Coordinator -> sync server: start from this state (a job resumed from a snapshot).

  slice @0 :UInt32;
  params @1 :List(Float32);
  # The slice's central copy (EASGD) or global model (BMUF).
  momentum @2 :List(Float32);
  # BMUF's block momentum; empty for the others.
}

struct SyncRequest {
# A trainer's slice of its replica, for one sync round (or one EASGD exchange).

  trainer @0 :UInt64;
  # The trainer's incarnation (stable across coordinator restarts).
  slice @1 :UInt32;
  # Which sync server's slice this is.
  offset @2 :UInt64;
  # Index of the slice's first parameter in the flat dense vector (checked by the server).
  batches @3 :UInt64;
  # Batches the trainer has trained so far (for the sync gap).
  params @4 :List(Float32);
  # The slice as snapshotted when the round started.
  closing @5 :UInt32;
  # 0: a regular round. g > 0: the trainer's closing round g (its workers are idle: the input is
  # exhausted, or a scored epoch ended); the answer is the model it takes.
  base @6 :UInt64;
  # Quantized rounds (--sync-quantize int8): the exchange whose mirror `quantized` is relative
  # to; 0 with params: the full slice (a new mirror).
  quantized @7 :QuantizedVector;
  # Quantized rounds: the replica slice less the mirror of exchange `base`; params is then empty.
  membership @8 :UInt64;
  # The trainer's membership (schema/membership.capnp): a round of one that is over is refused.
}

struct QuantizedVector {
# 8-bit block quantization: value i is values[i] * scales[i / block].

  block @0 :UInt32;
  scales @1 :List(Float32);
  values @2 :Data;
  # One signed byte per value, in [-127, 127].
}

struct SyncReply {
# A sync server's answer to a SyncRequest.

  round @0 :UInt64;
  # The server's round (MA, BMUF) or exchange count (EASGD).
  isDelta @1 :Bool;
  # True: params is EASGD's d (the trainer subtracts it); false: the round's target model.
  participants @2 :UInt32;
  # Trainers whose replicas made up this round.
  distance @3 :Float64;
  # Relative L2 distance of the sent slice from the central copy or the round's mean.
  params @4 :List(Float32);
  # The delta or the target, the length of the slice (empty when quantized).
  sequence @5 :UInt64;
  # Quantized rounds: this exchange, the base of the trainer's next request.
  quantized @6 :QuantizedVector;
  # Quantized rounds: the delta (isDelta), or the target less the replica the request rebuilt.
}

struct SyncClose {
# Coordinator -> trainer: a scored epoch ended (the workers are idle); run closing round
# `generation` and answer (an Ack) once it folded the replica's progress or gave up.

  generation @0 :UInt32;
  # The epoch that ended (1-based).
}

struct DenseReport {
# A trainer's replica, sent when it finishes; the cluster's final model is built from these.

  trainer @0 :UInt64;
  # The reporting trainer's incarnation.
  examples @1 :UInt64;
  # Examples this replica was trained on.
  params @2 :List(Float32);
  # Every dense parameter, in the model's flat order.
}
