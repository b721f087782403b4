#include "ss/core/embedding/publish_staging.hpp"

#include <algorithm>
#include <string>

namespace ss::embedding {

void publish_staging::start_base(shard_store& store, std::uint64_t sequence) {
  std::lock_guard<std::mutex> lock(mu_);
  store.clear_published();
  has_base_ = true;
  base_ = sequence;
  sequence_ = sequence;
  rows_.clear();
}

result<publish_staging::stage_result> publish_staging::stage(shard_store& store, std::uint64_t sequence,
                                                             std::uint64_t last_written) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!has_base_ || base_ > last_written) return stage_result::needs_base;
  if (sequence == sequence_) return stage_result::staged;
  if (sequence < sequence_)
    return status(errc::internal, "publication " + std::to_string(sequence) + " is older than " +
                                                 std::to_string(sequence_) + ", the last one staged here");
  // What the last delta staged stays when it was never written; a written one is done.
  if (last_written >= sequence_) rows_.clear();
  std::vector<std::uint64_t> ids;
  for (std::uint32_t t = 0; t < store.options().max_tables; ++t) {
    embedding_table* tab = store.existing_table(t);
    if (tab == nullptr) continue;
    for (std::size_t s = 0; s < embedding_table::stripe_count; ++s) {
      ids.clear();
      tab->take_published(s, ids);
      for (std::uint64_t id : ids) rows_.emplace_back(t, id);
    }
  }
  // A row carried over from an unwritten publication may have changed again: once each.
  std::sort(rows_.begin(), rows_.end());
  rows_.erase(std::unique(rows_.begin(), rows_.end()), rows_.end());
  sequence_ = sequence;
  return stage_result::staged;
}

std::size_t publish_staging::page(std::size_t position, std::size_t max_rows, std::vector<std::uint32_t>& tables,
                                  std::vector<std::uint64_t>& ids) const {
  std::lock_guard<std::mutex> lock(mu_);
  const std::size_t end = std::min(rows_.size(), position + max_rows);
  for (std::size_t i = std::min(position, end); i < end; ++i) {
    tables.push_back(rows_[i].first);
    ids.push_back(rows_[i].second);
  }
  return std::max(position, end);
}

std::size_t publish_staging::staged() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rows_.size();
}

std::uint64_t publish_staging::sequence() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sequence_;
}

bool publish_staging::has_base() const {
  std::lock_guard<std::mutex> lock(mu_);
  return has_base_;
}

}  // namespace ss::embedding
