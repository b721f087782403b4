#include "ss/core/data/follow_batch_reader.hpp"

#include <algorithm>
#include <utility>

namespace ss::data {

result<follow_batch_reader> follow_batch_reader::open(follow_batch_options options) {
  if (options.batch_size == 0) return status(errc::invalid_argument, "batch_size must be positive");
  auto lines = follow_reader::open(options.source, options.lines);
  if (!lines) return lines.error();
  auto rows = row_assembler::open(options.schema, options.bad_rows, options.lines.max_line_bytes);
  if (!rows) return rows.error();
  return follow_batch_reader(std::move(options), std::move(*lines), std::move(*rows));
}

follow_batch_reader::follow_batch_reader(follow_batch_options options, follow_reader lines, row_assembler rows)
    : options_(std::move(options)), lines_(std::move(lines)), rows_(std::move(rows)) {
  rows_.prepare(pending_);
}

result<std::size_t> follow_batch_reader::fill(std::size_t limit) {
  if (!error_.is_ok()) return error_;
  limit = std::min(limit, options_.batch_size);
  caught_up_ = false;
  text_line line;
  while (pending_.size() < limit) {
    auto more = lines_.next(line);
    rows_.set_empty_lines(lines_.counters().empty_lines);
    if (!more) {
      error_ = more.error();
      return error_;
    }
    if (!*more) {
      caught_up_ = true;
      break;
    }
    if (status s = rows_.add(line, pending_); !s.is_ok()) {
      error_ = s;
      return s;
    }
  }
  return pending_.size();
}

void follow_batch_reader::take(example_batch& out) {
  std::swap(out, pending_);
  pending_.reset(out.num_dense, out.num_sparse);
}

status follow_batch_reader::seek(const follow_position& pos) {
  error_ = lines_.seek(pos);
  pending_.reset(pending_.num_dense, pending_.num_sparse);
  if (!error_.is_ok()) return error_;
  const auto headed = lines_.file_in_progress();
  rows_.set_headed_file(headed);
  if (headed && options_.schema.header && !rows_.bound()) {
    // Resumed behind the file's header: read it apart to bind the schema.
    const std::string path = lines_.open_file_path();
    auto first = line_reader::open({path}, options_.lines);
    text_line header;
    auto got = first.is_ok() ? first->next(header) : result<bool>(first.error());
    if (!got) return error_ = got.error().with_context("reading the header of " + path);
    if (!*got) return error_ = status(errc::parse_error, path + ": no header line");
    header.file_index = *headed;
    if (status s = rows_.bind_header(header); !s.is_ok()) return error_ = s;
    rows_.prepare(pending_);
  }
  return status::ok();
}

}  // namespace ss::data
