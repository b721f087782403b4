// Schema + line reader + row parser: fills example batches from text files, skipping and counting
// bad rows, and stopping when there are too many of them. Every non-empty line is accounted for:
// a header, one good example, or one counted bad row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ss/core/data/example_batch.hpp"
#include "ss/core/data/input_schema.hpp"
#include "ss/core/data/line_reader.hpp"
#include "ss/core/data/row_assembler.hpp"
#include "ss/core/data/row_parser.hpp"
#include "ss/core/status.hpp"

namespace ss::data {

struct batch_reader_options {
  input_schema schema;
  std::vector<std::string> paths;  // read in order
  std::vector<file_entry> entries;  // where each path's reading begins (line_reader::open); empty: at its start
  std::size_t batch_size = 4096;
  bad_row_policy bad_rows;
  line_reader_options lines;
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

  const read_counters& counters() const noexcept { return rows_.counters(); }
  // The first report_first bad rows, as "path:line: message".
  const std::vector<std::string>& bad_row_reports() const noexcept { return rows_.bad_row_reports(); }
  const bound_schema& schema() const noexcept { return rows_.schema(); }

  // Where the next row starts; seek() resumes there (also in a new reader over the same files).
  // Counters are not rewound: they describe what this reader object has read.
  line_position position() const noexcept { return lines_.position(); }
  status seek(const line_position& pos);

  std::uint64_t total_bytes() const noexcept { return lines_.total_bytes(); }
  std::uint64_t bytes_consumed() const noexcept { return lines_.bytes_consumed(); }

 private:
  batch_reader(batch_reader_options options, line_reader lines, row_assembler rows);

  batch_reader_options options_;
  line_reader lines_;
  row_assembler rows_;
  status error_;
};

}  // namespace ss::data
