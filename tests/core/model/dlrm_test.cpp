#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "ss/core/model/dlrm.hpp"
#include "ss/core/model/gemm.hpp"
#include "ss/core/model/kernels.hpp"
#include "ss/core/random.hpp"

using namespace ss::model;

namespace {

dlrm_config small_config() {
  dlrm_config c;
  c.num_dense = 3;
  c.num_sparse = 3;
  c.embedding_dim = 4;
  c.bottom_mlp = {5, 4};
  c.top_mlp = {6, 3, 1};
  return c;
}

// A batch for the double-precision model: random dense inputs, embeddings and labels.
struct double_case {
  dlrm_config config;
  dense_layout layout;
  std::vector<double> params;
  std::vector<double> dense;
  std::vector<double> embeddings;  // batch x num_sparse x dim
  std::vector<float> labels;
  int batch;

  double_case(const dlrm_config& c, int b, std::uint64_t seed) : config(c), layout(c), batch(b) {
    ss::rng gen(seed);
    params.resize(layout.size());
    std::vector<float> init(layout.size());
    init_dense_parameters(layout, seed, init.data());
    for (std::size_t i = 0; i < init.size(); ++i) params[i] = init[i];
    dense.resize(static_cast<std::size_t>(b) * c.num_dense);
    for (auto& v : dense) v = gen.uniform() * 2.0;
    embeddings.resize(static_cast<std::size_t>(b) * c.num_sparse * c.embedding_dim);
    for (auto& v : embeddings) v = gen.uniform() - 0.5;
    labels.resize(b);
    for (auto& l : labels) l = gen.bernoulli(0.4) ? 1.0f : 0.0f;
  }

  void load_embeddings(dlrm_workspace<double>& ws) const {
    const int dim = static_cast<int>(config.embedding_dim);
    for (int e = 0; e < batch; ++e)
      for (int f = 0; f < static_cast<int>(config.num_sparse); ++f)
        std::copy_n(&embeddings[(static_cast<std::size_t>(e) * config.num_sparse + f) * dim], dim,
                    ws.embedding_slot(e, f));
  }

  // A forward and backward pass over the batch in `ws`: returns the loss; `grads` gets the dense
  // parameters' gradients, `ws` the embeddings' (ws.embedding_grad).
  double forward_backward(dlrm_workspace<double>& ws, std::vector<double>& grads) const {
    load_embeddings(ws);
    dlrm_forward(config, layout, params.data(), dense.data(), batch, ws);
    grads.assign(layout.size(), 0.0);
    return dlrm_backward(config, layout, params.data(), dense.data(), labels.data(), batch,
                         {grads.data(), 1.0, 0.0}, ws);
  }

  double loss() const {
    dlrm_workspace<double> ws(config, batch);
    std::vector<double> sink;
    return forward_backward(ws, sink);
  }

  // The loss's central difference in `value` (one of params or embeddings), left as it was.
  double numeric_gradient(double& value) {
    const double saved = value;
    value = saved + 1e-6;
    const double up = loss();
    value = saved - 1e-6;
    const double down = loss();
    value = saved;
    return (up - down) / 2e-6;
  }
};

double rel_error(double a, double b) { return std::abs(a - b) / std::max(1e-8, std::abs(a) + std::abs(b)); }

}  // namespace

TEST_CASE("dlrm config: the default is the DLRM Criteo Kaggle reference", "[core][model]") {
  dlrm_config c;
  REQUIRE(c.validate().is_ok());
  CHECK(c.top_input() == 367);
  CHECK(c.describe() == "13-512-256-64-16 | 367-512-256-1 | 26 x 16");
  dense_layout layout(c);
  // bottom 13-512-256-64-16 and top 367-512-256-1, weights plus biases
  const std::size_t bottom = 13 * 512 + 512 + 512 * 256 + 256 + 256 * 64 + 64 + 64 * 16 + 16;
  const std::size_t top = 367 * 512 + 512 + 512 * 256 + 256 + 256 * 1 + 1;
  CHECK(layout.size() == bottom + top);
  CHECK(layout.top().back().relu == false);
  CHECK(layout.bottom().back().relu == true);
}

TEST_CASE("dlrm config: inconsistent shapes are refused with a reason", "[core][model]") {
  dlrm_config c;
  c.bottom_mlp = {512, 256, 32};
  auto s = c.validate();
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.message().find("must equal the embedding dim") != std::string::npos);
  c = dlrm_config{};
  c.top_mlp = {512, 2};
  CHECK_FALSE(c.validate().is_ok());
  c = dlrm_config{};
  c.num_sparse = 0;
  CHECK_FALSE(c.validate().is_ok());
}

TEST_CASE("dlrm config: layer lists parse and reject junk", "[core][model]") {
  auto ok = parse_layer_list("512-256-64-16");
  REQUIRE(ok.is_ok());
  CHECK(*ok == std::vector<std::uint32_t>{512, 256, 64, 16});
  CHECK(parse_layer_list("8,4").is_ok());
  CHECK_FALSE(parse_layer_list("").is_ok());
  CHECK_FALSE(parse_layer_list("512--16").is_ok());
  CHECK_FALSE(parse_layer_list("512-0").is_ok());
  CHECK_FALSE(parse_layer_list("abc").is_ok());
  CHECK_FALSE(parse_layer_list("99999999999").is_ok());
}

TEST_CASE("gemm: float (oneDNN) and double (reference) agree on every transpose", "[core][model]") {
  ss::rng gen(3);
  const int m = 7, n = 5, k = 6;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      std::vector<double> a(m * k), b(k * n), c(m * n);
      for (auto& v : a) v = gen.uniform() - 0.5;
      for (auto& v : b) v = gen.uniform() - 0.5;
      for (auto& v : c) v = gen.uniform() - 0.5;
      std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end()), cf(c.begin(), c.end());
      const int lda = ta ? m : k, ldb = tb ? k : n;
      gemm({ta == 1, tb == 1, m, n, k}, 0.5, a.data(), lda, b.data(), ldb, 2.0, c.data(), n);
      gemm({ta == 1, tb == 1, m, n, k}, 0.5f, af.data(), lda, bf.data(), ldb, 2.0f, cf.data(), n);
      // Hand check of one element: c[1][2] = 0.5 * sum_p op(a)[1][p] op(b)[p][2] + 2 * c0.
      for (int i = 0; i < m * n; ++i) CHECK(cf[i] == Approx(c[i]).margin(1e-5));
    }
  }
  // K = 0 scales C by beta (the bottom MLP of a model without dense features).
  std::vector<float> c0 = {1, 2, 3, 4};
  gemm({false, true, 2, 2, 0}, 1.0f, nullptr, 1, nullptr, 1, 0.0f, c0.data(), 2);
  CHECK(c0 == std::vector<float>{0, 0, 0, 0});
  CHECK(std::string(gemm_isa()) != "");
}

TEST_CASE("interaction: hand-computed dots in the DLRM order", "[core][model]") {
  // One example, n = 3 vectors of dim 2: x = (1, 2), e1 = (3, 4), e2 = (5, 6).
  std::vector<float> inter = {1, 2, 3, 4, 5, 6};
  std::vector<float> out(2 + 3);
  interaction_forward(inter.data(), 1, 3, 2, out.data(), 5);
  // x copied, then <e1,x> = 11, <e2,x> = 17, <e2,e1> = 39
  CHECK(out == std::vector<float>{1, 2, 11, 17, 39});
  std::vector<float> d_out = {0.5f, -1, 1, 2, 3};
  std::vector<float> d_inter(6);
  interaction_backward(inter.data(), d_out.data(), 5, 1, 3, 2, d_inter.data());
  // dx = (0.5, -1) + 1*e1 + 2*e2 = (13.5, 15); de1 = 1*x + 3*e2 = (16, 20); de2 = 2*x + 3*e1 = (11, 16)
  CHECK(d_inter == std::vector<float>{13.5f, 15, 16, 20, 11, 16});
}

TEST_CASE("interaction: finite-difference check, float kernel equals double kernel", "[core][model]") {
  ss::rng gen(5);
  const int batch = 3, n = 27, dim = 16, pairs = n * (n - 1) / 2, width = dim + pairs;
  std::vector<double> inter(batch * n * dim), weights(batch * width);
  for (auto& v : inter) v = gen.uniform() - 0.5;
  for (auto& v : weights) v = gen.uniform() - 0.5;
  auto objective = [&](const std::vector<double>& in) {
    std::vector<double> out(batch * width);
    interaction_forward(in.data(), batch, n, dim, out.data(), width);
    double s = 0;
    for (int i = 0; i < batch * width; ++i) s += weights[i] * out[i];
    return s;
  };
  std::vector<double> grad(inter.size());
  interaction_backward(inter.data(), weights.data(), width, batch, n, dim, grad.data());
  for (std::size_t i = 0; i < inter.size(); i += 7) {
    auto plus = inter, minus = inter;
    plus[i] += 1e-6;
    minus[i] -= 1e-6;
    const double numeric = (objective(plus) - objective(minus)) / 2e-6;
    CHECK(rel_error(numeric, grad[i]) < 1e-7);
  }
  // The multiversioned float kernel computes the same thing.
  std::vector<float> inter_f(inter.begin(), inter.end()), weights_f(weights.begin(), weights.end());
  std::vector<float> out_f(batch * width), grad_f(inter.size());
  std::vector<double> out_d(batch * width);
  interaction_forward(inter_f.data(), batch, n, dim, out_f.data(), width);
  interaction_forward(inter.data(), batch, n, dim, out_d.data(), width);
  for (int i = 0; i < batch * width; ++i) CHECK(out_f[i] == Approx(out_d[i]).margin(1e-5));
  interaction_backward(inter_f.data(), weights_f.data(), width, batch, n, dim, grad_f.data());
  for (std::size_t i = 0; i < grad.size(); ++i) CHECK(grad_f[i] == Approx(grad[i]).margin(1e-4));
}

TEST_CASE("interaction: the float kernels equal the double ones at every vector count, and write only their columns",
          "[core][model]") {
  // The dim-16 float kernels work on rows in blocks of four and write whole vectors that later
  // rows overwrite: every count of vectors around the block and vector edges, with columns past
  // each example's output that must stay untouched.
  ss::rng gen(11);
  const int batch = 3, dim = 16, spare = 5;
  for (int n : {2, 3, 4, 5, 8, 15, 16, 17, 18, 19, 20, 21, 26, 27, 28, 29, 31, 32}) {
    const int pairs = n * (n - 1) / 2, width = dim + pairs, ld = width + spare;
    std::vector<double> inter(batch * n * dim), weights(batch * ld);
    for (auto& v : inter) v = gen.uniform() - 0.5;
    for (auto& v : weights) v = gen.uniform() - 0.5;
    std::vector<float> inter_f(inter.begin(), inter.end()), weights_f(weights.begin(), weights.end());
    std::vector<double> out_d(batch * ld, 0.0), grad_d(inter.size());
    std::vector<float> out_f(batch * ld, -7.0f), grad_f(inter.size());
    interaction_forward(inter.data(), batch, n, dim, out_d.data(), ld);
    interaction_forward(inter_f.data(), batch, n, dim, out_f.data(), ld);
    interaction_backward(inter.data(), weights.data(), ld, batch, n, dim, grad_d.data());
    interaction_backward(inter_f.data(), weights_f.data(), ld, batch, n, dim, grad_f.data());
    INFO("vectors: " << n);
    int wrong = 0, touched = 0;
    for (int e = 0; e < batch; ++e) {
      for (int c = 0; c < width; ++c)
        if (std::abs(out_f[e * ld + c] - out_d[e * ld + c]) > 1e-5) ++wrong;
      for (int c = width; c < ld; ++c)
        if (out_f[e * ld + c] != -7.0f) ++touched;
    }
    CHECK(wrong == 0);
    CHECK(touched == 0);
    int wrong_grad = 0;
    for (std::size_t i = 0; i < grad_d.size(); ++i)
      if (std::abs(grad_f[i] - grad_d[i]) > 1e-4) ++wrong_grad;
    CHECK(wrong_grad == 0);
  }
}

TEST_CASE("dlrm: finite-difference check of every dense parameter", "[core][model]") {
  double_case tc(small_config(), 5, 11);
  dlrm_workspace<double> ws(tc.config, tc.batch);
  std::vector<double> grads;
  tc.forward_backward(ws, grads);
  double worst = 0;
  for (std::size_t i = 0; i < tc.params.size(); ++i) {
    const double numeric = tc.numeric_gradient(tc.params[i]);
    if (std::abs(numeric) + std::abs(grads[i]) > 1e-9) worst = std::max(worst, rel_error(numeric, grads[i]));
  }
  INFO("parameters checked: " << tc.params.size());
  CHECK(worst < 1e-5);
}

TEST_CASE("dlrm: finite-difference check of the embedding gradients", "[core][model]") {
  double_case tc(small_config(), 4, 12);
  dlrm_workspace<double> ws(tc.config, tc.batch);
  std::vector<double> sink;
  tc.forward_backward(ws, sink);
  const int dim = static_cast<int>(tc.config.embedding_dim);
  double worst = 0;
  for (int e = 0; e < tc.batch; ++e) {
    for (int f = 0; f < static_cast<int>(tc.config.num_sparse); ++f) {
      for (int d = 0; d < dim; ++d) {
        double& v = tc.embeddings[(static_cast<std::size_t>(e) * tc.config.num_sparse + f) * dim + d];
        worst = std::max(worst, rel_error(tc.numeric_gradient(v), ws.embedding_grad(e, f)[d]));
      }
    }
  }
  CHECK(worst < 1e-5);
}

TEST_CASE("dlrm: a model without dense features learns a constant bottom vector", "[core][model]") {
  dlrm_config c = small_config();
  c.num_dense = 0;
  REQUIRE(c.validate().is_ok());
  double_case tc(c, 3, 13);
  dlrm_workspace<double> ws(tc.config, tc.batch);
  std::vector<double> grads;
  tc.forward_backward(ws, grads);
  // Every bias of the bottom MLP gets a finite-difference-correct gradient.
  const auto& first = tc.layout.bottom().front();
  for (std::uint32_t i = 0; i < first.out; ++i) {
    const std::size_t p = first.bias_offset + i;
    const double numeric = tc.numeric_gradient(tc.params[p]);
    CHECK(std::abs(numeric - grads[p]) < 1e-6 + 1e-5 * std::abs(numeric));
  }
}

TEST_CASE("dlrm: float model matches the double model and the fused SGD update", "[core][model]") {
  dlrm_config c;  // the default model, float path through oneDNN
  dense_layout layout(c);
  const int batch = 16;
  std::vector<float> params(layout.size());
  init_dense_parameters(layout, 7, params.data());
  ss::rng gen(8);
  std::vector<float> dense(batch * c.num_dense), labels(batch);
  for (auto& v : dense) v = static_cast<float>(gen.uniform() * 3.0);
  for (auto& l : labels) l = gen.bernoulli(0.3) ? 1.0f : 0.0f;
  dlrm_workspace<float> ws(c, batch);
  dlrm_workspace<double> wsd(c, batch);
  for (int e = 0; e < batch; ++e)
    for (int f = 0; f < 26; ++f)
      for (int d = 0; d < 16; ++d) {
        const float v = gen.uniform_float(-0.1f, 0.1f);
        ws.embedding_slot(e, f)[d] = v;
        wsd.embedding_slot(e, f)[d] = v;
      }
  std::vector<double> params_d(params.begin(), params.end()), dense_d(dense.begin(), dense.end());
  dlrm_forward(c, layout, params.data(), dense.data(), batch, ws);
  dlrm_forward(c, layout, params_d.data(), dense_d.data(), batch, wsd);
  for (int e = 0; e < batch; ++e) CHECK(ws.probs[e] == Approx(wsd.probs[e]).margin(1e-5));

  std::vector<float> grads(layout.size());
  const double loss = dlrm_backward(c, layout, params.data(), dense.data(), labels.data(), batch,
                                    {grads.data(), 1.0f, 0.0f}, ws);
  CHECK(std::isfinite(loss));
  // Fused SGD: backward writes params - lr * grad directly.
  const float lr = 0.1f;
  std::vector<float> fused = params;
  dlrm_forward(c, layout, fused.data(), dense.data(), batch, ws);
  dlrm_backward(c, layout, fused.data(), dense.data(), labels.data(), batch, {fused.data(), -lr, 1.0f}, ws);
  double worst = 0;
  for (std::size_t i = 0; i < params.size(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(fused[i]) - (params[i] - lr * grads[i])));
  CHECK(worst < 1e-6);
}
