// The exported model file: round trips, the streaming writer, and every way a file can be wrong
// (newer version, truncation anywhere, a flipped byte anywhere, not a model at all).
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ss/core/embedding/local_embeddings.hpp"
#include "ss/core/job/job_options.hpp"
#include "ss/core/model_file/model_file.hpp"
#include "ss/core/train/dense_model.hpp"
#include "support/files.hpp"
#include "support/process.hpp"

using namespace ss;
using ss::test::read_file;
using ss::test::write_file;
namespace fs = std::filesystem;

namespace {

job::job_options small_job() {
  job::job_options j;
  j.train = {"train.tsv"};
  j.dense_features = 3;
  j.categorical_features = 4;
  j.model.embedding_dim = 4;
  j.model.bottom_mlp = "5-4";
  j.model.top_mlp = "6-1";
  j.model.sparse_optimizer = "rowwise-adagrad";  // rows carry optimizer state, which is not exported
  j.model.dense_optimizer = "adagrad";
  j.model.seed = 7;
  j.model.embedding_init_scale = 0.05;
  return j;
}

// A trained-looking small model: random dense parameters, rows in tables 0, 1 and 3 (table 2 empty).
struct small_model {
  job::job_options job = small_job();
  job::model_setup setup;
  std::unique_ptr<train::dense_model> dense;
  std::unique_ptr<embedding::local_embeddings> store;
  model::model_header header;

  explicit small_model(int rows_per_table = 20) {
    auto s = job::resolve_model(job.model, 3, 4);
    REQUIRE(s.is_ok());
    setup = *s;
    dense = std::make_unique<train::dense_model>(setup.dlrm, setup.dense, job.model.seed);
    store = std::make_unique<embedding::local_embeddings>(setup.embeddings);
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (std::size_t i = 0; i < dense->size(); ++i) dense->params()[i] = u(rng);
    for (std::uint32_t t : {0u, 1u, 3u}) {
      for (int r = 0; r < rows_per_table; ++r) {
        float* row = store->table(t).find_or_create(rng());
        REQUIRE(row != nullptr);
        for (std::uint32_t k = 0; k < store->table(t).row_floats(); ++k) row[k] = u(rng);
      }
    }
    auto h = model::header_for_job(job, 0.25, 12345, "model_file_test");
    REQUIRE(h.is_ok());
    header = *h;
  }

  // Saves the model at `path` (which must work) and returns the file's bytes.
  std::string saved_bytes(const std::string& path) const {
    REQUIRE(model::save_model(path, header, *dense, *store).is_ok());
    return read_file(path);
  }
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("model file: the configuration records the bottom MLP as built, not as asked for", "[core][model]") {
  job::job_options j = small_job();
  j.model.bottom_mlp.clear();  // sized to the input: auto_bottom_hidden then the embedding dim
  auto h = model::header_for_job(j, 0.25, 1, "test");
  REQUIRE(h.is_ok());
  CHECK(h->config.find("bottom-mlp = " + std::string(job::auto_bottom_hidden) + "-4\n") != std::string::npos);
  j.dense_features = 0;
  auto no_dense = model::header_for_job(j, 0.25, 1, "test");
  REQUIRE(no_dense.is_ok());
  CHECK(no_dense->config.find("bottom-mlp = 4\n") != std::string::npos);
}

TEST_CASE("model file: round trip keeps the dense part and every row bit for bit", "[model_file]") {
  test::temp_dir dir;
  small_model m;
  const std::string path = dir.str("m.ssm");
  auto saved = model::save_model(path, m.header, *m.dense, *m.store);
  REQUIRE(saved.is_ok());
  CHECK(saved->rows == 60);
  CHECK(saved->blocks == 3);  // tables 0, 1 and 3; the empty table 2 writes no block
  CHECK(saved->table_rows == std::vector<std::uint64_t>{20, 20, 0, 20});
  CHECK(saved->bytes == fs::file_size(path));
  CHECK_FALSE(fs::exists(path + ".tmp"));

  auto loaded = model::load_model(path);
  REQUIRE(loaded.is_ok());
  const auto& l = *loaded;
  CHECK(l.header.train_click_rate == 0.25);
  CHECK(l.header.train_examples == 12345);
  CHECK(l.header.producer == "model_file_test");
  CHECK(l.header.config == m.header.config);
  CHECK(l.header.schema_text.empty());
  CHECK(l.header.created_unix_ms > 0);
  CHECK(l.job.model.seed == 7);
  CHECK(l.job.dense_features == 3);
  CHECK(l.setup.dlrm.describe() == m.setup.dlrm.describe());
  CHECK(l.stats.rows == 60);

  REQUIRE(l.dense->size() == m.dense->size());
  CHECK(std::memcmp(l.dense->params(), m.dense->params(), sizeof(float) * m.dense->size()) == 0);

  for (std::uint32_t t = 0; t < 4; ++t) {
    const auto& orig = m.store->table(t);
    const auto& back = l.embeddings->table(t);
    CHECK(back.rows() == orig.rows());
    REQUIRE(back.row_floats() == orig.row_floats());
    const std::uint32_t dim = orig.options().dim;
    orig.for_each([&](std::uint64_t id, const float* row) {
      const float* got = back.find(id);
      REQUIRE(got != nullptr);
      CHECK(std::memcmp(got, row, sizeof(float) * dim) == 0);
      for (std::uint32_t k = dim; k < back.row_floats(); ++k) CHECK(got[k] == 0.0f);  // no optimizer state
    });
    // An id the model never saw starts where training would have started it.
    std::vector<float> a(orig.row_floats()), b(orig.row_floats());
    embedding::init_row(orig.options(), 987654321, a.data());
    embedding::init_row(back.options(), 987654321, b.data());
    CHECK(a == b);
  }
}

TEST_CASE("model file: a table past the job's row limit loads whole, without the limit", "[model_file]") {
  // A memory budget lets a table go over --max-rows-per-table until its next flush: a copy taken
  // then holds more rows than the limit, and scoring it must see them all.
  test::temp_dir dir;
  small_model m;  // 20 rows in tables 0, 1 and 3
  m.job.model.max_rows_per_table = 15;
  auto h = model::header_for_job(m.job, 0.25, 12345, "model_file_test");
  REQUIRE(h.is_ok());
  m.header = *h;
  const std::string path = dir.str("m.ssm");
  REQUIRE(model::save_model(path, m.header, *m.dense, *m.store).is_ok());
  auto loaded = model::load_model(path);
  REQUIRE(loaded.is_ok());
  CHECK(loaded->job.model.max_rows_per_table == 15);  // the job's setting, as it was
  CHECK(loaded->embeddings->table(0).rows() == 20);
  CHECK(loaded->embeddings->table(0).options().max_rows == 0);
}

TEST_CASE("model file: an empty model round trips", "[model_file]") {
  test::temp_dir dir;
  small_model m(0);
  const std::string path = dir.str("empty.ssm");
  auto saved = model::save_model(path, m.header, *m.dense, *m.store);
  REQUIRE(saved.is_ok());
  CHECK(saved->rows == 0);
  CHECK(saved->blocks == 0);
  auto loaded = model::load_model(path);
  REQUIRE(loaded.is_ok());
  CHECK(loaded->embeddings->total_rows() == 0);
  CHECK(std::memcmp(loaded->dense->params(), m.dense->params(), sizeof(float) * m.dense->size()) == 0);
}

TEST_CASE("model file: the streaming writer takes pages of any table in any order", "[model_file]") {
  test::temp_dir dir;
  small_model m(0);
  const std::string path = dir.str("s.ssm");
  auto w = model::model_writer::open(path, m.header);
  REQUIRE(w.is_ok());
  CHECK(w->add_rows(0, nullptr, nullptr, 0).code() == errc::invalid_argument);  // before the dense part
  // That misuse failed the writer: start again.
  w = model::model_writer::open(path, m.header);
  REQUIRE(w.is_ok());
  REQUIRE(w->write_dense(m.dense->params(), m.dense->size()).is_ok());
  CHECK(w->write_dense(m.dense->params(), m.dense->size()).code() == errc::invalid_argument);
  w = model::model_writer::open(path, m.header);
  REQUIRE(w.is_ok());
  REQUIRE(w->write_dense(m.dense->params(), m.dense->size()).is_ok());

  // Rows with 5 floats each (4 values + 1 optimizer state), passed with a stride.
  const std::size_t big = model::max_block_rows + 100;
  std::vector<std::uint64_t> ids(big);
  std::vector<float> rows(big * 5);
  for (std::size_t i = 0; i < big; ++i) {
    ids[i] = i * 7919 + 1;
    for (std::size_t k = 0; k < 5; ++k) rows[i * 5 + k] = static_cast<float>(i) + 0.25f * static_cast<float>(k);
  }
  REQUIRE(w->add_rows(3, ids.data(), rows.data(), 10, 5).is_ok());
  REQUIRE(w->add_rows(1, ids.data() + 10, rows.data() + 50, 5, 5).is_ok());
  REQUIRE(w->add_rows(3, ids.data() + 15, rows.data() + 75, big - 15, 5).is_ok());  // split in two blocks
  REQUIRE(w->add_rows(3, ids.data(), rows.data(), 0, 5).is_ok());                   // nothing
  CHECK(w->add_rows(4, ids.data(), rows.data(), 1, 5).code() == errc::invalid_argument);  // no table 4
  // The failed call failed the writer, and removed its temporary file.
  CHECK_FALSE(fs::exists(path + ".tmp"));
  CHECK_FALSE(w->finish().is_ok());
  CHECK_FALSE(fs::exists(path));

  w = model::model_writer::open(path, m.header);
  REQUIRE(w.is_ok());
  REQUIRE(w->write_dense(m.dense->params(), m.dense->size()).is_ok());
  REQUIRE(w->add_rows(3, ids.data(), rows.data(), 10, 5).is_ok());
  REQUIRE(w->add_rows(1, ids.data() + 10, rows.data() + 50, 5, 5).is_ok());
  REQUIRE(w->add_rows(3, ids.data() + 15, rows.data() + 75, big - 15, 5).is_ok());
  auto stats = w->finish();
  REQUIRE(stats.is_ok());
  CHECK(stats->blocks == 4);
  CHECK(stats->rows == big);
  CHECK(stats->table_rows == std::vector<std::uint64_t>{0, 5, 0, big - 5});

  auto r = model::model_reader::open(path);
  REQUIRE(r.is_ok());
  CHECK(r->format_version() == 1);
  CHECK(r->header().dim == 4);
  auto dense = r->read_dense();
  REQUIRE(dense.is_ok());
  CHECK(std::memcmp(dense->data(), m.dense->params(), sizeof(float) * dense->size()) == 0);
  std::size_t seen = 0;
  bool values_ok = true;
  std::map<std::uint32_t, std::size_t> per_table;
  REQUIRE(r->for_each_row([&](std::uint32_t t, std::uint64_t id, const float* v) {
    const std::size_t i = static_cast<std::size_t>((id - 1) / 7919);
    for (std::size_t k = 0; k < 4; ++k) values_ok = values_ok && v[k] == rows[i * 5 + k];
    ++per_table[t];
    ++seen;
  }).is_ok());
  CHECK(values_ok);
  CHECK(seen == big);
  CHECK(per_table[1] == 5);
  CHECK(per_table[3] == big - 5);
  CHECK(r->totals().blocks == 4);

  auto loaded = model::load_model(path);
  REQUIRE(loaded.is_ok());
  CHECK(loaded->embeddings->table(3).rows() == big - 5);
  const float* row = loaded->embeddings->table(3).find(ids[20]);
  REQUIRE(row != nullptr);
  CHECK(row[3] == rows[20 * 5 + 3]);
  CHECK(row[4] == 0.0f);
}

TEST_CASE("model file: rewind takes back the rows added after a mark", "[model_file]") {
  test::temp_dir dir;
  small_model m(0);
  const std::string path = dir.str("r.ssm");
  auto w = model::model_writer::open(path, m.header);
  REQUIRE(w.is_ok());
  REQUIRE(w->write_dense(m.dense->params(), m.dense->size()).is_ok());
  std::vector<std::uint64_t> ids = {1, 2, 3, 4, 5, 6};
  std::vector<float> values(ids.size() * 4);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  REQUIRE(w->add_rows(0, ids.data(), values.data(), 2).is_ok());
  const auto mark = w->mark();
  // A shard's first pages, then it restarts: its rows are dumped again from the start.
  REQUIRE(w->add_rows(1, ids.data() + 2, values.data() + 8, 3).is_ok());
  REQUIRE(w->add_rows(3, ids.data() + 5, values.data() + 20, 1).is_ok());
  CHECK(w->rows() == 6);
  REQUIRE(w->rewind(mark).is_ok());
  CHECK(w->rows() == 2);
  CHECK(w->bytes() == mark.stats.bytes);
  REQUIRE(w->add_rows(1, ids.data() + 2, values.data() + 8, 3).is_ok());
  REQUIRE(w->add_rows(3, ids.data() + 5, values.data() + 20, 1).is_ok());
  auto stats = w->finish();
  REQUIRE(stats.is_ok());
  CHECK(stats->rows == 6);
  CHECK(stats->table_rows == std::vector<std::uint64_t>{2, 3, 0, 1});
  CHECK(fs::file_size(path) == stats->bytes);
  auto loaded = model::load_model(path);  // verifies every section and the footer
  REQUIRE(loaded.is_ok());
  CHECK(loaded->embeddings->table(1).rows() == 3);
  CHECK(loaded->embeddings->table(3).find(6)[0] == 20.0f);
  // A mark from another writer is refused.
  auto other = model::model_writer::open(dir.str("o.ssm"), m.header);
  REQUIRE(other.is_ok());
  REQUIRE(other->write_dense(m.dense->params(), m.dense->size()).is_ok());
  auto foreign = mark;
  foreign.stats.bytes = other->bytes() + 1000;
  CHECK(other->rewind(foreign).code() == errc::invalid_argument);
}

TEST_CASE("model file: written to PATH.tmp and renamed only when finished", "[model_file]") {
  test::temp_dir dir;
  small_model old_model;
  const std::string path = dir.str("m.ssm");
  REQUIRE(model::save_model(path, old_model.header, *old_model.dense, *old_model.store).is_ok());
  const std::string old_bytes = read_file(path);

  small_model m(3);
  for (std::size_t i = 0; i < m.dense->size(); ++i) m.dense->params()[i] = 1.5f;
  {
    auto w = model::model_writer::open(path, m.header);
    REQUIRE(w.is_ok());
    CHECK(fs::exists(path + ".tmp"));
    REQUIRE(w->write_dense(m.dense->params(), m.dense->size()).is_ok());
    CHECK(read_file(path) == old_bytes);  // the old model is untouched while the new one is written
    // Dropped without finish(): the temporary file goes, the old model stays.
  }
  CHECK_FALSE(fs::exists(path + ".tmp"));
  CHECK(read_file(path) == old_bytes);
  REQUIRE(model::load_model(path).is_ok());

  auto w = model::model_writer::open(path, m.header);
  REQUIRE(w.is_ok());
  REQUIRE(w->write_dense(m.dense->params(), m.dense->size()).is_ok());
  CHECK(w->bytes() > 0);
  auto done = w->finish();
  REQUIRE(done.is_ok());
  CHECK_FALSE(fs::exists(path + ".tmp"));
  CHECK(w->finish().error().code() == errc::invalid_argument);  // only once
  auto loaded = model::load_model(path);
  REQUIRE(loaded.is_ok());
  CHECK(loaded->dense->params()[0] == 1.5f);
  CHECK(loaded->stats.rows == 0);

  // A directory that does not exist: a clear error, nothing left behind.
  auto bad = model::model_writer::open(dir.str("no/such/dir/m.ssm"), m.header);
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.error().code() == errc::io_error);
  CHECK(contains(bad.error().message(), "no/such/dir/m.ssm.tmp"));
}

TEST_CASE("model file: a diverged model (NaN or infinite values) is refused, never written", "[model_file]") {
  test::temp_dir dir;
  const std::string path = dir.str("nan.ssm");
  small_model m(1);
  m.dense->params()[2] = std::numeric_limits<float>::quiet_NaN();
  m.dense->params()[5] = std::numeric_limits<float>::infinity();
  auto saved = model::save_model(path, m.header, *m.dense, *m.store);
  REQUIRE_FALSE(saved.is_ok());
  CHECK(saved.error().code() == errc::out_of_range);
  CHECK(contains(saved.error().message(), "2 of " + std::to_string(m.dense->size()) +
                                               " dense parameters are NaN or infinite: training diverged"));
  CHECK_FALSE(fs::exists(path));
  CHECK_FALSE(fs::exists(path + ".tmp"));

  small_model good(1);
  auto w = model::model_writer::open(path, good.header);
  REQUIRE(w.is_ok());
  REQUIRE(w->write_dense(good.dense->params(), good.dense->size()).is_ok());
  const std::uint64_t ids[2] = {7, 9};
  std::vector<float> rows(2 * good.header.dim, 0.5f);
  rows[good.header.dim + 1] = -std::numeric_limits<float>::infinity();
  auto added = w->add_rows(0, ids, rows.data(), 2);
  CHECK(added.code() == errc::out_of_range);
  CHECK(contains(added.message(), "row 9 of table 0 has NaN or infinite values"));
  CHECK_FALSE(w->finish().is_ok());
  CHECK_FALSE(fs::exists(path));
}

TEST_CASE("model file: a newer format version is refused naming both versions", "[model_file]") {
  test::temp_dir dir;
  const std::string path = dir.str("m.ssm");
  std::string bytes = small_model().saved_bytes(path);
  bytes[8] = 2;
  write_file(path, bytes);
  auto loaded = model::load_model(path);
  REQUIRE_FALSE(loaded.is_ok());
  CHECK(loaded.error().code() == errc::version_mismatch);
  CHECK(loaded.error().message() == "model file " + path + ": written by format version 2, this build reads 1");
}

TEST_CASE("model file: not a model file or no file at all", "[model_file]") {
  test::temp_dir dir;
  const std::string text = dir.str("notes.txt");
  write_file(text, "these are not the weights you are looking for\n");
  auto a = model::load_model(text);
  REQUIRE_FALSE(a.is_ok());
  CHECK(a.error().code() == errc::corrupt);
  CHECK(contains(a.error().message(), "not a shadowsync model file"));
  CHECK(contains(a.error().message(), text));

  auto b = model::load_model(dir.str("missing.ssm"));
  REQUIRE_FALSE(b.is_ok());
  CHECK(b.error().code() == errc::not_found);
  CHECK(contains(b.error().message(), "missing.ssm: no such file"));

  auto c = model::load_model(dir.str());
  REQUIRE_FALSE(c.is_ok());
  CHECK(contains(c.error().message(), "is a directory"));
}

TEST_CASE("model file: truncation at any offset is detected as truncation", "[model_file]") {
  test::temp_dir dir;
  const std::string bytes = small_model(5).saved_bytes(dir.str("m.ssm"));
  const std::string cut = dir.str("cut.ssm");
  int failures = 0;
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    write_file(cut, bytes.substr(0, n));
    auto loaded = model::load_model(cut);
    const std::string want = "truncated after " + std::to_string(n) + " bytes";
    if (loaded.is_ok() || !contains(loaded.error().message(), want)) {
      ++failures;
      INFO("cut at " << n << ": " << (loaded.is_ok() ? std::string("loaded") : loaded.error().message()));
      CHECK(false);
    }
    if (failures > 5) break;
  }
  CHECK(failures == 0);
  // A cut exactly at a block boundary: the footer is missing.
  const std::size_t footer_at = bytes.size() - (20 + 16 + 8 * 4 + 4);  // the footer's size with 4 tables
  write_file(cut, bytes.substr(0, footer_at));
  auto loaded = model::load_model(cut);
  REQUIRE_FALSE(loaded.is_ok());
  CHECK(contains(loaded.error().message(), "the footer is missing: the file ends after row block 3"));
  // And bytes after the footer are not ignored.
  write_file(cut, bytes + "x");
  auto longer = model::verify_model(cut);
  REQUIRE_FALSE(longer.is_ok());
  CHECK(contains(longer.error().message(), "1 unexpected bytes after the footer"));
}

TEST_CASE("model file: a flipped byte anywhere is detected and the section named", "[model_file]") {
  test::temp_dir dir;
  small_model m(3);
  const std::string bytes = m.saved_bytes(dir.str("m.ssm"));

  // The layout: preamble, header, dense part, 3 blocks of 3 rows (tables 0, 1, 3), footer.
  std::uint64_t hb = 0;  // the header's payload bytes, from its section head
  for (int i = 0; i < 8; ++i) hb |= std::uint64_t{static_cast<unsigned char>(bytes[12 + 8 + i])} << (8 * i);
  struct range {
    std::size_t end;  // one past
    std::vector<std::string> names;  // any of these must appear in the message
  };
  std::vector<range> layout;
  std::size_t at = 8;
  layout.push_back({at, {"magic"}});
  at += 4;
  layout.push_back({at, {"version"}});
  at += 20 + hb + 4;
  layout.push_back({at, {"the header"}});
  at += 20 + 4 * m.dense->size() + 4;
  layout.push_back({at, {"the dense part"}});
  const std::uint32_t tables[] = {0, 1, 3};
  for (int b = 0; b < 3; ++b) {
    at += 20 + 3 * (8 + 4 * 4) + 4;
    const std::string block = "row block " + std::to_string(b + 1);
    const std::string after = b == 0 ? "after the dense part" : "after row block " + std::to_string(b);
    layout.push_back({at, {block + " (table " + std::to_string(tables[b]) + ")", block + " fails", after}});
  }
  at += 20 + 16 + 8 * 4 + 4;
  layout.push_back({at, {"the footer", "after row block 3"}});
  REQUIRE(at == bytes.size());

  const std::string bad = dir.str("bad.ssm");
  int failures = 0;
  std::size_t section = 0;
  for (std::size_t i = 0; i < bytes.size() && failures < 5; ++i) {
    while (i >= layout[section].end) ++section;
    std::string flipped = bytes;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x5a);
    write_file(bad, flipped);
    auto loaded = model::load_model(bad);
    bool named = false;
    if (!loaded.is_ok())
      for (const auto& n : layout[section].names) named = named || contains(loaded.error().message(), n);
    if (!named) {
      ++failures;
      INFO("byte " << i << " (section " << section << "): "
                   << (loaded.is_ok() ? std::string("loaded") : loaded.error().message()));
      CHECK(false);
    }
  }
  CHECK(failures == 0);

  // The message of a damaged row block names its table.
  std::string flipped = bytes;
  const std::size_t in_block_2 = layout[4].end + 30;  // inside block 2's payload (table 1)
  flipped[in_block_2] = static_cast<char>(flipped[in_block_2] ^ 1);
  write_file(bad, flipped);
  auto loaded = model::load_model(bad);
  REQUIRE_FALSE(loaded.is_ok());
  CHECK(loaded.error().code() == errc::corrupt);
  CHECK(contains(loaded.error().message(), "model file " + bad + ": row block 2 (table 1) fails its checksum"));
}

TEST_CASE("model file: a schema file travels inside the model", "[model_file]") {
  test::temp_dir dir;
  const std::string schema_path = dir.str("s.schema");
  write_file(schema_path, "format = csv\nheader = true\nlabel = y\ncategorical = *\n");
  small_model m;
  m.job.input.schema = schema_path;
  auto h = model::header_for_job(m.job, 0.5, 1, "test");
  REQUIRE(h.is_ok());
  CHECK(h->schema_text == "format = csv\nheader = true\nlabel = y\ncategorical = *\n");
  const std::string path = dir.str("m.ssm");
  REQUIRE(model::save_model(path, *h, *m.dense, *m.store).is_ok());
  fs::remove(schema_path);
  auto loaded = model::load_model(path);
  REQUIRE(loaded.is_ok());
  auto schema = model::model_schema(loaded->header, loaded->job);
  REQUIRE(schema.is_ok());
  CHECK(schema->label == "y");
  CHECK(schema->categorical_rest);
}
