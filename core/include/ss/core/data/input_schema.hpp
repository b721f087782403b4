// What the columns of a text input mean: which one is the label, which are dense numbers, which
// are categorical values to hash, which to ignore. A schema names columns; binding it to a header
// line (or to the implied names of a headerless format) turns names into field indices.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ss/core/status.hpp"

namespace ss::data {

// Delimited text (CSV, TSV: one field per column), or the sparse formats of libSVM / libFM
// (`label index:value ...`) and libFFM (`label field:index:value ...`).
enum class text_format : std::uint8_t { delimited, libsvm, libffm };

struct input_schema {
  text_format format = text_format::delimited;
  // libsvm: 0 = every index of a row is an id of one multi-valued feature; N = a row lists N
  // pairs and the k-th is feature k (one index per field, as libFM files list them). libffm: the
  // number of fields (0 .. N-1); a field may hold several indices, or none (the missing id).
  std::uint32_t sparse_fields = 0;
  char delimiter = ',';
  bool header = true;  // the first line of every input file names the columns
  std::string label;   // column holding 0 or 1
  std::vector<std::string> dense;        // in feature order
  std::vector<std::string> categorical;  // in feature order (the feature index of feature_id)
  // `categorical = *`: every column not named as label, dense or ignored is categorical, in column
  // order, after the ones listed in `categorical`.
  bool categorical_rest = false;
  std::vector<std::string> ignore;
  // Several values in one categorical field ("a|b|c" gives 3 ids); unset means one value.
  std::optional<char> multi_value_separator;
  // Per column (`multi_value = genres:|, tags:;`): that column's separator, over the one above;
  // with this alone, the columns not named hold one value each.
  std::vector<std::pair<std::string, char>> multi_value_columns;
  // Dense fields must be integers (Criteo); otherwise decimals are accepted too.
  bool integer_dense = false;
  // Column names of a headerless input, in field order (implied for Criteo).
  std::vector<std::string> columns;

  // Criteo Kaggle TSV: no header; label, I1..I13 (integers), C1..C26 (hex strings).
  static input_schema criteo();
  // Avazu CSV: header; click is the label, id is ignored, the other 22 columns are categorical.
  static input_schema avazu();
  // libSVM: every index of a row is an id of one multi-valued feature.
  static input_schema libsvm();
};

// Parses the tiny schema format: one `key = value` per line, `#` starts a comment. Keys: format
// (criteo|csv|libsvm|libffm, default csv; criteo sets every key to the Criteo layout, later keys
// override), fields (libsvm, libffm: sparse_fields),
// delimiter (, tab ; |), header (true|false), label, dense, categorical (comma lists;
// `categorical = *` takes every remaining column), ignore, multi_value_separator (one character or
// `none`, for every categorical column), multi_value (COLUMN:SEPARATOR, ...: per column; `tab` and
// `comma` name those two), columns (names of a headerless csv). Errors name the line: "line 3:
// unknown key 'lable'".
result<input_schema> parse_schema(std::string_view text);

// Checks that no column is named twice (within a list or across label, dense, categorical and
// ignore) and that the separators make sense. Binding calls it too.
status validate_schema(const input_schema& schema);

enum class column_role : std::uint8_t { ignore, label, dense, categorical };

struct column_binding {
  column_role role = column_role::ignore;
  std::uint32_t feature = 0;  // index among the dense or the categorical features
};

// A schema resolved against concrete columns: everything the row parser needs, by index.
struct bound_schema {
  text_format format = text_format::delimited;
  std::uint32_t sparse_fields = 0;  // see input_schema
  char delimiter = ',';
  bool integer_dense = false;
  std::vector<std::string> column_names;  // one per field
  std::vector<column_binding> columns;    // one per field
  std::uint32_t label_column = 0;
  std::vector<std::uint32_t> dense_columns;        // field index of dense feature i
  std::vector<std::uint32_t> categorical_columns;  // field index of categorical feature f
  // Of categorical feature f (its own multi-value separator, else the schema's); 0: one value.
  // Empty: every feature holds one value.
  std::vector<char> categorical_separators;

  std::uint32_t num_fields() const noexcept { return static_cast<std::uint32_t>(columns.size()); }
  std::uint32_t num_dense() const noexcept { return static_cast<std::uint32_t>(dense_columns.size()); }
  std::uint32_t num_categorical() const noexcept {
    return static_cast<std::uint32_t>(categorical_columns.size());
  }
};

// Binds to a header line (a trailing '\r' and a leading UTF-8 BOM are ignored). Errors: "label
// column 'click' not in header", "header names column 'x' twice (fields 3 and 7)", "column 'x' in
// header has no role (list it under dense, categorical or ignore)", ...
result<bound_schema> bind_schema(const input_schema& schema, std::string_view header_line);
// Binds a headerless schema to its `columns`.
result<bound_schema> bind_schema(const input_schema& schema);
// Binds to already split column names.
result<bound_schema> bind_schema(const input_schema& schema, const std::vector<std::string>& names);

}  // namespace ss::data
