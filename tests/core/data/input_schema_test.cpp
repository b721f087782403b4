#include <catch2/catch.hpp>

#include "ss/core/data/input_schema.hpp"

using namespace ss::data;

namespace {

const char* const avazu_header =
    "id,click,hour,C1,banner_pos,site_id,site_domain,site_category,app_id,app_domain,app_category,"
    "device_id,device_ip,device_model,device_type,device_conn_type,C14,C15,C16,C17,C18,C19,C20,C21\r";

std::string error_of(const ss::result<input_schema>& r) { return r.error().message(); }
std::string error_of(const ss::result<bound_schema>& r) { return r.error().message(); }

}  // namespace

TEST_CASE("input schema: criteo layout binds without a header", "[core][data]") {
  const auto schema = input_schema::criteo();
  CHECK(schema.delimiter == '\t');
  CHECK_FALSE(schema.header);
  CHECK(schema.integer_dense);
  auto bound = bind_schema(schema);
  REQUIRE(bound.is_ok());
  CHECK(bound->num_fields() == 40);
  CHECK(bound->num_dense() == 13);
  CHECK(bound->num_categorical() == 26);
  CHECK(bound->label_column == 0);
  CHECK(bound->column_names[1] == "I1");
  CHECK(bound->column_names[39] == "C26");
  for (std::uint32_t i = 0; i < 13; ++i) CHECK(bound->dense_columns[i] == 1 + i);
  for (std::uint32_t f = 0; f < 26; ++f) {
    CHECK(bound->categorical_columns[f] == 14 + f);
    CHECK(bound->columns[14 + f].role == column_role::categorical);
    CHECK(bound->columns[14 + f].feature == f);
  }
}

TEST_CASE("input schema: the avazu spec binds to the avazu header", "[core][data]") {
  auto schema = parse_schema(
      "# Avazu CTR\n"
      "format = csv\n"
      "delimiter = ,\n"
      "header = true   # first line names the columns\n"
      "\n"
      "label = click\n"
      "ignore = id\n"
      "categorical = *\n");
  REQUIRE(schema.is_ok());
  CHECK(schema->delimiter == ',');
  CHECK(schema->header);
  CHECK(schema->label == "click");
  CHECK(schema->categorical_rest);
  CHECK(schema->categorical.empty());

  auto bound = bind_schema(*schema, avazu_header);
  REQUIRE(bound.is_ok());
  CHECK(bound->num_fields() == 24);
  CHECK(bound->num_dense() == 0);
  CHECK(bound->num_categorical() == 22);
  CHECK(bound->label_column == 1);
  CHECK(bound->columns[0].role == column_role::ignore);
  CHECK(bound->categorical_columns.front() == 2);  // hour
  CHECK(bound->categorical_columns.back() == 23);  // C21, the '\r' is not part of its name
  CHECK(bound->column_names[23] == "C21");

  // The built-in Avazu schema is the same.
  auto builtin = bind_schema(input_schema::avazu(), avazu_header);
  REQUIRE(builtin.is_ok());
  CHECK(builtin->categorical_columns == bound->categorical_columns);
}

TEST_CASE("input schema: listed categorical columns keep their listed order", "[core][data]") {
  auto schema = parse_schema("label = y\ndense = d2, d1\ncategorical = b, a, *\nmulti_value_separator = |\n");
  REQUIRE(schema.is_ok());
  REQUIRE(schema->multi_value_separator.has_value());
  CHECK(*schema->multi_value_separator == '|');
  auto bound = bind_schema(*schema, "a,d1,y,b,c,d2");
  REQUIRE(bound.is_ok());
  CHECK(bound->dense_columns == std::vector<std::uint32_t>{5, 1});
  CHECK(bound->categorical_columns == std::vector<std::uint32_t>{3, 0, 4});  // b, a, then c
}

TEST_CASE("input schema: format criteo in a spec, with overrides", "[core][data]") {
  auto schema = parse_schema("format = criteo\nmulti_value_separator = ;\n");
  REQUIRE(schema.is_ok());
  CHECK(schema->delimiter == '\t');
  CHECK(schema->dense.size() == 13);
  CHECK(*schema->multi_value_separator == ';');
  CHECK(bind_schema(*schema).is_ok());
}

TEST_CASE("input schema: a headerless csv names its columns", "[core][data]") {
  auto schema = parse_schema("format=csv\ndelimiter=tab\nheader=false\ncolumns=y,x,c\nlabel=y\ndense=x\ncategorical=*\n");
  REQUIRE(schema.is_ok());
  auto bound = bind_schema(*schema);
  REQUIRE(bound.is_ok());
  CHECK(bound->delimiter == '\t');
  CHECK(bound->categorical_columns == std::vector<std::uint32_t>{2});

  auto missing = parse_schema("header=false\nlabel=y\n");
  REQUIRE_FALSE(missing.is_ok());
  CHECK(error_of(missing) == "schema has header = false but names no columns");
}

TEST_CASE("input schema: spec errors name the line", "[core][data]") {
  auto unknown = parse_schema("format = csv\n# comment\nlable = click\n");
  REQUIRE_FALSE(unknown.is_ok());
  CHECK(unknown.error().code() == ss::errc::parse_error);
  CHECK(error_of(unknown) == "line 3: unknown key 'lable'");

  CHECK(error_of(parse_schema("label = y\njust words\n")) == "line 2: expected 'key = value', found 'just words'");
  CHECK(error_of(parse_schema("label = y\ndelimiter = :\n")) ==
        "line 2: delimiter: expected one of ',', 'tab', ';', '|', found ':'");
  CHECK(error_of(parse_schema("label = y\nheader = maybe\n")) == "line 2: header: expected true or false, found 'maybe'");
  CHECK(error_of(parse_schema("label = a\n\nlabel = b\n")) == "line 3: key 'label' given twice (first on line 1)");
  CHECK(error_of(parse_schema("label = y\ndense = a,,b\n")) == "line 2: dense: empty column name in 'a,,b'");
  CHECK(error_of(parse_schema("format = parquet\nlabel = y\n")) == "line 1: format: expected criteo, csv, libsvm or libffm, found 'parquet'");
  CHECK(error_of(parse_schema("label = y\nmulti_value_separator = ab\n")) ==
        "line 2: multi_value_separator: expected one character, found 'ab'");
  CHECK(error_of(parse_schema("dense = a\n")) == "missing key 'label'");
  CHECK(error_of(parse_schema("label = y\ncategorical = *, a, *\n")) == "line 2: categorical: '*' given twice");
}

TEST_CASE("input schema: per-column multi-value separators and their errors", "[core][data]") {
  auto schema = parse_schema("label = y\ncategorical = *\nmulti_value = genres:|, tags:tab, names:comma\n"
                             "delimiter = ;\n");
  REQUIRE(schema.is_ok());
  CHECK(schema->multi_value_columns ==
        std::vector<std::pair<std::string, char>>{{"genres", '|'}, {"tags", '\t'}, {"names", ','}});
  auto bound = bind_schema(*schema, "y;names;genres;other;tags");
  REQUIRE(bound.is_ok());
  CHECK(bound->categorical_separators == std::vector<char>{',', '|', '\0', '\t'});

  CHECK(error_of(parse_schema("label = y\nmulti_value = genres\n")) ==
        "line 2: multi_value: expected COLUMN:SEPARATOR (one character, tab or comma), found 'genres'");
  CHECK(error_of(parse_schema("label = y\nmulti_value = genres:||\n")) ==
        "line 2: multi_value: expected COLUMN:SEPARATOR (one character, tab or comma), found 'genres:||'");
  CHECK(error_of(parse_schema("label = y\nmulti_value = g:|, g:;\n")) == "multi_value: column 'g' named twice");
  CHECK(error_of(parse_schema("label = y\nmulti_value = g:comma\n")) ==
        "multi_value: the separator of column 'g' must differ from the delimiter and from line breaks");
  auto dense = parse_schema("label = y\ndense = d\ncategorical = *\nmulti_value = d:|\n");
  REQUIRE(dense.is_ok());
  CHECK(error_of(bind_schema(*dense, "y,d,c")) ==
        "multi_value: column 'd' is not categorical (only categorical values are split)");
  auto missing = parse_schema("label = y\ncategorical = *\nmulti_value = z:|\n");
  REQUIRE(missing.is_ok());
  CHECK(error_of(bind_schema(*missing, "y,c")) == "multi_value column 'z' not in header");
}

TEST_CASE("input schema: a column listed twice is rejected", "[core][data]") {
  CHECK(error_of(parse_schema("label = y\ndense = a, b\ncategorical = b\n")) ==
        "column 'b' listed twice (dense and categorical)");
  CHECK(error_of(parse_schema("label = y\ndense = a, a\n")) == "column 'a' listed twice in dense");
  CHECK(error_of(parse_schema("label = y\nignore = y\n")) == "column 'y' listed twice (label and ignore)");
  CHECK(error_of(parse_schema("label = y\ndelimiter = |\nmulti_value_separator = |\n")) ==
        "multi_value_separator must differ from the delimiter and from line breaks");
}

TEST_CASE("input schema: binding errors", "[core][data]") {
  auto avazu = input_schema::avazu();
  auto no_label = bind_schema(avazu, "id,clicked,hour");
  REQUIRE_FALSE(no_label.is_ok());
  CHECK(no_label.error().code() == ss::errc::invalid_argument);
  CHECK(error_of(no_label) == "label column 'click' not in header");

  CHECK(error_of(bind_schema(avazu, "id,click,hour,hour")) == "header names column 'hour' twice (fields 3 and 4)");
  CHECK(error_of(bind_schema(avazu, "click,hour")) == "ignored column 'id' not in header");

  input_schema strict;
  strict.label = "y";
  strict.dense = {"x"};
  CHECK(error_of(bind_schema(strict, "y,x,z")) ==
        "column 'z' in header has no role (list it under dense, categorical or ignore)");
  CHECK(error_of(bind_schema(strict, "y,w")) == "dense column 'x' not in header");

  // A UTF-8 byte order mark is not part of the first name.
  auto bom = bind_schema(strict, "\xEF\xBB\xBFy,x");
  REQUIRE(bom.is_ok());
  CHECK(bom->column_names[0] == "y");
}
