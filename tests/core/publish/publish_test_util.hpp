// Test helpers of the publish area: a publish directory filled with publications whose data files
// are real (delta_writer) or stand-ins (a base: bytes plan() only sizes and checksums).
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "ss/core/publish/chain.hpp"
#include "ss/core/publish/delta_file.hpp"
#include "ss/core/publish/publication.hpp"
#include "support/files.hpp"

namespace ss::test {

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

inline publish::model_shape small_shape() { return publish::model_shape{3, 4, 10}; }

// Writes publications into `dir` the way a publisher does: data file, then manifest.
struct publish_dir_builder {
  std::filesystem::path dir;
  std::string job_id = "job-a";
  publish::model_shape shape = small_shape();
  std::uint64_t config_digest = 0x1234abcdULL;
  std::mt19937_64 rng{5};

  publish::manifest manifest_of(std::uint64_t seq, publish::publication_kind kind, std::uint64_t base,
                                std::uint64_t previous) const {
    publish::manifest m;
    m.job_id = job_id;
    m.sequence = seq;
    m.kind = kind;
    m.base = base;
    m.previous = previous;
    m.examples_trained = seq * 1000;
    m.wall_unix_ms = 1'700'000'000'000 + static_cast<std::int64_t>(seq);
    m.data_file = publish::data_file_name(seq, kind);
    m.shape = shape;
    m.config_digest = config_digest;
    return m;
  }

  // A base: stand-in bytes (plan() checks a base's size and CRC, never its contents).
  publish::manifest base(std::uint64_t seq) {
    publish::manifest m = manifest_of(seq, publish::publication_kind::base, seq, 0);
    std::string bytes = "SSMODEL";
    bytes.push_back('\0');
    for (int i = 0; i < 200; ++i) bytes.push_back(static_cast<char>(rng()));
    write_file(dir / m.data_file, bytes);
    auto d = publish::digest_file(dir / m.data_file);
    REQUIRE(d.is_ok());
    m.data_bytes = d->bytes;
    m.data_crc32c = d->crc32c;
    m.rows = 7;
    REQUIRE(publish::write_manifest(dir, m).is_ok());
    return m;
  }

  // A real delta file of a few rows and a tombstone.
  publish::manifest delta(std::uint64_t seq, std::uint64_t base_seq, std::uint64_t previous) {
    publish::manifest m = manifest_of(seq, publish::publication_kind::delta, base_seq, previous);
    publish::delta_head h{seq, base_seq, previous, shape, publish::row_encoding::fp32};
    auto w = publish::delta_writer::open((dir / m.data_file).string(), h);
    REQUIRE(w.is_ok());
    std::vector<float> dense(shape.dense_params, 0.5f);
    REQUIRE(w->write_dense(dense.data(), dense.size()).is_ok());
    const std::uint64_t ids[2] = {seq * 10, seq * 10 + 1};
    std::vector<float> values(2 * shape.dim, static_cast<float>(seq));
    REQUIRE(w->add_rows(0, ids, values.data(), 2).is_ok());
    REQUIRE(w->add_tombstones(1, ids, 1).is_ok());
    auto stats = w->finish();
    REQUIRE(stats.is_ok());
    m.data_bytes = stats->bytes;
    m.data_crc32c = stats->crc32c;
    m.rows = stats->rows;
    m.tombstones = stats->tombstones;
    REQUIRE(publish::write_manifest(dir, m).is_ok());
    return m;
  }
};

// The sequence numbers a plan loads: its base, then its deltas.
inline std::vector<std::uint64_t> sequences(const publish::chain_plan& p) {
  std::vector<std::uint64_t> out;
  if (p.base) out.push_back(p.base->sequence);
  for (const auto& d : p.deltas) out.push_back(d.sequence);
  return out;
}

inline publish::directory_scan scanned(const std::filesystem::path& dir) {
  auto s = publish::scan(dir);
  REQUIRE(s.is_ok());
  return *s;
}

}  // namespace ss::test
