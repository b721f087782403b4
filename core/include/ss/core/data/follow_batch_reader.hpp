// Batches of a followed input (follow_reader): the complete lines there are now, parsed into
// pending examples (headers, good rows and counted bad rows as for fixed files: row_assembler),
// handed out as a batch when the caller decides: full, or partial once it has waited long enough
// (the caller's clock decides that; this reader only reads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ss/core/data/example_batch.hpp"
#include "ss/core/data/follow_reader.hpp"
#include "ss/core/data/input_schema.hpp"
#include "ss/core/data/row_assembler.hpp"
#include "ss/core/status.hpp"

namespace ss::data {

struct follow_batch_options {
  input_schema schema;
  follow_source source;
  std::size_t batch_size = 4096;
  bad_row_policy bad_rows;
  line_reader_options lines;
};

class follow_batch_reader {
 public:
  static result<follow_batch_reader> open(follow_batch_options options);

  // Reads the complete lines there are until `limit` examples (at most the batch size) are
  // pending; returns how many are. Errors (the follower's, a header that differs, too many bad
  // rows) repeat until seek().
  result<std::size_t> fill(std::size_t limit);
  // The last fill() read every complete line there was (it stopped for want of input, not at its
  // limit).
  bool caught_up() const noexcept { return caught_up_; }
  std::size_t pending() const noexcept { return pending_.size(); }
  // Hands out every pending example as `out`; position() is then right after the last of them.
  void take(example_batch& out);

  // The bad-row limit as at the end of an input (a followed input has none: its caller ends it).
  status check_at_end() const { return rows_.check_at_end(); }

  // After the last line read, so at the end of the batch take() hands out.
  follow_position position() const { return lines_.position(); }
  // Resumes at `pos` (also in a new reader of the same input); pending examples are dropped.
  status seek(const follow_position& pos);

  const read_counters& counters() const noexcept { return rows_.counters(); }
  const follow_counters& follow() const noexcept { return lines_.counters(); }
  const std::vector<std::string>& bad_row_reports() const noexcept { return rows_.bad_row_reports(); }
  std::vector<std::string> take_notices() { return lines_.take_notices(); }
  std::uint64_t bytes_behind() const { return lines_.bytes_behind(); }
  const std::string& path() const noexcept { return lines_.path(); }
  std::size_t batch_size() const noexcept { return options_.batch_size; }

 private:
  follow_batch_reader(follow_batch_options options, follow_reader lines, row_assembler rows);

  follow_batch_options options_;
  follow_reader lines_;
  row_assembler rows_;
  example_batch pending_;
  bool caught_up_ = false;
  status error_;
};

}  // namespace ss::data
