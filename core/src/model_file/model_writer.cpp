// Writes the exported model file: HEAD, DENS, ROWS pages and FOOT, through a temporary that
// replaces the target durably when finish() succeeds (format: ss/core/model_file/model_file.hpp).
#include "ss/core/model_file/model_file.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include "model_file_format.hpp"
#include "ss/core/io/byte_order.hpp"

namespace ss::model {

namespace file_format {
namespace {

void append_str(std::string& out, const std::string& s) {
  io::append_le(out, static_cast<std::uint32_t>(s.size()));
  out += s;
}

}  // namespace

std::string encode_header(const model_header& h) {
  std::string p;
  io::append_le(p, h.tables);
  io::append_le(p, h.dim);
  io::append_le(p, h.dense_params);
  std::uint64_t rate_bits;
  std::memcpy(&rate_bits, &h.train_click_rate, sizeof rate_bits);
  io::append_le(p, rate_bits);
  io::append_le(p, h.train_examples);
  io::append_le(p, static_cast<std::uint64_t>(h.created_unix_ms));
  append_str(p, h.producer);
  append_str(p, h.config);
  append_str(p, h.schema_text);
  io::append_le(p, static_cast<std::uint32_t>(h.row_precision));
  return p;
}

}  // namespace file_format

using namespace file_format;

namespace {

using io::append_le;
using io::put_le;

std::int64_t now_unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// ============================================================================================
// model_writer

struct model_writer::impl {
  enum class stage { dense_next, rows_next, finished, failed };

  io::section_writer out;
  model_header header;
  stage at = stage::dense_next;
  model_file_stats stats;  // stats.bytes is out.bytes() once finished or marked
  std::vector<unsigned char> block;

  const std::string& prefix() const { return out.prefix(); }

  status fail(status st) {
    at = stage::failed;
    return out.fail(std::move(st));
  }

  status usable(stage wanted, const char* call) const {
    if (at == stage::failed || out.failed()) return out.error();
    if (at == stage::finished) return {errc::invalid_argument, prefix() + call + " after finish()"};
    if (at != wanted)
      return {errc::invalid_argument,
              prefix() + call + (wanted == stage::rows_next ? " before write_dense()" : " called twice or after add_rows()")};
    return status::ok();
  }
};

model_writer::model_writer() = default;
model_writer::~model_writer() = default;
model_writer::model_writer(model_writer&&) noexcept = default;
model_writer& model_writer::operator=(model_writer&&) noexcept = default;

result<model_writer> model_writer::open(const std::string& path, const model_header& header) {
  if (header.tables > max_tables || header.dim == 0 || header.dim > max_dim)
    return status(errc::invalid_argument, "model file " + path + ": bad shape (" + std::to_string(header.tables) +
                                              " tables of dim " + std::to_string(header.dim) + ")");
  // The enum may hold a value cast from anything: only a code readers know goes into a file.
  auto precision = embedding::row_precision_of_code(static_cast<std::uint32_t>(header.row_precision),
                                                    "model file " + path + ": header");
  if (!precision.is_ok()) return precision.error();
  model_writer w;
  w.impl_ = std::make_unique<impl>();
  impl& m = *w.impl_;
  m.header = header;
  if (m.header.created_unix_ms == 0) m.header.created_unix_ms = now_unix_ms();
  m.stats.table_rows.assign(header.tables, 0);
  SS_RETURN_IF_ERROR(m.out.open(path, "model file " + path + ": ", model_magic, model_format_version));
  const std::string payload = encode_header(m.header);
  SS_RETURN_IF_ERROR(m.out.write_section(tag_head, 0, payload.size(), payload.data(), payload.size()));
  return w;
}

namespace {
// A non-finite value means training diverged: such a model is an error, never a file.
using train::non_finite_count;
const char* const kDivergedHint =
    ": training diverged (lower --learning-rate or --embedding-learning-rate, or add warmup); the model is not "
    "written";
}  // namespace

status model_writer::write_dense(const float* params, std::size_t n) {
  if (!impl_) return {errc::invalid_argument, "model_writer: not open"};
  impl& m = *impl_;
  SS_RETURN_IF_ERROR(m.usable(impl::stage::dense_next, "write_dense()"));
  if (n != m.header.dense_params)
    return m.fail({errc::invalid_argument, m.prefix() + "write_dense() got " + std::to_string(n) +
                                               " parameters, the header says " + std::to_string(m.header.dense_params)});
  if (const std::size_t bad = non_finite_count(params, n); bad > 0)
    return m.fail({errc::out_of_range, m.prefix() + std::to_string(bad) + " of " + std::to_string(n) +
                                           " dense parameters are NaN or infinite" + kDivergedHint});
  const void* bytes = params;
  std::vector<unsigned char> converted;
  if constexpr (!io::host_is_little_endian) {
    converted.resize(n * 4);
    io::encode_floats_le(params, n, converted.data());
    bytes = converted.data();
  }
  SS_RETURN_IF_ERROR(m.out.write_section(tag_dense, 0, n, bytes, n * sizeof(float)));
  m.at = impl::stage::rows_next;
  return status::ok();
}

status model_writer::add_rows(std::uint32_t table, const std::uint64_t* ids, const float* values, std::size_t n,
                              std::size_t stride) {
  if (!impl_) return {errc::invalid_argument, "model_writer: not open"};
  impl& m = *impl_;
  SS_RETURN_IF_ERROR(m.usable(impl::stage::rows_next, "add_rows()"));
  if (table >= m.header.tables)
    return m.fail({errc::invalid_argument, m.prefix() + "add_rows() for table " + std::to_string(table) +
                                               ", the model has " + std::to_string(m.header.tables) + " tables"});
  const std::size_t dim = m.header.dim;
  if (stride == 0) stride = dim;
  if (stride < dim)
    return m.fail({errc::invalid_argument, m.prefix() + "add_rows() stride " + std::to_string(stride) +
                                               " is smaller than the dim " + std::to_string(dim)});
  const embedding::row_precision precision = m.header.row_precision;
  const bool halved = precision != embedding::row_precision::fp32;
  const std::size_t bytes_per_row = static_cast<std::size_t>(row_bytes(m.header.dim, precision));
  for (std::size_t start = 0; start < n; start += max_block_rows) {
    const std::size_t count = std::min(max_block_rows, n - start);
    m.block.resize(count * bytes_per_row);
    unsigned char* out = m.block.data();
    for (std::size_t i = 0; i < count; ++i, out += bytes_per_row) {
      const float* row = values + (start + i) * stride;
      if (non_finite_count(row, dim) > 0)
        return m.fail({errc::out_of_range, m.prefix() + "row " + std::to_string(ids[start + i]) + " of table " +
                                               std::to_string(table) + " has NaN or infinite values" + kDivergedHint});
      // A finite value can still round to infinity (beyond 65504 at fp16): refused like a NaN.
      if (embedding::overflows(row, dim, precision) > 0)
        return m.fail({errc::out_of_range, m.prefix() + "row " + std::to_string(ids[start + i]) + " of table " +
                                               std::to_string(table) + " has a value too large for " +
                                               embedding::to_string(precision) + kDivergedHint});
      put_le(out, ids[start + i]);
      if (halved) embedding::to_halves_le(row, dim, precision, out + 8);
      else io::encode_floats_le(row, dim, out + 8);
    }
    SS_RETURN_IF_ERROR(m.out.write_section(tag_rows, table, count, m.block.data(), m.block.size()));
    m.stats.blocks += 1;
    m.stats.rows += count;
    m.stats.table_rows[table] += count;
  }
  return status::ok();
}

model_writer::rows_mark model_writer::mark() const {
  if (!impl_) return rows_mark{};
  rows_mark m{impl_->stats};
  m.stats.bytes = impl_->out.bytes();
  return m;
}

status model_writer::rewind(const rows_mark& to) {
  if (!impl_) return {errc::invalid_argument, "model_writer: not open"};
  impl& m = *impl_;
  SS_RETURN_IF_ERROR(m.usable(impl::stage::rows_next, "rewind()"));
  if (to.stats.bytes > m.out.bytes() || to.stats.table_rows.size() != m.stats.table_rows.size())
    return m.fail({errc::invalid_argument, m.prefix() + "rewind() to a mark this writer did not make"});
  if (auto cut = m.out.truncate_to(to.stats.bytes); !cut.is_ok()) return m.fail(cut);
  m.stats = to.stats;
  return status::ok();
}

result<model_file_stats> model_writer::finish() {
  if (!impl_) return status(errc::invalid_argument, "model_writer: not open");
  impl& m = *impl_;
  SS_RETURN_IF_ERROR(m.usable(impl::stage::rows_next, "finish()"));
  std::string foot;
  append_le(foot, m.stats.blocks);
  append_le(foot, m.stats.rows);
  for (const auto r : m.stats.table_rows) append_le(foot, r);
  SS_RETURN_IF_ERROR(m.out.write_section(tag_foot, 0, foot.size(), foot.data(), foot.size()));
  if (auto committed = m.out.commit(); !committed.is_ok()) return m.fail(committed);
  m.stats.bytes = m.out.bytes();
  m.at = impl::stage::finished;
  return m.stats;
}

void model_writer::abort() {
  if (!impl_) return;
  if (impl_->at != impl::stage::finished && impl_->at != impl::stage::failed)
    (void)impl_->fail(status(errc::cancelled, impl_->prefix() + "writing was aborted"));
}

const std::string& model_writer::path() const {
  static const std::string none;
  return impl_ ? impl_->out.path() : none;
}
std::uint64_t model_writer::rows() const { return impl_ ? impl_->stats.rows : 0; }
std::uint64_t model_writer::bytes() const { return impl_ ? impl_->out.bytes() : 0; }


}  // namespace ss::model
