#include "ss/core/embedding/memory_rows.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <mutex>

#include "ss/core/checksum.hpp"

namespace ss::embedding {

std::size_t memory_rows::key_hash::operator()(const row_key& k) const noexcept {
  const std::uint64_t parts[2] = {k.table, k.id};
  return static_cast<std::size_t>(hash64(parts, sizeof parts));
}

memory_rows::memory_rows(std::uint32_t row_floats) : row_floats_(row_floats) { assert(row_floats > 0); }

status memory_rows::write(const std::uint32_t* tables, const std::uint64_t* ids, const float* rows, std::size_t n) {
  std::unique_lock lock(mu_);
  for (std::size_t i = 0; i < n; ++i) {
    const float* r = rows + i * row_floats_;
    live_.rows[row_key{tables[i], ids[i]}].assign(r, r + row_floats_);
  }
  return status::ok();
}

status memory_rows::erase(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n) {
  std::unique_lock lock(mu_);
  for (std::size_t i = 0; i < n; ++i) live_.rows.erase(row_key{tables[i], ids[i]});
  return status::ok();
}

status memory_rows::scan(const row_visitor& fn) {
  std::shared_lock lock(mu_);
  for (const auto& [k, row] : live_.rows) fn(k.table, k.id, row.data());
  return status::ok();
}

status memory_rows::read(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n, float* rows,
                         std::uint8_t* found) const {
  std::shared_lock lock(mu_);
  for (std::size_t i = 0; i < n; ++i) {
    const auto it = live_.rows.find(row_key{tables[i], ids[i]});
    found[i] = it != live_.rows.end() ? 1 : 0;
    if (found[i] != 0) std::memcpy(rows + i * row_floats_, it->second.data(), sizeof(float) * row_floats_);
  }
  return status::ok();
}

result<std::size_t> memory_rows::scan_from(std::uint32_t table, std::uint64_t id, std::size_t max_rows,
                                           const row_visitor& fn) const {
  std::shared_lock lock(mu_);
  // The live rows are hashed: a page is the first max_rows keys at or after (table, id).
  std::vector<std::pair<std::uint32_t, std::uint64_t>> keys;
  for (const auto& [k, row] : live_.rows)
    if (k.table > table || (k.table == table && k.id >= id)) keys.emplace_back(k.table, k.id);
  const std::size_t page = std::min(max_rows, keys.size());
  std::partial_sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(page), keys.end());
  for (std::size_t i = 0; i < page; ++i)
    fn(keys[i].first, keys[i].second, live_.rows.at(row_key{keys[i].first, keys[i].second}).data());
  return page;
}

std::uint64_t memory_rows::rows() const {
  std::shared_lock lock(mu_);
  return live_.rows.size();
}

// Order-independent: the sum of one hash per row and per metadata entry.
std::uint64_t memory_rows::hash_of(const content& c) const {
  std::uint64_t h = 0;
  for (const auto& [k, row] : c.rows) {
    const std::uint64_t parts[2] = {k.table, k.id};
    h += hash64(row.data(), row.size() * sizeof(float), hash64(parts, sizeof parts));
  }
  for (const auto& [k, v] : c.meta) h += hash64(v.data(), v.size(), hash64(k.data(), k.size(), 0x6d657461));
  return h;
}

result<checkpoint_info> memory_rows::checkpoint(std::uint64_t id) {
  std::unique_lock lock(mu_);
  if (checkpoints_.count(id) != 0) {
    return {errc::invalid_argument, "checkpoint " + std::to_string(id) + " already exists"};
  }
  stored_checkpoint& cp = checkpoints_[id];
  cp.data = live_;
  cp.hash = hash_of(cp.data);
  checkpoint_info info;
  info.id = id;
  info.rows = cp.data.rows.size();
  info.checksum = cp.hash;
  return info;
}

result<std::vector<checkpoint_info>> memory_rows::checkpoints() const {
  std::shared_lock lock(mu_);
  std::vector<checkpoint_info> out;
  for (const auto& [id, cp] : checkpoints_) {
    checkpoint_info info;
    info.id = id;
    info.rows = cp.data.rows.size();
    info.checksum = cp.hash;
    out.push_back(info);
  }
  return out;
}

status memory_rows::verify(std::uint64_t id) const {
  std::shared_lock lock(mu_);
  auto it = checkpoints_.find(id);
  if (it == checkpoints_.end()) return {errc::not_found, "checkpoint " + std::to_string(id) + " does not exist"};
  if (hash_of(it->second.data) != it->second.hash) {
    return {errc::corrupt, "checkpoint " + std::to_string(id) + " is corrupt: its content hash differs from the one it was made with"};
  }
  return status::ok();
}

status memory_rows::restore(std::uint64_t id) {
  SS_RETURN_IF_ERROR(verify(id));
  std::unique_lock lock(mu_);
  auto it = checkpoints_.find(id);
  if (it == checkpoints_.end()) return {errc::not_found, "checkpoint " + std::to_string(id) + " does not exist"};
  live_ = it->second.data;
  return status::ok();
}

status memory_rows::drop(std::uint64_t id) {
  std::unique_lock lock(mu_);
  if (checkpoints_.erase(id) == 0) return {errc::not_found, "checkpoint " + std::to_string(id) + " does not exist"};
  return status::ok();
}

status memory_rows::set_meta(const std::string& key, const std::string& value) {
  std::unique_lock lock(mu_);
  live_.meta[key] = value;
  return status::ok();
}

result<std::string> memory_rows::get_meta(const std::string& key) const {
  std::shared_lock lock(mu_);
  auto it = live_.meta.find(key);
  if (it == live_.meta.end()) return {errc::not_found, "metadata \"" + key + "\" is not set"};
  return it->second;
}

status memory_rows::clear() {
  std::unique_lock lock(mu_);
  live_ = content{};
  return status::ok();
}

status memory_rows::corrupt_checkpoint_row(std::uint64_t id, std::uint32_t table, std::uint64_t row_id) {
  std::unique_lock lock(mu_);
  auto it = checkpoints_.find(id);
  if (it == checkpoints_.end()) return {errc::not_found, "checkpoint " + std::to_string(id) + " does not exist"};
  auto r = it->second.data.rows.find(row_key{table, row_id});
  if (r == it->second.data.rows.end()) return {errc::not_found, "no such row in checkpoint " + std::to_string(id)};
  r->second[0] += 1.0f;
  return status::ok();
}

}  // namespace ss::embedding
