// Builds one-line JSON objects for results ("a human summary plus a JSON line"), metrics dumps
// and status replies. Non-finite numbers become null, so the output always parses.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ss {

class json_object {
 public:
  json_object& add(std::string_view key, double value);
  json_object& add(std::string_view key, std::int64_t value);
  json_object& add(std::string_view key, std::uint64_t value);
  json_object& add(std::string_view key, int value) { return add(key, static_cast<std::int64_t>(value)); }
  json_object& add(std::string_view key, unsigned value) { return add(key, static_cast<std::uint64_t>(value)); }
  json_object& add(std::string_view key, bool value);
  json_object& add(std::string_view key, std::string_view value);
  json_object& add(std::string_view key, const char* value) { return add(key, std::string_view(value)); }
  // Inserts already-serialized JSON (a nested object or array) as the value.
  json_object& add_raw(std::string_view key, std::string_view json);

  std::string str() const { return "{" + body_ + "}"; }

 private:
  void key(std::string_view k);
  std::string body_;
};

// `text` as a JSON string literal, quotes included.
std::string json_quote(std::string_view text);

// Already-serialized JSON values (objects from json_object::str(), quoted strings) as one array.
std::string json_array(const std::vector<std::string>& values);

}  // namespace ss
