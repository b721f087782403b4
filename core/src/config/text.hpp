// Internal to the config area: value parsing and formatting shared by option_set and the INI
// parser. The parse_* functions return "" on success, else the tail of an error message
// ("is not an integer") that the caller prefixes with the source and the quoted text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ss::config::internal {

bool is_space(char c) noexcept;
std::string_view trim(std::string_view s) noexcept;

// The text in single quotes for an error message: control bytes escaped, long texts cut short.
std::string quote_for_message(std::string_view text);

std::string parse_value(std::string_view text, bool& out);
std::string parse_value(std::string_view text, int& out);
std::string parse_value(std::string_view text, std::int64_t& out);
std::string parse_value(std::string_view text, std::uint64_t& out);
std::string parse_value(std::string_view text, double& out);

// Comma-separated items, each trimmed; "" (or only whitespace) is the empty list.
std::string split_list(std::string_view text, std::vector<std::string>& out);

// Shortest text that parses back to exactly `value`.
std::string format_double(double value);

std::string join(const std::vector<std::string>& items, std::string_view separator);

}  // namespace ss::config::internal
