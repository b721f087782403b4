# Operations: status queries and stopping the job.
#
#   anyone -> any service    StatusRequest -> StatusReply
#   client -> coordinator    StopRequest -> Ack

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

struct StopRequest {
# Asks the coordinator to stop the job.

  reason @0 :Text;
  # Why, for logs and status.
}
