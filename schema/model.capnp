# The dense model: the coordinator's central copy and the trainers' replicas.
#
#   trainer -> coordinator   DenseRequest -> DenseReply
#   trainer -> coordinator   DenseReport (a finished replica)

@0xeb6a96cd4cbe60a3;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("ss::wire::schema");

struct DenseRequest {
# Asks for the coordinator's central copy of the dense parameters.
}

struct DenseReply {
# The central copy of the dense parameters.

  version @0 :UInt64;
  # Bumps whenever the central copy changes.
  params @1 :List(Float32);
  # Every dense parameter, in the model's flat order.
}

struct DenseReport {
# A trainer's replica, sent when it finishes; the cluster's final model is built from these.

  memberId @0 :UInt64;
  # The reporting trainer.
  examples @1 :UInt64;
  # Examples this replica was trained on.
  params @2 :List(Float32);
  # Every dense parameter, in the model's flat order.
}
