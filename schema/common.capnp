# Shared vocabulary of the shadowsync wire format: the enumerations every area uses, and the
# messages any service may send (an error in answer to a request, a bare acknowledgement).
#
# Evolution rules for every schema file in this folder: add fields and enumerants only at the
# end, with the next ordinal; never renumber, remove or retype anything (mark it obsolete in its
# doc comment instead). The C++ values live in schema/codec/include/ss/wire/messages.hpp; the
# codec (schema/codec/src/codec.cpp) is the only code that sees these types.

@0xc3720469d02f3227;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("ss::wire::schema");

enum ErrorCode {
# Why a request failed. The same values in the same order as ss::errc
# (core/include/ss/core/status.hpp); the codec checks that at compile time. `ok` is never sent.

  ok @0;
  invalidArgument @1;
  parseError @2;
  ioError @3;
  notFound @4;
  corrupt @5;
  outOfRange @6;
  resourceExhausted @7;
  unavailable @8;
  timeout @9;
  versionMismatch @10;
  tooManyBadRows @11;
  cancelled @12;
  internal @13;
  permissionDenied @14;
  alreadyExists @15;
  fenced @16;
}

enum Role {
# What kind of member a process is (ss::wire::role).

  coordinator @0;
  shard @1;
  trainer @2;
  reader @3;
  client @4;
  sync @5;
  # A sync server holding one slice of the dense parameters (the coordinator holds slice 0).
}

enum JobState {
# Where the whole job is (ss::wire::job_state).

  waiting @0;
  # Members are still registering.
  running @1;
  draining @2;
  # Input exhausted; trainers finish what they hold.
  done @3;
  # Finished: members may exit.
  failed @4;
  # Stopped by an error; the coordinator's status says which.
}

enum RowPrecision {
# The precision of embedding row values (ss::embedding::row_precision, --row-precision).

  fp32 @0;
  bf16 @1;
  # bfloat16: FP32's exponent, 8 bits of significand.
  fp16 @2;
  # IEEE half.
}

struct ErrorReply {
# The answer to any request that cannot be served.

  code @0 :ErrorCode = internal;
  # Why; never `ok`.
  message @1 :Text;
  # A precise, human-readable explanation ("unknown table 31").
}

struct Ack {
# A bare acknowledgement: the request was done and has nothing to return.
}
