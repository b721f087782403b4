#include "ss/core/json_value.hpp"

#include <cerrno>
#include <cstdlib>

namespace ss {

class json_parser {
 public:
  explicit json_parser(std::string_view text) : s_(text) {}

  result<json_value> document() {
    json_value v;
    SS_RETURN_IF_ERROR(value(v, 0));
    skip_space();
    if (at_ != s_.size()) return fail("text after the value");
    return v;
  }

 private:
  static constexpr int max_depth = 64;

  status fail(const std::string& what) const {
    return status(errc::parse_error, "json: " + what + " at offset " + std::to_string(at_));
  }
  void skip_space() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\t' || s_[at_] == '\n' || s_[at_] == '\r')) ++at_;
  }
  bool take(std::string_view word) {
    if (s_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }

  status value(json_value& v, int depth) {
    if (depth > max_depth) return fail("nesting deeper than 64");
    skip_space();
    if (at_ >= s_.size()) return fail("a value expected, the text ended");
    const char c = s_[at_];
    if (c == '{') return object(v, depth);
    if (c == '[') return array(v, depth);
    if (c == '"') {
      v.kind_ = json_value::kind::string;
      return string(v.text_);
    }
    if (take("true") || take("false")) {
      v.kind_ = json_value::kind::boolean;
      v.flag_ = c == 't';
      return status::ok();
    }
    if (take("null")) return status::ok();
    return number(v);
  }

  status number(json_value& v) {
    const std::size_t start = at_;
    if (at_ < s_.size() && s_[at_] == '-') ++at_;
    const std::size_t digits = at_;
    while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') ++at_;
    if (at_ == digits) return fail("a value expected");
    if (s_[digits] == '0' && at_ - digits > 1) return fail("a number with a leading zero");
    if (at_ < s_.size() && s_[at_] == '.') {
      ++at_;
      const std::size_t frac = at_;
      while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') ++at_;
      if (at_ == frac) return fail("digits expected after '.'");
    }
    if (at_ < s_.size() && (s_[at_] == 'e' || s_[at_] == 'E')) {
      ++at_;
      if (at_ < s_.size() && (s_[at_] == '+' || s_[at_] == '-')) ++at_;
      const std::size_t exp = at_;
      while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') ++at_;
      if (at_ == exp) return fail("digits expected in the exponent");
    }
    v.kind_ = json_value::kind::number;
    v.text_ = std::string(s_.substr(start, at_ - start));
    return status::ok();
  }

  static void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  status hex4(std::uint32_t& cp) {
    if (at_ + 4 > s_.size()) return fail("a \\u escape needs 4 hex digits");
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = s_[at_++];
      cp <<= 4;
      if (h >= '0' && h <= '9') cp |= static_cast<std::uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f') cp |= static_cast<std::uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') cp |= static_cast<std::uint32_t>(h - 'A' + 10);
      else return fail("a \\u escape needs 4 hex digits");
    }
    return status::ok();
  }

  status string(std::string& out) {
    ++at_;  // the opening quote
    out.clear();
    while (at_ < s_.size()) {
      const char c = s_[at_++];
      if (c == '"') return status::ok();
      if (static_cast<unsigned char>(c) < 0x20) return fail("a control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= s_.size()) break;
      const char e = s_[at_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          std::uint32_t cp = 0;
          SS_RETURN_IF_ERROR(hex4(cp));
          if (cp >= 0xD800 && cp < 0xDC00 && take("\\u")) {  // a surrogate pair
            std::uint32_t low = 0;
            SS_RETURN_IF_ERROR(hex4(low));
            if (low < 0xDC00 || low >= 0xE000) return fail("a high surrogate without its low half");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default: return fail(std::string("an unknown escape \\") + e);
      }
    }
    return fail("a string without its closing quote");
  }

  status array(json_value& v, int depth) {
    ++at_;
    v.kind_ = json_value::kind::array;
    skip_space();
    if (take("]")) return status::ok();
    for (;;) {
      v.items_.emplace_back();
      SS_RETURN_IF_ERROR(value(v.items_.back(), depth + 1));
      skip_space();
      if (take("]")) return status::ok();
      if (!take(",")) return fail("',' or ']' expected");
    }
  }

  status object(json_value& v, int depth) {
    ++at_;
    v.kind_ = json_value::kind::object;
    skip_space();
    if (take("}")) return status::ok();
    for (;;) {
      skip_space();
      if (at_ >= s_.size() || s_[at_] != '"') return fail("a member name expected");
      std::string key;
      SS_RETURN_IF_ERROR(string(key));
      skip_space();
      if (!take(":")) return fail("':' expected");
      v.members_.emplace_back(std::move(key), json_value{});
      SS_RETURN_IF_ERROR(value(v.members_.back().second, depth + 1));
      skip_space();
      if (take("}")) return status::ok();
      if (!take(",")) return fail("',' or '}' expected");
    }
  }

  std::string_view s_;
  std::size_t at_ = 0;
};

result<json_value> json_value::parse(std::string_view text) { return json_parser(text).document(); }

const json_value& json_value::operator[](std::string_view key) const {
  static const json_value null_value;
  for (const auto& [k, v] : members_)
    if (k == key) return v;
  return null_value;
}

double json_value::number(double fallback) const noexcept {
  if (kind_ != kind::number) return fallback;
  return std::strtod(text_.c_str(), nullptr);
}

std::int64_t json_value::int64(std::int64_t fallback) const noexcept {
  if (kind_ != kind::number) return fallback;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text_.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return static_cast<std::int64_t>(number());
  return v;
}

std::uint64_t json_value::uint64(std::uint64_t fallback) const noexcept {
  if (kind_ != kind::number || text_[0] == '-') return fallback;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text_.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return static_cast<std::uint64_t>(number());
  return v;
}

}  // namespace ss
