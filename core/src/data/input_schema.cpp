#include "ss/core/data/input_schema.hpp"

#include <charconv>

#include <algorithm>
#include <array>
#include <unordered_map>

namespace ss::data {
namespace {

constexpr std::string_view whitespace = " \t\r\f\v";

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(whitespace);
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(whitespace);
  return s.substr(first, last - first + 1);
}

std::string in_quotes(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string line_prefix(std::size_t line) { return "line " + std::to_string(line) + ": "; }

// "a, b ,c" -> {"a", "b", "c"}; an empty item is an error (a stray comma hides a typo).
result<std::vector<std::string>> split_list(std::string_view value, std::string_view key,
                                            std::size_t line) {
  std::vector<std::string> items;
  if (trim(value).empty()) return items;
  std::size_t start = 0;
  while (true) {
    const auto comma = value.find(',', start);
    const auto item = trim(value.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (item.empty()) {
      return status(errc::parse_error,
                    line_prefix(line) + std::string(key) + ": empty column name in " + in_quotes(trim(value)));
    }
    items.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return items;
}

result<char> parse_delimiter(std::string_view value, std::size_t line) {
  if (value == "," || value == "comma") return ',';
  if (value == "tab" || value == "\\t") return '\t';
  if (value == ";" || value == "semicolon") return ';';
  if (value == "|" || value == "pipe") return '|';
  return status(errc::parse_error, line_prefix(line) + "delimiter: expected one of ',', 'tab', ';', '|', found " +
                                       in_quotes(value));
}

result<bool> parse_bool(std::string_view value, std::string_view key, std::size_t line) {
  if (value == "true" || value == "yes" || value == "1") return true;
  if (value == "false" || value == "no" || value == "0") return false;
  return status(errc::parse_error,
                line_prefix(line) + std::string(key) + ": expected true or false, found " + in_quotes(value));
}

const char* role_name(column_role role) {
  switch (role) {
    case column_role::label: return "label";
    case column_role::dense: return "dense";
    case column_role::categorical: return "categorical";
    case column_role::ignore: return "ignore";
  }
  return "?";
}

// Splits a header line on the delimiter; a leading BOM and a trailing '\r' are not part of it.
std::vector<std::string> split_header(std::string_view line, char delimiter) {
  if (line.size() >= 3 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::vector<std::string> names;
  std::size_t start = 0;
  while (true) {
    const auto pos = line.find(delimiter, start);
    names.emplace_back(line.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return names;
}

}  // namespace

input_schema input_schema::criteo() {
  input_schema s;
  s.delimiter = '\t';
  s.header = false;
  s.label = "label";
  s.integer_dense = true;
  s.columns.push_back("label");
  for (int i = 1; i <= 13; ++i) s.dense.push_back("I" + std::to_string(i));
  for (int i = 1; i <= 26; ++i) s.categorical.push_back("C" + std::to_string(i));
  s.columns.insert(s.columns.end(), s.dense.begin(), s.dense.end());
  s.columns.insert(s.columns.end(), s.categorical.begin(), s.categorical.end());
  return s;
}

input_schema input_schema::libsvm() {
  input_schema s;
  s.format = text_format::libsvm;
  s.header = false;
  s.label = "label";
  return s;
}

input_schema input_schema::avazu() {
  input_schema s;
  s.delimiter = ',';
  s.header = true;
  s.label = "click";
  s.ignore = {"id"};
  s.categorical_rest = true;
  return s;
}

result<input_schema> parse_schema(std::string_view text) {
  static constexpr std::array<std::string_view, 11> keys = {
      "format", "delimiter", "header", "label", "dense", "categorical", "ignore",
      "multi_value_separator", "multi_value", "columns", "fields"};
  struct entry {
    std::string_view value;
    std::size_t line = 0;
  };
  std::array<entry, keys.size()> entries{};

  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    auto end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    auto line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) {
      return status(errc::parse_error, line_prefix(line_no) + "expected 'key = value', found " + in_quotes(line));
    }
    const auto key = trim(line.substr(0, eq));
    const auto value = trim(line.substr(eq + 1));
    const auto it = std::find(keys.begin(), keys.end(), key);
    if (it == keys.end()) return status(errc::parse_error, line_prefix(line_no) + "unknown key " + in_quotes(key));
    auto& e = entries[static_cast<std::size_t>(it - keys.begin())];
    if (e.line != 0) {
      return status(errc::parse_error, line_prefix(line_no) + "key " + in_quotes(key) +
                                           " given twice (first on line " + std::to_string(e.line) + ")");
    }
    e = {value, line_no};
  }
  auto get = [&](std::string_view key) -> const entry& {
    return entries[static_cast<std::size_t>(std::find(keys.begin(), keys.end(), key) - keys.begin())];
  };

  input_schema schema;
  if (const auto& e = get("format"); e.line != 0) {
    if (e.value == "criteo") {
      schema = input_schema::criteo();
    } else if (e.value == "libsvm" || e.value == "libfm") {
      schema = input_schema::libsvm();
    } else if (e.value == "libffm") {
      schema = input_schema::libsvm();
      schema.format = text_format::libffm;
    } else if (e.value != "csv") {
      return status(errc::parse_error, line_prefix(e.line) + "format: expected criteo, csv, libsvm or libffm, found " +
                                           in_quotes(e.value));
    }
  }
  if (const auto& e = get("fields"); e.line != 0) {
    std::uint32_t n = 0;
    const auto r = std::from_chars(e.value.data(), e.value.data() + e.value.size(), n);
    if (r.ec != std::errc() || r.ptr != e.value.data() + e.value.size() || n == 0 || n > 127)
      return status(errc::parse_error, line_prefix(e.line) + "fields: expected a number of fields from 1 to 127, found " +
                                           in_quotes(e.value));
    if (schema.format == text_format::delimited)
      return status(errc::parse_error, line_prefix(e.line) +
                                           "fields: only for format = libsvm or libffm (a delimited file's fields "
                                           "are its columns)");
    schema.sparse_fields = n;
  }
  if (schema.format == text_format::libffm && schema.sparse_fields == 0)
    return status(errc::parse_error, "format = libffm needs fields = N (the number of fields, 0 .. N-1)");
  if (const auto& e = get("delimiter"); e.line != 0) {
    auto d = parse_delimiter(e.value, e.line);
    if (!d) return d.error();
    schema.delimiter = *d;
  }
  if (const auto& e = get("header"); e.line != 0) {
    auto b = parse_bool(e.value, "header", e.line);
    if (!b) return b.error();
    schema.header = *b;
  }
  if (const auto& e = get("label"); e.line != 0) {
    if (e.value.empty()) return status(errc::parse_error, line_prefix(e.line) + "label: empty column name");
    schema.label = std::string(e.value);
  }
  for (const char* key : {"dense", "ignore", "columns"}) {
    const auto& e = get(key);
    if (e.line == 0) continue;
    auto list = split_list(e.value, key, e.line);
    if (!list) return list.error();
    auto& target = std::string_view(key) == "dense" ? schema.dense
                   : std::string_view(key) == "ignore" ? schema.ignore
                                                       : schema.columns;
    target = std::move(*list);
  }
  if (const auto& e = get("categorical"); e.line != 0) {
    auto list = split_list(e.value, "categorical", e.line);
    if (!list) return list.error();
    schema.categorical.clear();
    schema.categorical_rest = false;
    for (auto& name : *list) {
      if (name == "*") {
        if (schema.categorical_rest) {
          return status(errc::parse_error, line_prefix(e.line) + "categorical: '*' given twice");
        }
        schema.categorical_rest = true;
      } else {
        schema.categorical.push_back(std::move(name));
      }
    }
  }
  if (const auto& e = get("multi_value_separator"); e.line != 0) {
    if (e.value == "none" || e.value.empty()) {
      schema.multi_value_separator.reset();
    } else if (e.value == "tab") {
      schema.multi_value_separator = '\t';
    } else if (e.value.size() == 1) {
      schema.multi_value_separator = e.value[0];
    } else {
      return status(errc::parse_error, line_prefix(e.line) +
                                           "multi_value_separator: expected one character, found " +
                                           in_quotes(e.value));
    }
  }
  if (const auto& e = get("multi_value"); e.line != 0) {
    auto list = split_list(e.value, "multi_value", e.line);
    if (!list) return list.error();
    for (const auto& item : *list) {
      const auto colon = item.rfind(':');
      const std::string column = colon == std::string::npos ? std::string() : std::string(trim(item.substr(0, colon)));
      const std::string sep = colon == std::string::npos ? std::string() : std::string(trim(item.substr(colon + 1)));
      const char c = sep == "tab" ? '\t' : sep == "comma" ? ',' : sep.size() == 1 ? sep[0] : '\0';
      if (column.empty() || c == '\0')
        return status(errc::parse_error, line_prefix(e.line) + "multi_value: expected COLUMN:SEPARATOR (one character, "
                                                               "tab or comma), found " + in_quotes(item));
      schema.multi_value_columns.emplace_back(column, c);
    }
  }
  if (schema.label.empty()) return status(errc::parse_error, "missing key 'label'");
  SS_RETURN_IF_ERROR(validate_schema(schema));
  return schema;
}

status validate_schema(const input_schema& schema) {
  if (schema.format != text_format::delimited) {
    const bool columns = !schema.dense.empty() || !schema.categorical.empty() || schema.categorical_rest ||
                         !schema.ignore.empty() || !schema.columns.empty() || schema.multi_value_separator ||
                         !schema.multi_value_columns.empty();
    if (columns)
      return status(errc::invalid_argument,
                    "format = libsvm and libffm have no named columns: dense, categorical, ignore, columns and "
                    "multi_value do not apply (fields = N sets the features)");
    return status::ok();
  }
  if (schema.label.empty()) return status(errc::invalid_argument, "schema has no label column");
  if (schema.delimiter == '\n' || schema.delimiter == '\r') {
    return status(errc::invalid_argument, "the delimiter cannot be a line break");
  }
  if (schema.multi_value_separator) {
    const char sep = *schema.multi_value_separator;
    if (sep == schema.delimiter || sep == '\n' || sep == '\r') {
      return status(errc::invalid_argument,
                    "multi_value_separator must differ from the delimiter and from line breaks");
    }
  }
  for (const auto& [column, sep] : schema.multi_value_columns) {
    if (sep == schema.delimiter || sep == '\n' || sep == '\r')
      return status(errc::invalid_argument, "multi_value: the separator of column " + in_quotes(column) +
                                                " must differ from the delimiter and from line breaks");
    const auto named = std::count_if(schema.multi_value_columns.begin(), schema.multi_value_columns.end(),
                                     [&column = column](const auto& other) { return other.first == column; });
    if (named > 1) return status(errc::invalid_argument, "multi_value: column " + in_quotes(column) + " named twice");
  }
  if (!schema.header && schema.columns.empty()) {
    return status(errc::invalid_argument, "schema has header = false but names no columns");
  }
  // Every column name at most once across all roles.
  std::unordered_map<std::string_view, column_role> seen;
  auto claim = [&](const std::string& name, column_role role) -> status {
    const auto [it, inserted] = seen.emplace(name, role);
    if (inserted) return status::ok();
    if (it->second == role) {
      return status(errc::invalid_argument, "column " + in_quotes(name) + " listed twice in " + role_name(role));
    }
    return status(errc::invalid_argument, "column " + in_quotes(name) + " listed twice (" +
                                              role_name(it->second) + " and " + role_name(role) + ")");
  };
  SS_RETURN_IF_ERROR(claim(schema.label, column_role::label));
  for (const auto& n : schema.dense) SS_RETURN_IF_ERROR(claim(n, column_role::dense));
  for (const auto& n : schema.categorical) SS_RETURN_IF_ERROR(claim(n, column_role::categorical));
  for (const auto& n : schema.ignore) SS_RETURN_IF_ERROR(claim(n, column_role::ignore));
  return status::ok();
}

result<bound_schema> bind_schema(const input_schema& schema, const std::vector<std::string>& names) {
  SS_RETURN_IF_ERROR(validate_schema(schema));
  std::unordered_map<std::string_view, std::uint32_t> index;
  for (std::uint32_t i = 0; i < names.size(); ++i) {
    const auto [it, inserted] = index.emplace(names[i], i);
    if (!inserted) {
      return status(errc::invalid_argument, "header names column " + in_quotes(names[i]) + " twice (fields " +
                                                std::to_string(it->second + 1) + " and " +
                                                std::to_string(i + 1) + ")");
    }
  }
  bound_schema b;
  b.delimiter = schema.delimiter;
  b.integer_dense = schema.integer_dense;
  b.column_names = names;
  b.columns.assign(names.size(), column_binding{});
  std::vector<bool> assigned(names.size(), false);

  auto find = [&](const std::string& name, const char* what) -> result<std::uint32_t> {
    const auto it = index.find(name);
    if (it == index.end()) {
      return status(errc::invalid_argument, std::string(what) + " column " + in_quotes(name) + " not in header");
    }
    return it->second;
  };
  auto label = find(schema.label, "label");
  if (!label) return label.error();
  b.label_column = *label;
  b.columns[*label] = {column_role::label, 0};
  assigned[*label] = true;
  for (const auto& name : schema.dense) {
    auto col = find(name, "dense");
    if (!col) return col.error();
    b.columns[*col] = {column_role::dense, static_cast<std::uint32_t>(b.dense_columns.size())};
    b.dense_columns.push_back(*col);
    assigned[*col] = true;
  }
  for (const auto& name : schema.categorical) {
    auto col = find(name, "categorical");
    if (!col) return col.error();
    b.columns[*col] = {column_role::categorical, static_cast<std::uint32_t>(b.categorical_columns.size())};
    b.categorical_columns.push_back(*col);
    assigned[*col] = true;
  }
  for (const auto& name : schema.ignore) {
    auto col = find(name, "ignored");
    if (!col) return col.error();
    assigned[*col] = true;
  }
  for (std::uint32_t i = 0; i < names.size(); ++i) {
    if (assigned[i]) continue;
    if (!schema.categorical_rest) {
      return status(errc::invalid_argument, "column " + in_quotes(names[i]) +
                                                " in header has no role (list it under dense, categorical or ignore)");
    }
    b.columns[i] = {column_role::categorical, static_cast<std::uint32_t>(b.categorical_columns.size())};
    b.categorical_columns.push_back(i);
  }
  // Each categorical feature's separator: its own, else the schema's, else none.
  b.categorical_separators.assign(b.categorical_columns.size(), schema.multi_value_separator.value_or('\0'));
  for (const auto& [name, sep] : schema.multi_value_columns) {
    auto col = find(name, "multi_value");
    if (!col) return col.error();
    if (b.columns[*col].role != column_role::categorical)
      return status(errc::invalid_argument, "multi_value: column " + in_quotes(name) +
                                                " is not categorical (only categorical values are split)");
    b.categorical_separators[b.columns[*col].feature] = sep;
  }
  return b;
}

result<bound_schema> bind_schema(const input_schema& schema, std::string_view header_line) {
  return bind_schema(schema, split_header(header_line, schema.delimiter));
}

result<bound_schema> bind_schema(const input_schema& schema) {
  if (schema.format != text_format::delimited) {
    // The sparse formats name no columns: a label, then one categorical feature per field (one
    // multi-valued feature for libSVM without fields).
    const std::uint32_t features = schema.sparse_fields == 0 ? 1 : schema.sparse_fields;
    bound_schema b;
    b.format = schema.format;
    b.sparse_fields = schema.sparse_fields;
    b.delimiter = ' ';
    b.column_names.push_back("label");
    b.columns.push_back({column_role::label, 0});
    for (std::uint32_t f = 0; f < features; ++f) {
      b.column_names.push_back(schema.sparse_fields == 0 ? std::string("features") : "field" + std::to_string(f));
      b.columns.push_back({column_role::categorical, f});
      b.categorical_columns.push_back(f + 1);
    }
    return b;
  }
  if (schema.columns.empty()) {
    return status(errc::invalid_argument, "schema names no columns; bind it to a header line");
  }
  return bind_schema(schema, schema.columns);
}

}  // namespace ss::data
