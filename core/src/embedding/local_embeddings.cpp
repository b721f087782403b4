#include "ss/core/embedding/local_embeddings.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace ss::embedding {

local_embeddings::local_embeddings(const embedding_options& options) : options_(options) {
  for (std::uint32_t t = 0; t < options.tables; ++t) {
    table_options o;
    o.table = t;
    o.dim = options.dim;
    o.state_floats = options.optimizer.state_floats();
    o.init_scale = options.init_scale;
    o.seed = options.seed;
    o.max_rows = options.max_rows_per_table;
    tables_.push_back(std::make_unique<embedding_table>(o));
  }
}

status local_embeddings::fetch(batch_rows& rows) {
  const std::uint32_t dim = options_.dim;
  float* out = rows.values();
  const auto& keys = rows.keys();
  auto& where = rows.local_rows();
  where.assign(keys.size(), nullptr);
  for (std::size_t r = 0; r < keys.size(); ++r) {
    if (keys[r].table >= tables_.size())
      return {errc::out_of_range, "row of table " + std::to_string(keys[r].table) + " but the model has " +
                                      std::to_string(tables_.size()) + " tables"};
    float* row = tables_[keys[r].table]->find_or_create(keys[r].id);
    where[r] = row;
    if (row == nullptr)
      return {errc::resource_exhausted, "table " + std::to_string(keys[r].table) + " is full (" +
                                            std::to_string(options_.max_rows_per_table) + " rows)"};
    std::memcpy(out + r * dim, row, sizeof(float) * dim);
  }
  return status::ok();
}

status local_embeddings::peek(batch_rows& rows) const {
  const std::uint32_t dim = options_.dim;
  float* out = rows.values();
  const auto& keys = rows.keys();
  std::vector<float> fresh(dim + options_.optimizer.state_floats());
  for (std::size_t r = 0; r < keys.size(); ++r) {
    if (keys[r].table >= tables_.size())
      return {errc::out_of_range, "row of table " + std::to_string(keys[r].table) + " but the model has " +
                                      std::to_string(tables_.size()) + " tables"};
    const embedding_table& table = *tables_[keys[r].table];
    const float* row = table.find(keys[r].id);
    if (row == nullptr) {
      init_row(table.options(), keys[r].id, fresh.data());
      row = fresh.data();
    }
    std::memcpy(out + r * dim, row, sizeof(float) * dim);
  }
  return status::ok();
}

void local_embeddings::apply(const batch_rows& rows) {
  const std::uint32_t dim = options_.dim;
  const auto& keys = rows.keys();
  const float* grads = rows.grads();
  const auto& where = rows.local_rows();
  for (std::size_t r = 0; r < keys.size(); ++r) {
    float* row = r < where.size() ? where[r] : tables_[keys[r].table]->find(keys[r].id);
    if (row != nullptr) options_.optimizer.apply(row, grads + r * dim, dim);
  }
}

std::uint64_t local_embeddings::total_rows() const {
  std::uint64_t n = 0;
  for (const auto& t : tables_) n += t->rows();
  return n;
}

std::uint64_t local_embeddings::total_bytes() const {
  std::uint64_t n = 0;
  for (const auto& t : tables_) n += t->bytes();
  return n;
}

}  // namespace ss::embedding
