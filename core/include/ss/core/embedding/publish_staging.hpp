// What a shard hands the publisher for each publication (delta publishing, docs/online.md). The
// publisher numbers its publications; a delta's request also says which was the last one it
// wrote. Rows taken for a delta that was never written (the coordinator died before the file was
// renamed into place) are staged again for the next one, so no changed row is left out of the
// chain; rows are named here and read when their page is sent, as they stand then.
//
// A shard process that has not seen a base since it started answers every delta with
// needs_base: it may hold rows that changed after the last publication without their marks (they
// came back from storage), so only a full copy is safe. So does one whose last base was never
// written (the delta asked for says an older publication is the last): that base cleared the
// marks of rows changed before it.
//
// Thread-safety: every member may be called concurrently (one mutex); the store's own locks cover
// the rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "ss/core/embedding/shard_store.hpp"
#include "ss/core/status.hpp"

namespace ss::embedding {

class publish_staging {
 public:
  // A base publication `sequence` starts: every row's publisher mark is cleared, so that what
  // changes from now on goes into the deltas after it; nothing stays staged.
  void start_base(shard_store& store, std::uint64_t sequence);

  enum class stage_result { staged, needs_base };
  // Stages delta `sequence`'s rows: on its first call, the rows changed since the last take, plus
  // those staged for an earlier sequence above `last_written` (never written). Later calls for
  // the same sequence change nothing (a retried request). needs_base without a base, or when the
  // last base is above last_written. An older sequence than the last staged one is refused
  // (internal): a publisher that lost track.
  result<stage_result> stage(shard_store& store, std::uint64_t sequence, std::uint64_t last_written);

  // Up to max_rows staged rows from `position` (0 at first): appends (table, id) pairs; returns
  // the position after them, staged() at the end.
  std::size_t page(std::size_t position, std::size_t max_rows, std::vector<std::uint32_t>& tables,
                   std::vector<std::uint64_t>& ids) const;

  std::size_t staged() const;
  std::uint64_t sequence() const;  // the last base or delta staged; 0: none
  bool has_base() const;

 private:
  mutable std::mutex mu_;
  bool has_base_ = false;
  std::uint64_t base_ = 0;      // the last base started here
  std::uint64_t sequence_ = 0;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> rows_;  // sorted by (table, id), each once
};

}  // namespace ss::embedding
