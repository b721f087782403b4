#include "text.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

namespace ss::config::internal {

bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string quote_for_message(std::string_view text) {
  constexpr std::size_t max_shown = 80;  // fuzzed or pasted-in megabytes stay readable
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "'";
  for (std::size_t i = 0; i < text.size() && i < max_shown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > max_shown) out += "...";
  out += "'";
  if (text.size() > max_shown) out += " (" + std::to_string(text.size()) + " bytes)";
  return out;
}

std::string parse_value(std::string_view text, bool& out) {
  static constexpr const char* bad = "is not a boolean (use true/false, yes/no, on/off or 1/0)";
  std::string_view s = trim(text);
  if (s.size() > 5) return bad;
  std::string lower;
  for (char c : s) lower += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  if (lower == "true" || lower == "yes" || lower == "on" || lower == "1") {
    out = true;
    return "";
  }
  if (lower == "false" || lower == "no" || lower == "off" || lower == "0") {
    out = false;
    return "";
  }
  return bad;
}

namespace {

// Sign and magnitude of a decimal integer; `overflow` when the magnitude exceeds 64 bits.
// Returns false when the text is not an integer at all.
bool scan_integer(std::string_view text, bool& negative, std::uint64_t& magnitude,
                  bool& overflow) {
  std::string_view s = trim(text);
  negative = false;
  magnitude = 0;
  overflow = false;
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (i == s.size()) return false;
  constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    const auto digit = static_cast<std::uint64_t>(s[i] - '0');
    if (magnitude > (max - digit) / 10) {
      overflow = true;
    } else {
      magnitude = magnitude * 10 + digit;
    }
  }
  return true;
}

std::string parse_signed(std::string_view text, std::int64_t lowest, std::int64_t highest,
                         std::int64_t& out) {
  const std::string range =
      "is out of range (" + std::to_string(lowest) + " to " + std::to_string(highest) + ")";
  bool negative = false;
  bool overflow = false;
  std::uint64_t magnitude = 0;
  if (!scan_integer(text, negative, magnitude, overflow)) return "is not an integer";
  constexpr auto int64_max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (overflow || magnitude > int64_max + (negative ? 1 : 0)) return range;
  std::int64_t value = 0;
  if (!negative) {
    value = static_cast<std::int64_t>(magnitude);
  } else if (magnitude == int64_max + 1) {
    value = std::numeric_limits<std::int64_t>::min();
  } else {
    value = -static_cast<std::int64_t>(magnitude);
  }
  if (value < lowest || value > highest) return range;
  out = value;
  return "";
}

}  // namespace

std::string parse_value(std::string_view text, int& out) {
  std::int64_t value = 0;
  std::string error = parse_signed(text, std::numeric_limits<int>::min(),
                                   std::numeric_limits<int>::max(), value);
  if (error.empty()) out = static_cast<int>(value);
  return error;
}

std::string parse_value(std::string_view text, std::int64_t& out) {
  return parse_signed(text, std::numeric_limits<std::int64_t>::min(),
                      std::numeric_limits<std::int64_t>::max(), out);
}

std::string parse_value(std::string_view text, std::uint64_t& out) {
  bool negative = false;
  bool overflow = false;
  std::uint64_t magnitude = 0;
  if (!scan_integer(text, negative, magnitude, overflow)) return "is not an integer";
  if (negative && (overflow || magnitude != 0)) return "is not a non-negative integer";
  if (overflow) {
    return "is out of range (0 to " +
           std::to_string(std::numeric_limits<std::uint64_t>::max()) + ")";
  }
  out = magnitude;
  return "";
}

std::string parse_value(std::string_view text, double& out) {
  std::string_view s = trim(text);
  // from_chars takes no leading '+'; accept one so "+0.5" works like "+5" does for integers.
  if (s.size() > 1 && s[0] == '+' && s[1] != '+' && s[1] != '-') s.remove_prefix(1);
  double value = 0.0;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, value, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) return "is out of range for a double";
  if (ec != std::errc() || ptr != end || s.empty() || std::isnan(value)) return "is not a number";
  out = value;
  return "";
}

std::string split_list(std::string_view text, std::vector<std::string>& out) {
  out.clear();
  if (trim(text).empty()) return "";
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item =
        trim(text.substr(start, comma == std::string_view::npos ? std::string_view::npos
                                                                 : comma - start));
    if (item.empty()) {
      out.clear();
      return "has an empty item";
    }
    out.emplace_back(item);
    if (comma == std::string_view::npos) return "";
    start = comma + 1;
  }
}

std::string format_double(double value) {
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, value);
  if (ec != std::errc()) return "nan";  // cannot happen with 64 bytes
  return std::string(buf, ptr);
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    out += items[i];
  }
  return out;
}

}  // namespace ss::config::internal
