// publish_follower over a real publish directory (model files, delta files, manifests): the model
// it serves scores as the base with its deltas applied; new deltas and newer bases are taken as
// they appear; a gap, a damaged file, a delta that does not apply and an empty or missing
// directory leave the last good version, each reported once with its reason.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "serving_test_util.hpp"
#include "ss/core/model_file/model_file.hpp"
#include "ss/core/publish/delta_file.hpp"
#include "ss/core/publish/publication.hpp"
#include "ss/core/serving/publish_follower.hpp"
#include "ss/core/serving/published_model.hpp"
#include "support/files.hpp"
#include "support/process.hpp"

using namespace ss;
using namespace ss::test;
using serving::publish_follower;
namespace fs = std::filesystem;

namespace {

// Publishes into a directory as a training job does: data file, then manifest.
struct publisher {
  fs::path dir;
  job::job_options job = small_job();
  publish::model_shape shape;
  std::uint64_t base_seq = 0, last_seq = 0;

  explicit publisher(fs::path d) : dir(std::move(d)) {
    const auto m = make_model();
    shape = {tables, dim, m.dense->size()};
  }

  publish::manifest manifest_of(std::uint64_t seq, publish::publication_kind kind) const {
    publish::manifest m;
    m.job_id = "job-1";
    m.sequence = seq;
    m.kind = kind;
    m.base = kind == publish::publication_kind::base ? seq : base_seq;
    m.previous = kind == publish::publication_kind::base ? 0 : last_seq;
    m.examples_trained = seq * 100;
    m.wall_unix_ms = 1'700'000'000'000 + static_cast<std::int64_t>(seq);
    m.data_file = publish::data_file_name(seq, kind);
    m.shape = shape;
    m.config_digest = publish::model_config_digest(job);
    return m;
  }

  // The model of make_model(seed) as base `seq`.
  void base(std::uint64_t seq, std::uint64_t seed = 11) {
    auto m = make_model(seed);
    auto header = model::header_for_job(job, 0.25, seq * 100, "test");
    REQUIRE(header.is_ok());
    publish::manifest man = manifest_of(seq, publish::publication_kind::base);
    auto saved = model::save_model((dir / man.data_file).string(), *header, *m.dense, *m.embeddings);
    REQUIRE(saved.is_ok());
    auto d = publish::digest_file(dir / man.data_file);
    REQUIRE(d.is_ok());
    man.data_bytes = d->bytes;
    man.data_crc32c = d->crc32c;
    man.rows = saved->rows;
    REQUIRE(publish::write_manifest(dir, man).is_ok());
    base_seq = last_seq = seq;
  }

  // Update `u` as delta `seq` (its version's sequence is set to seq).
  model_update delta(std::uint64_t seq, model_update u) {
    publish::manifest man = manifest_of(seq, publish::publication_kind::delta);
    u.version = {seq, man.examples_trained, man.wall_unix_ms};
    auto w = publish::delta_writer::open((dir / man.data_file).string(),
                                         {seq, man.base, man.previous, shape, publish::row_encoding::fp32});
    REQUIRE(w.is_ok());
    REQUIRE(u.dense);
    REQUIRE(w->write_dense(u.dense->data(), u.dense->size()).is_ok());
    for (const auto& t : u.tables) {
      REQUIRE(w->add_rows(t.table, t.ids.data(), t.values.data(), t.ids.size()).is_ok());
      REQUIRE(w->add_tombstones(t.table, t.erased.data(), t.erased.size()).is_ok());
    }
    auto stats = w->finish();
    REQUIRE(stats.is_ok());
    man.data_bytes = stats->bytes;
    man.data_crc32c = stats->crc32c;
    man.rows = stats->rows;
    man.tombstones = stats->tombstones;
    REQUIRE(publish::write_manifest(dir, man).is_ok());
    last_seq = seq;
    return u;
  }

  // A delta of new values for a few ids of every table, one erased, and new dense parameters.
  model_update changes(std::uint64_t salt) const {
    model_update u;
    u.dense = dense_from(shape.dense_params, salt);
    for (std::uint32_t t = 0; t < tables; ++t) {
      u.tables.push_back(rows_for(t, {salt % known_ids, 1000 + salt}, salt * 10 + t));
      u.tables.back().erased = {(salt + 7) % known_ids};
    }
    return u;
  }
};

// The reference: base `seed` as a model file loads it, with `updates` applied.
model::loaded_model reference(const std::vector<model_update>& updates, std::uint64_t seed = 11) {
  auto m = make_model(seed);
  // A loaded model's rows carry zero optimizer state; make_model's carry none either (rows are
  // written with values only), so the two score alike.
  for (const auto& u : updates) apply_to(m, u);
  return m;
}

}  // namespace

TEST_CASE("publish follower: serves the newest base with its deltas, then follows new ones", "[serving][publish]") {
  temp_dir dir;
  publisher pub(dir.path());
  publish_follower f(dir.path());
  // Nothing yet: no model, the reason said.
  CHECK_FALSE(f.poll().new_model);
  CHECK(f.model() == nullptr);
  REQUIRE(f.status().problem);
  CHECK(f.status().problem->reason == "no_base");

  pub.base(1);
  std::vector<model_update> applied = {pub.delta(2, pub.changes(2)), pub.delta(3, pub.changes(3))};
  const auto step = f.poll();
  CHECK(step.new_model);
  REQUIRE(f.model() != nullptr);
  const auto batch = make_batch(100, 21);
  model_version v;
  CHECK(same_bits(served_path(*f.model(), batch, &v), predict_path(reference(applied), batch)));
  CHECK(v.sequence == 3);
  CHECK(v.examples_trained == 300);
  auto st = f.status();
  CHECK(st.behind == 0);
  CHECK_FALSE(st.problem);
  CHECK(st.bases_loaded == 1);
  CHECK(st.deltas_applied == 2);

  // Nothing new: nothing changes.
  const auto* before = f.model().get();
  auto again = f.poll();
  CHECK_FALSE(again.new_model);
  CHECK_FALSE(again.new_version);
  // A new delta: applied to the same model object.
  applied.push_back(pub.delta(4, pub.changes(4)));
  again = f.poll();
  CHECK(again.new_version);
  CHECK_FALSE(again.new_model);
  CHECK(f.model().get() == before);
  CHECK(same_bits(served_path(*f.model(), batch, &v), predict_path(reference(applied), batch)));
  CHECK(v.sequence == 4);

  // A newer base: a new model, with the deltas after it.
  pub.base(5, 12);
  const model_update after = pub.delta(6, pub.changes(6));
  again = f.poll();
  CHECK(again.new_model);
  CHECK(same_bits(served_path(*f.model(), batch, &v), predict_path(reference({after}, 12), batch)));
  CHECK(v.sequence == 6);
  CHECK(f.status().bases_loaded == 2);
  CHECK(f.problems().count("no_base") == 1);
}

TEST_CASE("publish follower: a gap, a damaged delta and one that does not apply keep the last good version",
          "[serving][publish]") {
  temp_dir dir;
  publisher pub(dir.path());
  publish_follower f(dir.path());
  pub.base(1);
  std::vector<model_update> applied = {pub.delta(2, pub.changes(2))};
  REQUIRE(f.poll().new_model);
  const auto batch = make_batch(64, 22);
  const auto good = predict_path(reference(applied), batch);

  // A gap: 4 is there, 3 is not.
  model_update third = pub.changes(3);
  pub.last_seq = 3;
  const model_update fourth = pub.delta(4, pub.changes(4));
  for (int i = 0; i < 2; ++i) {
    CHECK_FALSE(f.poll().new_version);
    const auto st = f.status();
    REQUIRE(st.problem);
    CHECK(st.problem->reason == "gap");
    CHECK(st.behind == 2);
    CHECK(st.newest_sequence == 4);
  }
  CHECK(f.problems().at("gap") == 1);  // counted once, not at every poll
  model_version v;
  CHECK(same_bits(served_path(*f.model(), batch, &v), good));
  CHECK(v.sequence == 2);
  // The missing one arrives: both are applied.
  pub.last_seq = 2;
  applied.push_back(pub.delta(3, third));
  applied.push_back(fourth);
  pub.last_seq = 4;
  CHECK(f.poll().new_version);
  CHECK(same_bits(served_path(*f.model(), batch, &v), predict_path(reference(applied), batch)));
  CHECK(v.sequence == 4);
  CHECK_FALSE(f.status().problem);

  // A damaged delta: its data file no longer matches its manifest.
  pub.delta(5, pub.changes(5));
  {
    std::fstream file(dir.path() / publish::data_file_name(5, publish::publication_kind::delta),
                      std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(100);
    file.put('\x5a');
  }
  CHECK_FALSE(f.poll().new_version);
  REQUIRE(f.status().problem);
  CHECK(f.status().problem->reason == "bad_data");
  CHECK(f.model()->version().sequence == 4);

  // A delta that reads but does not apply (an id twice in a table), after a newer base.
  pub.base(6);
  model_update twice = pub.changes(7);
  twice.tables[0].ids.push_back(twice.tables[0].ids[0]);
  twice.tables[0].values.insert(twice.tables[0].values.end(), twice.tables[0].values.begin(),
                                twice.tables[0].values.begin() + dim);
  pub.delta(7, twice);
  CHECK(f.poll().new_model);  // base 6 loads; delta 7 does not apply
  const auto st = f.status();
  REQUIRE(st.problem);
  CHECK(st.problem->reason == "bad_delta");
  CHECK(st.problem->sequence == 7);
  CHECK(st.problem->message.find("lists id") != std::string::npos);
  CHECK(st.behind == 1);
  CHECK(f.model()->version().sequence == 6);
  CHECK(f.problems().at("bad_data") == 1);
  CHECK(f.problems().at("bad_delta") == 1);
}

TEST_CASE("publish follower: a missing directory, and a base that does not load, are reported", "[serving][publish]") {
  temp_dir dir;
  publish_follower missing(dir.path() / "nowhere");
  missing.poll();
  REQUIRE(missing.status().problem);
  CHECK(missing.status().problem->reason == "unreadable");
  CHECK(missing.model() == nullptr);

  // A base whose manifest matches a file that is not a model.
  publisher pub(dir.path());
  publish::manifest man = pub.manifest_of(1, publish::publication_kind::base);
  test::write_file(dir.path() / man.data_file, "not a model file at all");
  auto d = publish::digest_file(dir.path() / man.data_file);
  REQUIRE(d.is_ok());
  man.data_bytes = d->bytes;
  man.data_crc32c = d->crc32c;
  REQUIRE(publish::write_manifest(dir.path(), man).is_ok());
  publish_follower f(dir.path());
  CHECK_FALSE(f.poll().new_model);
  REQUIRE(f.status().problem);
  CHECK(f.status().problem->reason == "bad_base");
  CHECK(f.status().problem->message.find("model file") != std::string::npos);
  CHECK(f.model() == nullptr);
}

TEST_CASE("published model: the newest base with its deltas applied scores as serve's model, a gap says how far behind",
          "[serving][publish]") {
  temp_dir dir;
  publisher pub(dir.path());
  auto none = serving::load_published_model(dir.path());
  REQUIRE_FALSE(none.is_ok());
  CHECK(none.error().code() == errc::not_found);

  pub.base(1);
  std::vector<model_update> applied = {pub.delta(2, pub.changes(2)), pub.delta(3, pub.changes(3))};
  auto loaded = serving::load_published_model(dir.path());
  REQUIRE(loaded.is_ok());
  CHECK(loaded->last.sequence == 3);
  CHECK(loaded->deltas == 2);
  CHECK(loaded->behind == 0);
  CHECK(loaded->model.header.train_examples == 300);
  const auto batch = make_batch(100, 23);
  CHECK(same_bits(predict_path(loaded->model, batch), predict_path(reference(applied), batch)));
  // An erased row is gone (it scores as unseen), a written one holds the delta's values.
  const auto& erased = applied.back().tables[0].erased;
  CHECK(loaded->model.embeddings->table(0).find(erased[0]) == nullptr);

  // Delta 5 without 4: the model stops at 3 and says so.
  pub.last_seq = 4;
  pub.delta(5, pub.changes(5));
  auto behind = serving::load_published_model(dir.path());
  REQUIRE(behind.is_ok());
  CHECK(behind->last.sequence == 3);
  CHECK(behind->behind == 2);
  REQUIRE(behind->stopped);
  CHECK(behind->stopped->issue == publish::chain_issue::gap);
}
