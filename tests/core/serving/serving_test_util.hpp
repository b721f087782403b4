// What the serving tests share: a small model made the same for the same seed, batches with seen
// and unseen ids, predict's scoring path as the reference, and updates to apply.
#pragma once

#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <vector>

#include "ss/core/embedding/local_embeddings.hpp"
#include "ss/core/job/job_options.hpp"
#include "ss/core/serving/served_model.hpp"
#include "ss/core/train/dense_model.hpp"
#include "ss/core/train/train_step.hpp"

namespace ss::test {

using serving::model_update;
using serving::model_version;
using serving::served_model;
using serving::table_update;

inline constexpr std::uint32_t dense_features = 3, tables = 4, dim = 4;
inline constexpr std::uint64_t known_ids = 40;  // ids 0 .. known_ids - 1 have rows in every table

inline job::job_options small_job() {
  job::job_options j;
  j.dense_features = dense_features;
  j.categorical_features = tables;
  j.model.embedding_dim = dim;
  j.model.bottom_mlp = "5-4";
  j.model.top_mlp = "6-1";
  j.model.sparse_optimizer = "rowwise-adagrad";  // rows carry optimizer state after their values
  j.model.dense_optimizer = "adagrad";
  j.model.seed = 7;
  j.model.embedding_init_scale = 0.05;
  return j;
}

// A trained-looking model, the same for the same seed: random dense parameters and rows for ids
// 0 .. known_ids - 1 of every table.
inline model::loaded_model make_model(std::uint64_t seed = 11) {
  model::loaded_model m;
  m.job = small_job();
  auto s = job::resolve_model(m.job.model, dense_features, tables);
  REQUIRE(s.is_ok());
  m.setup = *s;
  m.dense = std::make_unique<train::dense_model>(m.setup.dlrm, m.setup.dense, m.job.model.seed);
  m.embeddings = std::make_unique<embedding::local_embeddings>(m.setup.embeddings);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (std::size_t i = 0; i < m.dense->size(); ++i) m.dense->params()[i] = u(rng);
  for (std::uint32_t t = 0; t < tables; ++t) {
    auto& table = m.embeddings->table(t);
    for (std::uint64_t id = 0; id < known_ids; ++id) {
      float* row = table.find_or_create(id);
      REQUIRE(row != nullptr);
      for (std::uint32_t k = 0; k < dim; ++k) row[k] = u(rng);
    }
  }
  return m;
}

// n examples whose ids are mostly known, some never seen (ids from 1000 on), a few repeated.
inline data::example_batch make_batch(std::size_t n, std::uint64_t seed) {
  data::example_batch b;
  b.reset(dense_features, tables);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 3.0f);
  for (std::size_t e = 0; e < n; ++e) {
    b.begin_example(static_cast<float>(rng() % 2));
    for (std::uint32_t d = 0; d < dense_features; ++d) b.add_dense(u(rng));
    for (std::uint32_t t = 0; t < tables; ++t) {
      b.add_id(rng() % 5 == 0 ? 1000 + rng() % 50 : rng() % known_ids);
      b.end_feature();
    }
  }
  return b;
}

// What predict and train::evaluate compute, on a model of our own.
inline std::vector<float> predict_path(const model::loaded_model& m, const data::example_batch& batch) {
  train::worker_scratch scratch(m.setup.dlrm, 256);
  REQUIRE(train::check_batch(m.setup.dlrm, batch).is_ok());
  train::prepare_rows(m.setup.dlrm, batch, m.setup.buckets, scratch);
  REQUIRE(m.embeddings->peek(scratch.rows).is_ok());
  train::predict_batch(*m.dense, batch, scratch);
  return std::vector<float>(scratch.ws.probs.data(), scratch.ws.probs.data() + batch.size());
}

inline std::vector<float> served_path(const served_model& s, const data::example_batch& batch, model_version* v = nullptr) {
  serving::scoring_scratch scratch(s);
  std::vector<float> out;
  auto version = s.score(batch, scratch, out);
  REQUIRE(version.is_ok());
  if (v != nullptr) *v = *version;
  return out;
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Rows of `ids` in `table` with values drawn from `seed`.
inline table_update rows_for(std::uint32_t table, std::vector<std::uint64_t> ids, std::uint64_t seed) {
  table_update t;
  t.table = table;
  t.ids = std::move(ids);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (std::size_t i = 0; i < t.ids.size() * dim; ++i) t.values.push_back(u(rng));
  return t;
}

inline std::vector<float> dense_from(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

// Applies `u` to a plain model, as a reference: rows put (values, then zero optimizer state) or
// erased, dense parameters copied.
inline void apply_to(model::loaded_model& m, const model_update& u) {
  if (u.dense) std::copy(u.dense->begin(), u.dense->end(), m.dense->params());
  for (const auto& t : u.tables) {
    auto& table = m.embeddings->table(t.table);
    for (std::uint64_t id : t.erased) table.erase(id);
    for (std::size_t i = 0; i < t.ids.size(); ++i) {
      std::vector<float> row(table.row_floats(), 0.0f);
      std::copy(t.values.begin() + static_cast<std::ptrdiff_t>(i * dim),
                t.values.begin() + static_cast<std::ptrdiff_t>((i + 1) * dim), row.begin());
      REQUIRE(table.put(t.ids[i], row.data()));
    }
  }
}


}  // namespace ss::test
