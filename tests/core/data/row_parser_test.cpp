#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "data_test_util.hpp"
#include "ss/core/data/row_parser.hpp"
#include "ss/core/hash.hpp"
#include "ss/core/random.hpp"

using namespace ss::data;

namespace {

row_parser criteo_parser() {
  auto bound = bind_schema(input_schema::criteo());
  REQUIRE(bound.is_ok());
  return row_parser(std::move(*bound));
}

row_parser csv_parser(const char* spec, const char* header) {
  auto schema = parse_schema(spec);
  REQUIRE(schema.is_ok());
  auto bound = bind_schema(*schema, header);
  REQUIRE(bound.is_ok());
  return row_parser(std::move(*bound));
}

// A Criteo row with the given label, I5 text and C3 text; everything else valid.
std::string criteo_row(const std::string& label = "0", const std::string& i5 = "7",
                       const std::string& c3 = "deadbeef") {
  std::string row = label;
  for (int i = 1; i <= 13; ++i) row += "\t" + (i == 5 ? i5 : std::to_string(i));
  for (int c = 1; c <= 26; ++c) row += "\t" + (c == 3 ? c3 : std::string("0000000") + static_cast<char>('a' + c % 6));
  return row;
}

std::string parse_error(row_parser& parser, const std::string& line, bad_row_reason* reason = nullptr) {
  example_batch batch;
  parser.prepare(batch);
  const auto s = parser.parse(line, batch, reason);
  if (s.is_ok()) return "ok";
  CHECK(s.code() == ss::errc::parse_error);
  CHECK(batch.empty());
  return s.message();
}

}  // namespace

TEST_CASE("criteo parser: hash stability is pinned", "[core][data]") {
  // Feature ids key embedding rows and checkpoints: a change of the hash must be deliberate.
  CHECK(ss::feature_id(0, "68fd1e64") == 0x5261fcc10277dbc7ULL);
  CHECK(ss::feature_id(21, "") == 0xcde3afe1dd4d890dULL);
}

TEST_CASE("criteo parser: the first line of the Kaggle sample", "[core][data]") {
  const auto lines = test::split_lines(test::read_all(test::sample_path("criteo/train-10k.txt")));
  REQUIRE(lines.size() == 10000);
  auto parser = criteo_parser();
  example_batch batch;
  parser.prepare(batch);
  REQUIRE(parser.parse(lines[0], batch).is_ok());
  REQUIRE(batch.size() == 1);
  CHECK(batch.labels[0] == 0.0f);
  // 0  1 1 5 0 1382 4 15 2 181 1 2 <empty> 2
  const double raw[13] = {1, 1, 5, 0, 1382, 4, 15, 2, 181, 1, 2, 0, 2};
  REQUIRE(batch.dense.size() == 13);
  for (int i = 0; i < 13; ++i) CHECK(batch.dense[i] == static_cast<float>(std::log1p(raw[i])));
  CHECK(batch.dense[0] == static_cast<float>(std::log(2.0)));
  CHECK(batch.dense[11] == 0.0f);  // I12 is empty: missing
  REQUIRE(batch.ids.size() == 26);
  CHECK(batch.one_id_per_feature());
  CHECK(batch.ids[0] == ss::feature_id(0, "68fd1e64"));
  CHECK(batch.ids[1] == ss::feature_id(1, "80e26c9b"));
  CHECK(batch.ids[20] == ss::feature_id(20, "07b5194c"));
  CHECK(batch.ids[21] == ss::feature_id(21, ""));  // C22 is empty: the missing id
  CHECK(batch.ids[25] == ss::feature_id(25, "9727dd16"));
  for (std::uint32_t i = 0; i <= 26; ++i) CHECK(batch.offsets[i] == i);
}

TEST_CASE("criteo parser: precise errors", "[core][data]") {
  auto parser = criteo_parser();
  bad_row_reason reason{};
  CHECK(parse_error(parser, criteo_row()) == "ok");

  const auto row = criteo_row();
  CHECK(parse_error(parser, row.substr(0, row.rfind('\t')), &reason) == "expected 40 fields, found 39");
  CHECK(reason == bad_row_reason::field_count);
  CHECK(parse_error(parser, row + "\t") == "expected 40 fields, found 41");
  CHECK(parse_error(parser, row + "\t\t\tx\t") == "expected 40 fields, found 44");
  CHECK(parse_error(parser, "") == "expected 40 fields, found 1");
  example_batch scratch;
  parser.prepare(scratch);
  CHECK(parser.parse(std::string_view(), scratch).message() == "expected 40 fields, found 1");

  CHECK(parse_error(parser, criteo_row("x"), &reason) == "label: 'x' is not 0 or 1");
  CHECK(reason == bad_row_reason::label);
  CHECK(parse_error(parser, criteo_row("2")) == "label: '2' is not 0 or 1");
  CHECK(parse_error(parser, criteo_row("")) == "label: '' is not 0 or 1");
  CHECK(parse_error(parser, criteo_row("-1")) == "label: '-1' is not 0 or 1");
  CHECK(parse_error(parser, criteo_row("0.5")) == "label: '0.5' is not 0 or 1");
  CHECK(parse_error(parser, criteo_row("1.0")) == "ok");
  CHECK(parse_error(parser, criteo_row("0.0")) == "ok");

  CHECK(parse_error(parser, criteo_row("0", "12a"), &reason) == "I5: '12a' is not an integer");
  CHECK(reason == bad_row_reason::dense_value);
  CHECK(parse_error(parser, criteo_row("0", "12x")) == "I5: '12x' is not an integer");
  CHECK(parse_error(parser, criteo_row("0", "1.5")) == "I5: '1.5' is not an integer");
  CHECK(parse_error(parser, criteo_row("0", " 1")) == "I5: ' 1' is not an integer");
  CHECK(parse_error(parser, criteo_row("0", "99999999999999999999")) ==
        "I5: '99999999999999999999' is out of the 64-bit integer range");
  CHECK(parse_error(parser, criteo_row("0", std::string("1\0", 2))) == "I5: '1\\x00' is not an integer");
}

TEST_CASE("row parser: a wrong field count names another delimiter that splits the line", "[core][data]") {
  auto criteo = criteo_parser();
  CHECK(criteo.layout_hint("0,1,2,a,b\r") ==
        "the line splits into 5 fields at ',', and the schema reads 40 fields split at tab: the file is of another "
        "layout; name it with --schema (criteo, avazu, or a schema file: docs/data-and-model.md)");
  CHECK(criteo.layout_hint("0;1;2|x").find("the line splits into 3 fields at ';'") == 0);  // the delimiter with most fields
  CHECK(criteo.layout_hint("just one field").empty());
  CHECK(criteo.layout_hint("").empty());
  auto csv = csv_parser("format=csv\ndelimiter=,\nlabel=y\ncategorical=*\n", "y,a,b");
  CHECK(csv.layout_hint("1\tx\ty\tz").find("the line splits into 4 fields at tab, and the schema reads 3 fields split "
                                            "at ','") == 0);
}

TEST_CASE("criteo parser: negative integers, CRLF and the dense transform", "[core][data]") {
  auto parser = criteo_parser();
  example_batch batch;
  parser.prepare(batch);
  REQUIRE(parser.parse(criteo_row("1", "-3"), batch).is_ok());
  REQUIRE(parser.parse(criteo_row("0", "123456789") + "\r", batch).is_ok());
  REQUIRE(parser.parse(criteo_row("0", ""), batch).is_ok());
  REQUIRE(batch.size() == 3);
  CHECK(batch.labels == std::vector<float>{1.0f, 0.0f, 0.0f});
  CHECK(batch.dense[4] == 0.0f);                                        // max(-3, 0)
  CHECK(batch.dense[13 + 4] == static_cast<float>(std::log1p(123456789.0)));
  CHECK(batch.dense[26 + 4] == 0.0f);                                   // missing
  CHECK(batch.dense[1] == static_cast<float>(std::log1p(2.0)));
  CHECK(batch.ids[26 + 2] == ss::feature_id(2, "deadbeef"));          // '\r' did not reach C26
  CHECK(batch.ids[26 + 25] == ss::feature_id(25, "0000000c"));
  CHECK(dense_transform(-5.0) == 0.0f);
  CHECK(dense_transform(0.0) == 0.0f);
}

TEST_CASE("criteo parser: a failed row leaves the batch exactly as it was", "[core][data]") {
  auto parser = criteo_parser();
  example_batch batch;
  parser.prepare(batch);
  REQUIRE(parser.parse(criteo_row("1"), batch).is_ok());
  const example_batch before = batch;
  const std::string bad_rows[] = {criteo_row("7"), criteo_row("0", "zz"), criteo_row() + "\textra",
                                  std::string("\0\0\0", 3)};
  for (const auto& bad : bad_rows) {
    CHECK_FALSE(parser.parse(bad, batch).is_ok());
    CHECK(test::same_examples(batch, before));
  }
  // The last dense column fails after twelve dense values were added.
  std::string late = criteo_row();
  const auto i13 = late.find("\t13\t");
  late.replace(i13, 4, "\t1e3\t");
  CHECK(parse_error(parser, late) == "I13: '1e3' is not an integer");
  CHECK_FALSE(parser.parse(late, batch).is_ok());
  CHECK(test::same_examples(batch, before));
}

TEST_CASE("csv parser: decimals, signs and non-finite values", "[core][data]") {
  auto parser = csv_parser("label = y\ndense = a, b\ncategorical = *\n", "y,a,b,c");
  example_batch batch;
  parser.prepare(batch);
  REQUIRE(parser.parse("1,1.5,-2.5,x", batch).is_ok());
  REQUIRE(parser.parse("0,+3,1e3,", batch).is_ok());
  REQUIRE(parser.parse("0,,0.25,x", batch).is_ok());
  CHECK(batch.dense == std::vector<float>{static_cast<float>(std::log1p(1.5)), 0.0f,
                                          static_cast<float>(std::log1p(3.0)), static_cast<float>(std::log1p(1000.0)),
                                          0.0f, static_cast<float>(std::log1p(0.25))});
  CHECK(batch.ids == std::vector<std::uint64_t>{ss::feature_id(0, "x"), ss::feature_id(0, ""), ss::feature_id(0, "x")});
  CHECK(parse_error(parser, "1,nan,1,x") == "a: 'nan' is not a finite number");
  CHECK(parse_error(parser, "1,1,inf,x") == "b: 'inf' is not a finite number");
  CHECK(parse_error(parser, "1,1,1e999,x") == "b: '1e999' is out of range");
  CHECK(parse_error(parser, "1,1.2.3,1,x") == "a: '1.2.3' is not a number");
  CHECK(parse_error(parser, "1,+,1,x") == "a: '+' is not a number");
  CHECK(parse_error(parser, "1,+-1,1,x") == "a: '+-1' is not a number");
  CHECK(parse_error(parser, "y,1,1,x") == "y: 'y' is not 0 or 1");
}

TEST_CASE("csv parser: multi-value categorical fields", "[core][data]") {
  auto parser = csv_parser("label = y\ncategorical = tags, site\nmulti_value_separator = |\n", "y,site,tags");
  example_batch batch;
  parser.prepare(batch);
  REQUIRE(parser.parse("1,s1,a|b|c", batch).is_ok());
  REQUIRE(parser.parse("0,,", batch).is_ok());
  REQUIRE(parser.parse("0,s2|,a||b|", batch).is_ok());
  REQUIRE(batch.size() == 3);
  CHECK(batch.num_sparse == 2);
  CHECK_FALSE(batch.one_id_per_feature());
  using ss::feature_id;
  CHECK(batch.ids == std::vector<std::uint64_t>{feature_id(0, "a"), feature_id(0, "b"), feature_id(0, "c"),
                                                feature_id(1, "s1"), feature_id(0, ""), feature_id(1, ""),
                                                feature_id(0, "a"), feature_id(0, "b"), feature_id(1, "s2")});
  CHECK(batch.offsets == std::vector<std::uint32_t>{0, 3, 4, 5, 6, 8, 9});
}

TEST_CASE("csv parser: a separator per column splits only that column", "[core][data]") {
  // genres split at '|', tags at ';'; title holds '|' and ';' as plain characters.
  auto parser = csv_parser("label = y\ncategorical = *\nmulti_value = genres:|, tags:;\n", "y,title,genres,tags");
  example_batch batch;
  parser.prepare(batch);
  REQUIRE(parser.parse("1,a|b;c,x|y,p;q|r", batch).is_ok());
  using ss::feature_id;
  CHECK(batch.ids == std::vector<std::uint64_t>{feature_id(0, "a|b;c"), feature_id(1, "x"), feature_id(1, "y"),
                                                feature_id(2, "p"), feature_id(2, "q|r")});
  CHECK(batch.offsets == std::vector<std::uint32_t>{0, 1, 3, 5});

  // A column's own separator overrides the schema-wide one; the others keep the schema-wide one.
  auto both = csv_parser("label = y\ncategorical = *\nmulti_value_separator = |\nmulti_value = tags:;\n",
                         "y,genres,tags");
  example_batch b2;
  both.prepare(b2);
  REQUIRE(both.parse("0,x|y,p;q|r", b2).is_ok());
  CHECK(b2.ids == std::vector<std::uint64_t>{feature_id(0, "x"), feature_id(0, "y"), feature_id(1, "p"),
                                             feature_id(1, "q|r")});
}

TEST_CASE("criteo parser: arbitrary bytes never crash it", "[core][data]") {
  auto parser = criteo_parser();
  example_batch batch;
  parser.prepare(batch);

  const std::string huge(1 << 20, 'x');
  CHECK(parse_error(parser, huge) == "expected 40 fields, found 1");
  const std::string tabs(1 << 20, '\t');
  CHECK(parse_error(parser, tabs) == "expected 40 fields, found 1048577");
  std::string huge_field = criteo_row("0", std::string(1 << 20, '7') + "q");
  CHECK(parse_error(parser, huge_field) ==
        "I5: '7777777777777777777777777777777777777777...' (1048577 bytes) is not an integer");
  std::string big_category = criteo_row("1", "1", std::string(1 << 20, 'z'));
  CHECK(parse_error(parser, big_category) == "ok");

  // Random lines over an alphabet rich in delimiters, digits and odd bytes.
  ss::rng r(42);
  const char alphabet[] = {'\t', '\t', '\t', '0', '1', '2', '9', '-', '.', 'a', 'f', '\0', '\r', '\n', '\xff', 'e'};
  std::size_t good = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string line;
    if (i % 3 == 0) {
      line = criteo_row(i % 2 ? "1" : "0");
      for (int k = 0; k < 3; ++k) line[r.below(line.size())] = alphabet[r.below(sizeof alphabet)];
    } else {
      const auto n = r.below(400);
      for (std::uint64_t k = 0; k < n; ++k) line += alphabet[r.below(sizeof alphabet)];
    }
    const auto before = batch.size();
    const auto s = parser.parse(line, batch);
    if (s.is_ok()) {
      ++good;
      CHECK(batch.size() == before + 1);
    } else {
      CHECK(s.code() == ss::errc::parse_error);
      CHECK(batch.size() == before);
    }
    REQUIRE(batch.dense.size() == batch.size() * 13);
    REQUIRE(batch.offsets.size() == batch.size() * 26 + 1);
    REQUIRE(batch.ids.size() == batch.offsets.back());
  }
  CHECK(good > 0);
}

TEST_CASE("criteo parser: describe_field keeps messages short and printable", "[core][data]") {
  CHECK(describe_field("abc") == "'abc'");
  CHECK(describe_field(std::string("a\0\x01\\", 4)) == "'a\\x00\\x01\\x5c'");
  CHECK(describe_field(std::string(50, 'q')) == "'" + std::string(40, 'q') + "...' (50 bytes)");
  CHECK(to_string(bad_row_reason::too_long) == std::string("too_long"));
}

namespace {
row_parser sparse_parser(const char* spec) {
  auto schema = parse_schema(spec);
  if (!schema.is_ok()) FAIL(schema.error().to_string());
  auto bound = bind_schema(*schema);
  REQUIRE(bound.is_ok());
  return row_parser(std::move(*bound));
}
}  // namespace

TEST_CASE("libsvm parser: labels 1/+1 and 0/-1, every index an id of one feature", "[core][data]") {
  auto p = sparse_parser("format = libsvm");
  CHECK(p.schema().num_categorical() == 1);
  CHECK(p.schema().num_dense() == 0);
  example_batch b;
  p.prepare(b);
  REQUIRE(p.parse("+1 3:1 17:1  42:1", b).is_ok());
  REQUIRE(p.parse("-1\t5:1 7:0", b).is_ok());  // a 0 leaves the index out
  REQUIRE(p.parse("0", b).is_ok());           // nothing present: the missing id
  REQUIRE(p.parse("1.0 3:1.0\r", b).is_ok());
  CHECK(b.labels == std::vector<float>{1, 0, 0, 1});
  CHECK(b.offsets == std::vector<std::uint32_t>{0, 3, 4, 5, 6});
  CHECK(b.ids[0] == ss::feature_id(0, "3"));
  CHECK(b.ids[2] == ss::feature_id(0, "42"));
  CHECK(b.ids[3] == ss::feature_id(0, "5"));
  CHECK(b.ids[4] == ss::feature_id(0, ""));
  CHECK(b.ids[5] == ss::feature_id(0, "3"));
}

TEST_CASE("libsvm parser: with fields, the k-th pair is feature k (libFM files)", "[core][data]") {
  auto p = sparse_parser("format = libfm\nfields = 3");
  CHECK(p.schema().num_categorical() == 3);
  example_batch b;
  p.prepare(b);
  REQUIRE(p.parse("1 10:1 200:1 3000:1", b).is_ok());
  REQUIRE(p.parse("0 11:1 201:0 3001:1", b).is_ok());
  CHECK(b.ids == std::vector<std::uint64_t>{ss::feature_id(0, "10"), ss::feature_id(1, "200"), ss::feature_id(2, "3000"),
                                            ss::feature_id(0, "11"), ss::feature_id(1, ""), ss::feature_id(2, "3001")});
  bad_row_reason why{};
  CHECK(parse_error(p, "1 10:1 200:1", &why) == "expected 3 index:value pairs (fields = 3), found 2");
  CHECK(why == bad_row_reason::field_count);
}

TEST_CASE("libffm parser: field:index:value, several or no indices per field", "[core][data]") {
  auto p = sparse_parser("format = libffm\nfields = 3");
  example_batch b;
  p.prepare(b);
  REQUIRE(p.parse("1 2:7:1 0:5:1 2:8:1", b).is_ok());
  CHECK(b.offsets == std::vector<std::uint32_t>{0, 1, 2, 4});  // field 1 holds its missing id
  CHECK(b.ids == std::vector<std::uint64_t>{ss::feature_id(0, "5"), ss::feature_id(1, ""), ss::feature_id(2, "7"),
                                            ss::feature_id(2, "8")});
  bad_row_reason why{};
  CHECK(parse_error(p, "1 3:7:1", &why) == "field of '3:7:1' is not a number below fields = 3");
  CHECK(why == bad_row_reason::sparse_pair);
  CHECK(parse_error(p, "1 7:1", &why) == "'7:1' is not field:index:value");
}

TEST_CASE("libsvm parser: precise errors, and a failed row leaves the batch as it was", "[core][data]") {
  auto p = sparse_parser("format = libsvm");
  bad_row_reason why{};
  CHECK(parse_error(p, "2 3:1", &why) == "label: '2' is not 1, +1, 0 or -1");
  CHECK(why == bad_row_reason::label);
  CHECK(parse_error(p, "1 3:0.5", &why) ==
        "value of '3:0.5' is not 0 or 1: ids are present or absent (the model has no weight per id)");
  CHECK(why == bad_row_reason::sparse_pair);
  CHECK(parse_error(p, "1 3", &why) == "'3' is not index:value");
  CHECK(parse_error(p, "1 :1", &why) == "':1' is not index:value");
  CHECK(parse_error(p, "1 3:1:1", &why) == "'3:1:1' is not index:value");
  CHECK(parse_error(p, "", &why) == "label: '' is not 1, +1, 0 or -1");
  example_batch b;
  p.prepare(b);
  REQUIRE(p.parse("1 3:1", b).is_ok());
  const auto before = b;
  CHECK_FALSE(p.parse("1 4:1 5:2", b).is_ok());
  CHECK(b.labels == before.labels);
  CHECK(b.ids == before.ids);
  CHECK(b.offsets == before.offsets);
}

TEST_CASE("schema: the sparse formats' keys and their errors", "[core][data]") {
  CHECK(parse_schema("format = libsvm").value().format == text_format::libsvm);
  CHECK(parse_schema("format = libffm\nfields = 39").value().sparse_fields == 39);
  CHECK_THAT(parse_schema("format = libffm").error().message(), Catch::Contains("libffm needs fields = N"));
  CHECK_THAT(parse_schema("fields = 3").error().message(), Catch::Contains("only for format = libsvm or libffm"));
  CHECK_THAT(parse_schema("format = libsvm\nfields = 0").error().message(), Catch::Contains("from 1 to 127"));
  CHECK_THAT(parse_schema("format = svm").error().message(), Catch::Contains("criteo, csv, libsvm or libffm"));
  CHECK_THAT(parse_schema("format = libsvm\ndense = a").error().message(), Catch::Contains("have no named columns"));
}
