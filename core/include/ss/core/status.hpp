// status and result<T>: how core code reports failures a caller should expect (bad input, missing
// files, corrupt checkpoints). Bugs are asserted instead. Both types are [[nodiscard]], so an
// ignored error is a compile warning (an error in CI).
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace ss {

enum class errc {
  ok = 0,
  invalid_argument,    // a bad flag, config value or API argument
  parse_error,         // malformed input text or bytes
  io_error,            // the OS refused a read or write
  not_found,           // a file, key or peer that should exist does not
  corrupt,             // a checksum or structural check failed
  out_of_range,        // a value outside the range its consumer accepts
  resource_exhausted,  // a configured limit was hit
  unavailable,         // a peer is not reachable right now
  timeout,             // a deadline passed
  version_mismatch,    // a peer or file speaks another protocol or format version
  too_many_bad_rows,   // the bad-row rate went over the configured limit
  cancelled,           // stopped on request
  internal,            // should not happen; reported rather than crashing a service
  permission_denied,   // the sender may not ask for this (authority.hpp)
  already_exists,      // a name or index another live process holds
  fenced,              // sent under a trainer membership that is over (job/membership_fence.hpp)
};

// A short, stable name for each code, used in messages and metrics labels.
const char* to_string(errc code) noexcept;

class [[nodiscard]] status {
 public:
  status() = default;  // ok
  status(errc code, std::string message) : code_(code), message_(std::move(message)) {}

  static status ok() { return {}; }

  bool is_ok() const noexcept { return code_ == errc::ok; }
  explicit operator bool() const noexcept { return is_ok(); }
  errc code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }

  // "parse_error: file.txt:12: expected 40 fields, found 39"
  std::string to_string() const;

  // Prefixes the message with context ("loading checkpoint 7: ..."); ok stays ok.
  status with_context(const std::string& context) const;

 private:
  errc code_ = errc::ok;
  std::string message_;
};

// A failed system call on a file: "PATH: WHAT: <strerror(err)>", not_found for ENOENT, else
// io_error.
status errno_status(const std::string& path, const char* what, int err);

// Either a value or a non-ok status.
template <class T>
class [[nodiscard]] result {
 public:
  result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  result(status s) : v_(std::move(s)) {      // NOLINT: implicit by design
    assert(!std::get<status>(v_).is_ok() && "result<T> built from an ok status");
  }
  result(errc code, std::string message) : v_(status(code, std::move(message))) {}

  bool is_ok() const noexcept { return std::holds_alternative<T>(v_); }
  explicit operator bool() const noexcept { return is_ok(); }

  T& value() & { assert(is_ok()); return std::get<T>(v_); }
  const T& value() const& { assert(is_ok()); return std::get<T>(v_); }
  T&& value() && { assert(is_ok()); return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // The error; ok() when a value is held.
  status error() const { return is_ok() ? status::ok() : std::get<status>(v_); }

 private:
  std::variant<T, status> v_;
};

}  // namespace ss

// Returns early from a function returning status or result<T> when `expr` is not ok.
#define SS_RETURN_IF_ERROR(expr)          \
  do {                                    \
    ::ss::status ss_status_ = (expr);     \
    if (!ss_status_.is_ok()) return ss_status_; \
  } while (false)
