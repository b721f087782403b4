// Turns text lines into examples, one line at a time: a file's header (its first line, with a
// header schema), one good example, or one counted bad row. Shared by the readers of fixed files
// (batch_reader) and of followed input (follow_batch_reader), so both account for every line the
// same way and stop at the same bad-row limit.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ss/core/data/example_batch.hpp"
#include "ss/core/data/input_schema.hpp"
#include "ss/core/data/line_reader.hpp"
#include "ss/core/data/row_parser.hpp"
#include "ss/core/status.hpp"

namespace ss::data {

struct bad_row_policy {
  double max_bad_fraction = 0.01;  // more bad rows than this fraction of the rows read is an error
  std::uint64_t grace_rows = 1000;  // the fraction is checked only after this many rows (or at the end)
  std::size_t report_first = 10;    // how many bad rows to keep as "path:line: message"
};

struct read_counters {
  std::uint64_t rows_read = 0;     // data lines seen: good + bad
  std::uint64_t good = 0;          // examples produced
  std::uint64_t bad = 0;           // rows skipped as malformed
  std::uint64_t empty_lines = 0;   // skipped silently, not rows
  std::uint64_t header_lines = 0;  // one per file when the schema has a header
  std::array<std::uint64_t, num_bad_row_reasons> bad_by_reason{};

  std::uint64_t bad_for(bad_row_reason r) const noexcept { return bad_by_reason[static_cast<std::size_t>(r)]; }
};

class row_assembler {
 public:
  // A schema without a header is bound at once; one with a header binds to the first line added
  // (lazy: a followed input may not have one yet). `max_line_bytes` is the line reader's limit,
  // for messages.
  static result<row_assembler> open(const input_schema& schema, bad_row_policy policy, std::size_t max_line_bytes);
  // Bound already to `header`, read from file `headed_file` at `header_path` (batch_reader reads
  // the first line itself, to fail at open when there is none).
  row_assembler(const input_schema& schema, row_parser parser, bad_row_policy policy, std::size_t max_line_bytes,
                std::string header, std::string header_path, std::uint32_t headed_file);

  // Adds `line` to `out`, which prepare() reset. Errors: a header that differs from the first
  // file's or cannot be bound (parse_error), too_many_bad_rows.
  status add(const text_line& line, example_batch& out);
  // The bad-row limit at the end of the input (the rows of a followed input never end).
  status check_at_end() const { return check_bad_fraction(true); }

  // Resets `out` to the schema's feature counts (nothing while a header schema waits for its header).
  void prepare(example_batch& out) const;
  bool bound() const noexcept { return parser_.has_value(); }
  const bound_schema& schema() const { return parser_->schema(); }

  // Binds a header schema to `header` (read apart: a resume behind a file's header), as the header
  // of file `line.file_index`.
  status bind_header(const text_line& header);
  // After a seek: the file whose header is behind the position (nullopt: the next line is one).
  void set_headed_file(std::optional<std::uint32_t> file) noexcept { headed_file_ = file; }
  void set_empty_lines(std::uint64_t n) noexcept { counters_.empty_lines = n; }

  const read_counters& counters() const noexcept { return counters_; }
  // The first report_first bad rows, as "path:line: message".
  const std::vector<std::string>& bad_row_reports() const noexcept { return reports_; }

 private:
  row_assembler(const input_schema& schema, bad_row_policy policy, std::size_t max_line_bytes);
  status bind(const text_line& line);
  void count_bad(const text_line& line, bad_row_reason reason, const std::string& message);
  status check_bad_fraction(bool at_end) const;

  input_schema schema_;
  bad_row_policy policy_;
  std::size_t max_line_bytes_ = 0;
  std::optional<row_parser> parser_;
  std::string header_;  // the first file's header line, which every other file must repeat
  std::string header_path_;
  // The file whose header line has been consumed; a line of any other file that comes first in
  // its file is that file's header.
  std::optional<std::uint32_t> headed_file_;
  read_counters counters_;
  std::vector<std::string> reports_;
  std::string first_bad_;
  std::string layout_hint_;  // why the first bad row has the wrong field count, when it can tell
};

// The line without a UTF-8 byte order mark.
std::string_view strip_bom(std::string_view s);
// "path:line" of a line, for messages.
std::string where(const text_line& line);

}  // namespace ss::data
