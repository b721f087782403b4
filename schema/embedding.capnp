# Embeddings: trainers read rows from the shards and push gradients back.
#
#   trainer -> shard   LookupRequest -> LookupReply
#   trainer -> shard   PushRequest -> PushReply
#   trainer -> shard   WarmRequest -> WarmReply   (a hint: rows a coming lookup will want)

@0xd5710f403acc54fb;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("ss::wire::schema");
using Common = import "common.capnp";

struct LookupRequest {
# Rows to read: (tables[i], ids[i]) for every i.

  create @0 :Bool = true;
  # False: never create rows (evaluation); absent rows read as their initial values.
  tables @1 :List(UInt32);
  # Table of each row; as many as `ids`.
  ids @2 :List(UInt64);
  # Hashed id of each row.
  examples @3 :UInt32;
  # Examples of the training batch these rows are for (0: not counted): a shard with a row TTL in
  # examples advances its clock by it.
}

struct LookupReply {
# The rows of a LookupRequest, in request order.

  dim @0 :UInt32;
  # Floats per row; non-zero whenever `values` is not empty.
  values @1 :List(Float32);
  # Rows x dim, row-major, when the shard keeps fp32 rows.
  precision @2 :Common.RowPrecision;
  # The shard's row precision: with bf16 or fp16, the rows are in `halves` instead of `values`.
  halves @3 :List(UInt16);
  # Rows x dim 16-bit values, row-major (the rows exactly as the shard holds them).
}

struct PushRequest {
# Gradients for rows (tables[i], ids[i]), applied by the shard's optimizer.

  tables @0 :List(UInt32);
  # Table of each row; as many as `ids`.
  ids @1 :List(UInt64);
  # Hashed id of each row.
  grads @2 :List(Float32);
  # ids x dim, row-major: a positive multiple of the number of ids (empty only with no ids).
  lrScale @3 :Float32 = 1.0;
  # The learning-rate schedule's multiplier where the trainer is (in [0, 1]; 1: no schedule).
  trainer @4 :UInt64;
  # The pushing trainer's incarnation (0: unnamed, as tools send; not checked).
  membership @5 :UInt64;
  # The trainer's membership when it took the batch these gradients are of: refused (fenced) once
  # the trainer was dropped or holds a newer one.
  number @6 :UInt64;
  # The trainer's push number (from 1): a push sent again is answered without being applied twice.
  precision @7 :Common.RowPrecision;
  # The job's row precision: with bf16 or fp16, the gradients are in `gradHalves` instead of `grads`.
  gradHalves @8 :List(UInt16);
  # ids x dim 16-bit gradients (rounded to the nearest), row-major.
}

struct PushReply {
# The shard applied a PushRequest.

  rows @0 :UInt64;
  # Rows updated.
  duplicate @1 :Bool;
  # The push had been applied before (a resend): nothing was applied now.
}

struct WarmRequest {
# A hint ahead of a lookup: rows (tables[i], ids[i]) that a coming batch will look up. A shard with
# a memory budget reads those that are only in its storage into RAM meanwhile; it creates no row,
# counts no sighting and changes no value. Best effort: the lookup is correct without it.

  tables @0 :List(UInt32);
  # Table of each row; as many as `ids`.
  ids @1 :List(UInt64);
  # Hashed id of each row.
}

struct WarmReply {
# What a WarmRequest did.

  rows @0 :UInt64;
  # Rows read from storage into RAM.
  tiered @1 :Bool;
  # False: the shard keeps every row in RAM, so hints have nothing to do; the sender stops sending them.
}
