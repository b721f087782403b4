#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <vector>

#include "ss/core/clock.hpp"
#include "ss/core/random.hpp"
#include "ss/core/train/hogwild_trainer.hpp"
#include "tiny_config.hpp"

using namespace ss;
using namespace ss::train;
using ss::train::testing::tiny_config;

namespace {

// A learnable toy problem: the click probability depends on the id of table 0 and on dense[0].
std::vector<data::example_batch> make_batches(int count, int size, std::uint64_t seed) {
  rng gen(seed);
  std::vector<data::example_batch> out;
  for (int b = 0; b < count; ++b) {
    data::example_batch batch;
    batch.reset(2, 3);
    for (int e = 0; e < size; ++e) {
      const std::uint64_t a = gen.below(20);
      const float x = gen.uniform_float();
      const double p = (a % 2 == 0 ? 0.8 : 0.15) * (0.5 + x * 0.5);
      batch.begin_example(gen.bernoulli(p) ? 1.0f : 0.0f);
      batch.add_dense(x);
      batch.add_dense(gen.uniform_float());
      batch.add_id(a);
      batch.end_feature();
      batch.add_id(gen.below(5));
      batch.end_feature();
      batch.add_id(gen.below(1000));
      batch.end_feature();
    }
    out.push_back(std::move(batch));
  }
  return out;
}

class vector_source final : public batch_source {
 public:
  explicit vector_source(std::vector<data::example_batch> batches, int fail_at = -1)
      : batches_(std::move(batches)), fail_at_(fail_at) {}
  result<bool> next(data::example_batch& out) override {
    if (static_cast<int>(next_) == fail_at_) return status(errc::parse_error, "injected failure");
    if (next_ >= batches_.size()) return false;
    out = batches_[next_++];
    return true;
  }
  double fraction_done() const override { return static_cast<double>(next_) / batches_.size(); }

 private:
  std::vector<data::example_batch> batches_;
  std::size_t next_ = 0;
  int fail_at_;
};

embedding::embedding_options tiny_embeddings() {
  embedding::embedding_options o;
  o.tables = 3;
  o.dim = 4;
  o.init_scale = 0.1f;
  o.optimizer.learning_rate = 0.2f;
  return o;
}

struct run_output {
  std::vector<float> params;
  train_result result;
  metrics::summary test;
};

run_output run(int threads, optim::dense_kind dense = optim::dense_kind::sgd, bool per_layer = true,
               float weight_decay = 0.0f) {
  optim::dense_optimizer opt;
  opt.kind = dense;
  opt.per_layer = per_layer;
  opt.weight_decay = weight_decay;
  opt.learning_rate = dense == optim::dense_kind::sgd ? 0.2f : dense == optim::dense_kind::adam ? 0.01f : 0.05f;
  opt.epsilon = optim::dense_optimizer::default_epsilon(dense);
  dense_model model(tiny_config(), opt, 42);
  embedding::local_embeddings store(tiny_embeddings());
  vector_source train(make_batches(300, 64, 1));
  hogwild_options ho;
  ho.threads = threads;
  ho.progress_interval_seconds = 0;
  steady_clock_source clock;
  auto r = train_hogwild(model, store, train, ho, clock, nullptr);
  REQUIRE(r.is_ok());
  vector_source test(make_batches(40, 64, 2));
  auto m = evaluate(model, store, test, r->train_click_rate, {});
  REQUIRE(m.is_ok());
  return {std::vector<float>(model.params(), model.params() + model.size()), *r, *m};
}

}  // namespace

TEST_CASE("hogwild: one worker learns the toy problem and is deterministic", "[core][train]") {
  auto a = run(1);
  auto b = run(1);
  CHECK(a.result.examples == 300u * 64u);
  CHECK(a.result.batches == 300u);
  CHECK(a.params == b.params);  // bit-identical
  CHECK(a.test.examples == 40u * 64u);
  CHECK(a.test.auc > 0.75);  // the signal is in table 0's parity and dense[0]
  CHECK(a.test.ne < 0.9);
}

TEST_CASE("hogwild: several workers consume every example exactly once and learn", "[core][train]") {
  auto r = run(3);
  CHECK(r.result.examples == 300u * 64u);
  CHECK(r.result.batches == 300u);
  CHECK(r.test.auc > 0.75);
}

TEST_CASE("hogwild: adagrad dense optimizer trains too", "[core][train]") {
  auto r = run(2, optim::dense_kind::adagrad);
  CHECK(r.test.auc > 0.75);
}

TEST_CASE("hogwild: adam dense optimizer trains, and one worker is deterministic with it", "[core][train]") {
  auto a = run(1, optim::dense_kind::adam);
  auto b = run(1, optim::dense_kind::adam);
  CHECK(a.params == b.params);  // the step count is the replica's, not the clock's
  CHECK(a.test.auc > 0.75);
  CHECK(run(2, optim::dense_kind::adam).test.auc > 0.75);
}

TEST_CASE("hogwild: a source error stops the run and is returned", "[core][train]") {
  dense_model model(tiny_config(), {}, 1);
  embedding::local_embeddings store(tiny_embeddings());
  vector_source source(make_batches(50, 16, 3), /*fail_at=*/10);
  hogwild_options ho;
  ho.threads = 2;
  steady_clock_source clock;
  auto r = train_hogwild(model, store, source, ho, clock, nullptr);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.error().code() == errc::parse_error);
  CHECK(r.error().message() == "injected failure");
}

TEST_CASE("hogwild: a batch that does not fit the model is refused", "[core][train]") {
  dense_model model(tiny_config(), {}, 1);
  embedding::local_embeddings store(tiny_embeddings());
  auto batches = make_batches(3, 8, 4);
  batches[1].num_sparse = 2;  // wrong feature count
  vector_source source(batches);
  steady_clock_source clock;
  auto r = train_hogwild(model, store, source, {}, clock, nullptr);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.error().code() == errc::invalid_argument);
}

TEST_CASE("hogwild: cancel stops early and says so", "[core][train]") {
  dense_model model(tiny_config(), {}, 1);
  embedding::local_embeddings store(tiny_embeddings());
  vector_source source(make_batches(100, 16, 5));
  std::atomic<bool> cancel{true};
  hogwild_options ho;
  ho.cancel = &cancel;
  steady_clock_source clock;
  auto r = train_hogwild(model, store, source, ho, clock, nullptr);
  REQUIRE(r.is_ok());
  CHECK(r->cancelled);
  CHECK(r->examples < 100u * 16u);
}

TEST_CASE("hogwild: progress reports examples, rate and window metrics", "[core][train]") {
  dense_model model(tiny_config(), {}, 1);
  embedding::local_embeddings store(tiny_embeddings());
  vector_source source(make_batches(2000, 64, 6));
  hogwild_options ho;
  ho.progress_interval_seconds = 0.01;
  std::vector<train_progress> seen;
  steady_clock_source clock;
  auto r = train_hogwild(model, store, source, ho, clock, [&](const train_progress& p) { seen.push_back(p); });
  REQUIRE(r.is_ok());
  REQUIRE_FALSE(seen.empty());
  const auto& p = seen.back();
  CHECK(p.examples > 0);
  CHECK(p.examples <= r->examples);
  CHECK(p.examples_per_sec > 0);
  CHECK(p.fraction_done > 0);
  CHECK(p.window.metrics.examples > 0);
  CHECK(p.window.metrics.ne == p.window.metrics.ne);  // not NaN
}

TEST_CASE("hogwild: the progressive window scores each batch as the training step did", "[core][train]") {
  // Over a window that holds every example, the progressive log loss is the training loss the
  // steps returned (each computed on the predictions before the update), and the window's
  // click rate is the data's.
  dense_model model(tiny_config(), {}, 1);
  embedding::local_embeddings store(tiny_embeddings());
  vector_source source(make_batches(300, 32, 8));
  hogwild_options ho;
  ho.window.examples = 0;  // no limit: every example
  steady_clock_source clock;
  auto r = train_hogwild(model, store, source, ho, clock, nullptr);
  REQUIRE(r.is_ok());
  const auto& w = r->last_window.metrics;
  CHECK(w.examples == r->examples);
  CHECK(w.click_rate == Approx(r->train_click_rate).epsilon(1e-12));
  CHECK(w.log_loss == Approx(r->train_log_loss).epsilon(1e-4));
  CHECK(r->last_window.enough);

  // A window of 1000 examples holds the newest thousand (and less than a slice more).
  dense_model again(tiny_config(), {}, 1);
  embedding::local_embeddings store2(tiny_embeddings());
  vector_source source2(make_batches(300, 32, 8));
  ho.window.examples = 1000;
  auto windowed = train_hogwild(again, store2, source2, ho, clock, nullptr);
  REQUIRE(windowed.is_ok());
  CHECK(windowed->last_window.metrics.examples >= 1000);
  CHECK(windowed->last_window.metrics.examples < 1000 + 1000 / 8 + 32);
}

TEST_CASE("evaluate: scoring never creates embedding rows", "[core][train]") {
  dense_model model(tiny_config(), {}, 1);
  embedding::local_embeddings store(tiny_embeddings());
  vector_source source(make_batches(5, 16, 7));
  auto m = evaluate(model, store, source, 0.3, {});
  REQUIRE(m.is_ok());
  CHECK(m->examples == 80u);
  CHECK(store.total_rows() == 0);
}

TEST_CASE("hogwild: a stateful update per layer inside the backward pass gives the one-pass update's model",
          "[core][train]") {
  // Every parameter is updated once a batch, from the same gradient, with the same step: the
  // same floats, whichever way it is applied.
  for (auto kind : {optim::dense_kind::adam, optim::dense_kind::adagrad, optim::dense_kind::sgd}) {
    for (float wd : {0.0f, 0.01f}) {
      if (kind == optim::dense_kind::sgd && wd == 0.0f) continue;  // fused into the backward pass itself
      INFO(optim::to_string(kind) << " weight decay " << wd);
      const auto per_layer = run(1, kind, true, wd);
      const auto one_pass = run(1, kind, false, wd);
      CHECK(per_layer.params == one_pass.params);
      CHECK(per_layer.test.auc > 0.75);
    }
  }
}
