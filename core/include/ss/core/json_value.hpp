// A parsed JSON document: what clients read the coordinator's result line and status replies
// with (job_report::from_json, the job state), instead of searching the text.
//
//   auto doc = json_value::parse(R"({"ok":true,"examples":12})");
//   if (doc.is_ok() && (*doc)["ok"].boolean()) ...
//
// Numbers keep their text, so 64-bit ids read back exactly (uint64()); an absent member reads as
// null, and the typed getters return a fallback for a value of another kind. Nesting is limited
// to 64 levels; a parse error names its byte offset.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ss/core/status.hpp"

namespace ss {

class json_value {
 public:
  enum class kind { null, boolean, number, string, array, object };

  static result<json_value> parse(std::string_view text);

  kind type() const noexcept { return kind_; }
  bool is_null() const noexcept { return kind_ == kind::null; }
  bool is_object() const noexcept { return kind_ == kind::object; }

  // The member `key` of an object; a null value when absent or when this is not an object.
  const json_value& operator[](std::string_view key) const;
  bool has(std::string_view key) const { return !(*this)[key].is_null(); }
  const std::vector<json_value>& items() const noexcept { return items_; }  // an array's elements
  const std::vector<std::pair<std::string, json_value>>& members() const noexcept { return members_; }

  bool boolean(bool fallback = false) const noexcept { return kind_ == kind::boolean ? flag_ : fallback; }
  double number(double fallback = 0) const noexcept;
  std::int64_t int64(std::int64_t fallback = 0) const noexcept;
  std::uint64_t uint64(std::uint64_t fallback = 0) const noexcept;
  // A string's text (unescaped), or `fallback` for any other kind.
  std::string string(std::string fallback = {}) const { return kind_ == kind::string ? text_ : fallback; }

 private:
  friend class json_parser;
  kind kind_ = kind::null;
  bool flag_ = false;
  std::string text_;  // a string's text, or a number's as written
  std::vector<json_value> items_;
  std::vector<std::pair<std::string, json_value>> members_;
};

}  // namespace ss
