// libFuzzer target: what `shadowsync serve` reads from a publish directory another process
// writes: delta files, manifests and file names.
//
// Input: byte 0 picks the mode, the rest is the file.
//   0  a delta file (delta_reader::open_memory, read_dense, for_each_block). What it accepts has
//      rows of the head's dim with finite values in tables it has, totals that add up to what
//      the callbacks saw, and a CRC32C equal to the whole input's; what it refuses is corrupt or
//      version_mismatch, with a message that names the file.
//   1  a manifest (parse_manifest). What it accepts is consistent (a base builds on itself, a
//      delta on an earlier base) and prints (manifest_text) to text that parses to the same text.
//   2  a file name (parse_file_name): what parses is written back by the name functions exactly.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "ss/core/checksum.hpp"
#include "ss/core/publish/delta_file.hpp"
#include "ss/core/publish/publication.hpp"

namespace {

using namespace ss::publish;

void check_error(const ss::status& st, const char* what) {
  SS_FUZZ_CHECK(st.code() == ss::errc::corrupt || st.code() == ss::errc::version_mismatch, st.to_string().c_str());
  SS_FUZZ_CHECK(st.message().find(what) != std::string::npos, st.to_string().c_str());
}

void mode_delta(const std::uint8_t* data, std::size_t size) {
  auto r = delta_reader::open_memory("fuzz.ssd", data, size);
  if (!r.is_ok()) {
    check_error(r.error(), "delta file fuzz.ssd: ");
    return;
  }
  const delta_head h = r->head();
  SS_FUZZ_CHECK(h.base <= h.previous && h.previous < h.sequence, "a head whose sequences do not chain");
  auto dense = r->read_dense();
  if (!dense.is_ok()) {
    check_error(dense.error(), "delta file fuzz.ssd: ");
    return;
  }
  SS_FUZZ_CHECK(dense->size() == h.shape.dense_params, "a dense part of another size than the head's");
  for (float v : *dense) SS_FUZZ_CHECK(std::isfinite(v), "a non-finite dense parameter");
  std::uint64_t rows = 0, tombstones = 0;
  const ss::status st = r->for_each_block(
      [&](std::uint32_t table, const std::uint64_t*, const float* values, std::size_t n) {
        SS_FUZZ_CHECK(table < h.shape.tables && n > 0, "a row block of a table the model lacks, or empty");
        for (std::size_t i = 0; i < n * h.shape.dim; ++i) SS_FUZZ_CHECK(std::isfinite(values[i]), "a non-finite row value");
        rows += n;
        return ss::status::ok();
      },
      [&](std::uint32_t table, const std::uint64_t*, std::size_t n) {
        SS_FUZZ_CHECK(table < h.shape.tables && n > 0, "a tombstone block of a table the model lacks, or empty");
        tombstones += n;
        return ss::status::ok();
      });
  if (!st.is_ok()) {
    check_error(st, "delta file fuzz.ssd: ");
    return;
  }
  const delta_stats& t = r->totals();
  SS_FUZZ_CHECK(t.rows == rows && t.tombstones == tombstones, "totals that disagree with the blocks");
  SS_FUZZ_CHECK(t.bytes == size, "a file accepted without reading all of it");
  SS_FUZZ_CHECK(t.crc32c == ss::crc32c(data, size), "a whole-file CRC that is not the input's");
}

void mode_manifest(std::string_view text) {
  const std::string name = "000000000042.delta.manifest";
  auto m = parse_manifest(std::string(text), name);
  if (!m.is_ok()) {
    check_error(m.error(), ("manifest " + name).c_str());
    return;
  }
  SS_FUZZ_CHECK(m->sequence == 42 && m->kind == publication_kind::delta, "a manifest accepted under another's name");
  SS_FUZZ_CHECK(m->base <= m->previous && m->previous < m->sequence, "a delta that does not build on the past");
  SS_FUZZ_CHECK(!m->job_id.empty(), "an empty job id");
  const std::string printed = manifest_text(*m);
  auto again = parse_manifest(printed, name);
  SS_FUZZ_CHECK(again.is_ok(), ("manifest_text wrote text that does not parse: " + again.error().to_string()).c_str());
  SS_FUZZ_CHECK(manifest_text(*again) == printed, "the manifest text is not a fixed point");
}

void mode_name(std::string_view name) {
  const auto parsed = parse_file_name(name);
  if (!parsed) return;
  std::string back = parsed->is_manifest ? manifest_file_name(parsed->sequence, parsed->kind)
                                         : data_file_name(parsed->sequence, parsed->kind);
  if (parsed->is_tmp) back += ".tmp";
  SS_FUZZ_CHECK(back == name, "a file name that does not print back as itself");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: mode_delta(data + 1, size - 1); break;
    case 1: mode_manifest(text); break;
    default: mode_name(text); break;
  }
  return 0;
}
