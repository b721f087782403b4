#include "ss/core/serving/request_rows.hpp"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

namespace ss::serving {

const char* to_string(request_problem problem) noexcept {
  switch (problem) {
    case request_problem::bad_row: return "bad_row";
    case request_problem::bad_json: return "bad_json";
    case request_problem::bad_header: return "bad_header";
    case request_problem::no_rows: return "no_rows";
    case request_problem::too_many_rows: return "too_many_rows";
  }
  return "unknown";
}

namespace {

request_error fail(request_problem problem, std::string message) {
  request_error e;
  e.problem = problem;
  e.message = std::move(message);
  return e;
}

std::string_view trim_cr(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

std::size_t count_fields(std::string_view line, char delimiter) {
  return static_cast<std::size_t>(std::count(line.begin(), line.end(), delimiter)) + 1;
}

std::string header_without_bom(std::string_view header) {
  static constexpr std::string_view bom = "\xEF\xBB\xBF";
  header = trim_cr(header);
  if (header.substr(0, bom.size()) == bom) header.remove_prefix(bom.size());
  return std::string(header);
}

// A minimal reader of the one JSON shape a request has: an object whose members are "rows" (an
// array of strings) and "header" (a string). Builds no document: the strings are the only copies.
class request_json {
 public:
  explicit request_json(std::string_view text) : s_(text) {}

  std::optional<request_error> read(std::size_t max_rows, std::vector<std::string>& rows,
                                    std::optional<std::string>& header) {
    bool seen_rows = false;
    skip_space();
    if (!eat('{')) return error("expected an object ({\"rows\": [...]})");
    skip_space();
    if (!eat('}')) {
      for (;;) {
        skip_space();
        std::string key;
        if (!string(key)) return error("expected a member name");
        skip_space();
        if (!eat(':')) return error("expected ':' after \"" + key + "\"");
        skip_space();
        if (key == "rows" && !seen_rows) {
          seen_rows = true;
          if (auto e = read_rows(max_rows, rows)) return e;
        } else if (key == "header" && !header) {
          header.emplace();
          if (!string(*header)) return error("\"header\" is not a string");
        } else if (key == "rows" || key == "header") {
          return error("\"" + key + "\" is given twice");
        } else {
          return error("unknown member \"" + key + "\" (a request has \"rows\" and, for a schema with a header line, "
                       "\"header\")");
        }
        skip_space();
        if (eat('}')) break;
        if (!eat(',')) return error("expected ',' or '}'");
      }
    }
    skip_space();
    if (pos_ != s_.size()) return error("text after the object");
    if (!seen_rows) return fail(request_problem::bad_json, "the request has no \"rows\" member");
    return std::nullopt;
  }

 private:
  std::optional<request_error> read_rows(std::size_t max_rows, std::vector<std::string>& rows) {
    if (!eat('[')) return error("\"rows\" is not an array");
    skip_space();
    if (eat(']')) return std::nullopt;
    for (;;) {
      skip_space();
      if (rows.size() == max_rows)
        return fail(request_problem::too_many_rows, "more than " + std::to_string(max_rows) +
                                                        " rows in one request (--max-request-rows)");
      rows.emplace_back();
      if (!string(rows.back())) return error("rows[" + std::to_string(rows.size() - 1) + "] is not a string");
      skip_space();
      if (eat(']')) return std::nullopt;
      if (!eat(',')) return error("expected ',' or ']' in \"rows\"");
    }
  }

  std::optional<request_error> error(const std::string& what) const {
    return fail(request_problem::bad_json, "not a request in JSON: " + what + " at byte " + std::to_string(pos_));
  }

  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool hex4(unsigned& out) {
    if (pos_ + 4 > s_.size()) return false;
    out = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s_[pos_++];
      out <<= 4;
      if (c >= '0' && c <= '9') out |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') out |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') out |= static_cast<unsigned>(c - 'A' + 10);
      else return false;
    }
    return true;
  }
  static void utf8(unsigned cp, std::string& out) {
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
  // A JSON string, unescaped into `out`.
  bool string(std::string& out) {
    if (!eat('"')) return false;
    for (;;) {
      const std::size_t run = pos_;
      while (pos_ < s_.size() && s_[pos_] != '"' && s_[pos_] != '\\' && static_cast<unsigned char>(s_[pos_]) >= 0x20)
        ++pos_;
      out.append(s_.data() + run, pos_ - run);
      if (pos_ >= s_.size() || static_cast<unsigned char>(s_[pos_]) < 0x20) return false;
      if (s_[pos_++] == '"') return true;
      if (pos_ >= s_.size()) return false;
      const char e = s_[pos_++];
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
          if (!hex4(cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00) {  // a surrogate pair
            unsigned low = 0;
            if (!eat('\\') || !eat('u') || !hex4(low) || low < 0xDC00 || low >= 0xE000) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            return false;
          }
          utf8(cp, out);
          break;
        }
        default: return false;
      }
    }
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

// The schema bound to the request's header (or to none), as the parser's.
result<data::bound_schema> bind_to(const data::input_schema& schema, const std::string& header, bool* label_in_rows) {
  std::vector<std::string> names;
  std::size_t start = 0;
  for (;;) {
    const std::size_t stop = std::min(header.find(schema.delimiter, start), header.size());
    names.push_back(header.substr(start, stop - start));
    if (stop == header.size()) break;
    start = stop + 1;
  }
  *label_in_rows = std::find(names.begin(), names.end(), schema.label) != names.end();
  if (!*label_in_rows) names.push_back(schema.label);  // rows get a label column at their end
  return data::bind_schema(schema, names);
}

}  // namespace

struct request_reader::impl {
  data::input_schema schema;
  std::uint32_t num_dense = 0;
  std::uint32_t num_categorical = 0;
  // Bound once without a header; with one, to the last request's header (most requests repeat it).
  std::optional<data::row_parser> parser;
  std::optional<std::string> bound_header;
  bool label_in_rows = true;  // headed schema: whether the header (and so every row) has the label
  std::string labelled;       // a row given its label
  // Delimited without a header: whether this request's rows carry the label (its first row says).
  std::optional<bool> rows_labelled;
  std::vector<std::string> json_rows;

  status bind(const std::optional<std::string_view>& header_line);
  // Parses one row into `out`; `row` and `line_number` name it in errors (line 0: not a text body).
  std::optional<request_error> read_row(std::string_view row, std::size_t row_number, std::size_t line_number,
                                        data::example_batch& out);
  std::optional<request_error> bad_row(std::size_t row, std::size_t line_number, data::bad_row_reason reason,
                                       const std::string& what) const {
    request_error e;
    e.problem = request_problem::bad_row;
    e.row = row;
    e.row_reason = reason;
    e.message = "row " + std::to_string(row) + (line_number > 0 ? " (line " + std::to_string(line_number) + ")" : "") +
                ": " + what;
    return e;
  }
};

status request_reader::impl::bind(const std::optional<std::string_view>& header_line) {
  const bool headed = schema.header && schema.format == data::text_format::delimited;
  std::string header;
  if (headed) {
    header = header_without_bom(header_line.value_or(std::string_view()));
    if (bound_header && *bound_header == header) return status::ok();
    bound_header.reset();
  }
  bool with_label = true;
  auto bound = headed ? bind_to(schema, header, &with_label) : data::bind_schema(schema);
  if (!bound.is_ok()) return bound.error();
  if (bound->num_dense() != num_dense || bound->num_categorical() != num_categorical)
    return status(errc::invalid_argument, "the schema reads " + std::to_string(bound->num_dense()) + " dense and " +
                                              std::to_string(bound->num_categorical()) +
                                              " categorical features, the model has " + std::to_string(num_dense) +
                                              " and " + std::to_string(num_categorical));
  parser.emplace(std::move(*bound));
  label_in_rows = with_label;
  if (headed) bound_header = std::move(header);
  return status::ok();
}

std::optional<request_error> request_reader::impl::read_row(std::string_view row, std::size_t row_number,
                                                            std::size_t line_number, data::example_batch& out) {
  row = trim_cr(row);
  const data::bound_schema& b = parser->schema();
  std::string_view text = row;
  if (b.format != data::text_format::delimited) {
    // libSVM / libFFM: a row that starts with a pair has no label.
    const std::size_t first_end = row.find_first_of(" \t");
    if (row.substr(0, first_end).find(':') != std::string_view::npos) {
      labelled.assign("0 ").append(row);
      text = labelled;
    }
  } else {
    const std::size_t fields = count_fields(row, b.delimiter);
    const std::size_t all = b.num_fields();
    const char d = b.delimiter;
    if (schema.header) {
      const std::size_t expected = label_in_rows ? all : all - 1;
      if (fields != expected)
        return bad_row(row_number, line_number, data::bad_row_reason::field_count,
                       "expected " + std::to_string(expected) + " fields (as the header names), found " +
                           std::to_string(fields));
      if (!label_in_rows) {
        labelled.assign(row).append(1, d).append("0");
        text = labelled;
      }
    } else if (rows_labelled && fields != (*rows_labelled ? all : all - 1)) {
      // The request's first row decided: every row carries the label, or none does, so that a row
      // that lost a field is not read as a row without its label.
      return bad_row(row_number, line_number, data::bad_row_reason::field_count,
                     "expected " + std::to_string(*rows_labelled ? all : all - 1) + " fields, as the request's first row (" +
                         (*rows_labelled ? "with" : "without") + " the label column '" +
                         b.column_names[b.label_column] + "'), found " + std::to_string(fields));
    } else if (fields + 1 == all) {
      rows_labelled = false;
      // No label column: a 0 where it belongs, before the delimiter that ends the field before it.
      std::size_t at = 0;
      if (b.label_column > 0) {
        at = row.size();
        std::size_t seen = 0;
        for (std::size_t i = 0; i < row.size(); ++i)
          if (row[i] == d && ++seen == b.label_column) {
            at = i;
            break;
          }
        labelled.assign(row.substr(0, at)).append(1, d).append("0").append(row.substr(at));
      } else {
        labelled.assign("0").append(1, d).append(row);
      }
      text = labelled;
    } else if (fields != all) {
      return bad_row(row_number, line_number, data::bad_row_reason::field_count,
                     "expected " + std::to_string(all) + " fields (" + std::to_string(all - 1) +
                         " without the label column '" + b.column_names[b.label_column] + "'), found " +
                         std::to_string(fields));
    } else {
      rows_labelled = true;
    }
  }
  data::bad_row_reason reason = data::bad_row_reason::field_count;
  if (auto st = parser->parse(text, out, &reason); !st.is_ok())
    return bad_row(row_number, line_number, reason, st.message());
  return std::nullopt;
}

request_reader::request_reader(std::unique_ptr<impl> state) : impl_(std::move(state)) {}
request_reader::request_reader(request_reader&&) noexcept = default;
request_reader& request_reader::operator=(request_reader&&) noexcept = default;
request_reader::~request_reader() = default;

result<request_reader> request_reader::create(const data::input_schema& schema, std::uint32_t num_dense,
                                              std::uint32_t num_categorical) {
  SS_RETURN_IF_ERROR(data::validate_schema(schema));
  auto state = std::make_unique<impl>();
  state->schema = schema;
  state->num_dense = num_dense;
  state->num_categorical = num_categorical;
  if (!schema.header || schema.format != data::text_format::delimited)
    SS_RETURN_IF_ERROR(state->bind(std::nullopt).with_context("the model's schema"));
  return request_reader(std::move(state));
}

bool request_reader::needs_header() const {
  return impl_->schema.header && impl_->schema.format == data::text_format::delimited;
}

std::optional<request_error> request_reader::read_text(std::string_view body, std::size_t max_rows,
                                                       data::example_batch& out) {
  impl& s = *impl_;
  bool header_pending = needs_header();
  s.rows_labelled.reset();
  std::size_t rows = 0, line_number = 0, start = 0;
  out.reset(s.num_dense, s.num_categorical);
  while (start < body.size()) {
    std::size_t stop = body.find('\n', start);
    if (stop == std::string_view::npos) stop = body.size();
    const std::string_view line = body.substr(start, stop - start);
    start = stop + 1;
    ++line_number;
    if (trim_cr(line).empty()) continue;
    if (header_pending) {
      header_pending = false;
      if (auto st = s.bind(line); !st.is_ok())
        return fail(request_problem::bad_header, "the header line (line " + std::to_string(line_number) +
                                                     ") does not fit the model's schema: " + st.message());
      continue;
    }
    if (rows == max_rows)
      return fail(request_problem::too_many_rows,
                  "more than " + std::to_string(max_rows) + " rows in one request (--max-request-rows)");
    if (auto e = s.read_row(line, ++rows, line_number, out)) return e;
  }
  if (header_pending) return fail(request_problem::bad_header, "the request has no header line (the model's schema "
                                                               "reads one: send it as the body's first line)");
  if (rows == 0) return fail(request_problem::no_rows, "the request has no rows");
  return std::nullopt;
}

std::optional<request_error> request_reader::read_json(std::string_view body, std::size_t max_rows,
                                                       data::example_batch& out) {
  impl& s = *impl_;
  s.json_rows.clear();
  std::optional<std::string> header;
  if (auto e = request_json(body).read(max_rows, s.json_rows, header)) return e;
  if (needs_header()) {
    if (!header)
      return fail(request_problem::bad_header, "the request has no \"header\" (the model's schema reads a header "
                                               "line: send it as \"header\")");
    if (auto st = s.bind(*header); !st.is_ok())
      return fail(request_problem::bad_header, "\"header\" does not fit the model's schema: " + st.message());
  } else if (header) {
    return fail(request_problem::bad_header, "the request has a \"header\", and the model's schema reads none");
  }
  if (s.json_rows.empty()) return fail(request_problem::no_rows, "the request has no rows");
  s.rows_labelled.reset();
  out.reset(s.num_dense, s.num_categorical);
  out.reserve(s.json_rows.size());
  for (std::size_t i = 0; i < s.json_rows.size(); ++i)
    if (auto e = s.read_row(s.json_rows[i], i + 1, 0, out)) return e;
  s.json_rows.clear();
  return std::nullopt;
}

}  // namespace ss::serving
