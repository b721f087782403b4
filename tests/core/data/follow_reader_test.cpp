// The follow reader on real files: appends, a partial last line, rotation by rename, copytruncate,
// a directory that gains files (and one out of order), and resuming from a position after each,
// also after a rotation while no reader ran.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data_test_util.hpp"
#include "ss/core/data/follow_batch_reader.hpp"
#include "ss/core/data/follow_reader.hpp"
#include "ss/core/data/generator.hpp"

using namespace ss::data;
namespace fs = std::filesystem;

namespace {

void append(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << bytes;
  REQUIRE(out.good());
}

follow_reader open_follow(const std::string& path, const std::string& pattern = "*") {
  auto r = follow_reader::open(follow_source{path, pattern});
  REQUIRE(r.is_ok());
  return std::move(*r);
}

// Lines until the reader has said "no line now" twice in a row (a rotation is finished one check
// after it is seen).
std::vector<std::string> read_until_idle(follow_reader& reader) {
  std::vector<std::string> out;
  text_line line;
  for (int idle = 0; idle < 2;) {
    auto more = reader.next(line);
    REQUIRE(more.is_ok());
    if (*more) {
      out.emplace_back(line.text);
      idle = 0;
    } else {
      ++idle;
    }
  }
  return out;
}

std::vector<std::string> numbered(const std::string& prefix, int from, int to) {
  std::vector<std::string> out;
  for (int i = from; i < to; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

std::string text_of(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST_CASE("follow: appended lines appear as written, a last line without its break waits for it", "[core][data]") {
  test::temp_dir dir;
  const auto path = dir.file("stream.tsv");
  test::write_all(path, "a\nb\nhalf");
  auto reader = open_follow(path);
  CHECK_FALSE(reader.directory());
  CHECK(read_until_idle(reader) == std::vector<std::string>{"a", "b"});
  CHECK(reader.position().byte_offset == 4);
  CHECK(reader.position().line_number == 3);
  CHECK(reader.bytes_behind() == 4);  // "half" is there, not yet a line
  append(path, "-done\r\n\nc\n");
  CHECK(read_until_idle(reader) == std::vector<std::string>{"half-done", "c"});
  const auto& c = reader.counters();
  CHECK(c.lines == 4);
  CHECK(c.empty_lines == 1);
  CHECK(c.waits >= 4);
  CHECK(c.files == 1);
  CHECK(reader.bytes_behind() == 0);
  const auto pos = reader.position();
  CHECK(pos.file == "stream.tsv");
  CHECK(pos.inode != 0);
  CHECK(pos.byte_offset == 18);
  CHECK(pos.line_number == 6);
}

TEST_CASE("follow: a file that does not exist yet is waited for", "[core][data]") {
  test::temp_dir dir;
  const auto path = dir.file("later.tsv");
  auto reader = open_follow(path);
  text_line line;
  auto more = reader.next(line);
  REQUIRE(more.is_ok());
  CHECK_FALSE(*more);
  CHECK(reader.position().file.empty());
  const auto notices = reader.take_notices();
  REQUIRE(notices.size() == 1);
  CHECK(notices[0].find("waiting for " + path) != std::string::npos);
  test::write_all(path, "x\n");
  CHECK(read_until_idle(reader) == std::vector<std::string>{"x"});
}

TEST_CASE("follow: rotation by rename finishes the old file through its descriptor, then reads the new one",
          "[core][data]") {
  test::temp_dir dir;
  const auto path = dir.file("app.log");
  test::write_all(path, text_of(numbered("old", 0, 3)));
  auto reader = open_follow(path);
  CHECK(read_until_idle(reader) == numbered("old", 0, 3));
  // The writer keeps its descriptor: what it writes after the rename goes to the old file, its
  // last line without a break; then a new file takes the name.
  std::ofstream writer(path, std::ios::binary | std::ios::app);
  fs::rename(path, dir.file("app.log.1"));
  writer << "old3\nold4-unterminated";
  writer.flush();
  test::write_all(path, text_of(numbered("new", 0, 2)));
  CHECK(read_until_idle(reader) == std::vector<std::string>{"old3", "old4-unterminated", "new0", "new1"});
  CHECK(reader.counters().rotations == 1);
  CHECK(reader.counters().files == 2);
  const auto notices = reader.take_notices();
  REQUIRE_FALSE(notices.empty());
  CHECK(notices.back().find("was rotated") != std::string::npos);
  // The old file keeps growing while the rotation settles: nothing of it is lost.
  std::ofstream writer2(path, std::ios::binary | std::ios::app);
  fs::rename(path, dir.file("app.log.2"));
  test::write_all(path, "next0\n");
  text_line line;
  auto more = reader.next(line);
  REQUIRE(more.is_ok());
  CHECK_FALSE(*more);  // the rotation is seen; the old file may still grow
  writer2 << "new2\n";
  writer2.flush();
  CHECK(read_until_idle(reader) == std::vector<std::string>{"new2", "next0"});
  CHECK(reader.counters().rotations == 2);
}

TEST_CASE("follow: copytruncate is said, counted, and read again from the start", "[core][data]") {
  test::temp_dir dir;
  const auto path = dir.file("app.log");
  test::write_all(path, text_of(numbered("a", 0, 5)));
  auto reader = open_follow(path);
  CHECK(read_until_idle(reader).size() == 5);
  fs::resize_file(path, 0);
  append(path, "b0\nb1\n");
  CHECK(read_until_idle(reader) == std::vector<std::string>{"b0", "b1"});
  CHECK(reader.counters().truncations == 1);
  const auto notices = reader.take_notices();
  REQUIRE(notices.size() == 1);
  CHECK(notices[0].find("was truncated to") != std::string::npos);
  CHECK(reader.position().line_number == 3);
}

TEST_CASE("follow: a directory is read in name order, a file named before the current one is refused",
          "[core][data]") {
  test::temp_dir dir;
  const auto d = dir.path().string();
  test::write_all(dir.file("part-002.tsv"), text_of(numbered("two", 0, 2)));
  test::write_all(dir.file("part-001.tsv"), text_of(numbered("one", 0, 2)) + "one-unterminated");
  test::write_all(dir.file("part-003.tmp"), "ignored\n");
  test::write_all(dir.file(".part-004.tsv"), "hidden\n");
  auto reader = open_follow(d, "part-*.tsv");
  CHECK(reader.directory());
  // The first file is finished (a later one exists): its last line counts without its break.
  CHECK(read_until_idle(reader) == numbered("one", 0, 2) + std::vector<std::string>{"one-unterminated"} +
                                       numbered("two", 0, 2));
  CHECK(reader.position().file == "part-002.tsv");
  append(dir.file("part-002.tsv"), "two2\n");
  test::write_all(dir.file("part-004.tsv"), "four0\n");
  test::write_all(dir.file("part-000.tsv"), "zero0\n");  // too late: part-002 is being read
  CHECK(read_until_idle(reader) == std::vector<std::string>{"two2", "four0"});
  CHECK(reader.counters().files_refused == 1);
  CHECK(reader.counters().files == 3);
  const auto notices = reader.take_notices();
  REQUIRE(notices.size() == 1);
  CHECK(notices[0].find("part-000.tsv appeared after") != std::string::npos);
  // Refused once: it is not said again.
  test::write_all(dir.file("part-005.tsv"), "five0\n");
  CHECK(read_until_idle(reader) == std::vector<std::string>{"five0"});
  CHECK(reader.counters().files_refused == 1);
  CHECK(reader.take_notices().empty());
  CHECK(follow_name_matches("*", "a.tsv"));
  CHECK_FALSE(follow_name_matches("*", ".a.tsv"));
  CHECK_FALSE(follow_name_matches("*.tsv", "a.tsv.tmp"));
}

TEST_CASE("follow: resuming from a position reads every line after it once", "[core][data]") {
  test::temp_dir dir;
  const auto path = dir.file("s.tsv");
  test::write_all(path, text_of(numbered("r", 0, 4)));
  follow_position pos;
  {
    auto first = open_follow(path);
    text_line line;
    for (int i = 0; i < 2; ++i) REQUIRE(*first.next(line));
    pos = first.position();
  }
  append(path, "r4\n");
  auto second = open_follow(path);
  REQUIRE(second.seek(pos).is_ok());
  CHECK(read_until_idle(second) == numbered("r", 2, 5));
  CHECK(second.counters().truncations == 0);
  // From the start (nothing read yet).
  auto third = open_follow(path);
  REQUIRE(third.seek(follow_position{}).is_ok());
  CHECK(read_until_idle(third) == numbered("r", 0, 5));
  // A position of another input is refused.
  CHECK_FALSE(third.seek(follow_position{"other.tsv", 1, 2, 3, 2, 0}).is_ok());
}

TEST_CASE("follow: resuming after a rotation while no reader ran finds the rotated file by its identity",
          "[core][data]") {
  test::temp_dir dir;
  const auto path = dir.file("app.log");
  test::write_all(path, text_of(numbered("old", 0, 3)));
  follow_position pos;
  {
    auto first = open_follow(path);
    text_line line;
    REQUIRE(*first.next(line));
    pos = first.position();
  }
  append(path, "old3\n");
  fs::rename(path, dir.file("app.log-20260101"));
  test::write_all(path, text_of(numbered("new", 0, 2)));
  auto second = open_follow(path);
  REQUIRE(second.seek(pos).is_ok());
  CHECK(read_until_idle(second) == numbered("old", 1, 4) + numbered("new", 0, 2));
  CHECK(second.counters().tails_lost == 0);
  CHECK(second.counters().rotations == 1);
  const auto notices = second.take_notices();
  REQUIRE_FALSE(notices.empty());
  CHECK(notices[0].find("rotated while no reader ran") != std::string::npos);

  // Rotated away and removed: its rest is lost, said and counted; the new file is read whole.
  fs::rename(path, dir.file("gone"));
  pos = second.position();
  test::write_all(path, "newer0\n");
  fs::remove(dir.file("gone"));
  auto third = open_follow(path);
  REQUIRE(third.seek(pos).is_ok());
  CHECK(read_until_idle(third) == std::vector<std::string>{"newer0"});
  CHECK(third.counters().tails_lost == 1);
  CHECK(third.take_notices()[0].find("rows after that position in it are lost") != std::string::npos);
}

TEST_CASE("follow: resuming in a file truncated or rewritten while no reader ran reads it from its start",
          "[core][data]") {
  test::temp_dir dir;
  const auto path = dir.file("app.log");
  test::write_all(path, text_of(numbered("a", 0, 6)));
  follow_position pos;
  {
    auto first = open_follow(path);
    text_line line;
    for (int i = 0; i < 4; ++i) REQUIRE(*first.next(line));
    pos = first.position();
  }
  {  // Truncated below the position.
    std::ofstream(path, std::ios::binary | std::ios::trunc) << "b0\n";
    auto reader = open_follow(path);
    REQUIRE(reader.seek(pos).is_ok());
    CHECK(read_until_idle(reader) == std::vector<std::string>{"b0"});
    CHECK(reader.counters().truncations == 1);
  }
  {  // Truncated, then written past the position again (the same inode, other lines).
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text_of(numbered("c", 0, 6));
    auto reader = open_follow(path);
    REQUIRE(reader.seek(pos).is_ok());
    CHECK(read_until_idle(reader) == numbered("c", 0, 6));
    CHECK(reader.counters().truncations == 1);
    CHECK(reader.take_notices()[0].find("is not the one read") != std::string::npos);
  }
}

TEST_CASE("follow: a directory resumes in its file, and between files, refusing names before it", "[core][data]") {
  test::temp_dir dir;
  const auto d = dir.path().string();
  test::write_all(dir.file("001"), text_of(numbered("one", 0, 2)));
  test::write_all(dir.file("002"), text_of(numbered("two", 0, 3)));
  follow_position mid, between;
  {
    auto first = open_follow(d);
    text_line line;
    for (int i = 0; i < 3; ++i) REQUIRE(*first.next(line));  // one0 one1 two0
    mid = first.position();
    CHECK(mid.file == "002");
  }
  test::write_all(dir.file("003"), "three0\n");
  {
    auto second = open_follow(d);
    REQUIRE(second.seek(mid).is_ok());
    CHECK(read_until_idle(second) == numbered("two", 1, 3) + std::vector<std::string>{"three0"});
    CHECK(second.counters().files_refused == 0);  // 001 was there before the position
    test::write_all(dir.file("004"), "four0\n");
    CHECK(read_until_idle(second) == std::vector<std::string>{"four0"});
  }
  // Between files: inode 0 names the last file finished.
  between.file = "003";
  test::write_all(dir.file("0025"), "late\n");
  auto third = open_follow(d);
  REQUIRE(third.seek(between).is_ok());
  CHECK(read_until_idle(third) == std::vector<std::string>{"four0"});
  CHECK(third.counters().files_refused == 0);  // already there at the resume: taken as read
  test::write_all(dir.file("0026"), "later\n");
  CHECK(read_until_idle(third).empty());
  CHECK(third.counters().files_refused == 1);
}

TEST_CASE("follow: a gzip file cannot be followed", "[core][data]") {
  test::temp_dir dir;
  const auto path = dir.file("c.gz");
  test::write_gzip(path, "a\nb\n");
  auto reader = open_follow(path);
  text_line line;
  auto more = reader.next(line);
  REQUIRE_FALSE(more.is_ok());
  CHECK(more.error().message().find("a gzip file cannot be followed") != std::string::npos);
  CHECK_FALSE(follow_reader::open(follow_source{dir.path().string(), "a/b"}).is_ok());
  CHECK_FALSE(follow_reader::open(follow_source{"", "*"}).is_ok());
}

TEST_CASE("follow batches: partial batches of what is there, positions at their ends, resumed exactly",
          "[core][data]") {
  test::temp_dir dir;
  generator_options g;
  g.rows = 50;
  REQUIRE(generate_criteo(g, dir.file("all.tsv")).is_ok());
  const auto lines = test::split_lines(test::read_all(dir.file("all.tsv")));
  const auto path = dir.file("stream.tsv");
  test::write_all(path, test::join_lines(lines, 0, 15) + "1\tbad-row\n");
  follow_batch_options o;
  o.schema = input_schema::criteo();
  o.source.path = path;
  o.batch_size = 10;
  o.bad_rows.grace_rows = 1000;
  auto opened = follow_batch_reader::open(o);
  REQUIRE(opened.is_ok());
  auto& reader = *opened;
  example_batch batch;
  REQUIRE(*reader.fill(10) == 10);
  CHECK_FALSE(reader.caught_up());
  reader.take(batch);
  CHECK(batch.size() == 10);
  CHECK(reader.pending() == 0);
  REQUIRE(*reader.fill(10) == 5);  // 5 good rows and a bad one: all there is
  CHECK(reader.caught_up());
  CHECK(reader.counters().bad == 1);
  reader.take(batch);
  CHECK(batch.size() == 5);
  const auto after = reader.position();
  CHECK(after.line_number == 17);
  test::write_all(dir.file("rest.tsv"), test::join_lines(lines, 15, 50));
  append(path, test::read_all(dir.file("rest.tsv")));
  REQUIRE(*reader.fill(4) == 4);  // a limit below the batch size (a job's last examples)
  // A new reader resumed at the end of the second batch reads the other 35 rows once.
  auto again = follow_batch_reader::open(o);
  REQUIRE(again.is_ok());
  REQUIRE(again->seek(after).is_ok());
  std::uint64_t rows = 0;
  while (*again->fill(10) > 0) {
    again->take(batch);
    rows += batch.size();
  }
  CHECK(rows == 35);
  CHECK(again->counters().bad == 0);
}

TEST_CASE("follow batches: a header schema binds to the first header, also when resumed behind it",
          "[core][data]") {
  test::temp_dir dir;
  const auto path = dir.file("clicks.csv");
  input_schema schema;
  schema.label = "click";
  schema.categorical_rest = true;
  follow_batch_options o;
  o.schema = schema;
  o.source.path = path;
  o.batch_size = 4;
  auto reader = follow_batch_reader::open(o);
  REQUIRE(reader.is_ok());
  CHECK(*reader->fill(4) == 0);  // no file yet
  test::write_all(path, "click,site\n1,a\n0,b\n");
  REQUIRE(*reader->fill(4) == 2);
  example_batch batch;
  reader->take(batch);
  CHECK(batch.num_sparse == 1);
  const auto pos = reader->position();
  append(path, "1,c\n");
  auto resumed = follow_batch_reader::open(o);
  REQUIRE(resumed.is_ok());
  REQUIRE(resumed->seek(pos).is_ok());
  REQUIRE(*resumed->fill(4) == 1);
  resumed->take(batch);
  CHECK(batch.num_sparse == 1);
  CHECK(batch.labels == std::vector<float>{1.0f});
}
