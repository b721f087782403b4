#include "ss/core/data/row_parser.hpp"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "ss/core/hash.hpp"

namespace ss::data {

const char* to_string(bad_row_reason reason) noexcept {
  switch (reason) {
    case bad_row_reason::field_count: return "field_count";
    case bad_row_reason::label: return "label";
    case bad_row_reason::dense_value: return "dense_value";
    case bad_row_reason::categorical: return "categorical";
    case bad_row_reason::too_long: return "too_long";
    case bad_row_reason::sparse_pair: return "sparse_pair";
  }
  return "unknown";
}

float dense_transform(double x) noexcept {
  return static_cast<float>(std::log1p(x > 0.0 ? x : 0.0));
}

std::string describe_field(std::string_view value) {
  static constexpr std::size_t max_shown = 40;
  static constexpr char hex[] = "0123456789abcdef";
  std::string s = "'";
  const std::size_t shown = value.size() < max_shown ? value.size() : max_shown;
  for (std::size_t i = 0; i < shown; ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      s += static_cast<char>(c);
    } else {
      s += "\\x";
      s += hex[c >> 4];
      s += hex[c & 15];
    }
  }
  if (shown < value.size()) {
    s += "...' (" + std::to_string(value.size()) + " bytes)";
  } else {
    s += "'";
  }
  return s;
}

row_parser::row_parser(bound_schema schema) : schema_(std::move(schema)) {
  fields_.reserve(schema_.num_fields() + 1);
  assert(schema_.categorical_separators.empty() || schema_.categorical_separators.size() == schema_.num_categorical());
  multi_valued_ = std::any_of(schema_.categorical_separators.begin(), schema_.categorical_separators.end(),
                              [](char c) { return c != '\0'; });
  for (std::size_t i = 0; i < small_table_size; ++i) {
    small_log1p_[i] = dense_transform(static_cast<double>(i));
  }
}

status row_parser::fail(bad_row_reason why, std::string message, bad_row_reason* reason) const {
  if (reason != nullptr) *reason = why;
  return status(errc::parse_error, std::move(message));
}

status row_parser::field_error(std::uint32_t column, std::string_view value, const char* what,
                               bad_row_reason why, bad_row_reason* reason) const {
  return fail(why, schema_.column_names[column] + ": " + describe_field(value) + " " + what, reason);
}

namespace {
std::string delimiter_name(char d) { return d == '\t' ? std::string("tab") : "'" + std::string(1, d) + "'"; }
}  // namespace

std::string row_parser::layout_hint(std::string_view line) const {
  if (schema_.format != text_format::delimited) return {};
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  char best = 0;
  std::size_t best_fields = 1;
  for (const char d : {',', '\t', ';', '|'}) {
    if (d == schema_.delimiter) continue;
    const auto fields = static_cast<std::size_t>(std::count(line.begin(), line.end(), d)) + 1;
    if (fields > best_fields) best = d, best_fields = fields;
  }
  if (best == 0) {
    // `label index:value ...`: a libSVM / libFM line (or libFFM's field:index:value).
    const auto space = line.find(' ');
    if (space == std::string_view::npos || line.find(':', space) == std::string_view::npos) return {};
    const auto pair = line.substr(space + 1, line.find(' ', space + 1) - space - 1);
    const bool ffm = std::count(pair.begin(), pair.end(), ':') == 2;
    return std::string("the line reads like ") + (ffm ? "libFFM (label field:index:value ...)" : "libSVM (label index:value ...)") +
           ": name it with --schema " + (ffm ? "and a schema file (format = libffm, fields = N)" : "libsvm") +
           " (docs/data-and-model.md)";
  }
  return "the line splits into " + std::to_string(best_fields) + " fields at " + delimiter_name(best) +
         ", and the schema reads " + std::to_string(schema_.num_fields()) + " fields split at " +
         delimiter_name(schema_.delimiter) +
         ": the file is of another layout; name it with --schema (criteo, avazu, or a schema file: "
         "docs/data-and-model.md)";
}

// libSVM / libFM (`label index:value ...`) and libFFM (`label field:index:value ...`): whitespace
// separated; the label 1 or +1 is a click, 0 or -1 not; a value of 1 makes the index an id of its
// feature, 0 leaves it out (the feature's missing id when nothing else is there).
status row_parser::parse_sparse(std::string_view line, example_batch& out, bad_row_reason* reason) {
  const bool ffm = schema_.format == text_format::libffm;
  const std::uint32_t fields = schema_.sparse_fields;
  pairs_.clear();
  std::size_t pos = 0, tokens = 0;
  std::string_view label_text;
  auto next_token = [&]() -> std::string_view {
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
    const std::size_t start = pos;
    while (pos < line.size() && line[pos] != ' ' && line[pos] != '\t') ++pos;
    return line.substr(start, pos - start);
  };
  label_text = next_token();
  double label_value = 2.0;
  {
    std::string_view t = label_text;
    if (!t.empty() && t[0] == '+') t.remove_prefix(1);
    const auto r = std::from_chars(t.data(), t.data() + t.size(), label_value);
    if (t.empty() || r.ec != std::errc() || r.ptr != t.data() + t.size() ||
        (label_value != 1.0 && label_value != 0.0 && label_value != -1.0))
      return fail(bad_row_reason::label, "label: " + describe_field(label_text) + " is not 1, +1, 0 or -1", reason);
  }
  const float label = label_value == 1.0 ? 1.0f : 0.0f;
  for (std::string_view token = next_token(); !token.empty(); token = next_token()) {
    const std::size_t position = tokens++;
    const auto last = token.rfind(':');
    const auto first = token.find(':');
    const bool shape = last != std::string_view::npos && last > 0 && (ffm ? first < last : first == last);
    if (!shape)
      return fail(bad_row_reason::sparse_pair,
                  describe_field(token) + " is not " + (ffm ? "field:index:value" : "index:value"), reason);
    const std::string_view value_text = token.substr(last + 1);
    double value = -1.0;
    const auto vr = std::from_chars(value_text.data(), value_text.data() + value_text.size(), value);
    if (vr.ec != std::errc() || vr.ptr != value_text.data() + value_text.size() || (value != 0.0 && value != 1.0))
      return fail(bad_row_reason::sparse_pair,
                  "value of " + describe_field(token) +
                      " is not 0 or 1: ids are present or absent (the model has no weight per id)",
                  reason);
    std::uint32_t feature = 0;
    std::string_view index = token.substr(0, last);
    if (ffm) {
      const std::string_view field_text = token.substr(0, first);
      const auto fr = std::from_chars(field_text.data(), field_text.data() + field_text.size(), feature);
      if (fr.ec != std::errc() || fr.ptr != field_text.data() + field_text.size() || feature >= fields)
        return fail(bad_row_reason::sparse_pair,
                    "field of " + describe_field(token) + " is not a number below fields = " + std::to_string(fields),
                    reason);
      index = token.substr(first + 1, last - first - 1);
    } else if (fields > 0) {
      feature = static_cast<std::uint32_t>(position);
      if (feature >= fields) continue;  // counted below: the row has too many pairs
    }
    if (index.empty()) return fail(bad_row_reason::sparse_pair, describe_field(token) + " has no index", reason);
    if (value == 1.0) pairs_.emplace_back(feature, index);
  }
  if (!ffm && fields > 0 && tokens != fields)
    return fail(bad_row_reason::field_count,
                "expected " + std::to_string(fields) + " index:value pairs (fields = " + std::to_string(fields) +
                    "), found " + std::to_string(tokens),
                reason);
  // Every feature gets its ids in row order, or its missing id.
  std::stable_sort(pairs_.begin(), pairs_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  out.begin_example(label);
  const std::uint32_t features = schema_.num_categorical();
  std::size_t k = 0;
  for (std::uint32_t f = 0; f < features; ++f) {
    const std::size_t from = k;
    for (; k < pairs_.size() && pairs_[k].first == f; ++k) out.add_id(feature_id(f, pairs_[k].second));
    if (k == from) out.add_id(feature_id(f, std::string_view()));
    out.end_feature();
  }
  return status::ok();
}

status row_parser::parse(std::string_view line, example_batch& out, bad_row_reason* reason) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (schema_.format != text_format::delimited) return parse_sparse(line, out, reason);

  // Split. Stops collecting after one field too many; the rest is only counted for the message.
  const std::size_t expected = schema_.num_fields();
  const char delim = schema_.delimiter;
  fields_.clear();
  const char* p = line.data();
  const char* const end = p + line.size();
  bool cut_short = false;  // stopped splitting with bytes left
  while (true) {
    // memchr must not see a null pointer, even for zero bytes (an empty default string_view).
    const auto* d = p < end ? static_cast<const char*>(std::memchr(p, delim, static_cast<std::size_t>(end - p)))
                            : nullptr;
    if (d == nullptr) {
      fields_.emplace_back(p, static_cast<std::size_t>(end - p));
      break;
    }
    fields_.emplace_back(p, static_cast<std::size_t>(d - p));
    p = d + 1;
    if (fields_.size() > expected) {
      cut_short = true;
      break;
    }
  }
  if (fields_.size() != expected) {
    std::size_t found = fields_.size();
    if (cut_short) {
      // Every collected field ended in a delimiter; [p, end) holds one more field per delimiter
      // left, plus one.
      found = fields_.size() + 1;
      for (const char* q = p; q < end; ++q) found += (*q == delim) ? 1 : 0;
    }
    return fail(bad_row_reason::field_count,
                "expected " + std::to_string(expected) + " fields, found " + std::to_string(found), reason);
  }

  // Label: "0" or "1" (also "0.0", "1.0" and other spellings of exactly 0 or 1).
  const std::string_view label_text = fields_[schema_.label_column];
  float label = 0.0f;
  if (label_text.size() == 1 && (label_text[0] == '0' || label_text[0] == '1')) {
    label = label_text[0] == '1' ? 1.0f : 0.0f;
  } else {
    double v = -1.0;
    const char* b = label_text.data();
    const char* e = b + label_text.size();
    const bool digit_first = !label_text.empty() && label_text[0] >= '0' && label_text[0] <= '9';
    const auto r = digit_first ? std::from_chars(b, e, v) : std::from_chars_result{b, std::errc::invalid_argument};
    if (r.ec != std::errc() || r.ptr != e || (v != 0.0 && v != 1.0)) {
      return field_error(schema_.label_column, label_text, "is not 0 or 1", bad_row_reason::label, reason);
    }
    label = v == 1.0 ? 1.0f : 0.0f;
  }

  const std::size_t dense_before = out.dense.size();
  const std::size_t ids_before = out.ids.size();
  const std::size_t offsets_before = out.offsets.size();
  out.begin_example(label);

  for (const std::uint32_t col : schema_.dense_columns) {
    const std::string_view text = fields_[col];
    if (text.empty()) {
      out.add_dense(0.0f);
      continue;
    }
    const char* b = text.data();
    const char* e = b + text.size();
    if (schema_.integer_dense) {
      std::int64_t v = 0;
      const auto r = std::from_chars(b, e, v);
      if (r.ec != std::errc() || r.ptr != e) {
        out.abandon_example(dense_before, ids_before, offsets_before);
        return field_error(col, text,
                           r.ptr == e && r.ec == std::errc::result_out_of_range
                               ? "is out of the 64-bit integer range"
                               : "is not an integer",
                           bad_row_reason::dense_value, reason);
      }
      if (v < 0) {
        out.add_dense(0.0f);
      } else if (static_cast<std::uint64_t>(v) < small_table_size) {
        out.add_dense(small_log1p_[static_cast<std::size_t>(v)]);
      } else {
        out.add_dense(dense_transform(static_cast<double>(v)));
      }
    } else {
      double v = 0.0;
      // from_chars accepts no leading '+'; a CSV may well have one.
      if (*b == '+' && e - b > 1 && b[1] != '-' && b[1] != '+') ++b;
      const auto r = std::from_chars(b, e, v);
      if (r.ec != std::errc() || r.ptr != e || !std::isfinite(v)) {
        out.abandon_example(dense_before, ids_before, offsets_before);
        const char* what = r.ptr != e                             ? "is not a number"
                           : r.ec == std::errc::result_out_of_range ? "is out of range"
                           : r.ec == std::errc()                    ? "is not a finite number"
                                                                    : "is not a number";
        return field_error(col, text, what, bad_row_reason::dense_value, reason);
      }
      out.add_dense(dense_transform(v));
    }
  }

  const std::uint32_t num_cat = schema_.num_categorical();
  if (!multi_valued_) {
    for (std::uint32_t f = 0; f < num_cat; ++f) {
      out.add_id(feature_id(f, fields_[schema_.categorical_columns[f]]));
      out.end_feature();
    }
  } else {
    for (std::uint32_t f = 0; f < num_cat; ++f) {
      const std::string_view text = fields_[schema_.categorical_columns[f]];
      const char sep = schema_.categorical_separators[f];
      if (sep == '\0') {
        out.add_id(feature_id(f, text));
        out.end_feature();
        continue;
      }
      bool any = false;
      std::size_t start = 0;
      while (start <= text.size()) {
        std::size_t stop = text.find(sep, start);
        if (stop == std::string_view::npos) stop = text.size();
        if (stop > start) {
          out.add_id(feature_id(f, text.substr(start, stop - start)));
          any = true;
        }
        start = stop + 1;
      }
      if (!any) out.add_id(feature_id(f, std::string_view()));
      out.end_feature();
    }
    // Offsets are 32-bit: a batch cannot address more ids than that.
    if (out.ids.size() > std::numeric_limits<std::uint32_t>::max()) {
      out.abandon_example(dense_before, ids_before, offsets_before);
      return fail(bad_row_reason::categorical, "too many categorical ids in one batch", reason);
    }
  }
  return status::ok();
}

}  // namespace ss::data
