#include <catch2/catch.hpp>

#include <charconv>
#include <string>
#include <vector>

#include "data_test_util.hpp"
#include "ss/core/data/batch_reader.hpp"
#include "ss/core/hash.hpp"

using namespace ss::data;

namespace {

batch_reader open_reader(batch_reader_options options) {
  auto r = batch_reader::open(std::move(options));
  if (!r.is_ok()) FAIL(r.error().to_string());
  return std::move(*r);
}

batch_reader_options criteo_options(std::vector<std::string> paths, std::size_t batch_size = 1000) {
  batch_reader_options o;
  o.schema = input_schema::criteo();
  o.paths = std::move(paths);
  o.batch_size = batch_size;
  return o;
}

// Reads everything into one batch; only the last batch may be short of `batch_size`.
example_batch read_all_examples(batch_reader& reader, std::size_t batch_size = 1000) {
  example_batch all;
  all.reset(reader.schema().num_dense(), reader.schema().num_categorical());
  example_batch batch;
  bool short_seen = false;
  while (true) {
    auto more = reader.next(batch);
    if (!more.is_ok()) FAIL(more.error().to_string());
    if (!*more) {
      CHECK(batch.empty());
      break;
    }
    CHECK_FALSE(short_seen);
    short_seen = batch.size() < batch_size;
    all.append(batch);
  }
  return all;
}

std::size_t positives(const example_batch& b) {
  std::size_t n = 0;
  for (const float l : b.labels) n += l == 1.0f ? 1 : 0;
  return n;
}

// Rows [first, last) of `all` as a batch.
example_batch slice(const example_batch& all, std::size_t first, std::size_t last) {
  example_batch out;
  out.reset(all.num_dense, all.num_sparse);
  const std::size_t d = all.num_dense;
  const std::size_t s = all.num_sparse;
  for (std::size_t e = first; e < last; ++e) {
    out.begin_example(all.labels[e]);
    for (std::size_t j = 0; j < d; ++j) out.add_dense(all.dense[e * d + j]);
    for (std::size_t f = 0; f < s; ++f) {
      for (auto k = all.offsets[e * s + f]; k < all.offsets[e * s + f + 1]; ++k) out.add_id(all.ids[k]);
      out.end_feature();
    }
  }
  return out;
}

}  // namespace

TEST_CASE("batch reader: the Criteo sample parses completely", "[core][data]") {
  const auto path = test::sample_path("criteo/train-10k.txt");
  auto reader = open_reader(criteo_options({path}));
  const auto all = read_all_examples(reader);
  const auto& c = reader.counters();
  CHECK(all.size() == 10000);
  CHECK(c.rows_read == 10000);
  CHECK(c.good == 10000);
  CHECK(c.bad == 0);
  CHECK(c.empty_lines == 0);
  CHECK(c.header_lines == 0);
  CHECK(reader.bad_row_reports().empty());
  CHECK(positives(all) == 2182);
  CHECK(all.num_dense == 13);
  CHECK(all.num_sparse == 26);
  CHECK(all.one_id_per_feature());
  CHECK(reader.bytes_consumed() == reader.total_bytes());
  CHECK(reader.total_bytes() == test::fs::file_size(path));

  // First row, as the Kaggle file starts: 0, I1 = 1, ..., C1 = 68fd1e64.
  CHECK(all.labels[0] == 0.0f);
  CHECK(all.dense[0] == static_cast<float>(std::log(2.0)));
  CHECK(all.dense[4] == static_cast<float>(std::log(1383.0)));
  CHECK(all.ids[0] == 0x5261fcc10277dbc7ULL);

  // Independently: every negative raw value (975 of them) became 0, every other the transform.
  const auto lines = test::split_lines(test::read_all(path));
  std::size_t negative = 0;
  for (std::size_t e = 0; e < lines.size(); ++e) {
    std::size_t start = 0;
    for (int field = 0; field < 14; ++field) {
      const auto tab = lines[e].find('\t', start);
      const std::string value = lines[e].substr(start, tab - start);
      start = tab + 1;
      if (field == 0 || value.empty()) continue;
      long long v = 0;
      std::from_chars(value.data(), value.data() + value.size(), v);
      const float got = all.dense[e * 13 + static_cast<std::size_t>(field - 1)];
      if (v < 0) {
        ++negative;
        CHECK(got == 0.0f);
      } else if (got != static_cast<float>(std::log1p(static_cast<double>(v)))) {
        FAIL("row " << e << " field " << field);
      }
    }
  }
  CHECK(negative == 975);
}

TEST_CASE("batch reader: the Avazu sample with its schema", "[core][data]") {
  auto schema = parse_schema("format=csv\ndelimiter=,\nheader=true\nlabel=click\nignore=id\ncategorical=*\n");
  REQUIRE(schema.is_ok());
  batch_reader_options o;
  o.schema = *schema;
  o.paths = {test::sample_path("avazu/train-10k")};
  auto reader = open_reader(o);
  CHECK(reader.schema().num_categorical() == 22);
  CHECK(reader.schema().num_dense() == 0);
  const auto all = read_all_examples(reader);
  CHECK(all.size() == 9999);
  CHECK(reader.counters().good == 9999);
  CHECK(reader.counters().bad == 0);
  CHECK(reader.counters().header_lines == 1);
  CHECK(positives(all) == 1706);
  CHECK(all.num_sparse == 22);
  // Row 1: 1000009418151094273,0,14102100,1005,0,1fbe01fe,...,C21 = 79 (CRLF stripped).
  CHECK(all.labels[0] == 0.0f);
  CHECK(all.ids[0] == ss::feature_id(0, "14102100"));
  CHECK(all.ids[3] == ss::feature_id(3, "1fbe01fe"));
  CHECK(all.ids[21] == ss::feature_id(21, "79"));
}

TEST_CASE("batch reader: gzip, several files and seek give the same examples", "[core][data]") {
  test::temp_dir dir;
  const auto lines = test::split_lines(test::read_all(test::sample_path("criteo/train-10k.txt")));
  test::write_gzip(dir.file("all.txt"), test::join_lines(lines, 0, 10000));
  test::write_all(dir.file("part1.txt"), test::join_lines(lines, 0, 3500));
  test::write_gzip(dir.file("part2.gz"), test::join_lines(lines, 3500, 7200));
  test::write_all(dir.file("part3.txt"), test::join_lines(lines, 7200, 10000));
  const std::vector<std::string> parts = {dir.file("part1.txt"), dir.file("part2.gz"), dir.file("part3.txt")};

  auto plain = open_reader(criteo_options({test::sample_path("criteo/train-10k.txt")}));
  const auto expected = read_all_examples(plain);
  auto packed = open_reader(criteo_options({dir.file("all.txt")}));
  CHECK(test::same_examples(read_all_examples(packed), expected));
  auto split = open_reader(criteo_options(parts));
  CHECK(test::same_examples(read_all_examples(split), expected));

  // Positions after each batch of 1000 rows: in part1, in the gzip part2 (mid-file) and at file
  // ends. Resuming from each gives exactly the remaining rows.
  auto walker = open_reader(criteo_options(parts));
  example_batch batch;
  std::vector<line_position> positions;
  while (*walker.next(batch)) positions.push_back(walker.position());
  REQUIRE(positions.size() == 10);
  CHECK(positions[2].file_index == 0);
  CHECK(positions[4].file_index == 1);
  CHECK(positions[4].byte_offset > 0);
  for (std::size_t k = 0; k < positions.size(); ++k) {
    auto resumed = open_reader(criteo_options(parts));
    REQUIRE(resumed.seek(positions[k]).is_ok());
    const auto rest = read_all_examples(resumed);
    REQUIRE(rest.size() == 10000 - 1000 * (k + 1));
    CHECK(test::same_examples(rest, slice(expected, 1000 * (k + 1), 10000)));
  }
}

TEST_CASE("batch reader: csv headers in every file, and resuming across them", "[core][data]") {
  test::temp_dir dir;
  const auto lines = test::split_lines(test::read_all(test::sample_path("avazu/train-10k")));
  REQUIRE(lines.size() == 10000);
  const std::string header = lines[0] + "\n";
  test::write_all(dir.file("a.csv"), header + test::join_lines(lines, 1, 4001));
  test::write_gzip(dir.file("b.csv"), header + test::join_lines(lines, 4001, 10000));
  batch_reader_options o;
  o.schema = input_schema::avazu();
  o.paths = {dir.file("a.csv"), dir.file("b.csv")};
  o.batch_size = 1000;
  auto reader = open_reader(o);
  const auto all = read_all_examples(reader);
  CHECK(all.size() == 9999);
  CHECK(reader.counters().header_lines == 2);
  CHECK(positives(all) == 1706);

  // Resume at the start of b.csv (its header comes next) and in the middle of it.
  for (const line_position& pos : {line_position{1, 0, 1}, line_position{0, 0, 1}}) {
    auto resumed = open_reader(o);
    REQUIRE(resumed.seek(pos).is_ok());
    const std::size_t skip = pos.file_index == 1 ? 4000 : 0;
    CHECK(test::same_examples(read_all_examples(resumed), slice(all, skip, 9999)));
  }
  auto walker = open_reader(o);
  example_batch batch;
  for (int i = 0; i < 6; ++i) REQUIRE(*walker.next(batch));
  const auto mid = walker.position();
  CHECK(mid.file_index == 1);
  auto resumed = open_reader(o);
  REQUIRE(resumed.seek(mid).is_ok());
  CHECK(test::same_examples(read_all_examples(resumed), slice(all, 6000, 9999)));
  CHECK(resumed.counters().header_lines == 1);  // only a.csv's, read when opening

  // A file whose header differs stops the reader.
  test::write_all(dir.file("c.csv"), "id,click,hour\n1,0,14102100\n");
  o.paths = {dir.file("a.csv"), dir.file("c.csv")};
  auto mismatch = open_reader(o);
  ss::result<bool> more = true;
  while (more.is_ok() && *more) more = mismatch.next(batch);
  REQUIRE_FALSE(more.is_ok());
  CHECK(more.error().code() == ss::errc::parse_error);
  CHECK(more.error().message() == dir.file("c.csv") + ":1: header differs from the header of " + dir.file("a.csv"));

  // A header that does not fit the schema fails at open, naming the file and line.
  o.paths = {dir.file("c.csv")};
  o.schema.label = "clicked";
  auto bad_schema = batch_reader::open(o);
  REQUIRE_FALSE(bad_schema.is_ok());
  CHECK(bad_schema.error().message() == dir.file("c.csv") + ":1: label column 'clicked' not in header");
}

TEST_CASE("batch reader: bad rows are counted, reported and good rows around them kept", "[core][data]") {
  test::temp_dir dir;
  const auto sample = test::split_lines(test::read_all(test::sample_path("criteo/train-10k.txt")));
  std::string text;
  std::vector<float> good_labels;
  auto good = [&](std::size_t i) {
    text += sample[i] + "\n";
    good_labels.push_back(sample[i][0] == '1' ? 1.0f : 0.0f);
  };
  good(0);
  good(1);
  text += sample[2].substr(0, sample[2].rfind('\t')) + "\n";  // line 3: 39 fields
  good(3);
  text += "x" + sample[4].substr(1) + "\n";  // line 5: bad label
  text += "\n";                              // line 6: empty, skipped
  std::string bad_int = sample[5];
  bad_int.replace(bad_int.find('\t'), 1, "\t12a");  // I1 becomes "12a..."
  text += bad_int + "\n";                           // line 7
  text += std::string(200000, 'h') + "\n";          // line 8: longer than the limit
  good(6);
  text += std::string("\x00\xff\x01garbage\t\t\x7f", 13) + "\r\n";  // line 10: binary garbage
  good(7);
  good(8);  // line 12

  test::write_all(dir.file("mixed.txt"), text);
  auto o = criteo_options({dir.file("mixed.txt")});
  o.bad_rows.max_bad_fraction = 1.0;
  o.lines.max_line_bytes = 65536;
  auto reader = open_reader(o);
  const auto all = read_all_examples(reader);
  CHECK(all.labels == good_labels);
  const auto& c = reader.counters();
  CHECK(c.rows_read == 11);
  CHECK(c.good == 6);
  CHECK(c.bad == 5);
  CHECK(c.empty_lines == 1);
  CHECK(c.bad_for(bad_row_reason::field_count) == 2);
  CHECK(c.bad_for(bad_row_reason::label) == 1);
  CHECK(c.bad_for(bad_row_reason::dense_value) == 1);
  CHECK(c.bad_for(bad_row_reason::too_long) == 1);
  const auto p = dir.file("mixed.txt");
  REQUIRE(reader.bad_row_reports().size() == 5);
  CHECK(reader.bad_row_reports()[0] == p + ":3: expected 40 fields, found 39");
  CHECK(reader.bad_row_reports()[1] == p + ":5: label: 'x' is not 0 or 1");
  CHECK(reader.bad_row_reports()[2].rfind(p + ":7: I1: '12a", 0) == 0);
  CHECK(reader.bad_row_reports()[3] == p + ":8: line is longer than the limit of 65536 bytes (200000 bytes)");
  CHECK(reader.bad_row_reports()[4] == p + ":10: expected 40 fields, found 3");

  // report_first caps the reports, not the counting.
  o.bad_rows.report_first = 2;
  auto capped = open_reader(o);
  read_all_examples(capped);
  CHECK(capped.bad_row_reports().size() == 2);
  CHECK(capped.counters().bad == 5);
}

TEST_CASE("batch reader: too many bad rows stop the reader", "[core][data]") {
  test::temp_dir dir;
  const auto sample = test::split_lines(test::read_all(test::sample_path("criteo/train-10k.txt")));
  std::string text;
  for (std::size_t i = 0; i < 3000; ++i) text += (i % 20 == 5 ? std::string("oops") : sample[i]) + "\n";
  test::write_all(dir.file("bad.txt"), text);

  // 5% bad: under the default policy the reader stops once grace_rows (1000) rows were read.
  auto o = criteo_options({dir.file("bad.txt")}, 256);
  auto reader = open_reader(o);
  example_batch batch;
  ss::result<bool> more = true;
  std::size_t good = 0;
  while (more.is_ok() && *more) {
    more = reader.next(batch);
    if (more.is_ok()) good += batch.size();
  }
  REQUIRE_FALSE(more.is_ok());
  CHECK(more.error().code() == ss::errc::too_many_bad_rows);
  CHECK(more.error().message() == "50 of 1000 rows read are bad, over the limit of 1% (10 rows); first bad row: " +
                                      dir.file("bad.txt") + ":6: expected 40 fields, found 1");
  CHECK(reader.counters().rows_read == 1000);
  CHECK(good < 1000);
  CHECK_FALSE(reader.next(batch).is_ok());  // the error repeats

  // A 10% limit lets the same file through.
  o.bad_rows.max_bad_fraction = 0.1;
  auto lenient = open_reader(o);
  CHECK(read_all_examples(lenient, 256).size() == 2850);

  // Below grace_rows the check happens at the end of the input.
  test::write_all(dir.file("small.txt"), sample[0] + "\n" + sample[1] + "\nbroken\n");
  auto small = open_reader(criteo_options({dir.file("small.txt")}));
  auto first = small.next(batch);
  REQUIRE_FALSE(first.is_ok());
  CHECK(first.error().code() == ss::errc::too_many_bad_rows);
  CHECK(first.error().message().find("1 of 3 rows read are bad") == 0);
}

TEST_CASE("batch reader: CSV read with the Criteo schema names the likely cause once", "[core][data]") {
  // The Avazu sample (comma-separated, 24 columns) under the default Criteo schema: every row is
  // bad; the error says why and what to do, once, and the per-row reports stay plain.
  auto reader = open_reader(criteo_options({test::sample_path("avazu/train-10k")}, 256));
  example_batch batch;
  ss::result<bool> more = true;
  while (more.is_ok() && *more) more = reader.next(batch);
  REQUIRE_FALSE(more.is_ok());
  const std::string message = more.error().message();
  CHECK(message.find("first bad row: " + test::sample_path("avazu/train-10k") + ":1: expected 40 fields, found 1; "
                     "the line splits into 24 fields at ',', and the schema reads 40 fields split at tab: the file "
                     "is of another layout; name it with --schema (criteo, avazu, or a schema file") !=
        std::string::npos);
  std::size_t mentions = 0;
  for (auto at = message.find("--schema"); at != std::string::npos; at = message.find("--schema", at + 1)) ++mentions;
  CHECK(mentions == 1);
  for (const auto& report : reader.bad_row_reports()) CHECK(report.find("--schema") == std::string::npos);
}

TEST_CASE("batch reader: libSVM files, and one read with the Criteo schema names --schema libsvm", "[core][data]") {
  test::temp_dir dir;
  std::string text;
  for (int i = 0; i < 300; ++i)
    text += std::string(i % 3 == 0 ? "+1" : "-1") + " " + std::to_string(i % 7) + ":1 " + std::to_string(100 + i % 11) +
            ":1\n";
  test::write_all(dir.file("a.svm"), text);
  batch_reader_options o;
  o.schema = input_schema::libsvm();
  o.paths = {dir.file("a.svm")};
  o.batch_size = 128;
  auto reader = open_reader(o);
  const auto all = read_all_examples(reader, 128);
  CHECK(all.size() == 300);
  CHECK(all.num_sparse == 1);
  CHECK(all.ids.size() == 600);  // two ids a row, one feature
  CHECK(reader.counters().bad == 0);

  auto wrong = open_reader(criteo_options({dir.file("a.svm")}, 128));
  example_batch batch;
  ss::result<bool> more = true;
  while (more.is_ok() && *more) more = wrong.next(batch);
  REQUIRE_FALSE(more.is_ok());
  CHECK_THAT(more.error().message(),
             Catch::Contains("the line reads like libSVM (label index:value ...): name it with --schema libsvm"));
}

TEST_CASE("batch reader: empty, missing and truncated inputs", "[core][data]") {
  test::temp_dir dir;
  test::write_all(dir.file("empty.txt"), "");
  auto empty = open_reader(criteo_options({dir.file("empty.txt")}));
  example_batch batch;
  auto more = empty.next(batch);
  REQUIRE(more.is_ok());
  CHECK_FALSE(*more);
  CHECK(batch.empty());
  CHECK(empty.counters().rows_read == 0);

  batch_reader_options csv;
  csv.schema = input_schema::avazu();
  csv.paths = {dir.file("empty.txt")};
  auto no_header = batch_reader::open(csv);
  REQUIRE_FALSE(no_header.is_ok());
  CHECK(no_header.error().message() == "no header line: every input file is empty");

  auto missing = batch_reader::open(criteo_options({dir.file("empty.txt"), dir.file("missing.txt")}));
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.error().code() == ss::errc::not_found);
  CHECK(missing.error().message() == dir.file("missing.txt") + ": no such file");

  const auto sample = test::read_all(test::sample_path("criteo/train-10k.txt"));
  test::write_gzip(dir.file("full.gz"), sample);
  const auto packed = test::read_all(dir.file("full.gz"));
  test::write_all(dir.file("cut.gz"), packed.substr(0, packed.size() * 2 / 3));
  auto cut = open_reader(criteo_options({dir.file("cut.gz")}));
  more = true;
  while (more.is_ok() && *more) more = cut.next(batch);
  REQUIRE_FALSE(more.is_ok());
  CHECK(more.error().code() == ss::errc::corrupt);
  CHECK(more.error().message().find(dir.file("cut.gz")) == 0);
  CHECK(cut.counters().bad == 0);  // a cut stream is an error, not a bad row

  auto zero = criteo_options({dir.file("empty.txt")});
  zero.batch_size = 0;
  CHECK(batch_reader::open(zero).error().code() == ss::errc::invalid_argument);
}
