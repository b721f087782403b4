// Schema + line reader + row parser: fills example batches from text files, skipping and counting
// bad rows, and stopping when there are too many of them. Every non-empty line is accounted for:
// a header, one good example, or one counted bad row.
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

struct batch_reader_options {
  input_schema schema;
  std::vector<std::string> paths;  // read in order
  std::size_t batch_size = 4096;
  bad_row_policy bad_rows;
  line_reader_options lines;
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

class batch_reader {
 public:
  // Opens the inputs and, for a schema with a header, reads the first file's header to bind it.
  static result<batch_reader> open(batch_reader_options options);

  // Replaces `out` with up to batch_size good examples. true: `out` holds at least one example;
  // false: the input is exhausted (and `out` is empty). Errors: those of the line reader, a header
  // that differs from the first file's (parse_error), and too_many_bad_rows. Errors repeat until
  // seek().
  result<bool> next(example_batch& out);

  const read_counters& counters() const noexcept { return counters_; }
  // The first report_first bad rows, as "path:line: message".
  const std::vector<std::string>& bad_row_reports() const noexcept { return reports_; }
  const bound_schema& schema() const noexcept { return parser_.schema(); }

  // Where the next row starts; seek() resumes there (also in a new reader over the same files).
  // Counters are not rewound: they describe what this reader object has read.
  line_position position() const noexcept { return lines_.position(); }
  status seek(const line_position& pos);

  std::uint64_t total_bytes() const noexcept { return lines_.total_bytes(); }
  std::uint64_t bytes_consumed() const noexcept { return lines_.bytes_consumed(); }

 private:
  batch_reader(batch_reader_options options, line_reader lines, row_parser parser, std::string header,
               std::optional<std::uint32_t> headed_file);
  void count_bad(const text_line& line, bad_row_reason reason, const std::string& message);
  status check_bad_fraction(bool at_end) const;

  batch_reader_options options_;
  line_reader lines_;
  row_parser parser_;
  std::string header_;  // the first file's header line, which every other file must repeat
  std::string header_path_;
  // The file whose header line has been consumed; a line of any other file that comes first in
  // its file is that file's header.
  std::optional<std::uint32_t> headed_file_;
  read_counters counters_;
  std::vector<std::string> reports_;
  std::string first_bad_;
  std::string layout_hint_;  // why the first bad row has the wrong field count, when it can tell
  status error_;
};

}  // namespace ss::data
