// The exported model file: round trips (rows at fp32, bf16 and fp16), the streaming writer, version 1
// files, and every way a file can be wrong (newer version, unknown row precision, truncation
// anywhere, a flipped byte anywhere, not a model at all).
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ss/core/checksum.hpp"
#include "ss/core/embedding/local_embeddings.hpp"
#include "ss/core/embedding/row_precision.hpp"
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

// Little-endian integers inside a file's bytes.
std::uint64_t le_at(const std::string& bytes, std::size_t at, std::size_t width) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < width; ++i) v |= std::uint64_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
  return v;
}
void put_le_at(std::string& bytes, std::size_t at, std::uint64_t v, std::size_t width) {
  for (std::size_t i = 0; i < width; ++i) bytes[at + i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}
std::string le_bytes(std::uint64_t v, std::size_t width) {
  std::string b(width, '\0');
  put_le_at(b, 0, v, width);
  return b;
}

// The HEAD section's payload of a model file's bytes (it follows the 12-byte preamble).
constexpr std::size_t head_at = 12;
std::string head_payload(const std::string& bytes) {
  const std::size_t n = static_cast<std::size_t>(le_at(bytes, head_at + 8, 8));
  return bytes.substr(head_at + 20, n);
}

// The file with format version `version` and `payload` as its HEAD, every CRC made right again:
// a file that is damaged (or old) only where a test means it to be.
std::string with_head(const std::string& bytes, std::uint32_t version, const std::string& payload) {
  const std::size_t old_end = head_at + 20 + head_payload(bytes).size() + 4;
  std::string head = bytes.substr(head_at, 4) + le_bytes(0, 4) + le_bytes(payload.size(), 8);
  head += le_bytes(ss::crc32c(head.data(), head.size()), 4);
  return bytes.substr(0, 8) + le_bytes(version, 4) + head + payload +
         le_bytes(ss::crc32c(payload.data(), payload.size()), 4) + bytes.substr(old_end);
}

// A value as a file at precision p gives it back: rounded to the nearest 16-bit float.
float rounded(float value, embedding::row_precision p) {
  embedding::round_to_nearest(&value, 1, p);
  return value;
}

// The bytes of a file of small_model(rows_per_table) (3 blocks of rows, 4 tables, dim 4) whose
// header payload has `head_bytes` bytes, its rows at `bytes_per_value`.
std::size_t small_model_file_bytes(std::size_t head_bytes, std::size_t dense_params, std::size_t rows_per_table,
                                   std::size_t bytes_per_value) {
  const std::size_t section = 20 + 4;  // head and payload CRC
  return 12 + (section + head_bytes) + (section + 4 * dense_params) +
         3 * (section + rows_per_table * (8 + 4 * bytes_per_value)) + (section + 16 + 8 * 4);
}

// Whether `got` holds every row of `want`'s tables 0 .. tables - 1, bit for bit (dim values).
bool same_rows(const embedding::local_embeddings& want, const embedding::local_embeddings& got, std::uint32_t tables,
               std::size_t dim) {
  bool same = true;
  for (std::uint32_t t = 0; t < tables; ++t)
    want.table(t).for_each([&](std::uint64_t id, const float* row) {
      const float* other = got.table(t).find(id);
      same = same && other != nullptr && std::memcmp(other, row, dim * sizeof(float)) == 0;
    });
  return same;
}

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
  CHECK(r->format_version() == 2);
  CHECK(r->header().dim == 4);
  CHECK(r->header().row_precision == embedding::row_precision::fp32);
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
  bytes[8] = 3;
  write_file(path, bytes);
  auto loaded = model::load_model(path);
  REQUIRE_FALSE(loaded.is_ok());
  CHECK(loaded.error().code() == errc::version_mismatch);
  CHECK(loaded.error().message() == "model file " + path + ": written by format version 3, this build reads 2");
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

TEST_CASE("model file: header_for_job takes the job's row precision", "[core][model_file]") {
  job::job_options j = small_job();
  for (const auto p : {embedding::row_precision::fp32, embedding::row_precision::bf16, embedding::row_precision::fp16}) {
    j.model.row_precision = embedding::to_string(p);
    auto header = model::header_for_job(j, 0.25, 1, "test");
    REQUIRE(header.is_ok());
    CHECK(header->row_precision == p);
  }
  j.model.row_precision = "fp8";
  auto fp8 = model::header_for_job(j, 0.25, 1, "test");
  REQUIRE_FALSE(fp8.is_ok());
  CHECK(fp8.error().code() == errc::invalid_argument);
  CHECK(contains(fp8.error().message(), "unknown row precision 'fp8'"));
}

TEST_CASE("model file: rows at bf16 and fp16 are half the bytes and read back rounded to the nearest",
          "[core][model_file]") {
  for (const auto precision : {embedding::row_precision::bf16, embedding::row_precision::fp16}) {
    const std::string name = embedding::to_string(precision);
    INFO("row precision " << name);
    test::temp_dir dir;
    small_model m;  // rows of arbitrary values in (-1, 1): few of them are 16-bit floats
    m.job.model.row_precision = name;
    auto h = model::header_for_job(m.job, 0.25, 12345, "model_file_test");
    REQUIRE(h.is_ok());
    m.header = *h;
    REQUIRE(m.header.row_precision == precision);

    const std::string path = dir.str("m.ssm");
    const std::string bytes = m.saved_bytes(path);
    const std::size_t head_bytes = head_payload(bytes).size();
    // 8 + 2 * dim bytes a row, against fp32's 8 + 4 * dim.
    CHECK(bytes.size() == small_model_file_bytes(head_bytes, m.dense->size(), 20, 2));
    const std::string fp32_bytes = small_model().saved_bytes(dir.str("fp32.ssm"));
    CHECK(fp32_bytes.size() == small_model_file_bytes(head_payload(fp32_bytes).size(), m.dense->size(), 20, 4));
    CHECK(le_at(head_payload(bytes), head_bytes - 4, 4) == static_cast<std::uint32_t>(precision));
    CHECK(le_at(head_payload(fp32_bytes), head_payload(fp32_bytes).size() - 4, 4) == 0);

    // The first row of the first block, byte by byte: its id, then 16-bit little-endian words.
    const std::size_t first_row = 12 + 20 + head_bytes + 4 + 20 + 4 * m.dense->size() + 4 + 20;
    const std::uint64_t first_id = le_at(bytes, first_row, 8);
    const float* first = m.store->table(0).find(first_id);
    REQUIRE(first != nullptr);
    for (std::size_t k = 0; k < 4; ++k) {
      const std::uint16_t want = precision == embedding::row_precision::bf16 ? embedding::bf16_of(first[k])
                                                                             : embedding::fp16_of(first[k]);
      CHECK(le_at(bytes, first_row + 8 + 2 * k, 2) == want);
    }

    auto r = model::model_reader::open(path);
    REQUIRE(r.is_ok());
    CHECK(r->format_version() == 2);
    CHECK(r->header().row_precision == precision);

    auto loaded = model::load_model(path);
    REQUIRE(loaded.is_ok());
    CHECK(loaded->header.row_precision == precision);
    CHECK(loaded->job.model.row_precision == name);
    // The dense part stays FP32; the rows come back as their nearest 16-bit value.
    CHECK(std::memcmp(loaded->dense->params(), m.dense->params(), sizeof(float) * m.dense->size()) == 0);
    std::size_t rows = 0, values_changed = 0;
    bool all_nearest = true;
    for (std::uint32_t t = 0; t < 4; ++t) {
      CHECK(loaded->embeddings->table(t).rows() == m.store->table(t).rows());
      m.store->table(t).for_each([&](std::uint64_t id, const float* row) {
        const float* got = loaded->embeddings->table(t).find(id);
        REQUIRE(got != nullptr);
        ++rows;
        for (std::size_t k = 0; k < 4; ++k) {
          all_nearest = all_nearest && got[k] == rounded(row[k], precision);
          values_changed += got[k] != row[k] ? 1 : 0;
        }
      });
    }
    CHECK(rows == 60);
    CHECK(all_nearest);
    CHECK(values_changed > 200);  // of 240: the values were rounded, not kept

    // Values exactly representable at the precision come back bit for bit.
    for (std::uint32_t t = 0; t < 4; ++t) {
      std::vector<std::uint64_t> ids;  // collected first: for_each holds the table's locks
      m.store->table(t).for_each([&](std::uint64_t id, const float*) { ids.push_back(id); });
      for (const auto id : ids) {
        float* row = m.store->table(t).find(id);
        for (std::size_t k = 0; k < 4; ++k) row[k] = rounded(row[k], precision);
      }
    }
    REQUIRE(model::save_model(path, m.header, *m.dense, *m.store).is_ok());
    auto exact = model::load_model(path);
    REQUIRE(exact.is_ok());
    CHECK(same_rows(*m.store, *exact->embeddings, 4, 4));
  }
}

TEST_CASE("model file: 16-bit rows of an odd dim, edge values and values too large", "[core][model_file]") {
  using embedding::row_precision;
  test::temp_dir dir;
  for (const auto precision : {row_precision::bf16, row_precision::fp16}) {
    INFO("row precision " << embedding::to_string(precision));
    model::model_header h;
    h.tables = 1;
    h.dim = 3;
    h.dense_params = 1;
    h.row_precision = precision;
    const std::string path = dir.str("odd.ssm");
    auto w = model::model_writer::open(path, h);
    REQUIRE(w.is_ok());
    const float dense = 0.1f;
    REQUIRE(w->write_dense(&dense, 1).is_ok());
    // Exact at both precisions: zero, negative zero, powers of two, fp16's largest and smallest
    // normal; then values neither holds.
    const std::uint64_t ids[3] = {1, 2, 3};
    const float values[9] = {0.0f, -0.0f, 1024.0f, -0.5f, 0.25f, 6.103515625e-05f, 0.1f, -1.0f / 3.0f, 3.14159f};
    REQUIRE(w->add_rows(0, ids, values, 3).is_ok());
    auto stats = w->finish();
    REQUIRE(stats.is_ok());
    const std::string bytes = read_file(path);
    const std::size_t head_bytes = head_payload(bytes).size();
    CHECK(bytes.size() == 12 + (24 + head_bytes) + (24 + 4) + (24 + 3 * (8 + 2 * 3)) + (24 + 16 + 8));

    auto r = model::model_reader::open(path);
    REQUIRE(r.is_ok());
    auto d = r->read_dense();
    REQUIRE(d.is_ok());
    CHECK((*d)[0] == 0.1f);  // the dense part is FP32 at every precision
    std::vector<float> got;
    REQUIRE(r->for_each_row([&](std::uint32_t, std::uint64_t, const float* v) { got.insert(got.end(), v, v + 3); })
                .is_ok());
    REQUIRE(got.size() == 9);
    CHECK(std::memcmp(got.data(), values, 6 * sizeof(float)) == 0);  // bit for bit, -0 included
    for (std::size_t k = 6; k < 9; ++k) {
      CHECK(got[k] == rounded(values[k], precision));
      CHECK(got[k] != values[k]);
    }
  }

  // A finite value beyond fp16's range would read back infinite: refused, nothing written.
  model::model_header h;
  h.tables = 1;
  h.dim = 2;
  h.dense_params = 0;
  h.row_precision = row_precision::fp16;
  const std::string path = dir.str("big.ssm");
  auto w = model::model_writer::open(path, h);
  REQUIRE(w.is_ok());
  REQUIRE(w->write_dense(nullptr, 0).is_ok());
  const std::uint64_t id = 5;
  const float big[2] = {65504.0f, 70000.0f};
  auto added = w->add_rows(0, &id, big, 1);
  CHECK(added.code() == errc::out_of_range);
  CHECK(contains(added.message(), "row 5 of table 0 has a value too large for fp16"));
  CHECK_FALSE(fs::exists(path + ".tmp"));

  // A precision no reader knows is never written.
  h.row_precision = static_cast<row_precision>(9);
  auto bad = model::model_writer::open(path, h);
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.error().message() ==
        "model file " + path + ": header: row precision code 9 is none this build knows (0 fp32, 1 bf16, 2 fp16)");
}

TEST_CASE("model file: a version 1 file (no row precision, fp32 rows) still reads", "[core][model_file]") {
  test::temp_dir dir;
  small_model m;
  const std::string v2_path = dir.str("v2.ssm");
  const std::string v2 = m.saved_bytes(v2_path);
  // Version 1 is version 2 at fp32 without the HEAD's last field.
  std::string head = head_payload(v2);
  REQUIRE(le_at(head, head.size() - 4, 4) == 0);
  head.resize(head.size() - 4);
  const std::string path = dir.str("v1.ssm");
  const std::string v1 = with_head(v2, 1, head);
  CHECK(v1.size() == v2.size() - 4);
  write_file(path, v1);

  auto r = model::model_reader::open(path);
  REQUIRE(r.is_ok());
  CHECK(r->format_version() == 1);
  CHECK(r->header().row_precision == embedding::row_precision::fp32);
  auto verified = model::verify_model(path);
  REQUIRE(verified.is_ok());
  CHECK(verified->rows == 60);

  auto loaded = model::load_model(path);
  REQUIRE(loaded.is_ok());
  CHECK(loaded->header.config == m.header.config);
  CHECK(std::memcmp(loaded->dense->params(), m.dense->params(), sizeof(float) * m.dense->size()) == 0);
  CHECK(same_rows(*m.store, *loaded->embeddings, 4, 4));

  // A version 1 header that carries the field has 4 bytes too many: malformed, not read past.
  write_file(path, with_head(v2, 1, head_payload(v2)));
  auto longer = model::load_model(path);
  REQUIRE_FALSE(longer.is_ok());
  CHECK(longer.error().code() == errc::corrupt);
  CHECK(contains(longer.error().message(), "the header is malformed"));
  // And a version 2 header without it is short.
  write_file(path, with_head(v2, 2, head));
  auto shorter = model::load_model(path);
  REQUIRE_FALSE(shorter.is_ok());
  CHECK(contains(shorter.error().message(), "the header is malformed"));
}

TEST_CASE("model file: an unknown row precision code is refused, never read as another", "[core][model_file]") {
  test::temp_dir dir;
  const std::string bytes = small_model().saved_bytes(dir.str("m.ssm"));
  std::string head = head_payload(bytes);
  put_le_at(head, head.size() - 4, 7, 4);
  const std::string path = dir.str("p7.ssm");
  write_file(path, with_head(bytes, 2, head));  // every CRC right: only the code is wrong
  auto loaded = model::load_model(path);
  REQUIRE_FALSE(loaded.is_ok());
  CHECK(loaded.error().code() == errc::corrupt);
  CHECK(loaded.error().message() ==
        "model file " + path + ": header: row precision code 7 is none this build knows (0 fp32, 1 bf16, 2 fp16)");
  auto r = model::model_reader::open(path);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.error().message() == loaded.error().message());

  // A code that is known but wrong for the rows (bf16 claimed for fp32 rows): the row blocks no
  // longer add up, which is reported as damage.
  put_le_at(head, head.size() - 4, 1, 4);
  write_file(path, with_head(bytes, 2, head));
  auto wrong = model::verify_model(path);
  REQUIRE_FALSE(wrong.is_ok());
  CHECK(contains(wrong.error().message(), "row block 1 (table 0)"));
}
