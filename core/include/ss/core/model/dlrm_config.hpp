// The shape of a DLRM (docs/data-and-model.md): dense features -> bottom MLP; one embedding table per
// categorical feature; pairwise dot products of the bottom output and the pooled embeddings;
// top MLP -> logit -> sigmoid. The default is the DLRM reference configuration for Criteo Kaggle.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ss/core/status.hpp"

namespace ss::model {

struct dlrm_config {
  std::uint32_t num_dense = 13;      // dense inputs; 0 is allowed (the bottom MLP learns a constant)
  std::uint32_t num_sparse = 26;     // categorical features = embedding tables
  std::uint32_t embedding_dim = 16;  // width of every embedding row
  // Output widths of the bottom MLP layers (input is num_dense); the last equals embedding_dim.
  std::vector<std::uint32_t> bottom_mlp = {512, 256, 64, 16};
  // Output widths of the top MLP layers (input is top_input()); the last is 1 (the logit).
  std::vector<std::uint32_t> top_mlp = {512, 256, 1};

  // Vectors that meet in the interaction: the bottom output plus one per table.
  std::uint32_t interaction_vectors() const { return num_sparse + 1; }
  std::uint32_t interaction_pairs() const {
    return interaction_vectors() * (interaction_vectors() - 1) / 2;
  }
  // Width of the top MLP's input: the bottom output concatenated with the pairwise dots.
  std::uint32_t top_input() const { return embedding_dim + interaction_pairs(); }
  // The most dense parameters a model may have (1 GiB of floats; each trainer holds a replica,
  // optimizer state and sync buffers of this size).
  static constexpr std::uint64_t max_dense_params = std::uint64_t{1} << 28;

  status validate() const;
  // "13-512-256-64-16 | 367-512-256-1 | 26 x 16"
  std::string describe() const;
};

// Parses a layer list such as "512-256-64-16" (also accepts commas).
result<std::vector<std::uint32_t>> parse_layer_list(std::string_view text);
// The other way: {512, 256, 64, 16} -> "512-256-64-16".
std::string layer_list_text(const std::vector<std::uint32_t>& layers);

}  // namespace ss::model
