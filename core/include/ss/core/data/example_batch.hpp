// A batch of parsed, hashed examples: the unit that readers produce, travels to trainers, and the
// model consumes. Plain data, columnar, no pointers into files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ss::data {

struct example_batch {
  std::uint32_t num_dense = 0;   // dense features per example
  std::uint32_t num_sparse = 0;  // categorical features per example

  std::vector<float> labels;  // [size], 0 or 1
  std::vector<float> dense;   // [size * num_dense], already transformed (log(1 + max(x, 0)))
  // Categorical ids in CSR form: the ids of example e, feature f are
  // ids[offsets[e * num_sparse + f] .. offsets[e * num_sparse + f + 1]). Criteo-style data has
  // exactly one id per (example, feature); several ids are sum-pooled by the model.
  std::vector<std::uint64_t> ids;
  std::vector<std::uint32_t> offsets = {0};  // [size * num_sparse + 1]

  std::size_t size() const noexcept { return labels.size(); }
  bool empty() const noexcept { return labels.empty(); }

  void reset(std::uint32_t dense_features, std::uint32_t sparse_features) {
    num_dense = dense_features;
    num_sparse = sparse_features;
    labels.clear();
    dense.clear();
    ids.clear();
    offsets.assign(1, 0);
  }
  void reserve(std::size_t examples) {
    labels.reserve(examples);
    dense.reserve(examples * num_dense);
    ids.reserve(examples * num_sparse);
    offsets.reserve(examples * num_sparse + 1);
  }

  // Appends every example of `other` (same feature counts).
  void append(const example_batch& other);
  // Appends example `e` of `other` (same feature counts).
  void append_example(const example_batch& other, std::size_t e);

  // Builds an example in place: call begin_example(), then add_dense exactly num_dense times and
  // end_feature() after the ids of each categorical feature, then end_example().
  void begin_example(float label) { labels.push_back(label); }
  void add_dense(float v) { dense.push_back(v); }
  void add_id(std::uint64_t id) { ids.push_back(id); }
  void end_feature() { offsets.push_back(static_cast<std::uint32_t>(ids.size())); }
  // Drops a half-built example (a row that failed to parse half way).
  void abandon_example(std::size_t dense_before, std::size_t ids_before, std::size_t offsets_before);

  // True when every (example, feature) holds exactly one id: the fast path of the model.
  bool one_id_per_feature() const noexcept { return ids.size() == size() * num_sparse; }
};

}  // namespace ss::data
