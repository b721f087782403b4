// request_reader: a request's rows read as a data file's rows are, with the label optional; text
// and JSON bodies; every bad row, body and header refused with the row and the reason named.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "ss/core/data/input_schema.hpp"
#include "ss/core/data/row_parser.hpp"
#include "ss/core/serving/request_rows.hpp"

using namespace ss;
using serving::request_problem;
using serving::request_reader;

namespace {

// A Criteo row: label, 13 integers, 26 categorical values; `drop_label` leaves the label out.
std::string criteo_row(int k, bool drop_label = false) {
  std::string row = drop_label ? "" : std::to_string(k % 2) + "\t";
  for (int i = 0; i < 13; ++i) row += std::to_string((k * 7 + i) % 50) + "\t";
  for (int i = 0; i < 26; ++i) row += (i ? "\t" : "") + std::to_string(1000 + k * 31 + i);
  return row;
}

// The batch a data file's reader makes of these lines (labels as given).
data::example_batch as_file_reads(const data::input_schema& schema, const std::vector<std::string>& lines,
                                  const std::string& header = "") {
  auto bound = header.empty() ? data::bind_schema(schema) : data::bind_schema(schema, header);
  REQUIRE(bound.is_ok());
  data::row_parser parser(*bound);
  data::example_batch b;
  parser.prepare(b);
  for (const auto& l : lines) REQUIRE(parser.parse(l, b).is_ok());
  return b;
}

// Equal features (labels aside: a request's rows are not labelled).
void check_same_features(const data::example_batch& a, const data::example_batch& b) {
  REQUIRE(a.size() == b.size());
  CHECK(a.dense == b.dense);
  CHECK(a.ids == b.ids);
  CHECK(a.offsets == b.offsets);
}

request_reader criteo_reader() {
  auto r = request_reader::create(data::input_schema::criteo(), 13, 26);
  REQUIRE(r.is_ok());
  return std::move(*r);
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\t') out += "\\t";
    else if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else out += c;
  }
  return out;
}

}  // namespace

TEST_CASE("request rows: Criteo rows with and without the label read as the data file's rows", "[serving]") {
  auto reader = criteo_reader();
  const std::vector<std::string> lines = {criteo_row(1), criteo_row(2), criteo_row(3)};
  const auto want = as_file_reads(data::input_schema::criteo(), lines);
  data::example_batch got;
  // With labels, CRLF line ends, blank lines and no final newline.
  REQUIRE_FALSE(reader.read_text(lines[0] + "\r\n\n" + lines[1] + "\n" + lines[2], 10, got));
  check_same_features(got, want);
  CHECK(got.labels == want.labels);
  // Without labels, and mixed.
  REQUIRE_FALSE(reader.read_text(criteo_row(1, true) + "\n" + criteo_row(2, true) + "\n" + criteo_row(3, true) + "\n",
                                 10, got));
  check_same_features(got, want);
  // JSON: the same rows, tabs escaped.
  const std::string json = "{ \"rows\" : [\"" + json_escape(lines[0]) + "\", \"" + json_escape(lines[1]) +
                           "\",\n\"" + json_escape(lines[2]) + "\"] }";
  REQUIRE_FALSE(reader.read_json(json, 10, got));
  check_same_features(got, want);
  // The first row decides for the request: a row of the other kind is refused (it may be a
  // labelled row that lost a field), and the next request decides again.
  auto e = reader.read_text(criteo_row(1, true) + "\n" + lines[1] + "\n", 10, got);
  REQUIRE(e);
  CHECK(e->row == 2);
  CHECK(e->message == "row 2 (line 2): expected 39 fields, as the request's first row (without the label column "
                      "'label'), found 40");
  e = reader.read_json("{\"rows\": [\"" + json_escape(lines[0]) + "\", \"" + json_escape(criteo_row(2, true)) + "\"]}",
                       10, got);
  REQUIRE(e);
  CHECK(e->message == "row 2: expected 40 fields, as the request's first row (with the label column 'label'), found 39");
  REQUIRE_FALSE(reader.read_text(criteo_row(1, true) + "\n", 10, got));
}

TEST_CASE("request rows: a bad row refuses the request, naming the row and the reason", "[serving]") {
  auto reader = criteo_reader();
  data::example_batch got;
  std::string bad = criteo_row(5);
  bad.replace(bad.find('\t') + 1, 1, "x");  // I1 is not an integer
  auto e = reader.read_text(criteo_row(1) + "\n\n" + criteo_row(2) + "\n" + bad + "\n", 10, got);
  REQUIRE(e);
  CHECK(e->problem == request_problem::bad_row);
  CHECK(e->row == 3);
  CHECK(e->row_reason == data::bad_row_reason::dense_value);
  CHECK(e->message.rfind("row 3 (line 4): I1: 'x", 0) == 0);
  CHECK(e->message.find("is not an integer") != std::string::npos);

  e = reader.read_text(criteo_row(1) + "\nnot\ta\trow\n", 10, got);
  REQUIRE(e);
  CHECK(e->row == 2);
  CHECK(e->row_reason == data::bad_row_reason::field_count);
  CHECK(e->message == "row 2 (line 2): expected 40 fields, as the request's first row (with the label column "
                      "'label'), found 3");
  e = reader.read_text("not\ta\trow\n" + criteo_row(1), 10, got);
  REQUIRE(e);
  CHECK(e->row == 1);
  CHECK(e->message == "row 1 (line 1): expected 40 fields (39 without the label column 'label'), found 3");

  std::string label = criteo_row(1);
  label[0] = '7';
  e = reader.read_json("{\"rows\":[\"" + json_escape(criteo_row(2)) + "\",\"" + json_escape(label) + "\"]}", 10, got);
  REQUIRE(e);
  CHECK(e->row == 2);
  CHECK(e->row_reason == data::bad_row_reason::label);
  CHECK(e->message.rfind("row 2: label: '7' is not 0 or 1", 0) == 0);
}

TEST_CASE("request rows: too many rows, no rows and bad JSON are refused with what is wrong", "[serving]") {
  auto reader = criteo_reader();
  data::example_batch got;
  std::string three = criteo_row(1) + "\n" + criteo_row(2) + "\n" + criteo_row(3) + "\n";
  CHECK_FALSE(reader.read_text(three, 3, got));
  auto e = reader.read_text(three, 2, got);
  REQUIRE(e);
  CHECK(e->problem == request_problem::too_many_rows);
  CHECK(e->message == "more than 2 rows in one request (--max-request-rows)");
  const std::string row = "\"" + json_escape(criteo_row(1)) + "\"";
  e = reader.read_json("{\"rows\":[" + row + "," + row + "," + row + "]}", 2, got);
  REQUIRE(e);
  CHECK(e->problem == request_problem::too_many_rows);

  e = reader.read_text("\n\r\n", 2, got);
  REQUIRE(e);
  CHECK(e->problem == request_problem::no_rows);
  e = reader.read_json("{\"rows\": []}", 2, got);
  REQUIRE(e);
  CHECK(e->problem == request_problem::no_rows);

  const std::vector<std::pair<std::string, std::string>> bad_json = {
      {"", "expected an object"},
      {"[1]", "expected an object"},
      {"{\"rows\": [" + row + "]", "expected ',' or '}'"},
      {"{\"rows\": [" + row + "]} x", "text after the object"},
      {"{\"rows\": " + row + "}", "\"rows\" is not an array"},
      {"{\"rows\": [1]}", "rows[0] is not a string"},
      {"{\"rows\": [" + row + ", null]}", "rows[1] is not a string"},
      {"{\"rows\": [\"a\tb\"]}", "rows[0] is not a string"},  // a raw tab is not JSON
      {"{\"rows\": [\"\\x\"]}", "rows[0] is not a string"},
      {"{\"rows\": [\"\\ud800\"]}", "rows[0] is not a string"},
      {"{\"rows\": [], \"rows\": []}", "\"rows\" is given twice"},
      {"{\"rws\": []}", "unknown member \"rws\""},
      {"{}", "the request has no \"rows\" member"},
  };
  for (const auto& [body, says] : bad_json) {
    INFO(body);
    e = reader.read_json(body, 10, got);
    REQUIRE(e);
    CHECK(e->problem == request_problem::bad_json);
    CHECK(e->message.find(says) != std::string::npos);
  }
  e = reader.read_json("{\"rows\": [" + row + "], \"header\": \"a\"}", 10, got);
  REQUIRE(e);
  CHECK(e->problem == request_problem::bad_header);
}

TEST_CASE("request rows: JSON strings are unescaped, \\u escapes included", "[serving]") {
  data::input_schema schema;
  schema.header = false;
  schema.columns = {"label", "x", "c"};
  schema.label = "label";
  schema.dense = {"x"};
  schema.categorical = {"c"};
  auto reader = request_reader::create(schema, 1, 1);
  REQUIRE(reader.is_ok());
  data::example_batch got;
  REQUIRE_FALSE(reader->read_json(R"({"rows": ["1,2,caf\u00e9 \ud83d\ude00 \"q\" \/"]})", 10, got));
  const auto want = as_file_reads(schema, {"1,2,caf\xC3\xA9 \xF0\x9F\x98\x80 \"q\" /"});
  check_same_features(*&got, want);
  // The label in the middle of a csv row, left out.
  schema.columns = {"x", "label", "c"};
  auto middle = request_reader::create(schema, 1, 1);
  REQUIRE(middle.is_ok());
  REQUIRE_FALSE(middle->read_text("5,abc\n6,xyz\n", 10, got));
  check_same_features(got, as_file_reads(schema, {"5,0,abc", "6,1,xyz"}));
  REQUIRE_FALSE(middle->read_text("5,1,abc\n", 10, got));
  check_same_features(got, as_file_reads(schema, {"5,0,abc"}));
}

TEST_CASE("request rows: a schema with a header line reads the request's header, label or not", "[serving]") {
  data::input_schema schema;  // csv with a header: click is the label, id ignored
  schema.header = true;
  schema.label = "click";
  schema.dense = {"price"};
  schema.categorical = {"site", "app"};
  schema.ignore = {"id"};
  auto reader = request_reader::create(schema, 1, 2);
  REQUIRE(reader.is_ok());
  CHECK(reader->needs_header());
  data::example_batch got;
  const auto want = as_file_reads(schema, {"7,1,2.5,s1,a1", "8,0,0.5,s2,a2"}, "id,click,price,site,app");

  REQUIRE_FALSE(reader->read_text("id,click,price,site,app\n7,1,2.5,s1,a1\n8,0,0.5,s2,a2\n", 10, got));
  check_same_features(got, want);
  // The label column left out of the header and the rows; the columns in another order.
  REQUIRE_FALSE(reader->read_text("\xEF\xBB\xBFsite,id,app,price\r\ns1,7,a1,2.5\r\ns2,8,a2,0.5\r\n", 10, got));
  check_same_features(got, want);
  REQUIRE_FALSE(reader->read_json(R"({"header": "id,price,site,app", "rows": ["7,2.5,s1,a1", "8,0.5,s2,a2"]})", 10,
                                  got));
  check_same_features(got, want);

  auto e = reader->read_text("id,price,site,app\n7,2.5,s1,a1\n8,0.5,s2\n", 10, got);
  REQUIRE(e);
  CHECK(e->message == "row 2 (line 3): expected 4 fields (as the header names), found 3");
  e = reader->read_text("id,price,site\n7,2.5,s1\n", 10, got);
  REQUIRE(e);
  CHECK(e->problem == request_problem::bad_header);
  CHECK(e->message.find("categorical column 'app' not in header") != std::string::npos);
  e = reader->read_json(R"({"rows": ["7,2.5,s1,a1"]})", 10, got);
  REQUIRE(e);
  CHECK(e->problem == request_problem::bad_header);
  e = reader->read_text("\n\n", 10, got);
  REQUIRE(e);
  CHECK(e->problem == request_problem::bad_header);
}

TEST_CASE("request rows: libSVM rows with and without the label", "[serving]") {
  auto reader = request_reader::create(data::input_schema::libsvm(), 0, 1);
  REQUIRE(reader.is_ok());
  data::example_batch got;
  REQUIRE_FALSE(reader->read_text("1 3:1 7:1\n5:1 9:1\n", 10, got));
  check_same_features(got, as_file_reads(data::input_schema::libsvm(), {"1 3:1 7:1", "0 5:1 9:1"}));
  auto e = reader->read_text("1 3:1 7:2\n", 10, got);
  REQUIRE(e);
  CHECK(e->row_reason == data::bad_row_reason::sparse_pair);
}

TEST_CASE("request rows: a schema of other feature counts than the model's is refused", "[serving]") {
  auto r = request_reader::create(data::input_schema::criteo(), 13, 25);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.error().message().find("26 categorical features, the model has 13 and 25") != std::string::npos);
}
