// Turns one text line into one example: label, transformed dense values, hashed categorical ids.
// The hot loop of every reader, so it allocates nothing per row or field (fields are string_views
// into the line, numbers go through std::from_chars).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ss/core/data/example_batch.hpp"
#include "ss/core/data/input_schema.hpp"
#include "ss/core/status.hpp"

namespace ss::data {

// Why a row was rejected; readers count bad rows per reason.
enum class bad_row_reason : std::uint8_t {
  field_count,  // not the schema's number of fields
  label,        // label not 0 or 1
  dense_value,  // a dense field is not a number (an integer for Criteo)
  categorical,  // more ids in one batch than the batch's 32-bit offsets can address
  too_long,     // longer than the line reader's limit
  sparse_pair,  // libSVM / libFFM: a pair that is not index:value (field:index:value), or a value not 0 or 1
};
inline constexpr std::size_t num_bad_row_reasons = 6;
const char* to_string(bad_row_reason reason) noexcept;

// log(1 + max(x, 0)): the dense transform of the model.
float dense_transform(double x) noexcept;

class row_parser {
 public:
  explicit row_parser(bound_schema schema);

  // Appends the example in `line` (no '\n'; a trailing '\r' is ignored) to `out`, which must have
  // been reset to this schema's feature counts. On failure `out` is left exactly as it was and the
  // status is a parse_error naming the field: "expected 40 fields, found 39", "label: 'x' is not 0
  // or 1", "I5: '12a' is not an integer". `reason`, when given, receives why.
  //
  // Dense: an empty field is 0; every value becomes log(1 + max(x, 0)). Categorical feature f
  // (0-based among the categorical columns) of value v gets id ss::feature_id(f, v); the empty
  // value is hashed like any other (it is the "missing" id). With a multi-value separator each
  // non-empty piece gives one id, and a field with no non-empty piece gives the missing id, so
  // every feature has at least one id.
  status parse(std::string_view line, example_batch& out, bad_row_reason* reason = nullptr);

  // When `line` has the wrong number of fields and another delimiter splits it into several:
  // the likely cause and its fix, in one sentence ("it splits into 24 fields at ',' ..."); empty
  // otherwise. Said once per input, not per row.
  std::string layout_hint(std::string_view line) const;

  // Resets `out` to this schema's feature counts.
  void prepare(example_batch& out) const { out.reset(schema_.num_dense(), schema_.num_categorical()); }

  const bound_schema& schema() const noexcept { return schema_; }

 private:
  status parse_sparse(std::string_view line, example_batch& out, bad_row_reason* reason);
  status fail(bad_row_reason why, std::string message, bad_row_reason* reason) const;
  status field_error(std::uint32_t column, std::string_view value, const char* what,
                     bad_row_reason why, bad_row_reason* reason) const;

  bound_schema schema_;
  bool multi_valued_ = false;  // some categorical feature has a separator
  std::vector<std::string_view> fields_;  // reused scratch: the fields of the current line
  // Reused scratch of the sparse formats: (feature, index text) of each present pair.
  std::vector<std::pair<std::uint32_t, std::string_view>> pairs_;
  // log1p of small non-negative integers: most Criteo dense values, looked up instead of computed.
  static constexpr std::size_t small_table_size = 4096;
  std::array<float, small_table_size> small_log1p_{};
};

// A short, printable rendering of a field for error messages: at most 40 bytes, bytes outside
// printable ASCII as \xNN, and the total length when cut ("'aaaa...' (1048576 bytes)").
std::string describe_field(std::string_view value);

}  // namespace ss::data
