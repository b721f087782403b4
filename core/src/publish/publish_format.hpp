// Limits and tags of the publish area's files, shared by the manifest code, the delta writer and
// its reader. Private to ss_core.
#pragma once

#include <cstdint>
#include <optional>

#include "ss/core/embedding/row_precision.hpp"
#include "ss/core/publish/publication.hpp"

namespace ss::publish::format {

// The precision of a delta's 16-bit rows; nullopt for fp32 and int8 rows.
inline std::optional<embedding::row_precision> halves_of(row_encoding e) {
  if (e == row_encoding::bf16) return embedding::row_precision::bf16;
  if (e == row_encoding::fp16) return embedding::row_precision::fp16;
  return std::nullopt;
}

// The model file's limits on a shape (model_file_format.hpp): a manifest or delta head beyond
// them is refused as corrupt.
constexpr std::uint32_t max_tables = 1u << 20;
constexpr std::uint32_t max_dim = 1u << 16;
constexpr std::uint64_t max_dense_params = std::uint64_t{1} << 36;

constexpr char tag_head[4] = {'H', 'E', 'A', 'D'};
constexpr char tag_dense[4] = {'D', 'E', 'N', 'S'};
constexpr char tag_rows[4] = {'R', 'O', 'W', 'S'};
constexpr char tag_tombstones[4] = {'T', 'O', 'M', 'B'};
constexpr char tag_foot[4] = {'F', 'O', 'O', 'T'};

constexpr std::uint64_t head_payload_bytes = 48;

}  // namespace ss::publish::format
