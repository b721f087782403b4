// What the embedding store tests share: the store options they start from, the shard persister's
// flush, and a row's initial values.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "ss/core/embedding/durable_rows.hpp"
#include "ss/core/embedding/shard_store.hpp"

namespace ss::embedding::testing {

// The floats of a row in these tests.
inline constexpr std::uint32_t kDim = 4;

// Rows of kDim floats with initial values up to 0.5, sgd at learning rate 0.25; at most
// `budget_rows` rows in RAM (0: no budget) over `cold` storage (none: RAM only).
inline shard_store_options store_options(std::uint64_t budget_rows = 0, std::shared_ptr<durable_rows> cold = {}) {
  shard_store_options o;
  o.dim = kDim;
  o.init_scale = 0.5f;
  o.optimizer.learning_rate = 0.25f;
  o.max_rows_in_memory = budget_rows;
  o.cold = std::move(cold);
  // These tests flush by hand, between batches: a batch at the ceiling would wait for nothing.
  o.ceiling_wait = std::chrono::milliseconds(0);
  return o;
}

// What the shard's persister does: every changed row to storage, every row evicted for good out.
inline ss::status flush(shard_store& store, durable_rows& storage) {
  return store.take_dirty(
      [&](std::uint32_t t, const std::uint64_t* ids, const float* rows, std::size_t n) {
        std::vector<std::uint32_t> tables(n, t);
        return storage.write(tables.data(), ids, rows, n);
      },
      [&](std::uint32_t t, const std::uint64_t* ids, std::size_t n) {
        std::vector<std::uint32_t> tables(n, t);
        return storage.erase(tables.data(), ids, n);
      });
}

// The values (dim of them) a new row of (t, id) starts with in `store`.
inline std::vector<float> initial_values(const shard_store& store, std::uint32_t t, std::uint64_t id) {
  table_options o = options_of_table(store.options(), t);
  o.touch_slot = store.options().ttl.enabled();
  std::vector<float> row(o.dim + o.state_floats + (o.touch_slot ? 1 : 0));
  init_row(o, id, row.data());
  row.resize(o.dim);
  return row;
}

}  // namespace ss::embedding::testing
