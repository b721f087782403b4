// Reads and verifies a delta file section by section (format: ss/core/publish/delta_file.hpp).
#include <algorithm>
#include <cmath>
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

using io::get_le;

void decode_head(const unsigned char* p, delta_head& h, std::uint32_t& encoding, std::uint32_t& reserved) {
  h.sequence = get_le<std::uint64_t>(p);
  h.base = get_le<std::uint64_t>(p + 8);
  h.previous = get_le<std::uint64_t>(p + 16);
  h.shape.tables = get_le<std::uint32_t>(p + 24);
  h.shape.dim = get_le<std::uint32_t>(p + 28);
  h.shape.dense_params = get_le<std::uint64_t>(p + 32);
  encoding = get_le<std::uint32_t>(p + 40);
  reserved = get_le<std::uint32_t>(p + 44);
  h.encoding = static_cast<row_encoding>(encoding <= 3 ? encoding : 0);  // checked by the caller
}

}  // namespace

struct delta_reader::impl {
  enum class stage { dense_next, blocks_next, done };

  io::section_reader in;
  std::uint32_t version = 0;
  delta_head head;
  stage at = stage::dense_next;
  delta_stats totals;
  std::vector<std::uint64_t> ids;
  std::vector<float> values;

  const std::string& prefix() const { return in.prefix(); }
  status truncated(const std::string& where) const { return in.truncated(where); }
  status corrupt(const std::string& what) const { return in.corrupt(what); }

  status open() {
    in.track_crc();
    auto v = in.read_preamble(delta_magic, "SSDELTA", "a shadowsync delta file", delta_format_version);
    if (!v.is_ok()) return v.error();
    version = *v;
    auto h = in.read_head("the head");
    if (!h.is_ok()) return h.error();
    if (!h->is(format::tag_head)) return corrupt("expected the head section, found '" + io::tag_text(h->tag) + "'");
    if (h->a != 0 || h->b != format::head_payload_bytes)
      return corrupt("the head has a bad size (" + std::to_string(h->b) + " bytes, expected " +
                     std::to_string(format::head_payload_bytes) + ")");
    SS_RETURN_IF_ERROR(in.read_payload(h->b, "the head", h->offset));
    std::uint32_t encoding = 0, reserved = 0;
    decode_head(in.payload(), head, encoding, reserved);
    const std::uint32_t known = version >= first_delta_version_with_halves ? 3 : 1;
    if (encoding > known)
      return corrupt("the head names row encoding " + std::to_string(encoding) + " (version " + std::to_string(version) +
                     ": 0 fp32, 1 int8" + (known == 3 ? ", 2 bf16, 3 fp16)" : ")"));
    if (reserved != 0) return corrupt("the head's reserved field is " + std::to_string(reserved) + ", not 0");
    const model_shape& s = head.shape;
    if (s.tables > format::max_tables || s.dim == 0 || s.dim > format::max_dim ||
        s.dense_params > format::max_dense_params)
      return corrupt("the head gives a bad shape (" + s.describe() + ")");
    if (head.sequence < first_sequence || head.sequence > max_sequence || head.base < first_sequence ||
        head.base >= head.sequence || head.previous < head.base || head.previous >= head.sequence)
      return corrupt("the head gives sequence " + std::to_string(head.sequence) + " on base " +
                     std::to_string(head.base) + " after " + std::to_string(head.previous) +
                     " (base <= previous < sequence expected)");
    // The footer alone takes 16 bytes a table: a file that cannot hold it is cut short (and a
    // damaged table count allocates nothing).
    if (in.left() < 20 + 32 + 16 * std::uint64_t{s.tables} + 4)
      return truncated("the footer of " + std::to_string(s.tables) + " tables cannot fit in what follows the head");
    totals.table_rows.assign(s.tables, 0);
    totals.table_tombstones.assign(s.tables, 0);
    return status::ok();
  }

  status dense(float* out, std::size_t n) {
    if (at != stage::dense_next) return {errc::invalid_argument, prefix() + "the dense part was already read"};
    if (out != nullptr && n != head.shape.dense_params)
      return {errc::invalid_argument, prefix() + "holds " + std::to_string(head.shape.dense_params) +
                                          " dense parameters, the caller expects " + std::to_string(n)};
    auto h = in.read_head("the dense part");
    if (!h.is_ok()) return h.error();
    if (!h->is(format::tag_dense))
      return corrupt("expected the dense part, found section '" + io::tag_text(h->tag) + "'");
    if (h->a != 0 || h->b != head.shape.dense_params)
      return corrupt("the dense part holds " + std::to_string(h->b) + " parameters, the head says " +
                     std::to_string(head.shape.dense_params));
    if (h->b > in.left() / 4) return truncated("in the dense part");
    SS_RETURN_IF_ERROR(in.read_payload(h->b * 4, "the dense part", h->offset));
    // What a writer refuses to write is refused here too: a model never scores with NaN.
    values.resize(static_cast<std::size_t>(h->b));
    io::decode_floats_le(in.payload(), values.size(), values.data());
    if (const std::size_t bad = train::non_finite_count(values.data(), values.size()); bad > 0)
      return corrupt(std::to_string(bad) + " of " + std::to_string(values.size()) +
                     " dense parameters are NaN or infinite");
    if (out != nullptr) std::copy(values.begin(), values.end(), out);
    at = stage::blocks_next;
    return status::ok();
  }

  status footer(const io::section_reader::head& h) {
    const std::uint64_t want = 32 + 16 * std::uint64_t{head.shape.tables};
    if (h.a != 0 || h.b != want)
      return corrupt("the footer has a bad size (" + std::to_string(h.b) + " bytes, expected " + std::to_string(want) +
                     ")");
    SS_RETURN_IF_ERROR(in.read_payload(h.b, "the footer", h.offset));
    const unsigned char* p = in.payload();
    const std::uint64_t said[4] = {get_le<std::uint64_t>(p), get_le<std::uint64_t>(p + 8),
                                   get_le<std::uint64_t>(p + 16), get_le<std::uint64_t>(p + 24)};
    if (said[0] != totals.row_blocks || said[1] != totals.rows || said[2] != totals.tombstone_blocks ||
        said[3] != totals.tombstones)
      return corrupt("the footer says " + std::to_string(said[0]) + " row blocks of " + std::to_string(said[1]) +
                     " rows and " + std::to_string(said[2]) + " tombstone blocks of " + std::to_string(said[3]) +
                     ", the file holds " + std::to_string(totals.row_blocks) + ", " + std::to_string(totals.rows) +
                     ", " + std::to_string(totals.tombstone_blocks) + " and " + std::to_string(totals.tombstones));
    for (std::uint32_t t = 0; t < head.shape.tables; ++t) {
      const auto rows = get_le<std::uint64_t>(p + 32 + 16 * std::size_t{t});
      const auto gone = get_le<std::uint64_t>(p + 40 + 16 * std::size_t{t});
      if (rows != totals.table_rows[t] || gone != totals.table_tombstones[t])
        return corrupt("the footer says table " + std::to_string(t) + " has " + std::to_string(rows) + " rows and " +
                       std::to_string(gone) + " tombstones, the file holds " + std::to_string(totals.table_rows[t]) +
                       " and " + std::to_string(totals.table_tombstones[t]));
    }
    if (in.left() != 0)
      return corrupt(std::to_string(in.left()) + " unexpected bytes after the footer (at offset " +
                     std::to_string(in.pos()) + ")");
    totals.bytes = in.size();
    totals.crc32c = in.crc32c();
    at = stage::done;
    return status::ok();
  }

  // A row block's payload (already verified) into ids and values.
  status decode_rows(std::uint32_t table, std::size_t n, const std::string& name) {
    const std::size_t dim = head.shape.dim;
    const bool int8 = head.encoding == row_encoding::int8;
    const auto halves = format::halves_of(head.encoding);
    const std::size_t row_bytes = delta_row_bytes(head.encoding, dim);
    ids.resize(n);
    values.resize(n * dim);
    const unsigned char* p = in.payload();
    for (std::size_t i = 0; i < n; ++i, p += row_bytes) {
      ids[i] = get_le<std::uint64_t>(p);
      float* v = values.data() + i * dim;
      if (!int8) {
        if (halves) embedding::from_halves_le(p + 8, dim, *halves, v);
        else io::decode_floats_le(p + 8, dim, v);
        if (train::non_finite_count(v, dim) > 0)
          return corrupt(name + ": row " + std::to_string(ids[i]) + " of table " + std::to_string(table) +
                         " has NaN or infinite values");
        continue;
      }
      float scale = 0;
      io::decode_floats_le(p + 8, 1, &scale);
      if (!std::isfinite(scale) || scale < 0.0f || scale > sync::max_quantization_scale)
        return corrupt(name + ": row " + std::to_string(ids[i]) + " of table " + std::to_string(table) +
                       " has the scale " + std::to_string(scale) + " (finite, 0 to FLT_MAX/127 expected)");
      const auto* q = reinterpret_cast<const std::int8_t*>(p + 12);
      for (std::size_t k = 0; k < dim; ++k) {
        if (q[k] == -128)
          return corrupt(name + ": row " + std::to_string(ids[i]) + " of table " + std::to_string(table) +
                         " holds the int8 value -128 (symmetric rows use -127 to 127)");
        v[k] = static_cast<float>(q[k]) * scale;
      }
    }
    return status::ok();
  }

  status blocks(const rows_fn& on_rows, const tombstones_fn& on_tombstones) {
    if (at == stage::done) return {errc::invalid_argument, prefix() + "the blocks were already read"};
    if (at == stage::dense_next) SS_RETURN_IF_ERROR(dense(nullptr, 0));
    const std::uint64_t dim = head.shape.dim;
    const std::uint64_t row_bytes = delta_row_bytes(head.encoding, dim);
    std::string after = "the dense part";
    for (;;) {
      if (in.left() == 0) return truncated("the footer is missing: the file ends after " + after);
      auto h = in.read_head("the section after " + after);
      if (!h.is_ok()) return h.error();
      if (h->is(format::tag_foot)) return footer(*h);
      const bool rows = h->is(format::tag_rows);
      if (!rows && !h->is(format::tag_tombstones))
        return corrupt("unexpected section '" + io::tag_text(h->tag) + "' at offset " + std::to_string(h->offset) +
                       " (after " + after + ")");
      const std::uint64_t number = rows ? totals.row_blocks + 1 : totals.tombstone_blocks + 1;
      const std::string name = (rows ? "row block " : "tombstone block ") + std::to_string(number) + " (table " +
                               std::to_string(h->a) + ")";
      if (h->a >= head.shape.tables)
        return corrupt(name + " names a table the model does not have (" + std::to_string(head.shape.tables) +
                       " tables)");
      if (h->b == 0 || h->b > max_delta_block_rows)
        return corrupt(name + " claims " + std::to_string(h->b) + " entries (1 to " +
                       std::to_string(max_delta_block_rows) + ")");
      const std::uint64_t entry_bytes = rows ? row_bytes : 8;
      if (h->b > in.left() / entry_bytes)
        return truncated("in " + name + ", which needs " + std::to_string(h->b * entry_bytes + 4) +
                         " bytes from offset " + std::to_string(in.pos()));
      SS_RETURN_IF_ERROR(in.read_payload(h->b * entry_bytes, name, h->offset));
      const std::size_t n = static_cast<std::size_t>(h->b);
      const std::uint32_t table = h->a;
      after = name;
      if (rows) {
        SS_RETURN_IF_ERROR(decode_rows(table, n, name));
        totals.row_blocks += 1;
        totals.rows += n;
        totals.table_rows[table] += n;
        SS_RETURN_IF_ERROR(on_rows(table, ids.data(), values.data(), n));
      } else {
        ids.resize(n);
        for (std::size_t i = 0; i < n; ++i) ids[i] = get_le<std::uint64_t>(in.payload() + 8 * i);
        totals.tombstone_blocks += 1;
        totals.tombstones += n;
        totals.table_tombstones[table] += n;
        SS_RETURN_IF_ERROR(on_tombstones(table, ids.data(), n));
      }
    }
  }
};

delta_reader::delta_reader() = default;
delta_reader::~delta_reader() = default;
delta_reader::delta_reader(delta_reader&&) noexcept = default;
delta_reader& delta_reader::operator=(delta_reader&&) noexcept = default;

result<delta_reader> delta_reader::open(const std::string& path) {
  delta_reader r;
  r.impl_ = std::make_unique<impl>();
  SS_RETURN_IF_ERROR(r.impl_->in.open_file(path, "delta file " + path + ": "));
  SS_RETURN_IF_ERROR(r.impl_->open());
  return r;
}

result<delta_reader> delta_reader::open_memory(const std::string& name, const void* data, std::size_t size) {
  delta_reader r;
  r.impl_ = std::make_unique<impl>();
  r.impl_->in.open_memory(data, size, "delta file " + name + ": ");
  SS_RETURN_IF_ERROR(r.impl_->open());
  return r;
}

const delta_head& delta_reader::head() const { return impl_->head; }
std::uint32_t delta_reader::format_version() const { return impl_->version; }
std::uint64_t delta_reader::file_bytes() const { return impl_->in.size(); }
const delta_stats& delta_reader::totals() const { return impl_->totals; }

status delta_reader::read_dense(float* out, std::size_t n) {
  if (out == nullptr) return {errc::invalid_argument, impl_->prefix() + "read_dense() needs a buffer"};
  return impl_->dense(out, n);
}

result<std::vector<float>> delta_reader::read_dense() {
  // The head's count is checked against what the file holds before it sizes anything.
  if (impl_->head.shape.dense_params > impl_->in.left() / 4) return impl_->truncated("in the dense part");
  std::vector<float> v(static_cast<std::size_t>(impl_->head.shape.dense_params));
  SS_RETURN_IF_ERROR(impl_->dense(v.data(), v.size()));
  return v;
}

status delta_reader::for_each_block(const rows_fn& rows, const tombstones_fn& tombstones) {
  return impl_->blocks(rows, tombstones);
}

result<delta_stats> verify_delta(const std::string& path) {
  auto r = delta_reader::open(path);
  if (!r.is_ok()) return r.error();
  SS_RETURN_IF_ERROR(r->for_each_block(
      [](std::uint32_t, const std::uint64_t*, const float*, std::size_t) { return status::ok(); },
      [](std::uint32_t, const std::uint64_t*, std::size_t) { return status::ok(); }));
  return r->totals();
}

}  // namespace ss::publish
