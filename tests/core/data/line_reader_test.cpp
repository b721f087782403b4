#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "data_test_util.hpp"
#include "ss/core/data/line_reader.hpp"
#include "ss/core/random.hpp"

using namespace ss::data;

namespace {

struct read_line {
  std::string text;
  std::uint32_t file = 0;
  std::uint64_t number = 0;
  std::uint64_t offset = 0;
  bool too_long = false;
  std::uint64_t length = 0;
  line_position after;  // position() once this line was returned
};

std::vector<read_line> read_everything(line_reader& reader) {
  std::vector<read_line> out;
  text_line line;
  while (true) {
    auto more = reader.next(line);
    REQUIRE(more.is_ok());
    if (!*more) break;
    out.push_back({std::string(line.text), line.file_index, line.line_number, line.byte_offset, line.too_long,
                   line.length, reader.position()});
  }
  return out;
}

line_reader open_reader(std::vector<std::string> paths, line_reader_options options = {}) {
  auto r = line_reader::open(std::move(paths), options);
  REQUIRE(r.is_ok());
  return std::move(*r);
}

std::vector<std::string> texts(const std::vector<read_line>& lines) {
  std::vector<std::string> out;
  for (const auto& l : lines) out.push_back(l.text);
  return out;
}

}  // namespace

TEST_CASE("line reader: lines, numbers, offsets, CRLF, empty and unterminated lines", "[core][data]") {
  test::temp_dir dir;
  const auto path = dir.file("a.txt");
  test::write_all(path, "one\r\ntwo\n\n\r\nthree\nlast");
  auto reader = open_reader({path});
  CHECK(reader.total_bytes() == 22);
  const auto lines = read_everything(reader);
  REQUIRE(lines.size() == 4);
  CHECK(texts(lines) == std::vector<std::string>{"one", "two", "three", "last"});
  CHECK(lines[0].number == 1);
  CHECK(lines[0].offset == 0);
  CHECK(lines[1].number == 2);
  CHECK(lines[1].offset == 5);
  CHECK(lines[2].number == 5);  // the empty lines 3 and 4 still count
  CHECK(lines[2].offset == 12);
  CHECK(lines[3].number == 6);
  CHECK(lines[3].offset == 18);
  CHECK(lines[0].after == line_position{0, 5, 2});
  CHECK(reader.empty_lines() == 2);
  CHECK(reader.bytes_consumed() == 22);
  CHECK(reader.position() == line_position{1, 0, 1});
}

TEST_CASE("line reader: gzip is detected by content and reads like the plain file", "[core][data]") {
  test::temp_dir dir;
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "row " + std::to_string(i) + (i % 7 == 0 ? "\r\n" : "\n");
  test::write_all(dir.file("plain.txt"), text);
  test::write_gzip(dir.file("packed.txt"), text);  // no .gz suffix on purpose
  test::write_all(dir.file("looks.gz"), text);     // a suffix that lies

  REQUIRE(*is_gzip_file(dir.file("packed.txt")));
  REQUIRE_FALSE(*is_gzip_file(dir.file("looks.gz")));

  auto plain = open_reader({dir.file("plain.txt")});
  auto packed = open_reader({dir.file("packed.txt")});
  auto liar = open_reader({dir.file("looks.gz")});
  const auto a = read_everything(plain);
  const auto b = read_everything(packed);
  const auto c = read_everything(liar);
  REQUIRE(a.size() == 5000);
  REQUIRE(b.size() == a.size());
  REQUIRE(c.size() == a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].text == b[i].text);
    CHECK(a[i].offset == b[i].offset);
    CHECK(a[i].after == b[i].after);
    CHECK(a[i].text == c[i].text);
  }
  CHECK(packed.bytes_consumed() == packed.total_bytes());
  CHECK(packed.total_bytes() < plain.total_bytes());
}

TEST_CASE("line reader: several files in order, including empty ones", "[core][data]") {
  test::temp_dir dir;
  test::write_all(dir.file("1.txt"), "a\nb\n");
  test::write_all(dir.file("2.txt"), "");
  test::write_gzip(dir.file("3.txt"), "c\nd");
  test::write_all(dir.file("4.txt"), "\n\ne\n");
  auto reader = open_reader({dir.file("1.txt"), dir.file("2.txt"), dir.file("3.txt"), dir.file("4.txt")});
  std::uint64_t last_consumed = 0;
  std::vector<std::string> got;
  std::vector<std::uint32_t> files;
  std::vector<std::uint64_t> numbers;
  text_line line;
  while (true) {
    auto more = reader.next(line);
    REQUIRE(more.is_ok());
    if (!*more) break;
    got.emplace_back(line.text);
    files.push_back(line.file_index);
    numbers.push_back(line.line_number);
    CHECK(reader.bytes_consumed() >= last_consumed);
    last_consumed = reader.bytes_consumed();
  }
  CHECK(got == std::vector<std::string>{"a", "b", "c", "d", "e"});
  CHECK(files == std::vector<std::uint32_t>{0, 0, 2, 2, 3});
  CHECK(numbers == std::vector<std::uint64_t>{1, 2, 1, 2, 3});
  CHECK(line.path == dir.file("4.txt"));
  CHECK(reader.empty_lines() == 2);
  CHECK(reader.bytes_consumed() == reader.total_bytes());
  CHECK(reader.file_count() == 4);
  CHECK(reader.path(2) == dir.file("3.txt"));
}

TEST_CASE("line reader: missing, unreadable and corrupt inputs", "[core][data]") {
  test::temp_dir dir;
  test::write_all(dir.file("ok.txt"), "x\n");

  auto missing = line_reader::open({dir.file("ok.txt"), dir.file("nope.txt")});
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.error().code() == ss::errc::not_found);
  CHECK(missing.error().message() == dir.file("nope.txt") + ": no such file");

  auto directory = line_reader::open({dir.path().string()});
  REQUIRE_FALSE(directory.is_ok());
  CHECK(directory.error().code() == ss::errc::io_error);
  CHECK(directory.error().message().find(dir.path().string()) == 0);

  CHECK(line_reader::open({}).error().code() == ss::errc::invalid_argument);

  // A gzip stream cut in the middle.
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "line number " + std::to_string(i * 7919) + "\n";
  test::write_gzip(dir.file("full.gz"), text);
  const auto packed = test::read_all(dir.file("full.gz"));
  test::write_all(dir.file("cut.gz"), packed.substr(0, packed.size() / 2));
  {
    auto reader = open_reader({dir.file("cut.gz")});
    text_line line;
    std::size_t lines = 0;
    ss::status error;
    while (true) {
      auto more = reader.next(line);
      if (!more) {
        error = more.error();
        break;
      }
      REQUIRE(*more);  // never a clean end
      ++lines;
    }
    CHECK(lines < 20000);
    CHECK(error.code() == ss::errc::corrupt);
    CHECK(error.message().find(dir.file("cut.gz") + ": truncated gzip stream") == 0);
    CHECK_FALSE(reader.next(line).is_ok());  // the error repeats
  }
  // Damaged compressed bytes.
  std::string damaged = packed;
  for (std::size_t i = 100; i < 200; ++i) damaged[i] = static_cast<char>(damaged[i] ^ 0x5a);
  test::write_all(dir.file("damaged.gz"), damaged);
  {
    auto reader = open_reader({dir.file("damaged.gz")});
    text_line line;
    ss::result<bool> more = true;
    while (more.is_ok() && *more) more = reader.next(line);
    REQUIRE_FALSE(more.is_ok());
    CHECK(more.error().code() == ss::errc::corrupt);
    CHECK(more.error().message().find(dir.file("damaged.gz")) == 0);
  }
  // Only the magic bytes.
  test::write_all(dir.file("magic.gz"), "\x1f\x8b");
  {
    auto reader = open_reader({dir.file("magic.gz")});
    text_line line;
    auto more = reader.next(line);
    REQUIRE_FALSE(more.is_ok());
    CHECK(more.error().code() == ss::errc::corrupt);
  }
}

TEST_CASE("line reader: over-long lines are flagged and skipped without buffering them", "[core][data]") {
  test::temp_dir dir;
  const std::string long_line(5000, 'L');
  const std::string text = "short\n" + long_line + "\r\nafter\n" + std::string(100, 'x') + "\n" + long_line;
  test::write_all(dir.file("plain.txt"), text);
  test::write_gzip(dir.file("packed.txt"), text);
  for (const auto* name : {"plain.txt", "packed.txt"}) {
    line_reader_options options;
    options.max_line_bytes = 100;
    options.buffer_bytes = 16;  // forces growth and compaction
    auto reader = open_reader({dir.file(name)}, options);
    const auto lines = read_everything(reader);
    REQUIRE(lines.size() == 5);
    CHECK(lines[0].text == "short");
    CHECK(lines[1].too_long);
    CHECK(lines[1].text.empty());
    CHECK(lines[1].length == 5001);  // with the '\r'
    CHECK(lines[1].number == 2);
    CHECK(lines[1].offset == 6);
    CHECK(lines[2].text == "after");
    CHECK(lines[2].number == 3);
    CHECK(lines[2].offset == 6 + 5002);
    CHECK_FALSE(lines[3].too_long);  // exactly at the limit
    CHECK(lines[3].text.size() == 100);
    CHECK(lines[4].too_long);  // unterminated, at the end of the file
    CHECK(lines[4].length == 5000);
    CHECK(lines[4].number == 5);
    CHECK(reader.position() == line_position{1, 0, 1});
  }
}

TEST_CASE("line reader: tiny buffers split lines anywhere without changing them", "[core][data]") {
  test::temp_dir dir;
  ss::rng r(7);
  std::string text;
  std::vector<std::string> expected;
  for (int i = 0; i < 400; ++i) {
    std::string line(r.below(60), 'a');
    for (auto& c : line) c = static_cast<char>('a' + r.below(26));
    text += line + (r.below(4) == 0 ? "\r\n" : "\n");
    if (!line.empty()) expected.push_back(line);
  }
  test::write_all(dir.file("t.txt"), text);
  for (std::size_t buffer : {1u, 2u, 3u, 7u, 64u, 1000u}) {
    line_reader_options options;
    options.buffer_bytes = buffer;
    auto reader = open_reader({dir.file("t.txt")}, options);
    CHECK(texts(read_everything(reader)) == expected);
  }
}

TEST_CASE("line reader: seek resumes exactly where a position was taken", "[core][data]") {
  test::temp_dir dir;
  std::string first, second;
  for (int i = 0; i < 300; ++i) first += "first " + std::to_string(i) + (i % 5 == 0 ? "\n\n" : "\n");
  for (int i = 0; i < 200; ++i) second += "second " + std::to_string(i) + "\r\n";
  second += "no newline at the end";
  test::write_all(dir.file("a.txt"), first);
  test::write_gzip(dir.file("b.txt"), second);
  const std::vector<std::string> paths = {dir.file("a.txt"), dir.file("b.txt")};

  auto reader = open_reader(paths);
  const auto all = read_everything(reader);
  REQUIRE(all.size() == 501);
  for (std::size_t k : {std::size_t{0}, std::size_t{1}, std::size_t{150}, std::size_t{299}, std::size_t{300},
                        std::size_t{420}, std::size_t{499}, std::size_t{500}}) {
    auto resumed = open_reader(paths);
    REQUIRE(resumed.seek(all[k].after).is_ok());
    const auto rest = read_everything(resumed);
    REQUIRE(rest.size() == all.size() - k - 1);
    for (std::size_t i = 0; i < rest.size(); ++i) {
      CHECK(rest[i].text == all[k + 1 + i].text);
      CHECK(rest[i].number == all[k + 1 + i].number);
      CHECK(rest[i].file == all[k + 1 + i].file);
    }
  }
  // Back to the very start.
  REQUIRE(reader.seek({0, 0, 1}).is_ok());
  CHECK(read_everything(reader).size() == all.size());

  // Offsets that do not start a line, or lie past the end.
  auto bad = reader.seek({0, 3, 1});
  CHECK(bad.code() == ss::errc::invalid_argument);
  CHECK(bad.message() == dir.file("a.txt") + ": byte offset 3 is not the start of a line");
  text_line line;
  CHECK_FALSE(reader.next(line).is_ok());
  CHECK(reader.seek({1, 1000000, 1}).code() == ss::errc::out_of_range);
  CHECK(reader.seek({0, 1000000, 1}).code() == ss::errc::out_of_range);
  CHECK(reader.seek({3, 0, 1}).code() == ss::errc::out_of_range);
  REQUIRE(reader.seek({2, 0, 1}).is_ok());  // the end
  CHECK_FALSE(*reader.next(line));
}

TEST_CASE("line reader: seek refuses a file that changed since the position was taken", "[core][data]") {
  test::temp_dir dir;
  auto rows = [](char tag) {
    std::string text;
    for (int i = 0; i < 100; ++i) text += "row " + std::to_string(1000 + i) + " " + tag + "\n";  // fixed width
    return text;
  };
  const auto path = dir.file("a.txt");
  test::write_all(path, rows('a'));
  auto reader = open_reader({path});
  const auto all = read_everything(reader);
  REQUIRE(all.size() == 100);
  const line_position at = all[49].after;
  CHECK(at.previous_line_crc != 0);
  CHECK(at.file_size == 1100);

  // Taken through a buffer that splits every line, the position is the same.
  line_reader_options tiny;
  tiny.buffer_bytes = 3;
  auto split = open_reader({path}, tiny);
  const auto split_all = read_everything(split);
  CHECK(split_all[49].after.previous_line_crc == at.previous_line_crc);
  CHECK(split_all[99].after.previous_line_crc == all[99].after.previous_line_crc);

  SECTION("the same bytes: resumes") {
    auto resumed = open_reader({path});
    REQUIRE(resumed.seek(at).is_ok());
    CHECK(resumed.position().previous_line_crc == at.previous_line_crc);  // before reading on
    CHECK(read_everything(resumed).size() == 50);
  }
  SECTION("rewritten with other rows of the same size: refused, naming the line") {
    test::write_all(path, rows('b'));
    auto resumed = open_reader({path});
    auto st = resumed.seek(at);
    CHECK(st.code() == ss::errc::corrupt);
    CHECK(st.message() == path + " changed since it was read (line 50, the last one before byte offset 550, is not "
                                 "the one read); a training file must stay as it is while its job runs: new data "
                                 "needs a new job");
    text_line line;
    CHECK_FALSE(resumed.next(line).is_ok());
    // A position that recorded nothing (an older version's) is not checked.
    CHECK(resumed.seek({0, 550, 51}).is_ok());
  }
  SECTION("grown or cut: refused, naming the sizes") {
    test::write_all(path, rows('a') + "one more\n");
    auto resumed = open_reader({path});
    auto st = resumed.seek(at);
    CHECK(st.code() == ss::errc::corrupt);
    CHECK(st.message().find(path + " changed since it was read (1100 bytes then, 1109 now)") == 0);
  }
  SECTION("gzip: the line is checked in the uncompressed stream") {
    test::write_gzip(dir.file("z.txt"), rows('a'));
    auto packed = open_reader({dir.file("z.txt")});
    const auto zall = read_everything(packed);
    const line_position zat = zall[49].after;
    CHECK(zat.previous_line_crc == at.previous_line_crc);
    auto same = open_reader({dir.file("z.txt")});
    CHECK(same.seek(zat).is_ok());
    test::write_gzip(dir.file("z.txt"), rows('b'));
    auto resumed = open_reader({dir.file("z.txt")});
    line_position unsized = zat;
    unsized.file_size = 0;  // compressed sizes may agree by chance: the line still tells
    CHECK(resumed.seek(unsized).code() == ss::errc::corrupt);
  }
}

TEST_CASE("line reader: entry points skip a file or enter it at a line, by next and by seek", "[core][data]") {
  test::temp_dir dir;
  const std::string a = dir.file("a.txt"), b = dir.file("b.txt.gz"), c = dir.file("c.txt");
  test::write_all(a, "a1\na2\na3\n");
  test::write_gzip(b, "b1\nb2\nb3\nb4\n");
  test::write_all(c, "c1\nc2\n");
  // Where b3 and c2 begin, as a reader over the whole files reports them.
  line_position at_b3, at_c2;
  {
    auto whole = open_reader({a, b, c});
    for (const auto& l : read_everything(whole)) {
      if (l.text == "b2") at_b3 = l.after;
      if (l.text == "c1") at_c2 = l.after;
    }
  }
  REQUIRE(at_b3.byte_offset == 6);
  REQUIRE(at_c2.previous_line_crc != 0);
  std::vector<file_entry> entries(3);
  entries[0].skip = true;
  entries[1].at = at_b3;
  entries[2].at = at_c2;
  auto r = line_reader::open({a, b, c}, {}, entries);
  REQUIRE(r.is_ok());
  text_line line;
  std::vector<std::string> seen;
  while (*r->next(line)) {
    CHECK(line.past_header);
    seen.push_back(std::string(line.text));
    if (seen.size() == 1) CHECK(line.line_number == 3);
  }
  CHECK(seen == std::vector<std::string>{"b3", "b4", "c2"});
  // A seek to a file's start goes where its entry says.
  REQUIRE(r->seek({2, 0, 1}).is_ok());
  REQUIRE(*r->next(line));
  CHECK(line.text == "c2");
  REQUIRE(r->seek({0, 0, 1}).is_ok());
  REQUIRE(*r->next(line));
  CHECK(line.text == "b3");
  // Without entries, a file read from its start has its header line in front.
  auto plain = open_reader({a});
  REQUIRE(*plain.next(line));
  CHECK_FALSE(line.past_header);
  // An entry inside a file that changed since is refused as a seek would be.
  entries[2].at.previous_line_crc ^= 1;
  auto changed = line_reader::open({a, b, c}, {}, entries);
  REQUIRE(changed.is_ok());
  REQUIRE(changed->seek({2, 0, 1}).code() == ss::errc::corrupt);
  CHECK(line_reader::open({a, b}, {}, entries).error().code() == ss::errc::invalid_argument);
}
