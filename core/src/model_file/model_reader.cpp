// Reads and verifies the exported model file section by section, and the conveniences built on
// it: verify_model, load_model, header_for_job, model_schema (format: ss/core/model_file/model_file.hpp).
#include "ss/core/model_file/model_file.hpp"


#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "model_file_format.hpp"
#include "ss/core/io/byte_order.hpp"
#include "ss/core/model/dlrm.hpp"

namespace ss::model {

namespace file_format {

bool decode_header(const unsigned char* p, std::size_t n, std::uint32_t version, model_header& h,
                   std::uint32_t& row_precision_code) {
  std::size_t at = 0;
  auto need = [&](std::size_t k) { return n - at >= k; };
  auto u32 = [&](std::uint32_t& v) {
    if (!need(4)) return false;
    v = io::get_le<std::uint32_t>(p + at);
    at += 4;
    return true;
  };
  auto u64 = [&](std::uint64_t& v) {
    if (!need(8)) return false;
    v = io::get_le<std::uint64_t>(p + at);
    at += 8;
    return true;
  };
  auto str = [&](std::string& s) {
    std::uint32_t len = 0;
    if (!u32(len) || !need(len)) return false;
    s.assign(reinterpret_cast<const char*>(p + at), len);
    at += len;
    return true;
  };
  std::uint64_t rate_bits = 0, created = 0;
  if (!u32(h.tables) || !u32(h.dim) || !u64(h.dense_params) || !u64(rate_bits) || !u64(h.train_examples) ||
      !u64(created) || !str(h.producer) || !str(h.config) || !str(h.schema_text))
    return false;
  row_precision_code = static_cast<std::uint32_t>(embedding::row_precision::fp32);
  if (version >= first_version_with_row_precision && !u32(row_precision_code)) return false;
  std::memcpy(&h.train_click_rate, &rate_bits, sizeof rate_bits);
  h.created_unix_ms = static_cast<std::int64_t>(created);
  return at == n;
}

}  // namespace file_format

using namespace file_format;

using io::get_le;

// ============================================================================================
// model_reader

struct model_reader::impl {
  enum class stage { dense_next, rows_next, done };

  io::section_reader in;
  std::uint32_t version = 0;
  model_header header;
  stage at = stage::dense_next;
  model_file_stats totals;
  std::vector<std::uint64_t> ids;
  std::vector<float> values;

  const std::string& prefix() const { return in.prefix(); }
  status truncated(const std::string& where) const { return in.truncated(where); }
  status corrupt(const std::string& what) const { return in.corrupt(what); }

  status open_file(const std::string& p) {
    SS_RETURN_IF_ERROR(in.open_file(p, "model file " + p + ": "));
    auto v = in.read_preamble(model_magic, "SSMODEL", "a shadowsync model file", model_format_version);
    if (!v.is_ok()) return v.error();
    version = *v;

    auto h = in.read_head("the header");
    if (!h.is_ok()) return h.error();
    if (!h->is(tag_head)) return corrupt("expected the header section, found '" + tag_text(h->tag) + "'");
    if (h->b > max_header_bytes) return corrupt("the header claims " + std::to_string(h->b) + " bytes");
    SS_RETURN_IF_ERROR(in.read_payload(h->b, "the header", h->offset));
    std::uint32_t precision_code = 0;
    if (!decode_header(in.payload(), static_cast<std::size_t>(h->b), version, header, precision_code))
      return corrupt("the header is malformed");
    // Never taken for another precision: rows read at the wrong width would be garbage.
    auto precision = embedding::row_precision_of_code(precision_code, prefix() + "header");
    if (!precision.is_ok()) return {errc::corrupt, precision.error().message()};
    header.row_precision = *precision;
    if (header.tables > max_tables || header.dim == 0 || header.dim > max_dim)
      return corrupt("the header gives a bad shape (" + std::to_string(header.tables) + " tables of dim " +
                     std::to_string(header.dim) + ")");
    totals.table_rows.assign(header.tables, 0);
    return status::ok();
  }

  status dense(float* out, std::size_t n) {
    if (at != stage::dense_next) return {errc::invalid_argument, prefix() + "the dense part was already read"};
    if (out != nullptr && n != header.dense_params)
      return {errc::invalid_argument, prefix() + "holds " + std::to_string(header.dense_params) +
                                          " dense parameters, the caller expects " + std::to_string(n)};
    auto h = in.read_head("the dense part");
    if (!h.is_ok()) return h.error();
    if (!h->is(tag_dense)) return corrupt("expected the dense part, found section '" + tag_text(h->tag) + "'");
    if (h->b != header.dense_params)
      return corrupt("the dense part holds " + std::to_string(h->b) + " parameters, the header says " +
                     std::to_string(header.dense_params));
    if (h->b > in.left() / 4) return truncated("in the dense part");
    SS_RETURN_IF_ERROR(in.read_payload(h->b * 4, "the dense part", h->offset));
    if (out != nullptr) io::decode_floats_le(in.payload(), static_cast<std::size_t>(h->b), out);
    at = stage::rows_next;
    return status::ok();
  }

  status blocks(const block_fn& fn) {
    if (at == stage::done) return {errc::invalid_argument, prefix() + "the rows were already read"};
    if (at == stage::dense_next) SS_RETURN_IF_ERROR(dense(nullptr, 0));
    const std::size_t dim = header.dim;
    const embedding::row_precision precision = header.row_precision;
    const bool halved = precision != embedding::row_precision::fp32;
    const std::uint64_t bytes_per_row = row_bytes(header.dim, precision);
    for (;;) {
      const std::string after = totals.blocks == 0 ? "the dense part" : "row block " + std::to_string(totals.blocks);
      if (in.left() == 0) return truncated("the footer is missing: the file ends after " + after);
      auto h = in.read_head("the section after " + after);
      if (!h.is_ok()) return h.error();
      if (h->is(tag_foot)) {
        const std::uint64_t want = 16 + 8 * std::uint64_t{header.tables};
        if (h->a != 0 || h->b != want)
          return corrupt("the footer has a bad size (" + std::to_string(h->b) + " bytes, expected " +
                         std::to_string(want) + ")");
        SS_RETURN_IF_ERROR(in.read_payload(h->b, "the footer", h->offset));
        const unsigned char* p = in.payload();
        const auto blocks = get_le<std::uint64_t>(p), rows = get_le<std::uint64_t>(p + 8);
        if (blocks != totals.blocks || rows != totals.rows)
          return corrupt("the footer says " + std::to_string(blocks) + " row blocks and " + std::to_string(rows) +
                         " rows, the file holds " + std::to_string(totals.blocks) + " and " +
                         std::to_string(totals.rows));
        for (std::uint32_t t = 0; t < header.tables; ++t) {
          const auto r = get_le<std::uint64_t>(p + 16 + 8 * std::size_t{t});
          if (r != totals.table_rows[t])
            return corrupt("the footer says table " + std::to_string(t) + " has " + std::to_string(r) +
                           " rows, the file holds " + std::to_string(totals.table_rows[t]));
        }
        if (in.left() != 0)
          return corrupt(std::to_string(in.left()) + " unexpected bytes after the footer (at offset " +
                         std::to_string(in.pos()) + ")");
        totals.bytes = in.size();
        at = stage::done;
        return status::ok();
      }
      if (!h->is(tag_rows))
        return corrupt("unexpected section '" + tag_text(h->tag) + "' at offset " + std::to_string(h->offset) +
                       " (after " + after + ")");
      const std::string name = "row block " + std::to_string(totals.blocks + 1) + " (table " + std::to_string(h->a) + ")";
      if (h->a >= header.tables)
        return corrupt(name + " names a table the model does not have (" + std::to_string(header.tables) + " tables)");
      if (h->b > in.left() / bytes_per_row)
        return truncated("in " + name + ", which needs " + std::to_string(h->b * bytes_per_row + 4) +
                         " bytes from offset " + std::to_string(in.pos()));
      SS_RETURN_IF_ERROR(in.read_payload(h->b * bytes_per_row, name, h->offset));
      const std::size_t n = static_cast<std::size_t>(h->b);
      ids.resize(n);
      values.resize(n * dim);
      const unsigned char* p = in.payload();
      for (std::size_t i = 0; i < n; ++i, p += bytes_per_row) {
        ids[i] = get_le<std::uint64_t>(p);
        // The caller gets FP32 whatever the file holds: predict and serving build FP32 tables.
        if (halved) embedding::from_halves_le(p + 8, dim, precision, values.data() + i * dim);
        else io::decode_floats_le(p + 8, dim, values.data() + i * dim);
      }
      totals.blocks += 1;
      totals.rows += n;
      totals.table_rows[h->a] += n;
      SS_RETURN_IF_ERROR(fn(h->a, ids.data(), values.data(), n));
    }
  }
};

model_reader::model_reader() = default;
model_reader::~model_reader() = default;
model_reader::model_reader(model_reader&&) noexcept = default;
model_reader& model_reader::operator=(model_reader&&) noexcept = default;

result<model_reader> model_reader::open(const std::string& path) {
  model_reader r;
  r.impl_ = std::make_unique<impl>();
  SS_RETURN_IF_ERROR(r.impl_->open_file(path));
  return r;
}

const model_header& model_reader::header() const { return impl_->header; }
std::uint32_t model_reader::format_version() const { return impl_->version; }
std::uint64_t model_reader::file_bytes() const { return impl_->in.size(); }
std::size_t model_reader::row_dim() const { return impl_->header.dim; }
const model_file_stats& model_reader::totals() const { return impl_->totals; }

status model_reader::read_dense(float* out, std::size_t n) {
  if (out == nullptr) return {errc::invalid_argument, impl_->prefix() + "read_dense() needs a buffer"};
  return impl_->dense(out, n);
}

result<std::vector<float>> model_reader::read_dense() {
  std::vector<float> v(static_cast<std::size_t>(impl_->header.dense_params));
  SS_RETURN_IF_ERROR(impl_->dense(v.data(), v.size()));
  return v;
}

status model_reader::for_each_block(const block_fn& fn) { return impl_->blocks(fn); }


// ============================================================================================
// Convenience

result<model_header> header_for_job(const job::job_options& job, double train_click_rate,
                                    std::uint64_t train_examples, std::string producer) {
  if (job.dense_features < 0 || job.categorical_features < 0)
    return status(errc::invalid_argument, "header_for_job: the job's feature counts are not resolved");
  auto precision = embedding::parse_row_precision(job.model.row_precision);
  if (!precision.is_ok()) return precision.error().with_context("header_for_job: --row-precision");
  auto setup = job::resolve_model(job.model, static_cast<std::uint32_t>(job.dense_features),
                                  static_cast<std::uint32_t>(job.categorical_features));
  if (!setup.is_ok()) return setup.error();
  model_header h;
  h.tables = setup->dlrm.num_sparse;
  h.dim = setup->dlrm.embedding_dim;
  h.dense_params = dense_layout(setup->dlrm).size();
  h.train_click_rate = train_click_rate;
  h.train_examples = train_examples;
  h.producer = std::move(producer);
  h.row_precision = *precision;
  // The shapes as built, not as asked for: an empty --bottom-mlp (sized to the input) is written
  // out, so the file reads the same whatever later versions size it to.
  job::job_options as_built = job;
  as_built.model.bottom_mlp = model::layer_list_text(setup->dlrm.bottom_mlp);
  h.config = job::job_config_text(as_built);
  const std::string& schema = job.input.schema;
  if (schema != "criteo" && schema != "avazu") {
    std::ifstream in(schema, std::ios::binary);
    if (!in) return status(errc::not_found, "schema file " + schema + " is not readable");
    std::ostringstream text;
    text << in.rdbuf();
    h.schema_text = text.str();
  }
  return h;
}

result<model_file_stats> verify_model(const std::string& path) {
  auto r = model_reader::open(path);
  if (!r.is_ok()) return r.error();
  SS_RETURN_IF_ERROR(r->for_each_block(
      [](std::uint32_t, const std::uint64_t*, const float*, std::size_t) { return status::ok(); }));
  return r->totals();
}

result<model_file_stats> save_model(const std::string& path, model_header header, const train::dense_model& dense,
                                    const embedding::local_embeddings& embeddings) {
  const auto& eo = embeddings.options();
  if (dense.config().num_sparse != eo.tables || dense.config().embedding_dim != eo.dim)
    return status(errc::invalid_argument, "save_model: the dense model and the embeddings disagree on the shape");
  header.tables = eo.tables;
  header.dim = eo.dim;
  header.dense_params = dense.size();
  auto w = model_writer::open(path, header);
  if (!w.is_ok()) return w.error();
  SS_RETURN_IF_ERROR(w->write_dense(dense.params(), dense.size()));
  std::vector<std::uint64_t> ids;
  std::vector<float> rows;
  for (std::uint32_t t = 0; t < eo.tables; ++t) {
    const auto& table = embeddings.table(t);
    std::uint64_t position = 0;
    do {
      ids.clear();
      rows.clear();
      position = table.copy_rows(position, max_block_rows, ids, rows);
      SS_RETURN_IF_ERROR(w->add_rows(t, ids.data(), rows.data(), ids.size(), table.row_floats()));
    } while (position != 0);
  }
  return w->finish();
}

result<data::input_schema> model_schema(const model_header& header, const job::job_options& job) {
  if (!header.schema_text.empty()) {
    auto s = data::parse_schema(header.schema_text);
    if (!s.is_ok()) return s.error().with_context("the model's schema");
    return s;
  }
  return job::load_schema(job.input.schema);
}

result<loaded_model> load_model(const std::string& path) {
  auto reader = model_reader::open(path);
  if (!reader.is_ok()) return reader.error();
  const std::string prefix = "model file " + path + ": ";
  loaded_model m;
  m.header = reader->header();
  auto job = job::parse_job_config(m.header.config);
  if (!job.is_ok()) return job.error().with_context(prefix + "its configuration");
  m.job = std::move(*job);
  if (m.job.dense_features < 0 || m.job.categorical_features < 0)
    return status(errc::corrupt, prefix + "its configuration lacks the feature counts");
  auto setup = job::resolve_model(m.job.model, static_cast<std::uint32_t>(m.job.dense_features),
                                  static_cast<std::uint32_t>(m.job.categorical_features));
  if (!setup.is_ok()) return setup.error().with_context(prefix + "its configuration");
  m.setup = std::move(*setup);
  // A model is scored, never trained further: its tables hold what the file holds. The row limit
  // is how training keeps tables bounded, and a table with a memory budget goes over it until its
  // next flush trims it: a copy taken meanwhile (a published base) has more rows than the limit.
  m.setup.embeddings.max_rows_per_table = 0;
  // The reader decodes rows of any precision to FP32 (the store keeps FP32 rows); the store rounds
  // an unseen id's initial values to the file's precision, as the job's shards did.
  m.setup.embeddings.precision = m.header.row_precision;
  const std::size_t params = dense_layout(m.setup.dlrm).size();
  if (m.setup.dlrm.num_sparse != m.header.tables || m.setup.dlrm.embedding_dim != m.header.dim ||
      params != m.header.dense_params)
    return status(errc::corrupt, prefix + "its configuration (" + m.setup.dlrm.describe() + ", " +
                                     std::to_string(params) + " dense parameters) does not match its contents (" +
                                     std::to_string(m.header.tables) + " tables of dim " +
                                     std::to_string(m.header.dim) + ", " + std::to_string(m.header.dense_params) +
                                     " dense parameters)");
  m.dense = std::make_unique<train::dense_model>(m.setup.dlrm, m.setup.dense, m.job.model.seed);
  SS_RETURN_IF_ERROR(reader->read_dense(m.dense->params(), m.dense->size()));
  m.embeddings = std::make_unique<embedding::local_embeddings>(m.setup.embeddings);
  const std::size_t dim = m.header.dim;
  std::vector<float> row;
  auto& store = *m.embeddings;
  SS_RETURN_IF_ERROR(reader->for_each_block([&](std::uint32_t t, const std::uint64_t* ids, const float* values,
                                                std::size_t n) -> status {
    auto& table = store.table(t);
    row.assign(table.row_floats(), 0.0f);  // optimizer state (after the values) starts at zero
    for (std::size_t i = 0; i < n; ++i) {
      std::copy(values + i * dim, values + (i + 1) * dim, row.begin());
      table.put(ids[i], row.data());  // a table without a row limit takes every row
    }
    return status::ok();
  }));
  m.stats = reader->totals();
  for (std::uint32_t t = 0; t < m.header.tables; ++t)
    if (store.table(t).rows() != m.stats.table_rows[t])
      return status(errc::corrupt, prefix + "table " + std::to_string(t) + " lists " +
                                       std::to_string(m.stats.table_rows[t]) + " rows but only " +
                                       std::to_string(store.table(t).rows()) + " distinct ids");
  return m;
}

}  // namespace ss::model
