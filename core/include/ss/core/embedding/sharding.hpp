// Which embedding shard server owns a row, and how one batch's rows split into one request per
// shard. Placement is a fixed function of (table, id, shard count): every trainer, every restart
// and every checkpoint agrees on it.
//
// Rows fall into a fixed number of key ranges (by their hash), and ranges go to shards by a table
// built for the shard count: shard 0 holds every range, and each further shard s takes from each
// existing shard the ranges above its even share, chosen by a hash of (range, s). So every shard
// holds an even share of the ranges (within one, up to max_shards), and from S to S' shards only
// the ranges of the shards that come or go change owner: (S' - S) / S' of them when growing, the
// least any placement can move. The ranges are also what a reshape moves, range by range. Hash
// modulo the shard count, the placement of builds before 2026-11-29, moved S/(S + 1) of all rows
// from S to S + 1.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "ss/core/embedding/batch_rows.hpp"
#include "ss/core/hash.hpp"

namespace ss::embedding {

// 16,384 ranges: a range's state fits in one bit of a 2 KiB map, and each shard's share stays
// within one range of even up to 128 shards (beyond, a new shard takes less than its share).
inline constexpr std::uint32_t placement_range_bits = 14;
inline constexpr std::uint32_t placement_ranges = 1U << placement_range_bits;
inline constexpr std::uint32_t max_shards = 1024;
// Recorded with stored rows and in snapshot manifests: rows placed by another scheme are on the
// wrong shards under this one.
inline constexpr const char* placement_scheme = "ranges-16384-even";
// What storage and snapshots of builds before the scheme was recorded used.
inline constexpr const char* legacy_placement_scheme = "modulo";

// The key range of a row: the top bits of its hash.
constexpr std::uint32_t range_of(std::uint32_t table, std::uint64_t id) noexcept {
  return static_cast<std::uint32_t>(hash_combine(id, 0x7ab1eULL + table) >> (64 - placement_range_bits));
}

// The owner of every range for one shard count. Built once per shard count (about 0.25 ms per
// shard on this project's VM: 4 ms for 16, 95 ms for 1,024); placing a row is then a hash and a
// table read.
class placement {
 public:
  // `shards` from 1 to max_shards (the job's checks refuse others; this clamps).
  explicit placement(std::uint32_t shards);

  std::uint32_t shards() const { return shards_; }
  std::uint32_t owner_of_range(std::uint32_t range) const { return owner_[range]; }
  std::uint32_t shard_of(std::uint32_t table, std::uint64_t id) const { return owner_[range_of(table, id)]; }
  // Ranges owned by each shard.
  std::vector<std::uint32_t> ranges_per_shard() const;

 private:
  std::uint32_t shards_;
  std::vector<std::uint16_t> owner_;
};

// Where rows come from when a job goes from placement `from` to placement `to`: for each shard j of
// `to`, the shards of `from` other than j that own a range `to` gives to j, in increasing order.
// Empty for a shard that keeps its own rows and gains none.
std::vector<std::vector<std::uint32_t>> move_sources(const placement& from, const placement& to);

// The placement a shard was last asked to page its rows out by, kept: a mover asks for page after
// page under one placement, and building it each time would cost up to 0.1 s a page. Thread-safe.
class placement_cache {
 public:
  std::shared_ptr<const placement> of(std::uint32_t shards);

 private:
  std::mutex mu_;
  std::shared_ptr<const placement> last_;
};

// The rows of a batch grouped by owning shard.
class shard_split {
 public:
  struct part {
    std::vector<std::uint32_t> tables;
    std::vector<std::uint64_t> ids;
    std::vector<std::uint32_t> rows;  // index of each (table, id) in batch_rows
  };

  void build(const batch_rows& rows, std::uint32_t shards);

  std::uint32_t shards() const { return static_cast<std::uint32_t>(parts_.size()); }
  const part& of(std::uint32_t shard) const { return parts_[shard]; }

  // Copies a shard's reply (its rows' values, in request order, dim floats each) into
  // rows.values(). false when the reply has the wrong size.
  bool scatter_values(std::uint32_t shard, const std::vector<float>& values, batch_rows& rows) const;
  // The gradients of a shard's rows, in request order (for its push request).
  std::vector<float> gather_grads(std::uint32_t shard, const batch_rows& rows) const;

 private:
  std::vector<part> parts_;
  embedding::placement placement_{1};  // rebuilt when the shard count changes
};

}  // namespace ss::embedding
