#include "ss/core/data/batch_reader.hpp"

#include <cstdio>
#include <utility>

namespace ss::data {
namespace {

std::string_view strip_bom(std::string_view s) {
  if (s.size() >= 3 && s.substr(0, 3) == "\xEF\xBB\xBF") s.remove_prefix(3);
  return s;
}

std::string where(const text_line& line) {
  return std::string(line.path) + ":" + std::to_string(line.line_number);
}

}  // namespace

result<batch_reader> batch_reader::open(batch_reader_options options) {
  if (options.batch_size == 0) return status(errc::invalid_argument, "batch_size must be positive");
  if (!(options.bad_rows.max_bad_fraction >= 0.0)) {
    return status(errc::invalid_argument, "max_bad_fraction must be >= 0");
  }
  auto lines = line_reader::open(options.paths, options.lines);
  if (!lines) return lines.error();

  if (!options.schema.header) {
    auto bound = bind_schema(options.schema);
    if (!bound) return bound.error();
    row_parser parser(std::move(*bound));
    return batch_reader(std::move(options), std::move(*lines), std::move(parser), {}, std::nullopt);
  }

  text_line line;
  auto more = lines->next(line);
  if (!more) return more.error();
  if (!*more) return status(errc::parse_error, "no header line: every input file is empty");
  if (line.too_long) {
    return status(errc::parse_error, where(line) + ": header line is longer than " +
                                         std::to_string(options.lines.max_line_bytes) + " bytes");
  }
  const std::string header(strip_bom(line.text));
  auto bound = bind_schema(options.schema, header);
  if (!bound) return bound.error().with_context(where(line));
  row_parser parser(std::move(*bound));
  const std::uint32_t headed = line.file_index;
  batch_reader reader(std::move(options), std::move(*lines), std::move(parser), header, headed);
  reader.header_path_ = reader.lines_.path(headed);
  reader.counters_.header_lines = 1;
  return reader;
}

batch_reader::batch_reader(batch_reader_options options, line_reader lines, row_parser parser,
                           std::string header, std::optional<std::uint32_t> headed_file)
    : options_(std::move(options)),
      lines_(std::move(lines)),
      parser_(std::move(parser)),
      header_(std::move(header)),
      headed_file_(headed_file) {}

void batch_reader::count_bad(const text_line& line, bad_row_reason reason, const std::string& message) {
  ++counters_.bad;
  ++counters_.bad_by_reason[static_cast<std::size_t>(reason)];
  if (reports_.size() < options_.bad_rows.report_first || first_bad_.empty()) {
    std::string report = where(line) + ": " + message;
    if (first_bad_.empty()) {
      first_bad_ = report;
      if (reason == bad_row_reason::field_count) layout_hint_ = parser_.layout_hint(line.text);
    }
    if (reports_.size() < options_.bad_rows.report_first) reports_.push_back(std::move(report));
  }
}

status batch_reader::check_bad_fraction(bool at_end) const {
  const auto& policy = options_.bad_rows;
  if (!at_end && counters_.rows_read < policy.grace_rows) return status::ok();
  const double limit = policy.max_bad_fraction * static_cast<double>(counters_.rows_read);
  if (static_cast<double>(counters_.bad) <= limit) return status::ok();
  char percent[32];
  std::snprintf(percent, sizeof percent, "%g%%", policy.max_bad_fraction * 100.0);
  return status(errc::too_many_bad_rows,
                std::to_string(counters_.bad) + " of " + std::to_string(counters_.rows_read) +
                    " rows read are bad, over the limit of " + percent + " (" +
                    std::to_string(static_cast<std::uint64_t>(limit)) + " rows); first bad row: " + first_bad_ +
                    (layout_hint_.empty() ? std::string() : "; " + layout_hint_));
}

result<bool> batch_reader::next(example_batch& out) {
  if (!error_.is_ok()) return error_;
  parser_.prepare(out);
  out.reserve(options_.batch_size);
  const bool has_header = options_.schema.header;
  text_line line;
  while (out.size() < options_.batch_size) {
    auto more = lines_.next(line);
    counters_.empty_lines = lines_.empty_lines();
    if (!more) {
      error_ = more.error();
      return error_;
    }
    if (!*more) {
      if (status s = check_bad_fraction(true); !s.is_ok()) {
        error_ = s;
        return s;
      }
      return !out.empty();
    }
    if (has_header && headed_file_ != line.file_index) {
      headed_file_ = line.file_index;
      ++counters_.header_lines;
      if (line.too_long || strip_bom(line.text) != header_) {
        error_ = status(errc::parse_error, where(line) + ": header differs from the header of " +
                                               header_path_);
        return error_;
      }
      continue;
    }
    ++counters_.rows_read;
    bool bad = true;
    if (line.too_long) {
      count_bad(line, bad_row_reason::too_long,
                "line is longer than the limit of " + std::to_string(options_.lines.max_line_bytes) +
                    " bytes (" + std::to_string(line.length) + " bytes)");
    } else {
      bad_row_reason why = bad_row_reason::field_count;
      if (status s = parser_.parse(line.text, out, &why); s.is_ok()) {
        ++counters_.good;
        bad = false;
      } else {
        count_bad(line, why, s.message());
      }
    }
    // The limit applies from grace_rows on: check on every bad row and once when reaching it.
    if (bad || counters_.rows_read == options_.bad_rows.grace_rows) {
      if (status s = check_bad_fraction(false); !s.is_ok()) {
        error_ = s;
        return s;
      }
    }
  }
  return true;
}

status batch_reader::seek(const line_position& pos) {
  error_ = lines_.seek(pos);
  // Mid-file, the file's header is behind us; at offset 0 it is the next line.
  if (pos.byte_offset > 0) {
    headed_file_ = pos.file_index;
  } else {
    headed_file_.reset();
  }
  return error_;
}

}  // namespace ss::data
