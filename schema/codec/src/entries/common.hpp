// Codec entries of schema/common.capnp: the enumerations every area shares, error_reply and ack.
// See table.hpp for what an entry is.
#pragma once

#include "../wire_fields.hpp"

namespace ss::wire::detail {

// ---- the enumerations: the wire values are the C++ values -----------------------------------

constexpr int wire(schema::ErrorCode c) { return static_cast<int>(c); }
constexpr int wire(schema::Role r) { return static_cast<int>(r); }
constexpr int wire(schema::RowPrecision p) { return static_cast<int>(p); }
constexpr int wire(schema::JobState s) { return static_cast<int>(s); }
static_assert(wire(schema::ErrorCode::OK) == static_cast<int>(errc::ok));
static_assert(wire(schema::ErrorCode::INVALID_ARGUMENT) ==
              static_cast<int>(errc::invalid_argument));
static_assert(wire(schema::ErrorCode::PARSE_ERROR) == static_cast<int>(errc::parse_error));
static_assert(wire(schema::ErrorCode::IO_ERROR) == static_cast<int>(errc::io_error));
static_assert(wire(schema::ErrorCode::NOT_FOUND) == static_cast<int>(errc::not_found));
static_assert(wire(schema::ErrorCode::CORRUPT) == static_cast<int>(errc::corrupt));
static_assert(wire(schema::ErrorCode::OUT_OF_RANGE) == static_cast<int>(errc::out_of_range));
static_assert(wire(schema::ErrorCode::RESOURCE_EXHAUSTED) ==
              static_cast<int>(errc::resource_exhausted));
static_assert(wire(schema::ErrorCode::UNAVAILABLE) == static_cast<int>(errc::unavailable));
static_assert(wire(schema::ErrorCode::TIMEOUT) == static_cast<int>(errc::timeout));
static_assert(wire(schema::ErrorCode::VERSION_MISMATCH) ==
              static_cast<int>(errc::version_mismatch));
static_assert(wire(schema::ErrorCode::TOO_MANY_BAD_ROWS) ==
              static_cast<int>(errc::too_many_bad_rows));
static_assert(wire(schema::ErrorCode::CANCELLED) == static_cast<int>(errc::cancelled));
static_assert(wire(schema::ErrorCode::INTERNAL) == static_cast<int>(errc::internal));
static_assert(wire(schema::ErrorCode::PERMISSION_DENIED) == static_cast<int>(errc::permission_denied));
static_assert(wire(schema::ErrorCode::ALREADY_EXISTS) == static_cast<int>(errc::already_exists));
static_assert(wire(schema::ErrorCode::FENCED) == static_cast<int>(errc::fenced));
static_assert(wire(schema::Role::COORDINATOR) == static_cast<int>(role::coordinator));
static_assert(wire(schema::Role::SHARD) == static_cast<int>(role::shard));
static_assert(wire(schema::Role::TRAINER) == static_cast<int>(role::trainer));
static_assert(wire(schema::Role::READER) == static_cast<int>(role::reader));
static_assert(wire(schema::Role::CLIENT) == static_cast<int>(role::client));
static_assert(wire(schema::Role::SYNC) == static_cast<int>(role::sync));
static_assert(wire(schema::JobState::WAITING) == static_cast<int>(job_state::waiting));
static_assert(wire(schema::JobState::RUNNING) == static_cast<int>(job_state::running));
static_assert(wire(schema::JobState::DRAINING) == static_cast<int>(job_state::draining));
static_assert(wire(schema::JobState::DONE) == static_cast<int>(job_state::done));
static_assert(wire(schema::JobState::FAILED) == static_cast<int>(job_state::failed));

// The checks of enumeration<> fields: a newer peer's value, or garbage, is refused.
inline status check_range(std::uint16_t v, std::uint16_t first, std::uint16_t last, const char* kind,
                          const char* what) {
  if (v < first || v > last) {
    return parse_error(std::string(what) + ": " + kind + " " + num(v) + " is out of range (" + num(first) +
                       "-" + num(last) + ")");
  }
  return status::ok();
}

inline status check_role(std::uint16_t v, const char* what) {
  return check_range(v, 0, static_cast<std::uint16_t>(role::sync), "role", what);
}

inline status check_state(std::uint16_t v, const char* what) {
  return check_range(v, 0, static_cast<std::uint16_t>(job_state::failed), "job state", what);
}

inline status check_move_pass(std::uint16_t v, const char* what) {
  return check_range(v, 0, static_cast<std::uint16_t>(move_pass::changed), "move pass", what);
}

inline status check_row_precision(std::uint16_t v, const char* what) {
  return check_range(v, 0, static_cast<std::uint16_t>(embedding::row_precision::fp16), "row precision", what);
}
static_assert(wire(schema::RowPrecision::FP32) == static_cast<int>(embedding::row_precision::fp32));
static_assert(wire(schema::RowPrecision::BF16) == static_cast<int>(embedding::row_precision::bf16));
static_assert(wire(schema::RowPrecision::FP16) == static_cast<int>(embedding::row_precision::fp16));

// An error reply must carry an error: ok is refused too.
inline status check_error_code(std::uint16_t v, const char* what) {
  if (v == static_cast<std::uint16_t>(errc::ok)) {
    return parse_error(std::string(what) + ": error code 0 (ok) is not an error");
  }
  return check_range(v, 1, static_cast<std::uint16_t>(errc::fenced), "error code", what);
}

// ---- messages -----------------------------------------------------------------------------------

template <>
struct codec<error_reply>
    : union_member<Body::ERROR_REPLY, &Body::Builder::initErrorReply, &Body::Reader::getErrorReply> {
  static constexpr const char* name = "error_reply";
  using fields = field_list<Wire,
      enumeration<&error_reply::code, &Wire::Builder::setCode, &Wire::Reader::getCode, check_error_code>,
      field<&error_reply::message, &Wire::Builder::setMessage, &Wire::Reader::getMessage>>;
};

template <>
struct codec<ack> : union_member<Body::ACK, &Body::Builder::initAck, &Body::Reader::getAck> {
  static constexpr const char* name = "ack";
  using fields = field_list<Wire>;
};

}  // namespace ss::wire::detail
