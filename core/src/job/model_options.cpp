#include "ss/core/job/model_options.hpp"

namespace ss::job {

void add_model_options(config::option_set& opts, model_options& o) {
  opts.add("embedding-dim", &o.embedding_dim, "Width of every embedding row.").range(1, 1024);
  opts.add("bottom-mlp", &o.bottom_mlp,
           "Bottom MLP output widths, the last equal to --embedding-dim; empty = sized to the input: " +
               std::string(auto_bottom_hidden) +
               "-DIM with dense features, DIM alone without (one layer whose bias is a learned vector).");
  opts.add("top-mlp", &o.top_mlp, "Top MLP output widths; the last must be 1 (the logit).");
  opts.add("learning-rate", &o.learning_rate, "Learning rate of the dense optimizer.").min(0.0);
  opts.add("embedding-learning-rate", &o.embedding_learning_rate,
           "Learning rate of the embedding optimizer; 0 = --learning-rate.")
      .min(0.0);
  opts.add("dense-optimizer", &o.dense_optimizer, "Optimizer of the MLPs.").choices({"sgd", "adagrad", "adam"});
  opts.add("weight-decay", &o.weight_decay,
           "Weight decay of the MLPs: an L2 penalty with sgd and adagrad (g += wd * w), decoupled with adam "
           "(AdamW).")
      .min(0.0);
  opts.add("embedding-weight-decay", &o.embedding_weight_decay,
           "L2 penalty on the embedding rows a batch touches (g += wd * row).")
      .min(0.0);
  opts.add("lr-warmup-examples", &o.lr_warmup_examples,
           "Both learning rates rise linearly from near 0 to their value over these first examples of the "
           "job (every epoch counts); 0 = no warmup.");
  opts.add("lr-decay", &o.lr_decay,
           "After the warmup, both learning rates: none (constant), linear or cosine (down to "
           "--lr-min-ratio over --lr-decay-examples), or step (times --lr-step-gamma every --lr-decay-examples).")
      .choices({"none", "linear", "cosine", "step"});
  opts.add("lr-decay-examples", &o.lr_decay_examples,
           "Examples after the warmup over which linear and cosine decay, or between two steps.");
  opts.add("lr-min-ratio", &o.lr_min_ratio, "Linear and cosine decay end at this fraction of the learning rates.")
      .range(0.0, 1.0);
  opts.add("lr-step-gamma", &o.lr_step_gamma, "Step decay multiplies the learning rates by this at each step.")
      .range(0.0, 1.0);
  opts.add("sparse-optimizer", &o.sparse_optimizer, "Optimizer of the embedding rows.")
      .choices({"sgd", "rowwise-adagrad"});
  opts.add("embedding-init-scale", &o.embedding_init_scale,
           "New embedding rows start uniform in [-scale, scale).")
      .min(0.0);
  opts.add("buckets", &o.buckets,
           "Fixed rows per table (ids are folded modulo this); 0 = one row per distinct id, "
           "created on first touch.");
  opts.add("max-rows-per-table", &o.max_rows_per_table,
           "Refuse to grow a table past this many rows; 0 = no limit.");
  opts.add("seed", &o.seed, "Seed of every random initialization.");
  opts.add("row-precision", &o.row_precision,
           "Precision of the embedding rows on the shards (RAM and storage), in lookups and pushes and in the "
           "exported model: fp32, or bf16 / fp16 (half the bytes; updates rounded stochastically; the "
           "optimizer state stays fp32). Cluster jobs only: `shadowsync train` keeps fp32.")
      .choices({"fp32", "bf16", "fp16"});
}

result<std::vector<std::uint32_t>> bottom_layers(const model_options& o, std::uint32_t num_dense) {
  const auto dim = static_cast<std::uint32_t>(o.embedding_dim);
  if (o.bottom_mlp.empty()) {
    if (num_dense == 0) return std::vector<std::uint32_t>{dim};
    auto hidden = model::parse_layer_list(auto_bottom_hidden);
    if (!hidden.is_ok()) return hidden.error();
    hidden->push_back(dim);
    return *hidden;
  }
  auto bottom = model::parse_layer_list(o.bottom_mlp);
  if (!bottom.is_ok()) return bottom.error().with_context("--bottom-mlp");
  if (bottom->back() != dim)
    return status(errc::invalid_argument,
                  "--bottom-mlp " + o.bottom_mlp + " ends in " + std::to_string(bottom->back()) +
                      ", but its last layer meets the embeddings, and --embedding-dim is " + std::to_string(dim) +
                      ": end it in " + std::to_string(dim) + ", or leave --bottom-mlp unset to size it to the input");
  return *bottom;
}

result<model_setup> resolve_model(const model_options& o, std::uint32_t num_dense, std::uint32_t num_sparse) {
  model_setup s;
  s.dlrm.num_dense = num_dense;
  s.dlrm.num_sparse = num_sparse;
  s.dlrm.embedding_dim = static_cast<std::uint32_t>(o.embedding_dim);
  auto bottom = bottom_layers(o, num_dense);
  if (!bottom.is_ok()) return bottom.error();
  auto top = model::parse_layer_list(o.top_mlp);
  if (!top.is_ok()) return top.error().with_context("--top-mlp");
  s.dlrm.bottom_mlp = *bottom;
  s.dlrm.top_mlp = *top;
  if (auto st = s.dlrm.validate(); !st.is_ok()) return st.with_context("model");

  auto dense_kind = optim::parse_dense_kind(o.dense_optimizer);
  if (!dense_kind.is_ok()) return dense_kind.error();
  s.dense.kind = *dense_kind;
  s.dense.learning_rate = static_cast<float>(o.learning_rate);
  s.dense.epsilon = optim::dense_optimizer::default_epsilon(*dense_kind);
  s.dense.weight_decay = static_cast<float>(o.weight_decay);

  auto sparse_kind = optim::parse_sparse_kind(o.sparse_optimizer);
  if (!sparse_kind.is_ok()) return sparse_kind.error();
  s.embeddings.tables = num_sparse;
  s.embeddings.dim = s.dlrm.embedding_dim;
  s.embeddings.init_scale = static_cast<float>(o.embedding_init_scale);
  s.embeddings.seed = o.seed;
  s.embeddings.max_rows_per_table = o.max_rows_per_table;
  auto precision = embedding::parse_row_precision(o.row_precision);
  if (!precision.is_ok()) return precision.error().with_context("--row-precision");
  s.embeddings.precision = *precision;
  s.embeddings.optimizer.kind = *sparse_kind;
  s.embeddings.optimizer.weight_decay = static_cast<float>(o.embedding_weight_decay);
  s.embeddings.optimizer.learning_rate =
      static_cast<float>(o.embedding_learning_rate > 0 ? o.embedding_learning_rate : o.learning_rate);
  if (o.buckets > 0) s.buckets.assign(num_sparse, o.buckets);
  s.embeddings.buckets = s.buckets;

  auto decay = optim::parse_decay_kind(o.lr_decay);
  if (!decay.is_ok()) return decay.error();
  s.schedule.warmup_examples = o.lr_warmup_examples;
  s.schedule.decay = *decay;
  s.schedule.decay_examples = o.lr_decay_examples;
  s.schedule.min_ratio = o.lr_min_ratio;
  s.schedule.step_gamma = o.lr_step_gamma;
  if (auto st = s.schedule.check(); !st.is_ok()) return st;
  return s;
}

}  // namespace ss::job
