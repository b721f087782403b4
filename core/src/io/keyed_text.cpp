#include "ss/core/io/keyed_text.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "ss/core/checksum.hpp"

namespace ss::io {
namespace {

const std::string kCrcTag = "crc32c = ";

status corrupt(const std::string& what) { return {errc::corrupt, what}; }

bool is_hex_digits(const std::string& w) {
  if (w.empty() || w.size() > 16) return false;
  for (char c : w) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  }
  return true;
}

// Decimal, or hex after 0x; no sign.
bool to_u64(const std::string& w, std::uint64_t& out) {
  const bool with_0x = w.size() > 2 && w[0] == '0' && w[1] == 'x';
  char* end = nullptr;
  errno = 0;
  out = std::strtoull(with_0x ? w.c_str() + 2 : w.c_str(), &end, with_0x ? 16 : 10);
  return errno == 0 && end != nullptr && *end == '\0' && w[0] != '-';
}

bool to_i64(const std::string& w, std::int64_t& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtoll(w.c_str(), &end, 10);
  return errno == 0 && end != nullptr && *end == '\0';
}

bool to_double(const std::string& w, double& out) {
  char* end = nullptr;
  out = std::strtod(w.c_str(), &end);
  return end != nullptr && *end == '\0';
}

}  // namespace

std::string exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string with_crc_line(const std::string& text) {
  return text + kCrcTag + hex(crc32c(text.data(), text.size()), 8) + "\n";
}

result<std::string> without_crc_line(const std::string& text, const std::string& what) {
  const auto at = text.rfind(kCrcTag);
  if (at == std::string::npos || (at > 0 && text[at - 1] != '\n'))
    return corrupt(what + " has no crc32c line (cut short?)");
  const std::string stored = text.substr(at + kCrcTag.size(), 8);
  const std::string actual = hex(crc32c(text.data(), at), 8);
  if (stored != actual) return corrupt(what + " fails its checksum (stored " + stored + ", computed " + actual + ")");
  return text.substr(0, at);
}

keyed_text_writer::keyed_text_writer(const std::string& title) : text_("# " + title + "\n") {}

keyed_text_writer& keyed_text_writer::add(const std::string& key, const std::string& value) {
  text_ += key + " = " + value + "\n";
  return *this;
}

std::string keyed_text_writer::finish() const { return with_crc_line(text_); }

value_fields::value_fields(const std::string& what, std::string key, const std::string& value)
    : what_(what), key_(std::move(key)), in_(value) {}

bool value_fields::fail(const std::string& why) {
  if (error_.empty()) error_ = what_ + ": " + key_ + " " + why;
  return false;
}

bool value_fields::next(std::string& out) {
  if (!(in_ >> out)) return fail("has too few fields");
  return true;
}

template <class T>
bool value_fields::next_number(T& out, bool (*convert)(const std::string&, T&)) {
  std::string w;
  if (!next(w)) return false;
  if (!convert(w, out)) return fail("has '" + w + "' where a number belongs");
  return true;
}

bool value_fields::next(std::uint64_t& out) { return next_number(out, to_u64); }
bool value_fields::next(std::int64_t& out) { return next_number(out, to_i64); }
bool value_fields::next(double& out) { return next_number(out, to_double); }

bool value_fields::next(std::uint32_t& out) {
  std::uint64_t v = 0;
  if (!next(v)) return false;
  if (v > 0xffffffffULL) return fail("has " + std::to_string(v) + ", beyond 32 bits");
  out = static_cast<std::uint32_t>(v);
  return true;
}

bool value_fields::next_hex(std::uint64_t& out) {
  std::string w;
  if (!next(w)) return false;
  if (!is_hex_digits(w)) return fail("has '" + w + "' where hex digits belong");
  out = std::strtoull(w.c_str(), nullptr, 16);
  return true;
}

bool value_fields::next_hex(std::uint32_t& out) {
  std::uint64_t v = 0;
  if (!next_hex(v)) return false;
  if (v > 0xffffffffULL) return fail("has " + hex(v, 1) + ", beyond 32 bits");
  out = static_cast<std::uint32_t>(v);
  return true;
}

bool value_fields::rest(std::string& out) {
  std::getline(in_ >> std::ws, out);
  if (out.empty()) return fail("has too few fields");
  return true;
}

bool value_fields::at_end() { return (in_ >> std::ws).peek() == std::char_traits<char>::eof(); }

bool value_fields::done() {
  std::string w;
  if (in_ >> w) return fail("has an unexpected field '" + w + "'");
  return true;
}

result<keyed_text> keyed_text::parse(const std::string& text, const std::string& what) {
  auto body = without_crc_line(text, what);
  if (!body.is_ok()) return body.error();
  keyed_text k;
  k.what_ = what;
  std::istringstream in(*body);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    const auto eq = line.find(" = ");
    if (eq == std::string::npos) return corrupt(what + " line " + std::to_string(number) + " is not 'key = value'");
    if (!k.values_.emplace(line.substr(0, eq), line.substr(eq + 3)).second)
      return corrupt(what + " names '" + line.substr(0, eq) + "' twice");
  }
  return k;
}

std::vector<std::string> keyed_text::keys() const {
  std::vector<std::string> out;
  out.reserve(values_.size());
  for (const auto& kv : values_) out.push_back(kv.first);
  return out;
}

result<value_fields> keyed_text::fields(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return corrupt(what_ + " has no '" + key + "'");
  return value_fields(what_, key, it->second);
}

}  // namespace ss::io
