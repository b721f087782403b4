// The rows of a prediction request, read into a batch: rows in the model's input format (its
// schema, data::input_schema), one per line of a text body or one per string of a JSON body
// ({"rows": ["<row>", ...]}, with "header" for a schema whose files start with a header line).
//
// The label column is optional, since a request asks for a prediction:
//  - delimited text without a header (Criteo, a csv with `columns`): a row with every field is read
//    as a data file's row (its label must be 0 or 1, and is not used); a row with one field fewer
//    has no label column. The request's first row decides for all of its rows, so that a row that
//    lost a field among labelled rows is refused, not read shifted;
//  - delimited text with a header (Avazu, a csv with `header = true`): the header line (the body's
//    first line, or JSON "header") names the columns; the label column may be left out of it, and
//    then out of every row;
//  - libSVM / libFFM: a row whose first token is a pair (index:value) has no label.
// Every row must be good: the first bad one refuses the whole request, naming the row (1-based,
// counted without the header line and without blank lines of a text body) and the reason, so no
// row is scored from a misread line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ss/core/data/example_batch.hpp"
#include "ss/core/data/input_schema.hpp"
#include "ss/core/data/row_parser.hpp"
#include "ss/core/status.hpp"

namespace ss::serving {

// Why a request's rows were refused.
enum class request_problem : std::uint8_t {
  bad_row,        // a row the schema does not read (row_reason says why)
  bad_json,       // not JSON, or not {"rows": [strings...], "header": string}
  bad_header,     // a header line the schema cannot bind, or none where the schema needs one
  no_rows,        // nothing to score
  too_many_rows,  // more rows than the limit
};
inline constexpr std::size_t num_request_problems = 5;
const char* to_string(request_problem problem) noexcept;  // "bad_row", "bad_json", ...

struct request_error {
  request_problem problem = request_problem::bad_row;
  std::size_t row = 0;  // bad_row: the row, 1-based
  data::bad_row_reason row_reason = data::bad_row_reason::field_count;  // bad_row: why
  std::string message;  // "row 3: I5: '12a' is not an integer", "row 3 (line 4): ..."
};

// Reads requests for one model; keeps scratch between calls (one per thread).
class request_reader {
 public:
  // The model's schema and feature counts; invalid_argument when the schema cannot be bound
  // (without a header) or reads other feature counts.
  static result<request_reader> create(const data::input_schema& schema, std::uint32_t num_dense,
                                       std::uint32_t num_categorical);
  request_reader(request_reader&&) noexcept;
  request_reader& operator=(request_reader&&) noexcept;
  ~request_reader();

  // A text body: one row per line ('\n', an optional '\r' before it), blank lines skipped, the
  // first line the header where the schema has one. Fills `out` (reset first) with one example per
  // row, in order; on an error `out` is to be ignored.
  std::optional<request_error> read_text(std::string_view body, std::size_t max_rows, data::example_batch& out);
  // A JSON body: {"rows": ["<row>", ...]} (and "header": "<header line>"), nothing else.
  std::optional<request_error> read_json(std::string_view body, std::size_t max_rows, data::example_batch& out);

  // Whether requests must carry a header line.
  bool needs_header() const;

 private:
  struct impl;
  explicit request_reader(std::unique_ptr<impl> state);
  std::unique_ptr<impl> impl_;
};

}  // namespace ss::serving
