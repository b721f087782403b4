#include "ss/core/embedding/row_ttl.hpp"

#include <cctype>

namespace ss::embedding {

result<row_ttl> parse_row_ttl(std::string_view text) {
  const std::string what = "--row-ttl \"" + std::string(text) + "\": ";
  if (text.empty() || text == "0") return row_ttl{};
  std::size_t digits = 0;
  std::uint64_t n = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) {
    n = n * 10 + static_cast<std::uint64_t>(text[digits] - '0');
    if (n > max_ttl_ticks) break;
    ++digits;
  }
  if (digits == 0)
    return status(errc::invalid_argument, what + "expected a number and a unit: 2000000ex (examples), 90s, 30m, 12h or 7d");
  const std::string_view unit = text.substr(digits);
  row_ttl ttl;
  std::uint64_t scale = 1;
  if (unit == "ex" || unit == "examples") {
    ttl.clock = ttl_clock::examples;
  } else if (unit == "s" || unit == "m" || unit == "h" || unit == "d") {
    ttl.clock = ttl_clock::seconds;
    scale = unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : 86400;
  } else if (unit.empty()) {
    return status(errc::invalid_argument, what + "give a unit: ex (examples), s, m, h or d");
  } else {
    return status(errc::invalid_argument, what + "unknown unit \"" + std::string(unit) + "\" (ex, s, m, h or d)");
  }
  if (n > max_ttl_ticks || n * scale > max_ttl_ticks)
    return status(errc::invalid_argument, what + "too long: at most " + std::to_string(max_ttl_ticks) +
                                              (ttl.clock == ttl_clock::examples ? " examples" : " seconds"));
  ttl.ticks = static_cast<std::uint32_t>(n * scale);
  return ttl;
}

std::string describe(const row_ttl& ttl) {
  if (!ttl.enabled()) return "off";
  return std::to_string(ttl.ticks) + (ttl.clock == ttl_clock::examples ? " examples" : " s");
}

}  // namespace ss::embedding
