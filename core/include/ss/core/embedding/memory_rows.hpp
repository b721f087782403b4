// memory_rows: an in-memory durable_rows (nothing survives the process) with the port's semantics,
// for unit tests of code that persists rows (the shard's flusher, snapshot and restart logic).
// Checkpoints are copies of the rows and metadata; each remembers the order-independent hash of
// its content, which verify() recomputes. Thread-safety as the port says (a shared mutex inside).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ss/core/embedding/durable_rows.hpp"

namespace ss::embedding {

class memory_rows final : public durable_rows {
 public:
  // row_floats > 0 (asserted).
  explicit memory_rows(std::uint32_t row_floats);

  std::uint32_t row_floats() const override { return row_floats_; }
  status write(const std::uint32_t* tables, const std::uint64_t* ids, const float* rows, std::size_t n) override;
  status erase(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n) override;
  status scan(const row_visitor& fn) override;
  std::uint64_t rows() const override;
  status read(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n, float* rows,
              std::uint8_t* found) const override;
  result<std::size_t> scan_from(std::uint32_t table, std::uint64_t id, std::size_t max_rows,
                                const row_visitor& fn) const override;

  // A checkpoint is a copy of the live rows and meta values, held by this object, with the hash
  // verify() checks.
  result<checkpoint_info> checkpoint(std::uint64_t id) override;
  result<std::vector<checkpoint_info>> checkpoints() const override;
  status verify(std::uint64_t id) const override;
  status restore(std::uint64_t id) override;
  status drop(std::uint64_t id) override;

  // Meta values live with the rows; clear() empties both and keeps the checkpoints.
  status set_meta(const std::string& key, const std::string& value) override;
  result<std::string> get_meta(const std::string& key) const override;
  status clear() override;

  // Test hook: changes one float of a row inside checkpoint `id` without updating its hash, so
  // verify() and restore() report it corrupt. errc::not_found if the checkpoint or row is absent.
  status corrupt_checkpoint_row(std::uint64_t id, std::uint32_t table, std::uint64_t row_id);

 private:
  struct row_key {
    std::uint32_t table;
    std::uint64_t id;
    bool operator==(const row_key& o) const { return table == o.table && id == o.id; }
  };
  struct key_hash {
    std::size_t operator()(const row_key& k) const noexcept;
  };
  struct content {
    std::unordered_map<row_key, std::vector<float>, key_hash> rows;
    std::map<std::string, std::string> meta;
  };
  struct stored_checkpoint {
    content data;
    std::uint64_t hash = 0;
  };

  std::uint64_t hash_of(const content& c) const;

  const std::uint32_t row_floats_;
  mutable std::shared_mutex mu_;
  content live_;
  std::map<std::uint64_t, stored_checkpoint> checkpoints_;
};

}  // namespace ss::embedding
