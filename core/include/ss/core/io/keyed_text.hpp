// The one text syntax of every manifest shadowsync writes (a snapshot's MANIFEST, a shard
// checkpoint's SHADOWSYNC-CHECKPOINT, a finished job's stored result): `key = value` lines, `#`
// comments, and a last line `crc32c = XXXXXXXX` over every byte before it, so that a file cut
// short or edited by hand is refused instead of read. Values are whitespace-separated fields.
#pragma once

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ss/core/io/hex.hpp"
#include "ss/core/status.hpp"

namespace ss::io {

// Text followed by a "crc32c = XXXXXXXX" line over it, and back (errc::corrupt naming `what`
// when the line is missing or does not match).
std::string with_crc_line(const std::string& text);
result<std::string> without_crc_line(const std::string& text, const std::string& what);

// Builds a keyed text: a `# title` line, then one `key = value` line per add(), then the crc line.
class keyed_text_writer {
 public:
  explicit keyed_text_writer(const std::string& title);
  keyed_text_writer& add(const std::string& key, const std::string& value);
  std::string finish() const;

 private:
  std::string text_;
};

// The fields of one value, read in order; the first problem is kept as "<what>: <key> <why>".
class value_fields {
 public:
  value_fields(const std::string& what, std::string key, const std::string& value);
  bool next(std::uint64_t& out);  // decimal, or hex with 0x
  bool next(std::uint32_t& out);
  bool next(std::int64_t& out);
  bool next(double& out);  // as written by exact() below
  bool next(std::string& out);
  bool next_hex(std::uint64_t& out);  // bare hex digits, as hex() writes them
  bool next_hex(std::uint32_t& out);
  bool rest(std::string& out);  // the rest of the value, spaces included (a path)
  bool at_end();                // no field left (consumes nothing)
  bool done();                  // no field left, or fails naming the extra one
  const std::string& error() const { return error_; }

 private:
  bool fail(const std::string& why);
  // The next word through `convert`, which is false unless the whole word is a T.
  template <class T>
  bool next_number(T& out, bool (*convert)(const std::string&, T&));

  std::string what_;
  std::string key_;
  std::istringstream in_;
  std::string error_;
};

// A parsed keyed text. Errors are errc::corrupt and name `what` (the file) and the key.
class keyed_text {
 public:
  // Checks the crc line, then reads every `key = value` line.
  static result<keyed_text> parse(const std::string& text, const std::string& what);

  bool has(const std::string& key) const { return values_.count(key) > 0; }
  // Every key, sorted (a strict reader refuses the ones it does not know).
  std::vector<std::string> keys() const;
  // The value's fields; corrupt "<what> has no '<key>'" when the key is missing.
  result<value_fields> fields(const std::string& key) const;
  // A value of exactly one field: a number, or bare hex digits.
  template <class T>
  status one(const std::string& key, T& out) const {
    return one_field(key, [&out](value_fields& f) { return f.next(out); });
  }
  template <class T>
  status one_hex(const std::string& key, T& out) const {
    return one_field(key, [&out](value_fields& f) { return f.next_hex(out); });
  }
  const std::string& what() const { return what_; }

 private:
  template <class Read>
  status one_field(const std::string& key, Read read) const {
    auto f = fields(key);
    if (!f.is_ok()) return f.error();
    if (!read(*f) || !f->done()) return {errc::corrupt, f->error()};
    return status::ok();
  }

  std::string what_;
  std::map<std::string, std::string> values_;
};

// A double written so that it reads back to the same bits ("%.17g").
std::string exact(double v);

}  // namespace ss::io
