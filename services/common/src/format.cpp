#include "ss/service/format.hpp"

#include <cmath>
#include <cstdio>

namespace ss::service {

std::string with_commas(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000 && u < 4) {
    bytes /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

std::string human_seconds(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  char buf[32];
  if (seconds < 60) {
    std::snprintf(buf, sizeof buf, "%.1fs", seconds);
  } else if (seconds < 3600) {
    const int s = static_cast<int>(seconds + 0.5);
    std::snprintf(buf, sizeof buf, "%dm %02ds", s / 60, s % 60);
  } else {
    const int s = static_cast<int>(seconds + 0.5);
    std::snprintf(buf, sizeof buf, "%dh %02dm", s / 3600, (s / 60) % 60);
  }
  return buf;
}

}  // namespace ss::service
