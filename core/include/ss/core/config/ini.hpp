// The config-file format: INI-style lines, parsed without knowing any option (so it can be fuzzed
// on its own). option_set decides which entries apply to a command.
//
//   # comment            ; comment too
//   [train]              section header; keys before the first header have section ""
//   batch-size = 256     whitespace around key and value is ignored
//   lr = 0.01  # note    an inline comment starts at '#' or ';' preceded by whitespace
//   name = "a # b\n"     a double-quoted value keeps everything; escapes: \\ \" \n \t \r \xHH
//
// Thread-safety: the functions are pure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "ss/core/status.hpp"

namespace ss::config {

struct ini_entry {
  std::string section;   // "" before the first [section] header
  std::string key;
  std::string value;     // trimmed, comment removed; unescaped when quoted
  bool quoted = false;   // written as "..." (a list takes a quoted value as one item)
  std::size_t line = 0;  // 1-based
};

// Parses `text`; errors are parse_error with "<origin>:<line>: <what>".
result<std::vector<ini_entry>> parse_ini(std::string_view text, const std::string& origin);

// True when `value` cannot be written bare and read back unchanged: empty, leading or trailing
// whitespace, a leading '"', a '#' or ';', or a control character.
bool ini_needs_quotes(std::string_view value);

// `value` in double quotes with the escapes parse_ini understands.
std::string ini_quote(std::string_view value);

}  // namespace ss::config
