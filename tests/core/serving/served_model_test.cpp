// served_model: scoring equal to predict's path bit for bit, updates (rows written and erased,
// dense parameters replaced), refusals that change nothing, one version per scoring call under a
// writer, and memory that does not grow with the number of updates.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "serving_test_util.hpp"

using namespace ss;
using namespace ss::test;
using serving::model_update;
using serving::model_version;
using serving::served_model;
using serving::table_update;


TEST_CASE("served model: scores bit for bit as predict does, unseen ids included", "[serving]") {
  const model::loaded_model reference = make_model();
  served_model served(make_model(), {0, 500, 1234});
  const auto batch = make_batch(300, 3);
  const auto expected = predict_path(reference, batch);
  model_version v;
  const auto got = served_path(served, batch, &v);
  CHECK(same_bits(got, expected));
  CHECK(v.sequence == 0);
  CHECK(v.examples_trained == 500);
  CHECK(v.wall_unix_ms == 1234);
  // Scoring creates no row: the unseen ids are still unseen.
  CHECK(served.stats().rows == tables * known_ids);
}

TEST_CASE("served model: a row scores the same bits alone, in a short batch or among many", "[serving]") {
  served_model served(make_model());
  const auto batch = make_batch(300, 4);
  const auto all = served_path(served, batch);
  for (std::size_t size : {1, 2, 7, 15, 16, 33, 100}) {
    for (std::size_t first : {std::size_t{0}, std::size_t{5}, std::size_t{150}}) {
      data::example_batch part;
      part.reset(dense_features, tables);
      for (std::size_t e = first; e < first + size; ++e) part.append_example(batch, e);
      const auto got = served_path(served, part);
      INFO("rows " << first << " .. " << first + size);
      CHECK(same_bits(got, std::vector<float>(all.begin() + static_cast<std::ptrdiff_t>(first),
                                              all.begin() + static_cast<std::ptrdiff_t>(first + size))));
    }
  }
}

TEST_CASE("served model: updates write rows, erase rows and replace the dense part", "[serving]") {
  model::loaded_model reference = make_model();
  served_model served(make_model());
  const auto batch = make_batch(200, 5);
  REQUIRE(same_bits(served_path(served, batch), predict_path(reference, batch)));

  // Rows written: known ids changed, unseen ids given rows.
  model_update rows;
  rows.version = {1, 1000, 5000};
  rows.tables.push_back(rows_for(2, {3, 4, 1001, 1002}, 21));
  rows.tables.push_back(rows_for(0, {7}, 22));
  REQUIRE(served.apply(rows).is_ok());
  apply_to(reference, rows);
  model_version v;
  auto got = served_path(served, batch, &v);
  CHECK(v.sequence == 1);
  CHECK(v.examples_trained == 1000);
  CHECK(same_bits(got, predict_path(reference, batch)));
  CHECK(served.stats().rows == tables * known_ids + 2);

  // Rows erased: an erased id scores as one never seen (its initial values), as does the erasure
  // of an id that was never there.
  model_update erase;
  erase.version = {2, 2000, 6000};
  erase.tables.push_back({});
  erase.tables.back().table = 2;
  erase.tables.back().erased = {3, 1001, 9999};
  REQUIRE(served.apply(erase).is_ok());
  apply_to(reference, erase);
  got = served_path(served, batch, &v);
  CHECK(v.sequence == 2);
  CHECK(same_bits(got, predict_path(reference, batch)));
  CHECK(served.stats().rows == tables * known_ids);
  CHECK(served.stats().rows_erased == 2);
  // ... the same as a model that never had them.
  model::loaded_model never = make_model();
  never.embeddings->table(2).erase(3);
  apply_to(never, rows);
  never.embeddings->table(2).erase(3);
  never.embeddings->table(2).erase(1001);
  CHECK(same_bits(got, predict_path(never, batch)));

  // The dense part replaced, rows kept.
  model_update dense;
  dense.version = {3, 3000, 7000};
  dense.dense = dense_from(reference.dense->size(), 31);
  REQUIRE(served.apply(dense).is_ok());
  apply_to(reference, dense);
  got = served_path(served, batch, &v);
  CHECK(v.sequence == 3);
  CHECK(same_bits(got, predict_path(reference, batch)));
  const auto stats = served.stats();
  CHECK(stats.updates_applied == 3);
  CHECK(stats.rows_written == 5);
  CHECK(stats.version.wall_unix_ms == 7000);
}

TEST_CASE("served model: an update that does not fit is refused and changes nothing", "[serving]") {
  served_model served(make_model(11), {5, 0, 0});
  const auto batch = make_batch(100, 6);
  const auto before = served_path(served, batch);
  const std::size_t params = make_model().dense->size();

  auto refused = [&](model_update u, errc code, const std::string& says) {
    INFO(says);
    const status st = served.apply(u);
    REQUIRE_FALSE(st.is_ok());
    CHECK(st.code() == code);
    CHECK(st.message().find(says) != std::string::npos);
    model_version v;
    CHECK(same_bits(served_path(served, batch, &v), before));
    CHECK(v.sequence == 5);
  };
  model_update u;
  u.version = {5, 0, 0};
  refused(u, errc::version_mismatch, "update to version 5: not newer than the served version 5");
  u.version.sequence = 6;
  u.dense = std::vector<float>(params - 1, 0.0f);
  refused(u, errc::invalid_argument, std::to_string(params - 1) + " dense parameters, the model has");
  u.dense = dense_from(params, 1);
  (*u.dense)[3] = std::numeric_limits<float>::quiet_NaN();
  refused(u, errc::invalid_argument, "a dense parameter is not finite");
  u.dense.reset();
  u.tables = {rows_for(tables, {1}, 1)};
  refused(u, errc::invalid_argument, "table 4 is out of range");
  u.tables = {rows_for(1, {1}, 1), rows_for(1, {2}, 2)};
  refused(u, errc::invalid_argument, "table 1 is listed twice");
  u.tables = {rows_for(1, {1, 2}, 1)};
  u.tables[0].values.pop_back();
  refused(u, errc::invalid_argument, "7 values for 2 rows of dim 4");
  u.tables = {rows_for(1, {1, 2}, 1)};
  u.tables[0].values[5] = std::numeric_limits<float>::infinity();
  refused(u, errc::invalid_argument, "a row value is not finite");
  u.tables = {rows_for(1, {1, 2, 1}, 1)};
  refused(u, errc::invalid_argument, "table 1 lists id 1 twice");
  u.tables = {rows_for(1, {1, 2}, 1)};
  u.tables[0].erased = {2};
  refused(u, errc::invalid_argument, "table 1 lists id 2 twice");
  u.tables = {rows_for(3, {2001, 2002, 2003}, 1)};  // 3 new rows, one erased in the same update
  u.tables[0].erased = {0};
  CHECK(served.apply(u).is_ok());
  CHECK(served.version().sequence == 6);
  CHECK(served.stats().rows == tables * known_ids + 2);
}

TEST_CASE("served model: replace serves another model of the same shape, and refuses another shape", "[serving]") {
  served_model served(make_model(11), {1, 0, 0});
  const auto batch = make_batch(64, 7);
  const model::loaded_model other_reference = make_model(12);
  REQUIRE(served.replace(make_model(12), {4, 40, 400}).is_ok());
  model_version v;
  CHECK(same_bits(served_path(served, batch, &v), predict_path(other_reference, batch)));
  CHECK(v.sequence == 4);
  CHECK(served.stats().models_replaced == 1);

  auto wider = make_model(13);
  wider.setup.dlrm.embedding_dim = 8;
  const status st = served.replace(std::move(wider), {5, 0, 0});
  CHECK(st.code() == errc::invalid_argument);
  const status old = served.replace(make_model(13), {4, 0, 0});
  CHECK(old.code() == errc::version_mismatch);
  CHECK(served.version().sequence == 4);
}

// Versions 1, 2, ... each write every row the batch reads (state 3: erase half of them) and the
// dense part, from one of four states: what a version scores is known in advance. Scorers on
// several threads compare every answer with the answer of the version it reports; a call that
// read part of one version and part of another matches neither.
TEST_CASE("served model: every scoring call sees one whole version while updates apply", "[serving][threads]") {
  const auto batch = make_batch(64, 8);
  std::set<std::uint64_t> batch_ids(batch.ids.begin(), batch.ids.end());
  const std::vector<std::uint64_t> ids(batch_ids.begin(), batch_ids.end());
  const std::size_t params = make_model().dense->size();
  auto state_update = [&](std::uint64_t sequence) {
    const std::uint64_t s = sequence % 4;
    model_update u;
    u.version = {sequence, sequence * 10, 0};
    u.dense = dense_from(params, 100 + s);
    for (std::uint32_t t = 0; t < tables; ++t) {
      if (s == 3) {
        std::vector<std::uint64_t> kept(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(ids.size() / 2));
        u.tables.push_back(rows_for(t, kept, 1000 + t));
        u.tables.back().erased.assign(ids.begin() + static_cast<std::ptrdiff_t>(ids.size() / 2), ids.end());
      } else {
        u.tables.push_back(rows_for(t, ids, 10 * s + t));
      }
    }
    return u;
  };
  // The answers of the base (version 0) and of each state.
  std::vector<std::vector<float>> expected;
  expected.push_back(served_path(served_model(make_model()), batch));
  for (std::uint64_t s = 0; s < 4; ++s) {
    served_model alone(make_model());
    REQUIRE(alone.apply(state_update(s + 4)).is_ok());
    expected.push_back(served_path(alone, batch));
  }
  for (std::size_t a = 0; a < expected.size(); ++a)
    for (std::size_t b = a + 1; b < expected.size(); ++b) REQUIRE_FALSE(same_bits(expected[a], expected[b]));

  served_model served(make_model());
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> calls{0}, mismatches{0}, newest_seen{0};
  std::vector<std::thread> scorers;
  for (int w = 0; w < 4; ++w) {
    scorers.emplace_back([&] {
      serving::scoring_scratch scratch(served);
      std::vector<float> out;
      while (!done.load()) {
        auto v = served.score(batch, scratch, out);
        if (!v.is_ok()) {
          mismatches.fetch_add(1);
          continue;
        }
        const auto& want = v->sequence == 0 ? expected[0] : expected[1 + v->sequence % 4];
        if (!same_bits(out, want)) mismatches.fetch_add(1);
        calls.fetch_add(1);
        std::uint64_t seen = newest_seen.load();
        while (v->sequence > seen && !newest_seen.compare_exchange_weak(seen, v->sequence)) {
        }
      }
    });
  }
  constexpr std::uint64_t versions = 300;
  for (std::uint64_t sequence = 1; sequence <= versions; ++sequence) REQUIRE(served.apply(state_update(sequence)).is_ok());
  // Scoring goes on after the last update: its answers are checked too.
  const std::uint64_t at_end = calls.load();
  while (calls.load() < at_end + 100) std::this_thread::yield();
  done.store(true);
  for (auto& t : scorers) t.join();
  INFO(calls.load() << " calls");
  CHECK(mismatches.load() == 0);
  CHECK(newest_seen.load() == versions);
  CHECK(calls.load() > versions);
  CHECK(served.stats().retired_views == 0);
}

TEST_CASE("served model: memory stays bounded over many updates", "[serving]") {
  served_model served(make_model());
  const auto batch = make_batch(32, 9);
  serving::scoring_scratch scratch(served);
  std::vector<float> out;
  // Each update writes 20 new ids and erases the 20 of the update before: the rows held stay the
  // same, and the tables reuse the erased rows' memory (and the dense parts of old versions go).
  std::uint64_t rows_after_first = 0, bytes_after_second = 0;
  for (std::uint64_t sequence = 1; sequence <= 500; ++sequence) {
    model_update u;
    u.version = {sequence, 0, 0};
    std::vector<std::uint64_t> fresh;
    for (std::uint64_t k = 0; k < 20; ++k) fresh.push_back(100000 + sequence * 20 + k);
    u.tables.push_back(rows_for(1, fresh, sequence));
    for (std::uint64_t k = 0; k < 20 && sequence > 1; ++k) u.tables.back().erased.push_back(100000 + (sequence - 1) * 20 + k);
    u.dense = dense_from(make_model().dense->size(), sequence);
    REQUIRE(served.apply(u).is_ok());
    REQUIRE(served.score(batch, scratch, out).is_ok());
    if (sequence == 1) rows_after_first = served.stats().rows;
    if (sequence == 2) bytes_after_second = served.stats().bytes;
  }
  const auto stats = served.stats();
  CHECK(stats.rows == rows_after_first);
  CHECK(stats.rows == tables * known_ids + 20);
  CHECK(stats.rows_erased == 499 * 20);
  // Erased rows' memory goes to new rows of their stripe; a stripe grows only when more new ids
  // fall into it than it ever held. Kept rows would be 10,000 more (over 300 KB here).
  CHECK(stats.bytes < bytes_after_second + bytes_after_second / 2);
  CHECK(stats.retired_views == 0);  // no older version is kept once nobody scores with it
}
