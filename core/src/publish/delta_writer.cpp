// Writes a delta file: HEAD, DENS, ROWS and TOMB blocks, FOOT, through a temporary that replaces
// the target durably in finish() (format: ss/core/publish/delta_file.hpp).
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "publish_format.hpp"
#include "ss/core/embedding/row_precision.hpp"
#include "ss/core/io/byte_order.hpp"
#include "ss/core/io/section_file.hpp"
#include "ss/core/publish/delta_file.hpp"
#include "ss/core/sync/quantize.hpp"
#include "ss/core/train/dense_model.hpp"

namespace ss::publish {
namespace {

using io::append_le;
using io::put_le;

const char* const kDivergedHint = ": training diverged; the delta is not written";

}  // namespace

struct delta_writer::impl {
  enum class stage { dense_next, blocks_next, finished, failed };

  io::section_writer out;
  delta_head head;
  stage at = stage::dense_next;
  delta_stats stats;
  std::vector<unsigned char> block;
  sync::quantized_vector quantized;

  const std::string& prefix() const { return out.prefix(); }

  status fail(status st) {
    at = stage::failed;
    return out.fail(std::move(st));
  }

  status usable(stage wanted, const char* call) const {
    if (at == stage::failed || out.failed()) return out.error();
    if (at == stage::finished) return {errc::invalid_argument, prefix() + call + " after finish()"};
    if (at != wanted)
      return {errc::invalid_argument, prefix() + call +
                                          (wanted == stage::blocks_next ? " before write_dense()"
                                                                        : " called twice or after add_rows()")};
    return status::ok();
  }

  status check_table(std::uint32_t table, const char* call) {
    if (table < head.shape.tables) return status::ok();
    return fail({errc::invalid_argument, prefix() + call + " for table " + std::to_string(table) + ", the model has " +
                                             std::to_string(head.shape.tables) + " tables"});
  }

  // One row of `dim` values at `v` into `p`, as the head's encoding says.
  void encode_row(unsigned char* p, std::uint64_t id, const float* v, std::size_t dim) {
    put_le(p, id);
    if (head.encoding == row_encoding::fp32) {
      io::encode_floats_le(v, dim, p + 8);
      return;
    }
    if (const auto halves = format::halves_of(head.encoding)) {
      embedding::to_halves_le(v, dim, *halves, p + 8);
      return;
    }
    // One block of dim values: one scale per row (max |v| / 127), the project's int8 quantizer.
    sync::quantize(v, dim, static_cast<std::uint32_t>(dim), quantized);
    io::encode_floats_le(quantized.scales.data(), 1, p + 8);
    std::memcpy(p + 12, quantized.values.data(), dim);
  }
};

delta_writer::delta_writer() = default;
delta_writer::~delta_writer() = default;
delta_writer::delta_writer(delta_writer&&) noexcept = default;
delta_writer& delta_writer::operator=(delta_writer&&) noexcept = default;

result<delta_writer> delta_writer::open(const std::string& path, const delta_head& head) {
  const std::string prefix = "delta file " + path + ": ";
  const model_shape& s = head.shape;
  if (s.tables > format::max_tables || s.dim == 0 || s.dim > format::max_dim ||
      s.dense_params > format::max_dense_params)
    return status(errc::invalid_argument, prefix + "bad shape (" + s.describe() + ")");
  if (head.sequence < first_sequence || head.sequence > max_sequence || head.base < first_sequence ||
      head.base >= head.sequence || head.previous < head.base || head.previous >= head.sequence)
    return status(errc::invalid_argument, prefix + "sequence " + std::to_string(head.sequence) + " on base " +
                                              std::to_string(head.base) + " after " + std::to_string(head.previous) +
                                              " is not a delta's (base <= previous < sequence)");
  delta_writer w;
  w.impl_ = std::make_unique<impl>();
  impl& m = *w.impl_;
  m.head = head;
  m.stats.table_rows.assign(s.tables, 0);
  m.stats.table_tombstones.assign(s.tables, 0);
  const bool halved = format::halves_of(head.encoding).has_value();
  SS_RETURN_IF_ERROR(m.out.open(path, prefix, delta_magic, halved ? first_delta_version_with_halves : 1));
  std::string payload;
  append_le(payload, head.sequence);
  append_le(payload, head.base);
  append_le(payload, head.previous);
  append_le(payload, s.tables);
  append_le(payload, s.dim);
  append_le(payload, s.dense_params);
  append_le(payload, static_cast<std::uint32_t>(head.encoding));
  append_le(payload, std::uint32_t{0});
  SS_RETURN_IF_ERROR(m.out.write_section(format::tag_head, 0, payload.size(), payload.data(), payload.size()));
  return w;
}

status delta_writer::write_dense(const float* params, std::size_t n) {
  if (!impl_) return {errc::invalid_argument, "delta_writer: not open"};
  impl& m = *impl_;
  SS_RETURN_IF_ERROR(m.usable(impl::stage::dense_next, "write_dense()"));
  if (n != m.head.shape.dense_params)
    return m.fail({errc::invalid_argument, m.prefix() + "write_dense() got " + std::to_string(n) +
                                               " parameters, the head says " + std::to_string(m.head.shape.dense_params)});
  if (const std::size_t bad = train::non_finite_count(params, n); bad > 0)
    return m.fail({errc::out_of_range, m.prefix() + std::to_string(bad) + " of " + std::to_string(n) +
                                           " dense parameters are NaN or infinite" + kDivergedHint});
  m.block.resize(n * 4);
  io::encode_floats_le(params, n, m.block.data());
  SS_RETURN_IF_ERROR(m.out.write_section(format::tag_dense, 0, n, m.block.data(), m.block.size()));
  m.at = impl::stage::blocks_next;
  return status::ok();
}

status delta_writer::add_rows(std::uint32_t table, const std::uint64_t* ids, const float* values, std::size_t n,
                              std::size_t stride) {
  if (!impl_) return {errc::invalid_argument, "delta_writer: not open"};
  impl& m = *impl_;
  SS_RETURN_IF_ERROR(m.usable(impl::stage::blocks_next, "add_rows()"));
  SS_RETURN_IF_ERROR(m.check_table(table, "add_rows()"));
  const std::size_t dim = m.head.shape.dim;
  if (stride == 0) stride = dim;
  if (stride < dim)
    return m.fail({errc::invalid_argument, m.prefix() + "add_rows() stride " + std::to_string(stride) +
                                               " is smaller than the dim " + std::to_string(dim)});
  const std::size_t row_bytes = delta_row_bytes(m.head.encoding, dim);
  const auto halves = format::halves_of(m.head.encoding);
  for (std::size_t start = 0; start < n; start += max_delta_block_rows) {
    const std::size_t count = std::min(max_delta_block_rows, n - start);
    m.block.resize(count * row_bytes);
    unsigned char* p = m.block.data();
    for (std::size_t i = 0; i < count; ++i, p += row_bytes) {
      const float* v = values + (start + i) * stride;
      if (train::non_finite_count(v, dim) > 0)
        return m.fail({errc::out_of_range, m.prefix() + "row " + std::to_string(ids[start + i]) + " of table " +
                                               std::to_string(table) + " has NaN or infinite values" + kDivergedHint});
      if (halves && embedding::overflows(v, dim, *halves) > 0)
        return m.fail({errc::out_of_range, m.prefix() + "row " + std::to_string(ids[start + i]) + " of table " +
                                               std::to_string(table) + " has a value beyond " +
                                               embedding::to_string(*halves) + "'s range" +
                                               (*halves == embedding::row_precision::fp16
                                                    ? " (65504): publish its rows as fp32, int8 or bf16"
                                                    : ": publish its rows as fp32")});
      m.encode_row(p, ids[start + i], v, dim);
    }
    SS_RETURN_IF_ERROR(m.out.write_section(format::tag_rows, table, count, m.block.data(), m.block.size()));
    m.stats.row_blocks += 1;
    m.stats.rows += count;
    m.stats.table_rows[table] += count;
  }
  return status::ok();
}

status delta_writer::add_tombstones(std::uint32_t table, const std::uint64_t* ids, std::size_t n) {
  if (!impl_) return {errc::invalid_argument, "delta_writer: not open"};
  impl& m = *impl_;
  SS_RETURN_IF_ERROR(m.usable(impl::stage::blocks_next, "add_tombstones()"));
  SS_RETURN_IF_ERROR(m.check_table(table, "add_tombstones()"));
  for (std::size_t start = 0; start < n; start += max_delta_block_rows) {
    const std::size_t count = std::min(max_delta_block_rows, n - start);
    m.block.resize(count * 8);
    for (std::size_t i = 0; i < count; ++i) put_le(m.block.data() + 8 * i, ids[start + i]);
    SS_RETURN_IF_ERROR(m.out.write_section(format::tag_tombstones, table, count, m.block.data(), m.block.size()));
    m.stats.tombstone_blocks += 1;
    m.stats.tombstones += count;
    m.stats.table_tombstones[table] += count;
  }
  return status::ok();
}

result<delta_stats> delta_writer::finish() {
  if (!impl_) return status(errc::invalid_argument, "delta_writer: not open");
  impl& m = *impl_;
  SS_RETURN_IF_ERROR(m.usable(impl::stage::blocks_next, "finish()"));
  std::string foot;
  append_le(foot, m.stats.row_blocks);
  append_le(foot, m.stats.rows);
  append_le(foot, m.stats.tombstone_blocks);
  append_le(foot, m.stats.tombstones);
  for (std::uint32_t t = 0; t < m.head.shape.tables; ++t) {
    append_le(foot, m.stats.table_rows[t]);
    append_le(foot, m.stats.table_tombstones[t]);
  }
  SS_RETURN_IF_ERROR(m.out.write_section(format::tag_foot, 0, foot.size(), foot.data(), foot.size()));
  if (auto committed = m.out.commit(); !committed.is_ok()) return m.fail(committed);
  m.stats.bytes = m.out.bytes();
  m.stats.crc32c = m.out.crc32c();
  m.at = impl::stage::finished;
  return m.stats;
}

void delta_writer::abort() {
  if (!impl_) return;
  if (impl_->at != impl::stage::finished && impl_->at != impl::stage::failed)
    (void)impl_->fail(status(errc::cancelled, impl_->prefix() + "writing was aborted"));
}

const std::string& delta_writer::path() const {
  static const std::string none;
  return impl_ ? impl_->out.path() : none;
}
std::uint64_t delta_writer::rows() const { return impl_ ? impl_->stats.rows : 0; }
std::uint64_t delta_writer::tombstones() const { return impl_ ? impl_->stats.tombstones : 0; }
std::uint64_t delta_writer::bytes() const { return impl_ ? impl_->out.bytes() : 0; }

}  // namespace ss::publish
