#include "ss/core/data/batch_reader.hpp"

#include <optional>
#include <utility>

namespace ss::data {

result<batch_reader> batch_reader::open(batch_reader_options options) {
  if (options.batch_size == 0) return status(errc::invalid_argument, "batch_size must be positive");
  if (!(options.bad_rows.max_bad_fraction >= 0.0)) {
    return status(errc::invalid_argument, "max_bad_fraction must be >= 0");
  }
  auto lines = line_reader::open(options.paths, options.lines, options.entries);
  if (!lines) return lines.error();

  if (!options.schema.header) {
    auto rows = row_assembler::open(options.schema, options.bad_rows, options.lines.max_line_bytes);
    if (!rows) return rows.error();
    return batch_reader(std::move(options), std::move(*lines), std::move(*rows));
  }

  // The first file's header binds the schema now: a job whose files hold none fails at once.
  // When reading does not begin at that file's start, the header is read on the side, and each
  // file read from its start checks its own.
  const bool header_aside =
      !options.entries.empty() && (options.entries[0].skip || options.entries[0].at.byte_offset > 0);
  std::optional<line_reader> aside;
  if (header_aside) {
    auto first = line_reader::open({options.paths[0]}, options.lines);
    if (!first) return first.error();
    aside.emplace(std::move(*first));
  }
  line_reader& header_lines = header_aside ? *aside : *lines;
  text_line line;
  auto more = header_lines.next(line);
  if (!more) return more.error();
  if (!*more) return status(errc::parse_error, "no header line: every input file is empty");
  if (line.too_long) {
    return status(errc::parse_error, where(line) + ": header line is longer than " +
                                         std::to_string(options.lines.max_line_bytes) + " bytes");
  }
  const std::string header(strip_bom(line.text));
  auto bound = bind_schema(options.schema, header);
  if (!bound) return bound.error().with_context(where(line));
  row_assembler rows(options.schema, row_parser(std::move(*bound)), options.bad_rows, options.lines.max_line_bytes,
                     header, std::string(line.path), line.file_index);
  if (header_aside) rows.set_headed_file(std::nullopt);
  return batch_reader(std::move(options), std::move(*lines), std::move(rows));
}

batch_reader::batch_reader(batch_reader_options options, line_reader lines, row_assembler rows)
    : options_(std::move(options)), lines_(std::move(lines)), rows_(std::move(rows)) {}

result<bool> batch_reader::next(example_batch& out) {
  if (!error_.is_ok()) return error_;
  rows_.prepare(out);
  out.reserve(options_.batch_size);
  text_line line;
  while (out.size() < options_.batch_size) {
    auto more = lines_.next(line);
    rows_.set_empty_lines(lines_.empty_lines());
    if (!more) {
      error_ = more.error();
      return error_;
    }
    if (!*more) {
      if (status s = rows_.check_at_end(); !s.is_ok()) {
        error_ = s;
        return s;
      }
      return !out.empty();
    }
    if (status s = rows_.add(line, out); !s.is_ok()) {
      error_ = s;
      return s;
    }
  }
  return true;
}

status batch_reader::seek(const line_position& pos) {
  error_ = lines_.seek(pos);
  // Mid-file, the file's header is behind us; at offset 0 it is the next line.
  if (pos.byte_offset > 0) {
    rows_.set_headed_file(pos.file_index);
  } else {
    rows_.set_headed_file(std::nullopt);
  }
  return error_;
}

}  // namespace ss::data
