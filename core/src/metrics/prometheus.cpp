#include "ss/core/metrics/prometheus.hpp"

#include <cassert>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <system_error>

namespace ss::metrics {

namespace {

bool is_name_start(char c, bool allow_colon) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (allow_colon && c == ':');
}

bool is_name_char(char c, bool allow_colon) noexcept {
  return is_name_start(c, allow_colon) || (c >= '0' && c <= '9');
}

bool valid_name(std::string_view name, bool allow_colon) noexcept {
  if (name.empty() || !is_name_start(name[0], allow_colon)) return false;
  for (char c : name) {
    if (!is_name_char(c, allow_colon)) return false;
  }
  return true;
}

// A name from code: asserted, then sanitized so a release build still emits valid text.
std::string checked_metric_name(std::string_view name) {
  assert(is_valid_metric_name(name) && "invalid Prometheus metric name");
  return is_valid_metric_name(name) ? std::string(name) : sanitize_metric_name(name);
}

std::string checked_label_name(std::string_view name) {
  assert(is_valid_label_name(name) && "invalid Prometheus label name");
  return is_valid_label_name(name) ? std::string(name) : sanitize_metric_name(name, false);
}

void append_label(std::string& out, const std::string& name, std::string_view value) {
  if (out.size() > 1) out += ',';
  out += checked_label_name(name);
  out += "=\"";
  out += escape_label_value(value);
  out += '"';
}

}  // namespace

bool is_valid_metric_name(std::string_view name) noexcept { return valid_name(name, true); }

bool is_valid_label_name(std::string_view name) noexcept { return valid_name(name, false); }

std::string sanitize_metric_name(std::string_view name, bool allow_colon) {
  std::string out;
  out.reserve(name.size() + 1);
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) out += '_';
  for (char c : name) out += is_name_char(c, allow_colon) ? c : '_';
  return out;
}

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

std::string escape_help(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, value);
  if (res.ec != std::errc()) return "NaN";  // cannot happen with 64 bytes
  return std::string(buf, res.ptr);
}

// ---- prometheus_text ------------------------------------------------------------------------

prometheus_text::family* prometheus_text::family_for(std::string_view name, std::string_view help,
                                                     const char* type) {
  std::string n = checked_metric_name(name);
  auto it = index_.find(n);
  if (it != index_.end()) {
    family& f = families_[it->second];
    if (std::strcmp(f.type, type) != 0) return nullptr;  // same name, another type: dropped
    return &f;
  }
  index_.emplace(n, families_.size());
  families_.push_back(family{std::move(n), std::string(help), type, {}});
  return &families_.back();
}

void prometheus_text::sample(family& f, std::string_view sample_name,
                             const prometheus_labels& labels,
                             const std::pair<std::string, std::string>* extra_label,
                             double value) {
  std::string label_text = "{";
  for (const auto& [k, v] : labels) append_label(label_text, k, v);
  if (extra_label != nullptr) append_label(label_text, extra_label->first, extra_label->second);
  label_text += '}';
  std::string series(sample_name);
  if (label_text.size() > 2) series += label_text;
  if (!series_.insert(series).second) {
    ++dropped_;
    return;
  }
  f.samples += series;
  f.samples += ' ';
  f.samples += format_value(value);
  f.samples += '\n';
}

prometheus_text& prometheus_text::gauge(std::string_view name, std::string_view help, double value,
                                        const prometheus_labels& labels) {
  family* f = family_for(name, help, "gauge");
  if (f == nullptr) {
    ++dropped_;
    return *this;
  }
  sample(*f, f->name, labels, nullptr, value);
  return *this;
}

prometheus_text& prometheus_text::counter(std::string_view name, std::string_view help,
                                          double value, const prometheus_labels& labels) {
  family* f = family_for(name, help, "counter");
  if (f == nullptr) {
    ++dropped_;
    return *this;
  }
  sample(*f, f->name, labels, nullptr, value);
  return *this;
}

prometheus_text& prometheus_text::summary(std::string_view name, std::string_view help,
                                          const std::vector<std::pair<double, double>>& quantiles,
                                          double sum, std::uint64_t count,
                                          const prometheus_labels& labels) {
  family* f = family_for(name, help, "summary");
  if (f == nullptr) {
    ++dropped_;
    return *this;
  }
  const std::string base = f->name;  // f stays valid: no family is added below
  for (const auto& [q, v] : quantiles) {
    const std::pair<std::string, std::string> quantile{"quantile", format_value(q)};
    sample(*f, base, labels, &quantile, v);
  }
  sample(*f, base + "_sum", labels, nullptr, sum);
  sample(*f, base + "_count", labels, nullptr, static_cast<double>(count));
  return *this;
}

std::string prometheus_text::str() const {
  std::string out;
  for (const family& f : families_) {
    if (f.samples.empty()) continue;
    out += "# HELP ";
    out += f.name;
    out += ' ';
    out += escape_help(f.help);
    out += "\n# TYPE ";
    out += f.name;
    out += ' ';
    out += f.type;
    out += '\n';
    out += f.samples;
  }
  return out;
}

void prometheus_text::clear() {
  families_.clear();
  index_.clear();
  series_.clear();
  dropped_ = 0;
}

// ---- JSON -> gauges ---------------------------------------------------------------------------

namespace {

// A strict, bounded recursive-descent JSON reader that collects numeric and boolean leaves.
class json_leaves {
 public:
  struct leaf {
    std::string path;  // keys joined by '_', not yet sanitized
    double value;
  };

  explicit json_leaves(std::string_view text) : text_(text) {}

  status parse() {
    skip_ws();
    if (peek() != '{') return fail("expected a JSON object");
    std::string path;
    SS_RETURN_IF_ERROR(value(path, 0));
    skip_ws();
    if (pos_ != text_.size()) return fail("trailing characters after the JSON object");
    return status::ok();
  }

  const std::vector<leaf>& leaves() const noexcept { return leaves_; }

 private:
  static constexpr int max_depth = 64;

  char peek() const noexcept { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool at_end() const noexcept { return pos_ >= text_.size(); }

  void skip_ws() noexcept {
    while (!at_end()) {
      char c = text_[pos_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++pos_;
    }
  }

  status fail(const std::string& what) const {
    return status(errc::parse_error, "json_to_prometheus: " + what + " at offset " +
                                         std::to_string(pos_));
  }

  bool literal(std::string_view word) noexcept {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  static std::string join(const std::string& path, std::string_view key) {
    if (path.empty()) return std::string(key);
    std::string out = path;
    out += '_';
    out += key;
    return out;
  }

  status value(const std::string& path, int depth) {
    skip_ws();
    if (at_end()) return fail("unexpected end of input");
    const char c = peek();
    if (c == '{') return object(path, depth + 1);
    if (c == '[') return array(path, depth + 1);
    if (c == '"') {
      std::string ignored;
      return string(ignored);
    }
    if (c == 't') {
      if (!literal("true")) return fail("invalid literal");
      leaves_.push_back({path, 1.0});
      return status::ok();
    }
    if (c == 'f') {
      if (!literal("false")) return fail("invalid literal");
      leaves_.push_back({path, 0.0});
      return status::ok();
    }
    if (c == 'n') {
      if (!literal("null")) return fail("invalid literal");
      return status::ok();
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      double v = 0.0;
      SS_RETURN_IF_ERROR(number(v));
      leaves_.push_back({path, v});
      return status::ok();
    }
    return fail(std::string("unexpected character '") + c + "'");
  }

  status object(const std::string& path, int depth) {
    if (depth > max_depth) return fail("nested deeper than 64 levels");
    ++pos_;  // '{'
    skip_ws();
    if (peek() == '}') {
      ++pos_;
      return status::ok();
    }
    while (true) {
      skip_ws();
      if (peek() != '"') return fail("expected a string key");
      std::string key;
      SS_RETURN_IF_ERROR(string(key));
      skip_ws();
      if (peek() != ':') return fail("expected ':'");
      ++pos_;
      SS_RETURN_IF_ERROR(value(join(path, key), depth));
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == '}') {
        ++pos_;
        return status::ok();
      }
      return fail("expected ',' or '}'");
    }
  }

  status array(const std::string& path, int depth) {
    if (depth > max_depth) return fail("nested deeper than 64 levels");
    ++pos_;  // '['
    skip_ws();
    if (peek() == ']') {
      ++pos_;
      return status::ok();
    }
    for (std::size_t index = 0;; ++index) {
      SS_RETURN_IF_ERROR(value(join(path, std::to_string(index)), depth));
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == ']') {
        ++pos_;
        return status::ok();
      }
      return fail("expected ',' or ']'");
    }
  }

  static int hex_digit(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  bool hex4(unsigned& out) noexcept {
    if (text_.size() - pos_ < 4) return false;
    out = 0;
    for (int i = 0; i < 4; ++i) {
      int d = hex_digit(text_[pos_ + static_cast<std::size_t>(i)]);
      if (d < 0) return false;
      out = out * 16 + static_cast<unsigned>(d);
    }
    pos_ += 4;
    return true;
  }

  static void append_utf8(std::string& out, unsigned cp) {
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

  status string(std::string& out) {
    ++pos_;  // '"'
    while (true) {
      if (at_end()) return fail("unterminated string");
      const char c = text_[pos_++];
      if (c == '"') return status::ok();
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_end()) return fail("unterminated escape");
      const char e = text_[pos_++];
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
          unsigned cp = 0;
          if (!hex4(cp)) return fail("bad \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF && text_.substr(pos_, 2) == "\\u") {
            const std::size_t save = pos_;
            pos_ += 2;
            unsigned low = 0;
            if (hex4(low) && low >= 0xDC00 && low <= 0xDFFF) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            } else {
              pos_ = save;
            }
          }
          append_utf8(out, cp);
          break;
        }
        default: return fail("bad escape");
      }
    }
  }

  status number(double& out) {
    const std::size_t start = pos_;
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;
    } else if (peek() >= '1' && peek() <= '9') {
      while (peek() >= '0' && peek() <= '9') ++pos_;
    } else {
      return fail("bad number");
    }
    if (peek() == '.') {
      ++pos_;
      if (!(peek() >= '0' && peek() <= '9')) return fail("bad number");
      while (peek() >= '0' && peek() <= '9') ++pos_;
    }
    bool negative_exponent = false;
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') {
        negative_exponent = peek() == '-';
        ++pos_;
      }
      if (!(peek() >= '0' && peek() <= '9')) return fail("bad number");
      while (peek() >= '0' && peek() <= '9') ++pos_;
    }
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    auto res = std::from_chars(first, last, out);
    if (res.ec == std::errc::result_out_of_range) {
      // Overflow to +-Inf, underflow to +-0, as strtod would.
      const bool negative = *first == '-';
      out = negative_exponent ? 0.0 : std::numeric_limits<double>::infinity();
      if (negative) out = -out;
      return status::ok();
    }
    if (res.ec != std::errc() || res.ptr != last) return fail("bad number");
    return status::ok();
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::vector<leaf> leaves_;
};

}  // namespace

status append_json_gauges(prometheus_text& out, std::string_view json_object,
                          std::string_view prefix, const prometheus_labels& labels) {
  json_leaves parser(json_object);
  SS_RETURN_IF_ERROR(parser.parse());
  for (const auto& leaf : parser.leaves()) {
    std::string raw = std::string(prefix);
    if (!raw.empty() && !leaf.path.empty()) raw += '_';
    raw += leaf.path;
    const std::string name = sanitize_metric_name(raw);
    out.gauge(name, "shadowsync status field " + leaf.path, leaf.value, labels);
  }
  return status::ok();
}

result<std::string> json_to_prometheus(const std::string& json_object, const std::string& prefix,
                                       const prometheus_labels& labels) {
  prometheus_text out;
  SS_RETURN_IF_ERROR(append_json_gauges(out, json_object, prefix, labels));
  return out.str();
}

}  // namespace ss::metrics
