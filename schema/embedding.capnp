# Embeddings: trainers read rows from the shards and push gradients back.
#
#   trainer -> shard   LookupRequest -> LookupReply
#   trainer -> shard   PushRequest -> PushReply

@0xd5710f403acc54fb;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("ss::wire::schema");

struct LookupRequest {
# Rows to read: (tables[i], ids[i]) for every i.

  create @0 :Bool = true;
  # False: never create rows (evaluation); absent rows read as their initial values.
  tables @1 :List(UInt32);
  # Table of each row; as many as `ids`.
  ids @2 :List(UInt64);
  # Hashed id of each row.
}

struct LookupReply {
# The rows of a LookupRequest, in request order.

  dim @0 :UInt32;
  # Floats per row; non-zero whenever `values` is not empty.
  values @1 :List(Float32);
  # Rows x dim, row-major.
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
}

struct PushReply {
# The shard applied a PushRequest.

  rows @0 :UInt64;
  # Rows updated.
}
