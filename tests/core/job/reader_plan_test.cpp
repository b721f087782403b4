// Resuming on another reader count: readers of one count read parts of the files, their commits
// become a plan, and the readers of the next count, entering their files where the plan says and
// finishing the shuffle windows left unfinished, train every row the job's number of epochs in all,
// none twice, with bad rows counted once.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "../data/data_test_util.hpp"
#include "ss/core/data/epoch_reader.hpp"
#include "ss/core/io/keyed_text.hpp"
#include "ss/core/job/input_options.hpp"
#include "ss/core/job/job_options.hpp"
#include "ss/core/job/reader_plan.hpp"
#include "ss/core/job/snapshot.hpp"

using namespace ss;
using namespace ss::job;
namespace test = ss::data::test;

namespace {

constexpr std::size_t kBatch = 16;

// CSV files with a header; row n has dense value n. Every 41st row has a bad label.
struct files {
  test::temp_dir dir;
  std::vector<std::string> paths;
  std::size_t good = 0, bad = 0;
  std::map<float, std::size_t> row_of;  // a row's dense value, as parsed -> its number

  explicit files(std::size_t count) {
    std::size_t n = 0;
    for (std::size_t f = 0; f < count; ++f) {
      std::string text = "click,n,c\n";
      for (std::size_t i = 0; i < 60 + 23 * f; ++i, ++n) {
        const bool broken = n % 41 == 40;
        text += (broken ? "x" : std::to_string(n % 2)) + "," + std::to_string(n) + ",id" + std::to_string(n % 7) + "\n";
        (broken ? bad : good) += 1;
      }
      paths.push_back(dir.file("part-" + std::to_string(f) + ".csv"));
      test::write_all(paths.back(), text);
    }
    test::write_all(schema_path, "format = csv\nlabel = click\ndense = n\ncategorical = c\n");
    job_options one = job(1, 1);
    auto r = data::epoch_reader::open(options(one, {}, 0));
    REQUIRE(r.is_ok());
    data::example_batch b;
    std::size_t seen = 0;
    while (*r->next(b))
      for (std::size_t e = 0; e < b.size(); ++e, ++seen) row_of[b.dense[e]] = seen;
    REQUIRE(row_of.size() == good);
  }

  // shuffle: examples per shuffle window (0: read in order).
  job_options job(int readers, int epochs, int shuffle = 0) const {
    job_options o;
    o.train = paths;
    o.readers = readers;
    o.passes.epochs = epochs;
    o.passes.shuffle_buffer = shuffle;
    o.batch_size = kBatch;
    o.input.schema = schema_path;
    o.input.max_bad_fraction = 1.0;
    return o;
  }

  data::epoch_reader_options options(const job_options& o, const reader_plan& plan, int index) const {
    auto input = reader_options(o.input, files_of_reader(o, index), kBatch);
    REQUIRE(input.is_ok());
    data::epoch_reader_options e;
    e.input = std::move(*input);
    e.progress = progress_of_reader(o, plan, index);
    e.epochs = static_cast<std::uint32_t>(o.passes.epochs);
    e.shuffle_window = o.passes.shuffle_window();
    e.seed = reader_seed(o, index);
    auto inherited = inherited_windows(o, windows_of_reader(o, plan, index));
    REQUIRE(inherited.is_ok());
    e.inherited = std::move(*inherited);
    return e;
  }

  std::string schema_path = dir.file("schema.ini");
};

// One reader of `o` under `plan`: from its commit `from` (if valid), up to `batches` batches
// (every one left with a negative count). Rows it handed out are counted in `seen`; the result is
// its commit after them.
reader_commit read(const files& f, const job_options& o, const reader_plan& plan, int index, int batches,
                   std::map<std::size_t, int>& seen, const reader_commit& from = {}) {
  auto opened = data::epoch_reader::open(f.options(o, plan, index));
  REQUIRE(opened.is_ok());
  auto& r = *opened;
  reader_commit c = from;
  if (from.valid) REQUIRE(r.seek(resume_position_of(from)).is_ok());
  const std::uint64_t examples0 = from.valid ? from.examples : 0, bad0 = from.valid ? from.bad_rows : 0;
  data::example_batch b;
  for (int k = 0; batches < 0 || k < batches;) {
    auto more = r.next(b);
    REQUIRE(more.is_ok());
    if (!*more) {
      auto again = r.next_epoch();
      REQUIRE(again.is_ok());
      if (!*again) break;
      continue;
    }
    for (std::size_t e = 0; e < b.size(); ++e) ++seen[f.row_of.at(b.dense[e])];
    c = commit_at(r.position(), examples0 + r.examples(), bad0 + r.first_epoch_bad_rows());
    ++k;
  }
  return c;
}

void check_every_row(const files& f, const std::map<std::size_t, int>& seen, int epochs) {
  REQUIRE(seen.size() == f.good);
  for (const auto& [row, times] : seen) {
    INFO("row " << row);
    CHECK(times == epochs);
  }
}

}  // namespace

TEST_CASE("reader plan: 2 readers, then 3, then 1, train every row once per epoch", "[core][job]") {
  const int epochs = GENERATE(1, 2);
  // Windows of 40 examples: three batches of 16, the last a partial one; 0: read in order.
  const int shuffle = GENERATE(0, 40);
  // The first of the three readers stops inside the window it inherited, or past it.
  const int first_batches = GENERATE(1, 5);
  INFO("epochs " << epochs << ", shuffle window " << shuffle << ", first reader of three: " << first_batches
                 << " batches");
  files f(7);
  std::map<std::size_t, int> seen;
  // Two readers, stopped at different points (the second inside its second file or epoch; both
  // inside a window when shuffled).
  auto two = f.job(2, epochs, shuffle);
  std::vector<reader_commit> commits = {read(f, two, {}, 0, 4, seen), read(f, two, {}, 1, 13, seen)};
  auto plan = replan_readers(two, 2, {}, commits);
  REQUIRE(plan.is_ok());
  CHECK(plan->examples == commits[0].examples + commits[1].examples);
  // Files read through, entered inside, and not reached: each kind is here.
  int through = 0, inside = 0, untouched = 0;
  for (const auto& p : plan->files) {
    through += p.passes > 0 && p.at.byte_offset == 0;
    inside += p.at.byte_offset > 0;
    untouched += p == data::file_progress{};
  }
  CHECK(through > 0);
  CHECK(inside > 0);
  CHECK(untouched > 0);
  CHECK(plan->windows.size() == (shuffle > 0 ? 2u : 0u));
  // Three readers: one never commits (the window it inherited stays left), one restarts from its
  // own commit under the plan.
  auto three = f.job(3, epochs, shuffle);
  commits = {read(f, three, *plan, 0, first_batches, seen), reader_commit{}, read(f, three, *plan, 2, 4, seen)};
  if (shuffle > 0) CHECK(commits[0].inherited == (first_batches == 1 ? 1u : 0u));
  commits[0] = read(f, three, *plan, 0, 1, seen, commits[0]);
  commits[2] = read(f, three, *plan, 2, 9, seen, commits[2]);
  auto next = replan_readers(three, 3, *plan, commits);
  REQUIRE(next.is_ok());
  if (shuffle > 0) {
    // The window reader 1 never began is still left, as it was.
    REQUIRE_FALSE(next->windows.empty());
    CHECK(std::count(next->windows.begin(), next->windows.end(), plan->windows[1]) == 1);
  }
  // One reader finishes the job.
  auto one = f.job(1, epochs, shuffle);
  const auto last = read(f, one, *next, 0, -1, seen);
  check_every_row(f, seen, epochs);
  CHECK(next->examples + last.examples == f.good * static_cast<std::size_t>(epochs));
  CHECK(next->bad_rows + last.bad_rows == f.bad);
}

TEST_CASE("reader plan: a shuffled window is finished in the order its own reader would have", "[core][job]") {
  // The batches reader 0 of 2 would have handed out after its commit inside a window, and those the
  // reader that inherits the window hands out first: the same rows, in the same order.
  files f(4);
  auto two = f.job(2, 1, 40);
  std::map<std::size_t, int> seen;
  auto stop = read(f, two, {}, 0, 2, seen);
  REQUIRE(stop.window_batches == 2);
  auto own = data::epoch_reader::open(f.options(two, {}, 0));
  REQUIRE(own.is_ok());
  REQUIRE(own->seek(resume_position_of(stop)).is_ok());
  data::example_batch expected;
  REQUIRE(*own->next(expected));
  auto plan = replan_readers(two, 2, {}, {stop, reader_commit{}});
  REQUIRE(plan.is_ok());
  REQUIRE(plan->windows.size() == 1);
  auto three = f.job(3, 1, 40);
  auto heir = data::epoch_reader::open(f.options(three, *plan, 0));
  REQUIRE(heir.is_ok());
  data::example_batch got;
  REQUIRE(*heir->next(got));
  CHECK(got.dense == expected.dense);
  CHECK(got.labels == expected.labels);
  CHECK(heir->position().inherited == 0);  // that was the window's last batch: its own files next
}

TEST_CASE("reader plan: windows left go to the readers that have files", "[core][job]") {
  files f(2);
  auto four = f.job(4, 1, 40);
  reader_plan plan;
  plan.files.resize(2);
  window_left w;
  w.readers = 2;
  w.handed = 1;
  plan.windows = {w, w, w};
  plan.windows[1].reader = 1;
  plan.windows[2].handed = 2;
  CHECK(windows_of_reader(four, plan, 0) == std::vector<window_left>{plan.windows[0], plan.windows[2]});
  CHECK(windows_of_reader(four, plan, 1) == std::vector<window_left>{plan.windows[1]});
  CHECK(windows_of_reader(four, plan, 2).empty());  // files 0 and 1 are readers 0's and 1's
  CHECK(windows_of_reader(four, plan, 3).empty());
}

TEST_CASE("reader plan: readers that had finished leave nothing to read", "[core][job]") {
  files f(4);
  std::map<std::size_t, int> seen;
  auto two = f.job(2, 2);
  std::vector<reader_commit> commits = {read(f, two, {}, 0, -1, seen), read(f, two, {}, 1, -1, seen)};
  auto plan = replan_readers(two, 2, {}, commits);
  REQUIRE(plan.is_ok());
  for (const auto& p : plan->files) CHECK(p.passes == 2);
  auto three = f.job(3, 2);
  for (int r = 0; r < 3; ++r) CHECK_FALSE(read(f, three, *plan, r, -1, seen).valid);  // not one batch
  check_every_row(f, seen, 2);
}

TEST_CASE("reader plan: a job without a plan keeps its readers' files as they were", "[core][job]") {
  files f(3);
  auto o = f.job(2, 1);
  CHECK(progress_of_reader(o, {}, 0).empty());
  auto plan = replan_readers(o, 2, {}, {reader_commit{}, reader_commit{}});
  REQUIRE(plan.is_ok());
  REQUIRE(plan->files.size() == 3);
  for (const auto& p : plan->files) CHECK(p == data::file_progress{});
  CHECK(progress_of_reader(o, *plan, 1).size() == 1);  // file 1 of 0, 1, 2
}

TEST_CASE("reader plan: what cannot be spread over another count is refused", "[core][job]") {
  files f(3);
  auto o = f.job(2, 1);
  CHECK(reader_change_refusal(o).empty());
  auto shuffled = f.job(2, 2);
  shuffled.passes.shuffle_buffer = -1;  // the default: a window with several epochs
  CHECK(reader_change_refusal(shuffled).empty());
  auto followed = o;
  followed.follow.enabled = true;
  CHECK_THAT(reader_change_refusal(followed), Catch::Contains("--follow"));
  // Commits that do not fit the job.
  reader_commit past;
  past.valid = true;
  past.file_index = 3;  // reader 0 of 2 has files 0 and 2
  auto bad = replan_readers(o, 2, {}, {past});
  CHECK(bad.error().code() == errc::corrupt);
  CHECK_THAT(bad.error().message(), Catch::Contains("reader 0's committed position names its file 3 of 2"));
  past.file_index = 0;
  past.epoch = 1;
  CHECK_THAT(replan_readers(o, 2, {}, {past}).error().message(), Catch::Contains("epoch 2 of a job of 1"));
  reader_plan other;
  other.files.resize(5);
  CHECK(replan_readers(o, 2, other, {}).error().code() == errc::corrupt);
  // Inside a shuffle window, without where it ends (a snapshot of a build before windows were
  // finished by others).
  reader_commit inside;
  inside.valid = true;
  inside.byte_offset = 80;
  inside.window_batches = 1;
  auto old = replan_readers(shuffled, 2, {}, {inside});
  CHECK(old.error().code() == errc::version_mismatch);
  CHECK_THAT(old.error().message(), Catch::Contains("did not record where the window ends"));
  // In an inherited window the plan does not have.
  inside.window_end = {1, 40, 3, 0, 0};
  inside.inherited = 1;
  CHECK_THAT(replan_readers(shuffled, 2, {}, {inside}).error().message(),
             Catch::Contains("inherited shuffle window 1 of 0"));
}

TEST_CASE("reader plan: a snapshot's manifest keeps the plan", "[core][job]") {
  snapshot_manifest m;
  m.read_plan.examples = 12345;
  m.read_plan.bad_rows = 7;
  m.read_plan.files = {data::file_progress{2, {}}, data::file_progress{1, {0, 4096, 101, 0xdeadbeef, 99999}}};
  auto back = parse_manifest(format_manifest(m));
  REQUIRE(back.is_ok());
  CHECK(back->read_plan.examples == 12345);
  CHECK(back->read_plan.bad_rows == 7);
  REQUIRE(back->read_plan.files.size() == 2);
  CHECK(back->read_plan.files[0] == m.read_plan.files[0]);
  CHECK(back->read_plan.files[1] == m.read_plan.files[1]);
  CHECK(back->read_plan.files[1].at.previous_line_crc == 0xdeadbeef);
  CHECK(back->read_plan.files[1].at.file_size == 99999);
  // The shuffle windows left, and a commit inside one.
  window_left w;
  w.readers = 3;
  w.reader = 2;
  w.progress = {data::file_progress{1, {}}, data::file_progress{0, {0, 512, 9, 0x1234, 777}}};
  w.epoch = 1;
  w.start = {1, 256, 5, 0xabcd, 777};
  w.handed = 2;
  m.read_plan.windows = {w, w};
  m.read_plan.windows[1].progress.clear();
  m.readers.resize(1);
  m.readers[0].valid = true;
  m.readers[0].window_batches = 1;
  m.readers[0].window_end = {2, 100, 4, 0x77, 888};
  m.readers[0].inherited = 1;
  auto windows = parse_manifest(format_manifest(m));
  REQUIRE(windows.is_ok());
  REQUIRE(windows->read_plan.windows.size() == 2);
  CHECK(windows->read_plan.windows[0] == m.read_plan.windows[0]);
  CHECK(windows->read_plan.windows[1] == m.read_plan.windows[1]);
  CHECK(windows->readers[0].window_end == m.readers[0].window_end);
  CHECK(windows->readers[0].window_end.file_size == 888);
  CHECK(windows->readers[0].inherited == 1);
  // A window no plan leaves is refused.
  std::string text = *io::without_crc_line(format_manifest(m), "MANIFEST");
  const std::string line = "reader_plan.window.1 = 3 2 1 2";
  const auto at = text.find(line);
  REQUIRE(at != std::string::npos);
  text.replace(at, line.size(), "reader_plan.window.1 = 3 2 1 0");  // no batch handed out
  auto refused = parse_manifest(io::with_crc_line(text));
  REQUIRE_FALSE(refused.is_ok());
  CHECK_THAT(refused.error().message(), Catch::Contains("not a window a plan of 2 files leaves"));
  // None written when the job kept its reader count.
  CHECK(format_manifest(snapshot_manifest{}).find("reader_plan") == std::string::npos);
  CHECK(parse_manifest(format_manifest(snapshot_manifest{}))->read_plan.empty());
}
