#include "ss/core/status.hpp"

#include <cerrno>
#include <cstring>

namespace ss {

const char* to_string(errc code) noexcept {
  switch (code) {
    case errc::ok: return "ok";
    case errc::invalid_argument: return "invalid_argument";
    case errc::parse_error: return "parse_error";
    case errc::io_error: return "io_error";
    case errc::not_found: return "not_found";
    case errc::corrupt: return "corrupt";
    case errc::out_of_range: return "out_of_range";
    case errc::resource_exhausted: return "resource_exhausted";
    case errc::unavailable: return "unavailable";
    case errc::timeout: return "timeout";
    case errc::version_mismatch: return "version_mismatch";
    case errc::too_many_bad_rows: return "too_many_bad_rows";
    case errc::cancelled: return "cancelled";
    case errc::internal: return "internal";
    case errc::permission_denied: return "permission_denied";
    case errc::already_exists: return "already_exists";
    case errc::fenced: return "fenced";
  }
  return "unknown";
}

std::string status::to_string() const {
  if (is_ok()) return "ok";
  return std::string(ss::to_string(code_)) + ": " + message_;
}

status status::with_context(const std::string& context) const {
  if (is_ok()) return *this;
  return status(code_, context + ": " + message_);
}

status errno_status(const std::string& path, const char* what, int err) {
  return status(err == ENOENT ? errc::not_found : errc::io_error, path + ": " + what + ": " + std::strerror(err));
}

}  // namespace ss
