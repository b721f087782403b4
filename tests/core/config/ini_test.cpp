#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "ss/core/config/ini.hpp"
#include "ss/core/config/suggest.hpp"
#include "ss/core/random.hpp"

using ss::config::ini_entry;
using ss::config::parse_ini;

namespace {

std::vector<ini_entry> parse_ok(std::string_view text) {
  auto entries = parse_ini(text, "t.ini");
  INFO(entries.error().to_string());
  REQUIRE(entries.is_ok());
  return *entries;
}

std::string parse_error(std::string_view text) {
  auto entries = parse_ini(text, "t.ini");
  REQUIRE(!entries.is_ok());
  CHECK(entries.error().code() == ss::errc::parse_error);
  return entries.error().message();
}

}  // namespace

TEST_CASE("ini: keys, sections, comments and blank lines", "[core][config]") {
  auto entries = parse_ok(
      "# leading comment\n"
      "; another comment\n"
      "\n"
      "top = 1\n"
      "  [train]   # section comment\n"
      "batch-size=256\n"
      "   lr   =   0.01   # inline comment\n"
      "path = a#b;c\n"
      "empty =\n"
      "[ gen-data ]\n"
      "rows = 5 ; inline comment\n");
  REQUIRE(entries.size() == 6);
  CHECK(entries[0].section.empty());
  CHECK(entries[0].key == "top");
  CHECK(entries[0].value == "1");
  CHECK(entries[0].line == 4);
  CHECK(entries[1].section == "train");
  CHECK(entries[1].key == "batch-size");
  CHECK(entries[1].value == "256");
  CHECK(entries[2].value == "0.01");
  CHECK(entries[2].line == 7);
  CHECK(entries[3].value == "a#b;c");  // '#' and ';' start a comment only after whitespace
  CHECK(entries[4].value.empty());
  CHECK(!entries[4].quoted);
  CHECK(entries[5].section == "gen-data");
  CHECK(entries[5].value == "5");
}

TEST_CASE("ini: quoted values and escapes", "[core][config]") {
  auto entries = parse_ok(
      "a = \"  spaced # not a comment ; \"  # comment\n"
      "b = \"q\\\"uote \\\\ tab\\t nl\\n cr\\r hex\\x41\\x7f\"\n"
      "c = \"\"\n");
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].value == "  spaced # not a comment ; ");
  CHECK(entries[0].quoted);
  CHECK(entries[1].value == "q\"uote \\ tab\t nl\n cr\r hexA\x7f");
  CHECK(entries[2].value.empty());
  CHECK(entries[2].quoted);
}

TEST_CASE("ini: CRLF line ends and a byte order mark", "[core][config]") {
  auto entries = parse_ok("\xEF\xBB\xBF[train]\r\nlr = 0.5\r\nname = x y\r\n");
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].section == "train");
  CHECK(entries[0].value == "0.5");
  CHECK(entries[1].value == "x y");
  CHECK(entries[1].line == 3);
}

TEST_CASE("ini: syntax errors name file and line", "[core][config]") {
  CHECK(parse_error("a = 1\n[train\n") == "t.ini:2: section header is missing ']'");
  CHECK(parse_error("[]\n") == "t.ini:1: empty section name");
  CHECK(parse_error("[a] b\n") == "t.ini:1: unexpected text after section header");
  CHECK(parse_error("\n\njust words\n") ==
        "t.ini:3: expected 'key = value', '[section]' or a comment, found 'just words'");
  CHECK(parse_error(" = 3\n") == "t.ini:1: missing key before '='");
  CHECK(parse_error("a = \"open\n") == "t.ini:1: a: unterminated quoted value");
  CHECK(parse_error("a = \"x\" y\n") == "t.ini:1: a: unexpected text after the closing quote");
  CHECK(parse_error("a = \"\\q\"\n") ==
        "t.ini:1: a: unknown escape '\\q' (use \\\\, \\\", \\n, \\t, \\r or \\xHH)");
  CHECK(parse_error("a = \"\\x4\"\n") == "t.ini:1: a: \\x needs two hex digits");
  CHECK(parse_error("a = \"ends in backslash\\") == "t.ini:1: a: unterminated quoted value");
}

TEST_CASE("ini: quoting round-trips any value", "[core][config]") {
  const std::vector<std::string> values = {
      "", " lead", "trail ", "\"starts with quote", "has # hash", "has ; semi", "new\nline",
      "tab\there", "back\\slash", std::string("nul\0byte", 8), "\x01\x7f", "plain", "a,b"};
  for (const std::string& v : values) {
    const std::string written = ss::config::ini_needs_quotes(v) ? ss::config::ini_quote(v) : v;
    auto entries = parse_ok("k = " + written + "\n");
    REQUIRE(entries.size() == 1);
    CHECK(entries[0].value == v);
  }
  CHECK(!ss::config::ini_needs_quotes("plain value"));
  CHECK(ss::config::ini_needs_quotes(""));
  CHECK(ss::config::ini_quote("a\"b") == "\"a\\\"b\"");
}

TEST_CASE("ini: arbitrary bytes never crash the parser", "[core][config]") {
  ss::rng rng(1234);
  const std::string alphabet = "ab=[]#;\"\\x \t\r\n,0\xEF\xBB\xBF";
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    const std::size_t length = rng.below(60);
    for (std::size_t i = 0; i < length; ++i) text += alphabet[rng.below(alphabet.size())];
    auto entries = parse_ini(text, "fuzz.ini");
    if (!entries.is_ok()) CHECK(entries.error().code() == ss::errc::parse_error);
  }
}

TEST_CASE("suggest: edit distance and closest match", "[core][config]") {
  using ss::config::closest_match;
  using ss::config::edit_distance;
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("bach-size", "batch-size") == 1);
  CHECK(edit_distance("lr", "rl") == 1);  // an adjacent swap is one edit
  CHECK(edit_distance("kitten", "sitting") == 3);
  const std::vector<std::string> names = {"batch-size", "lr", "threads", "train"};
  CHECK(closest_match("bach-size", names) == "batch-size");
  CHECK(closest_match("lr2", names) == "lr");
  CHECK(closest_match("trian", names) == "train");
  CHECK(closest_match("zzz", names).empty());
  CHECK(closest_match("completely-different", names).empty());
  CHECK(closest_match(std::string(1000, 'a'), names).empty());
}
