// Epochs over files, shuffled within bounded windows: every example once per epoch, an order that
// the seed fixes, and positions that resume exactly (the same remaining batches, bad rows counted
// once) wherever a run stopped.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "data_test_util.hpp"
#include "ss/core/data/epoch_reader.hpp"

using namespace ss;
using namespace ss::data;

namespace {

// Criteo rows whose first integer feature is the row's number; every `bad_every`-th line is a
// malformed row (a bad label) instead.
std::string rows(std::size_t from, std::size_t count, std::size_t bad_every = 0) {
  std::string text;
  for (std::size_t i = from; i < from + count; ++i) {
    if (bad_every > 0 && i % bad_every == bad_every - 1) {
      text += "x\t1" + std::string(38, '\t') + "\n";
      continue;
    }
    text += std::to_string(i % 2) + "\t" + std::to_string(i);
    for (int k = 1; k < 13; ++k) text += "\t";
    for (int k = 0; k < 26; ++k) text += "\t" + std::to_string(100000 + i * 26 + static_cast<std::size_t>(k));
    text += "\n";
  }
  return text;
}

struct fixture {
  test::temp_dir dir;
  std::vector<std::string> paths;
  std::map<float, std::size_t> row_of;  // the first dense value (log-transformed) -> the row's number

  explicit fixture(std::size_t bad_every = 0) {
    for (std::size_t f = 0; f < 3; ++f) {
      paths.push_back(dir.file("part-" + std::to_string(f) + ".txt"));
      test::write_all(paths.back(), rows(f * 400, 400 - f * 50, bad_every));
    }
    // Learn each row's first dense value from the files read in order.
    batch_reader_options o = input(1000);
    auto r = batch_reader::open(o);
    REQUIRE(r.is_ok());
    example_batch b;
    std::size_t n = 0;
    while (true) {
      auto more = r->next(b);
      REQUIRE(more.is_ok());
      if (!*more) break;
      for (std::size_t e = 0; e < b.size(); ++e, ++n) row_of[b.dense[e * 13]] = n;
    }
    REQUIRE(row_of.size() == n);
  }

  batch_reader_options input(std::size_t batch) const {
    batch_reader_options o;
    o.schema = input_schema::criteo();
    o.paths = paths;
    o.batch_size = batch;
    o.bad_rows.max_bad_fraction = 1.0;
    return o;
  }

  epoch_reader open(std::uint32_t epochs, std::size_t window, std::uint64_t seed, std::size_t batch = 32) const {
    epoch_reader_options o;
    o.input = input(batch);
    o.epochs = epochs;
    o.shuffle_window = window;
    o.seed = seed;
    auto r = epoch_reader::open(o);
    REQUIRE(r.is_ok());
    return std::move(*r);
  }
};

struct step {
  std::uint32_t epoch;
  std::vector<std::size_t> rows;
  epoch_position after;
  std::uint64_t bad_after;
};

// Every batch to the end of the last epoch, with the position and bad-row count after it.
std::vector<step> drain(const fixture& f, epoch_reader& r) {
  std::vector<step> out;
  example_batch b;
  while (true) {
    auto more = r.next(b);
    REQUIRE(more.is_ok());
    if (!*more) {
      CHECK(r.epoch_over());
      auto again = r.next_epoch();
      REQUIRE(again.is_ok());
      if (!*again) break;
      continue;
    }
    step s{r.epoch(), {}, r.position(), r.first_epoch_bad_rows()};
    for (std::size_t e = 0; e < b.size(); ++e) s.rows.push_back(f.row_of.at(b.dense[e * 13]));
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::size_t> epoch_rows(const std::vector<step>& steps, std::uint32_t epoch) {
  std::vector<std::size_t> all;
  for (const auto& s : steps)
    if (s.epoch == epoch) all.insert(all.end(), s.rows.begin(), s.rows.end());
  return all;
}

bool same_position(const epoch_position& a, const epoch_position& b) {
  return a.epoch == b.epoch && a.window == b.window && a.window_batches == b.window_batches;
}

}  // namespace

TEST_CASE("epoch reader: without a window, every epoch reads the files in order", "[core][data]") {
  fixture f;
  auto r = f.open(2, 0, 7);
  const auto steps = drain(f, r);
  for (std::uint32_t e = 0; e < 2; ++e) {
    const auto seen = epoch_rows(steps, e);
    REQUIRE(seen.size() == f.row_of.size());
    for (std::size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == i);
  }
  CHECK(r.examples() == 2 * f.row_of.size());
  for (const auto& s : steps) CHECK(s.after.window_batches == 0);  // every batch ends its window
}

TEST_CASE("epoch reader: a window shuffles each epoch differently, every example once", "[core][data]") {
  fixture f;
  auto r = f.open(3, 100, 7);
  const auto steps = drain(f, r);
  std::vector<std::vector<std::size_t>> orders;
  for (std::uint32_t e = 0; e < 3; ++e) {
    auto seen = epoch_rows(steps, e);
    orders.push_back(seen);
    std::sort(seen.begin(), seen.end());
    REQUIRE(seen.size() == f.row_of.size());
    for (std::size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == i);
    CHECK(orders.back() != seen);  // shuffled
  }
  CHECK(orders[0] != orders[1]);
  CHECK(orders[1] != orders[2]);
  // The seed fixes the order; another seed gives another.
  auto same = f.open(3, 100, 7);
  auto other = f.open(3, 100, 8);
  const auto again = drain(f, same);
  REQUIRE(again.size() == steps.size());
  for (std::size_t k = 0; k < steps.size(); ++k) CHECK(again[k].rows == steps[k].rows);
  CHECK(epoch_rows(drain(f, other), 0) != orders[0]);
}

TEST_CASE("epoch reader: examples move only within their window", "[core][data]") {
  fixture f;
  auto r = f.open(2, 100, 3);
  // A window is whole batches up to 100 examples: 4 batches of 32, 128 rows read in a row from the
  // epoch's files (at most one file boundary inside, as files hold 300 rows or more).
  for (std::uint32_t e = 0; e < 2; ++e) {
    const auto seen = epoch_rows(drain(f, r), e);
    for (std::size_t from = 0; from < seen.size(); from += 128) {
      std::vector<std::size_t> window(seen.begin() + static_cast<std::ptrdiff_t>(from),
                                      seen.begin() + static_cast<std::ptrdiff_t>(std::min(seen.size(), from + 128)));
      std::sort(window.begin(), window.end());
      std::size_t runs = 1;
      for (std::size_t k = 1; k < window.size(); ++k) runs += window[k] != window[k - 1] + 1;
      CHECK(runs <= 2);
    }
    r = f.open(2, 100, 3);
  }
}

TEST_CASE("epoch reader: a position after any batch resumes the same remaining batches", "[core][data]") {
  fixture f(37);  // a bad row every 37 lines
  auto whole = f.open(2, 100, 11);
  const auto steps = drain(f, whole);
  const std::uint64_t bad_total = steps.back().bad_after;
  REQUIRE(bad_total > 0);
  CHECK(steps.back().after.epoch == 1);
  // Positions inside windows and at their ends, in both epochs.
  bool inside = false, at_end = false;
  for (std::size_t k = 0; k + 1 < steps.size(); k += 5) {
    inside = inside || steps[k].after.window_batches > 0;
    at_end = at_end || steps[k].after.window_batches == 0;
    auto resumed = f.open(2, 100, 11);
    REQUIRE(resumed.seek(steps[k].after).is_ok());
    CHECK(same_position(resumed.position(), steps[k].after));
    const auto rest = drain(f, resumed);
    REQUIRE(rest.size() == steps.size() - k - 1);
    for (std::size_t j = 0; j < rest.size(); ++j) {
      CHECK(rest[j].rows == steps[k + 1 + j].rows);
      CHECK(same_position(rest[j].after, steps[k + 1 + j].after));
    }
    // Bad rows: those before the position plus those the resumed reader counts, each once.
    CHECK(steps[k].bad_after + rest.back().bad_after == bad_total);
  }
  CHECK(inside);
  CHECK(at_end);
}

TEST_CASE("epoch reader: a resume at an epoch's end goes on with the next", "[core][data]") {
  fixture f;
  auto r = f.open(2, 64, 5);
  example_batch b;
  while (true) {
    auto more = r.next(b);
    REQUIRE(more.is_ok());
    if (!*more) break;
  }
  const auto end = r.position();
  CHECK(end.epoch == 0);
  auto resumed = f.open(2, 64, 5);
  REQUIRE(resumed.seek(end).is_ok());
  auto more = resumed.next(b);
  REQUIRE(more.is_ok());
  CHECK_FALSE(*more);
  auto next = resumed.next_epoch();
  REQUIRE(next.is_ok());
  CHECK(*next);
  CHECK(resumed.epoch() == 1);
  CHECK(resumed.position().window.byte_offset == 0);
}

TEST_CASE("epoch reader: positions that cannot be resumed are errors", "[core][data]") {
  fixture f;
  auto r = f.open(2, 100, 5);
  example_batch b;
  REQUIRE(r.next(b).is_ok());
  auto pos = r.position();
  REQUIRE(pos.window_batches == 1);
  // Past the window (the batch size changed): corrupt, naming the cause.
  auto bigger = f.open(2, 100, 5, 64);
  pos.window_batches = 3;
  auto st = bigger.seek(pos);
  CHECK(st.code() == errc::corrupt);
  CHECK_THAT(st.message(), Catch::Contains("batch size changed"));
  // An epoch the run does not have.
  pos.epoch = 2;
  CHECK(r.seek(pos).code() == errc::out_of_range);
  // Leaving an epoch that is not over.
  auto fresh = f.open(2, 0, 5);
  CHECK(fresh.next_epoch().error().code() == errc::internal);
  epoch_reader_options none;
  none.input = f.input(32);
  none.epochs = 0;
  CHECK(epoch_reader::open(none).error().code() == errc::invalid_argument);
  // Files' progress (a job resumed on another reader count) for other files than the reader's.
  epoch_reader_options mismatched;
  mismatched.input = f.input(32);
  mismatched.progress.resize(f.paths.size() + 1);
  auto refused = epoch_reader::open(mismatched);
  CHECK(refused.error().code() == errc::invalid_argument);
  CHECK_THAT(refused.error().message(), Catch::Contains("progress of 4 files for 3 input files"));
}
