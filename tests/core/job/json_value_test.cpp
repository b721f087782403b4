#include <catch2/catch.hpp>

#include <string>

#include "ss/core/json.hpp"
#include "ss/core/json_value.hpp"

using namespace ss;

TEST_CASE("json_value: objects, arrays, escapes and exact 64-bit numbers", "[core][json]") {
  auto doc = json_value::parse(
      R"( {"a": 1.5, "id": 18446744073709551615, "neg": -42, "s": "tab\there \"q\" \u00e9 \ud83d\ude00",)"
      R"( "t": true, "n": null, "list": [1, [2, {}], "x"], "o": {"k": false}} )");
  REQUIRE(doc.is_ok());
  const auto& j = *doc;
  CHECK(j["a"].number() == 1.5);
  CHECK(j["id"].uint64() == 18446744073709551615ULL);
  CHECK(j["neg"].int64() == -42);
  CHECK(j["neg"].uint64(7) == 7);  // a negative number is no uint64: the fallback
  CHECK(j["s"].string() == "tab\there \"q\" \xc3\xa9 \xf0\x9f\x98\x80");
  CHECK(j["t"].boolean());
  CHECK(j["n"].is_null());
  CHECK(j["missing"].is_null());
  CHECK(j["missing"]["deeper"].number(3) == 3);
  REQUIRE(j["list"].items().size() == 3);
  CHECK(j["list"].items()[1].items()[1].is_object());
  CHECK(j["o"]["k"].boolean(true) == false);
  CHECK(j["s"].number(9) == 9);  // a string read as a number: the fallback
}

TEST_CASE("json_value: malformed text is refused with its offset", "[core][json]") {
  for (const char* bad : {"", "{", "{\"a\" 1}", "[1,]", "01", "[-01]", "{\"a\":1,}", "\"open", "tru", "1.", "-", "{} x", "\"\\q\"",
                          "\"\\ud800\\u0041\"", "\"a\x01\""}) {
    auto doc = json_value::parse(bad);
    INFO(bad);
    REQUIRE_FALSE(doc.is_ok());
    CHECK(doc.error().code() == errc::parse_error);
    CHECK(doc.error().message().find("at offset") != std::string::npos);
  }
  std::string deep(100, '[');
  deep += std::string(100, ']');
  auto doc = json_value::parse(deep);
  REQUIRE_FALSE(doc.is_ok());
  CHECK(doc.error().message().find("nesting deeper than 64") != std::string::npos);
}

TEST_CASE("json_value: the strict grammar refuses every malformed document", "[core][json]") {
  const char* bad[] = {
      "",
      "   ",
      "{",
      "{\"a\"}",
      "{\"a\":}",
      "{\"a\": 1,}",
      "{\"a\": 1 \"b\": 2}",
      "{\"a\": 01}",
      "{\"a\": 1.}",
      "{\"a\": .5}",
      "{\"a\": -}",
      "{\"a\": 1e}",
      "{\"a\": tru}",
      "{\"a\": nul}",
      "{\"a\": NaN}",
      "{\"a\": \"unterminated}",
      "{\"a\": \"bad \\x escape\"}",
      "{\"a\": \"bad \\u12G4\"}",
      "{\"a\": \"raw\nnewline\"}",
      "{a: 1}",
      "{\"a\": 1} trailing",
      "{\"a\": 1}}",
      "{\"a\": [1, 2}",
      "{\"a\": {\"b\": [}}",
  };
  for (const char* text : bad) {
    INFO("input: " << text);
    auto r = ss::json_value::parse(text);
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.error().code() == ss::errc::parse_error);
  }
  // Embedded NUL and truncated input at every position: an error or a value, never a crash.
  const std::string good = R"({"a": {"b": [1, true, "x\u00e9"]}, "c": -1.5e-3})";
  for (std::size_t n = 0; n < good.size(); ++n) {
    auto r = ss::json_value::parse(good.substr(0, n));
    CHECK_FALSE(r.is_ok());
  }
  REQUIRE(ss::json_value::parse(good).is_ok());
  CHECK_FALSE(ss::json_value::parse(std::string("{\"a\":\0 1}", 9)).is_ok());
}

TEST_CASE("json_array: serialized values joined into an array that parses back", "[core][json]") {
  CHECK(ss::json_array({}) == "[]");
  const std::string text = ss::json_array({"1", ss::json_quote("a\"b"), ss::json_object().add("k", true).str()});
  CHECK(text == R"([1,"a\"b",{"k":true}])");
  auto doc = ss::json_value::parse(text);
  REQUIRE(doc.is_ok());
  REQUIRE(doc->items().size() == 3);
  CHECK(doc->items()[1].string() == "a\"b");
  CHECK(doc->items()[2]["k"].boolean());
}
