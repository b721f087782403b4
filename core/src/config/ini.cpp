#include "ss/core/config/ini.hpp"

#include "text.hpp"

namespace ss::config {

namespace {

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_comment_start(char c) noexcept { return c == '#' || c == ';'; }

// True when nothing but whitespace and an optional comment follows.
bool only_comment_left(std::string_view rest) noexcept {
  rest = internal::trim(rest);
  return rest.empty() || is_comment_start(rest.front());
}

// Reads a quoted value starting at the opening quote of `s`. Returns "" and fills `out` and
// `consumed` on success, else an error message.
std::string read_quoted(std::string_view s, std::string& out, std::size_t& consumed) {
  out.clear();
  for (std::size_t i = 1; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"') {
      consumed = i + 1;
      return "";
    }
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i == s.size()) break;
    switch (s[i]) {
      case '\\': out += '\\'; break;
      case '"': out += '"'; break;
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'x': {
        const int hi = i + 1 < s.size() ? hex_value(s[i + 1]) : -1;
        const int lo = i + 2 < s.size() ? hex_value(s[i + 2]) : -1;
        if (hi < 0 || lo < 0) return "\\x needs two hex digits";
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        break;
      }
      default:
        return "unknown escape " + internal::quote_for_message(s.substr(i - 1, 2)) +
               " (use \\\\, \\\", \\n, \\t, \\r or \\xHH)";
    }
  }
  return "unterminated quoted value";
}

}  // namespace

result<std::vector<ini_entry>> parse_ini(std::string_view text, const std::string& origin) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 byte order mark
  std::vector<ini_entry> entries;
  std::string section;
  std::size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const std::size_t newline = text.find('\n');
    std::string_view raw = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    const std::string_view line = internal::trim(raw);
    auto error = [&](const std::string& what) {
      return status(errc::parse_error, origin + ":" + std::to_string(line_number) + ": " + what);
    };

    if (line.empty() || is_comment_start(line.front())) continue;

    if (line.front() == '[') {
      const std::size_t close = line.find(']');
      if (close == std::string_view::npos) return error("section header is missing ']'");
      if (!only_comment_left(line.substr(close + 1))) {
        return error("unexpected text after section header");
      }
      const std::string_view name = internal::trim(line.substr(1, close - 1));
      if (name.empty()) return error("empty section name");
      section = std::string(name);
      continue;
    }

    const std::size_t equals = line.find('=');
    if (equals == std::string_view::npos) {
      return error("expected 'key = value', '[section]' or a comment, found " +
                   internal::quote_for_message(line));
    }
    ini_entry entry;
    entry.section = section;
    entry.line = line_number;
    entry.key = std::string(internal::trim(line.substr(0, equals)));
    if (entry.key.empty()) return error("missing key before '='");

    std::string_view value = internal::trim(line.substr(equals + 1));
    if (!value.empty() && value.front() == '"') {
      std::size_t consumed = 0;
      std::string problem = read_quoted(value, entry.value, consumed);
      if (!problem.empty()) return error(entry.key + ": " + problem);
      if (!only_comment_left(value.substr(consumed))) {
        return error(entry.key + ": unexpected text after the closing quote");
      }
      entry.quoted = true;
    } else {
      // An inline comment starts at '#' or ';' after whitespace, so "a#b" stays one value.
      for (std::size_t i = 1; i < value.size(); ++i) {
        if (is_comment_start(value[i]) && internal::is_space(value[i - 1])) {
          value = value.substr(0, i);
          break;
        }
      }
      entry.value = std::string(internal::trim(value));
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

bool ini_needs_quotes(std::string_view value) {
  if (value.empty() || internal::is_space(value.front()) || internal::is_space(value.back()) ||
      value.front() == '"') {
    return true;
  }
  for (char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '#' || c == ';' || u < 0x20 || u == 0x7f) return true;
  }
  return false;
}

std::string ini_quote(std::string_view value) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : value) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (u < 0x20 || u == 0x7f) {
          out += "\\x";
          out += hex[u >> 4];
          out += hex[u & 0xf];
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

}  // namespace ss::config
