#include "ss/core/data/example_batch.hpp"

#include <cassert>

namespace ss::data {

void example_batch::append(const example_batch& other) {
  assert(other.num_dense == num_dense && other.num_sparse == num_sparse);
  labels.insert(labels.end(), other.labels.begin(), other.labels.end());
  dense.insert(dense.end(), other.dense.begin(), other.dense.end());
  const auto base = static_cast<std::uint32_t>(ids.size());
  ids.insert(ids.end(), other.ids.begin(), other.ids.end());
  for (std::size_t i = 1; i < other.offsets.size(); ++i) offsets.push_back(base + other.offsets[i]);
}

void example_batch::append_example(const example_batch& other, std::size_t e) {
  assert(other.num_dense == num_dense && other.num_sparse == num_sparse && e < other.size());
  labels.push_back(other.labels[e]);
  const auto d = static_cast<std::ptrdiff_t>(e * num_dense);
  dense.insert(dense.end(), other.dense.begin() + d, other.dense.begin() + d + num_dense);
  const std::size_t first = e * num_sparse;
  const auto base = static_cast<std::uint32_t>(ids.size());
  const std::uint32_t from = other.offsets[first];
  ids.insert(ids.end(), other.ids.begin() + from, other.ids.begin() + other.offsets[first + num_sparse]);
  for (std::size_t f = 1; f <= num_sparse; ++f) offsets.push_back(base + other.offsets[first + f] - from);
}

void example_batch::abandon_example(std::size_t dense_before, std::size_t ids_before,
                                    std::size_t offsets_before) {
  labels.pop_back();
  dense.resize(dense_before);
  ids.resize(ids_before);
  offsets.resize(offsets_before);
}

}  // namespace ss::data
