// The model and optimizer options every training command shares (train, local, trainer,
// shard), declared once so their flags, config keys and defaults cannot drift apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ss/core/config/option_set.hpp"
#include "ss/core/embedding/local_embeddings.hpp"
#include "ss/core/model/dlrm_config.hpp"
#include "ss/core/optim/dense_optimizer.hpp"
#include "ss/core/optim/lr_schedule.hpp"
#include "ss/core/status.hpp"

namespace ss::job {

// The hidden layers of the bottom MLP when --bottom-mlp is left empty and the input has dense
// features (bench/experiments/defaults_sweep/defaults_sweep.py chose it over none, 64 and 256-64).
inline constexpr const char* auto_bottom_hidden = "512-256-64";

struct model_options {
  int embedding_dim = 16;
  std::string bottom_mlp;  // empty: sized to the input (bottom_layers)
  std::string top_mlp = "512-256-1";
  // The optimizer defaults were chosen by bench/experiments/defaults_sweep/defaults_sweep.py (docs/training.md).
  double learning_rate = 0.001;
  double embedding_learning_rate = 0.03;  // 0: same as learning_rate
  std::string dense_optimizer = "adam";
  std::string sparse_optimizer = "rowwise-adagrad";
  double weight_decay = 0;
  double embedding_weight_decay = 0;
  double embedding_init_scale = 0.01;
  // The learning-rate schedule of both optimizers (optim/lr_schedule.hpp): constant by default.
  std::uint64_t lr_warmup_examples = 0;
  std::string lr_decay = "none";
  std::uint64_t lr_decay_examples = 0;
  double lr_min_ratio = 0.0;
  double lr_step_gamma = 0.5;
  std::uint64_t buckets = 0;
  std::uint64_t max_rows_per_table = 0;
  std::uint64_t seed = 1;
  // The embedding rows' precision on the shards, the wire and in the model file
  // (embedding/row_precision.hpp): fp32, bf16 or fp16.
  std::string row_precision = "fp32";
};

void add_model_options(config::option_set& opts, model_options& o);

// The resolved pieces, checked: shapes (given the input's feature counts), optimizers, tables.
struct model_setup {
  model::dlrm_config dlrm;
  optim::dense_optimizer dense;
  embedding::embedding_options embeddings;
  optim::lr_schedule schedule;
  std::vector<std::uint64_t> buckets;  // per table; empty when unbounded
};

// The bottom MLP's layers: --bottom-mlp as given (its last layer must be the embedding dim), or
// when empty: auto_bottom_hidden then the embedding dim with dense features, the embedding dim
// alone without (no inputs: its bias is a learned vector that meets every embedding).
result<std::vector<std::uint32_t>> bottom_layers(const model_options& o, std::uint32_t num_dense);

result<model_setup> resolve_model(const model_options& o, std::uint32_t num_dense, std::uint32_t num_sparse);

}  // namespace ss::job
