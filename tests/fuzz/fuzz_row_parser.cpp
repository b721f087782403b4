// libFuzzer target: the data-row parser, and the schema-file parser and binding in front of it.
//
// Input: byte 0 picks the mode, the rest is text.
//   0  Criteo TSV (the built-in headerless schema): every line is a row.
//   1  Avazu CSV (the built-in schema with a header): line 1 is the header, the others rows.
//   2  a fixed CSV schema with a multi-value separator, dense decimals and ignored columns, bound
//      to a fixed header: every line is a row.
//   3  a schema file, then rows: the text up to the first "\n\n" is the schema (parse_schema);
//      with header = true the next line is the header (bind_schema), and the rest are rows.
// Invariants: a refused row leaves the batch exactly as it was, an accepted one adds one example
// whose label is 0 or 1, whose dense values are finite and non-negative (log(1 + max(x, 0))) and
// whose every categorical feature has at least one id; the batch stays a valid wire message.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "ss/core/data/input_schema.hpp"
#include "ss/core/data/row_parser.hpp"
#include "ss/wire/codec.hpp"

namespace {

using namespace ss::data;

// The line at `pos` (without '\n'), advancing `pos` past it; nullopt at the end.
std::optional<std::string_view> next_line(std::string_view text, std::size_t& pos) {
  if (pos >= text.size()) return std::nullopt;
  std::size_t end = text.find('\n', pos);
  if (end == std::string_view::npos) end = text.size();
  std::string_view line = text.substr(pos, end - pos);
  pos = end + 1;
  return line;
}

void parse_rows(const bound_schema& schema, std::string_view text, std::size_t pos) {
  row_parser parser(schema);
  example_batch batch;
  parser.prepare(batch);
  SS_FUZZ_CHECK(batch.num_dense == schema.num_dense() && batch.num_sparse == schema.num_categorical(),
                "prepare() set other feature counts");
  while (auto line = next_line(text, pos)) {
    const std::size_t n = batch.size();
    const std::size_t dense = batch.dense.size();
    const std::size_t ids = batch.ids.size();
    const std::size_t offsets = batch.offsets.size();
    bad_row_reason reason{};
    const ss::status st = parser.parse(*line, batch, &reason);
    if (!st.is_ok()) {
      SS_FUZZ_CHECK(st.code() == ss::errc::parse_error, st.to_string().c_str());
      SS_FUZZ_CHECK(static_cast<std::size_t>(reason) < num_bad_row_reasons, "a bad-row reason out of range");
      SS_FUZZ_CHECK(to_string(reason) != nullptr, "a bad-row reason without a name");
      SS_FUZZ_CHECK(batch.size() == n && batch.dense.size() == dense && batch.ids.size() == ids &&
                        batch.offsets.size() == offsets,
                    "a refused row changed the batch");
      continue;
    }
    SS_FUZZ_CHECK(batch.size() == n + 1, "an accepted row did not add one example");
    SS_FUZZ_CHECK(batch.labels.back() == 0.0f || batch.labels.back() == 1.0f, "a label other than 0 or 1");
    SS_FUZZ_CHECK(batch.dense.size() == dense + schema.num_dense(), "wrong number of dense values");
    for (std::size_t i = dense; i < batch.dense.size(); ++i) {
      SS_FUZZ_CHECK(std::isfinite(batch.dense[i]) && batch.dense[i] >= 0.0f,
                    "a dense value that is not finite and non-negative");
    }
    SS_FUZZ_CHECK(batch.offsets.size() == offsets + schema.num_categorical(), "wrong number of features");
    for (std::size_t i = offsets; i < batch.offsets.size(); ++i) {
      SS_FUZZ_CHECK(batch.offsets[i] > batch.offsets[i - 1], "a categorical feature without an id");
    }
    SS_FUZZ_CHECK(batch.offsets.back() == batch.ids.size(), "offsets do not end at the ids");
  }
  if (batch.empty()) return;
  // What a reader parsed must travel: the codec's batch checks accept it, bit for bit.
  ss::wire::batch_message m;
  m.batch = batch;
  ss::result<ss::wire::envelope> r = ss::wire::decode(*ss::wire::encode(ss::wire::envelope{ss::wire::protocol_version, 1, m}));
  SS_FUZZ_CHECK(r.is_ok(), ("a parsed batch does not survive the wire: " + r.error().to_string()).c_str());
}

const bound_schema& criteo_schema() {
  static const bound_schema s = *bind_schema(input_schema::criteo());
  return s;
}

const bound_schema& csv_schema() {
  static const bound_schema s = [] {
    auto schema = parse_schema(
        "format = csv\n"
        "delimiter = ,\n"
        "header = true\n"
        "label = click\n"
        "dense = price, age\n"
        "categorical = site, *\n"
        "ignore = id\n"
        "multi_value_separator = |\n");
    SS_FUZZ_CHECK(schema.is_ok(), "the fixed CSV schema does not parse");
    auto bound = bind_schema(*schema, std::string_view("id,click,price,site,age,tags,device"));
    SS_FUZZ_CHECK(bound.is_ok(), "the fixed CSV schema does not bind");
    return *bound;
  }();
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const int mode = data[0] % 4;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::size_t pos = 0;
  switch (mode) {
    case 0: parse_rows(criteo_schema(), text, 0); break;
    case 1: {
      const input_schema avazu = input_schema::avazu();
      auto header = next_line(text, pos);
      if (!header) return 0;
      auto bound = bind_schema(avazu, *header);
      if (!bound.is_ok()) return 0;
      parse_rows(*bound, text, pos);
      break;
    }
    case 2: parse_rows(csv_schema(), text, 0); break;
    default: {
      std::size_t split = text.find("\n\n");
      if (split == std::string_view::npos) split = text.size();
      auto schema = parse_schema(text.substr(0, split));
      if (!schema.is_ok()) {
        SS_FUZZ_CHECK(schema.error().code() == ss::errc::parse_error ||
                          schema.error().code() == ss::errc::invalid_argument,
                      schema.error().to_string().c_str());
        return 0;
      }
      SS_FUZZ_CHECK(validate_schema(*schema).is_ok(), "parse_schema returned a schema that does not validate");
      pos = split + 2;
      ss::result<bound_schema> bound = ss::status(ss::errc::internal, "unbound");
      if (schema->header) {
        auto header = next_line(text, pos);
        if (!header) return 0;
        bound = bind_schema(*schema, *header);
      } else {
        bound = bind_schema(*schema);
      }
      if (!bound.is_ok()) return 0;
      const bound_schema& b = *bound;
      SS_FUZZ_CHECK(b.label_column < b.num_fields(), "the label column is out of range");
      for (auto c : b.dense_columns) SS_FUZZ_CHECK(c < b.num_fields() && c != b.label_column, "bad dense column");
      for (auto c : b.categorical_columns)
        SS_FUZZ_CHECK(c < b.num_fields() && c != b.label_column, "bad categorical column");
      parse_rows(b, text, pos);
      break;
    }
  }
  return 0;
}
