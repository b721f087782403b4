#include "ss/core/data/row_assembler.hpp"

#include <cstdio>
#include <utility>

namespace ss::data {

std::string_view strip_bom(std::string_view s) {
  if (s.size() >= 3 && s.substr(0, 3) == "\xEF\xBB\xBF") s.remove_prefix(3);
  return s;
}

std::string where(const text_line& line) { return std::string(line.path) + ":" + std::to_string(line.line_number); }

row_assembler::row_assembler(const input_schema& schema, bad_row_policy policy, std::size_t max_line_bytes)
    : schema_(schema), policy_(policy), max_line_bytes_(max_line_bytes) {}

row_assembler::row_assembler(const input_schema& schema, row_parser parser, bad_row_policy policy,
                             std::size_t max_line_bytes, std::string header, std::string header_path,
                             std::uint32_t headed_file)
    : schema_(schema),
      policy_(policy),
      max_line_bytes_(max_line_bytes),
      parser_(std::move(parser)),
      header_(std::move(header)),
      header_path_(std::move(header_path)),
      headed_file_(headed_file) {
  counters_.header_lines = 1;
}

result<row_assembler> row_assembler::open(const input_schema& schema, bad_row_policy policy,
                                          std::size_t max_line_bytes) {
  if (!(policy.max_bad_fraction >= 0.0)) return status(errc::invalid_argument, "max_bad_fraction must be >= 0");
  row_assembler rows(schema, policy, max_line_bytes);
  if (!schema.header) {
    auto bound = bind_schema(schema);
    if (!bound) return bound.error();
    rows.parser_.emplace(std::move(*bound));
  }
  return rows;
}

void row_assembler::prepare(example_batch& out) const {
  if (parser_) parser_->prepare(out);
}

status row_assembler::bind(const text_line& line) {
  if (line.too_long) {
    return status(errc::parse_error,
                  where(line) + ": header line is longer than " + std::to_string(max_line_bytes_) + " bytes");
  }
  const std::string header(strip_bom(line.text));
  auto bound = bind_schema(schema_, header);
  if (!bound) return bound.error().with_context(where(line));
  parser_.emplace(std::move(*bound));
  header_ = header;
  header_path_ = std::string(line.path);
  return status::ok();
}

status row_assembler::bind_header(const text_line& header) {
  SS_RETURN_IF_ERROR(bind(header));
  headed_file_ = header.file_index;
  ++counters_.header_lines;
  return status::ok();
}

void row_assembler::count_bad(const text_line& line, bad_row_reason reason, const std::string& message) {
  ++counters_.bad;
  ++counters_.bad_by_reason[static_cast<std::size_t>(reason)];
  if (reports_.size() < policy_.report_first || first_bad_.empty()) {
    std::string report = where(line) + ": " + message;
    if (first_bad_.empty()) {
      first_bad_ = report;
      if (reason == bad_row_reason::field_count) layout_hint_ = parser_->layout_hint(line.text);
    }
    if (reports_.size() < policy_.report_first) reports_.push_back(std::move(report));
  }
}

status row_assembler::check_bad_fraction(bool at_end) const {
  if (!at_end && counters_.rows_read < policy_.grace_rows) return status::ok();
  const double limit = policy_.max_bad_fraction * static_cast<double>(counters_.rows_read);
  if (static_cast<double>(counters_.bad) <= limit) return status::ok();
  char percent[32];
  std::snprintf(percent, sizeof percent, "%g%%", policy_.max_bad_fraction * 100.0);
  return status(errc::too_many_bad_rows,
                std::to_string(counters_.bad) + " of " + std::to_string(counters_.rows_read) +
                    " rows read are bad, over the limit of " + percent + " (" +
                    std::to_string(static_cast<std::uint64_t>(limit)) + " rows); first bad row: " + first_bad_ +
                    (layout_hint_.empty() ? std::string() : "; " + layout_hint_));
}

status row_assembler::add(const text_line& line, example_batch& out) {
  if (schema_.header && headed_file_ != line.file_index && !line.past_header) {
    headed_file_ = line.file_index;
    ++counters_.header_lines;
    if (!parser_) {
      SS_RETURN_IF_ERROR(bind(line));
      parser_->prepare(out);
      return status::ok();
    }
    if (line.too_long || strip_bom(line.text) != header_) {
      return status(errc::parse_error, where(line) + ": header differs from the header of " + header_path_);
    }
    return status::ok();
  }
  ++counters_.rows_read;
  bool bad = true;
  if (line.too_long) {
    count_bad(line, bad_row_reason::too_long,
              "line is longer than the limit of " + std::to_string(max_line_bytes_) + " bytes (" +
                  std::to_string(line.length) + " bytes)");
  } else {
    bad_row_reason why = bad_row_reason::field_count;
    if (status s = parser_->parse(line.text, out, &why); s.is_ok()) {
      ++counters_.good;
      bad = false;
    } else {
      count_bad(line, why, s.message());
    }
  }
  // The limit applies from grace_rows on: check on every bad row and once when reaching it.
  if (bad || counters_.rows_read == policy_.grace_rows) return check_bad_fraction(false);
  return status::ok();
}

}  // namespace ss::data
