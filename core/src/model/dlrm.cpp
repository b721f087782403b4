#include "ss/core/model/dlrm.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "ss/core/model/gemm.hpp"
#include "ss/core/model/kernels.hpp"
#include "ss/core/random.hpp"

namespace ss::model {

dense_layout::dense_layout(const dlrm_config& config) {
  std::size_t offset = 0;
  auto add = [&offset](std::vector<layer_shape>& layers, std::uint32_t in,
                       const std::vector<std::uint32_t>& widths, bool relu_last) {
    for (std::size_t i = 0; i < widths.size(); ++i) {
      layer_shape l;
      l.in = in;
      l.out = widths[i];
      l.weight_offset = offset;
      offset += static_cast<std::size_t>(l.in) * l.out;
      l.bias_offset = offset;
      offset += l.out;
      l.relu = (i + 1 < widths.size()) || relu_last;
      layers.push_back(l);
      in = widths[i];
    }
  };
  add(bottom_, config.num_dense, config.bottom_mlp, /*relu_last=*/true);  // DLRM: ReLU throughout
  add(top_, config.top_input(), config.top_mlp, /*relu_last=*/false);     // the logit stays linear
  size_ = offset;
}

void init_dense_parameters(const dense_layout& layout, std::uint64_t seed, float* params) {
  rng gen(mix64(seed ^ 0xd1e5ULL));
  auto init = [&gen, params](const std::vector<layer_shape>& layers) {
    for (const auto& l : layers) {
      const double w_std = std::sqrt(2.0 / (l.in + l.out));
      const double b_std = std::sqrt(1.0 / l.out);
      for (std::size_t i = 0; i < static_cast<std::size_t>(l.in) * l.out; ++i)
        params[l.weight_offset + i] = static_cast<float>(gen.normal() * w_std);
      for (std::size_t i = 0; i < l.out; ++i)
        params[l.bias_offset + i] = static_cast<float>(gen.normal() * b_std);
    }
  };
  init(layout.bottom());
  init(layout.top());
}

template <class T>
void dlrm_workspace<T>::reserve(const dlrm_config& config, int max_batch) {
  if (max_batch <= capacity && vectors == static_cast<int>(config.interaction_vectors()) &&
      dim == static_cast<int>(config.embedding_dim) && top_out.size() == config.top_mlp.size() &&
      bottom_out.size() + 1 == config.bottom_mlp.size())
    return;
  capacity = max_batch;
  vectors = static_cast<int>(config.interaction_vectors());
  dim = static_cast<int>(config.embedding_dim);
  const auto b = static_cast<std::size_t>(max_batch);
  std::size_t widest = std::max<std::size_t>(config.top_input(), config.num_dense);
  bottom_out.clear();
  for (std::size_t i = 0; i + 1 < config.bottom_mlp.size(); ++i) {
    bottom_out.emplace_back(b * config.bottom_mlp[i]);
    widest = std::max<std::size_t>(widest, config.bottom_mlp[i]);
  }
  top_out.clear();
  for (auto w : config.top_mlp) {
    top_out.emplace_back(b * w);
    widest = std::max<std::size_t>(widest, w);
  }
  inter.resize(b * vectors * dim);
  d_inter.resize(b * vectors * dim);
  top_in.resize(b * config.top_input());
  d_top_in.resize(b * config.top_input());
  probs.resize(b);
  grad_a.resize(b * widest);
  grad_b.resize(b * widest);
}

namespace {

// One linear layer forward: y = act(x W^T + b).
template <class T>
void linear_forward(const layer_shape& l, const T* params, const T* x, int ldx, int batch, T* y, int ldy) {
  gemm({false, true, batch, static_cast<int>(l.out), static_cast<int>(l.in)}, T(1), x, ldx,
       params + l.weight_offset, static_cast<int>(l.in), T(0), y, ldy);
  bias_activation(y, ldy, batch, static_cast<int>(l.out), params + l.bias_offset, l.relu);
}

// One linear layer backward. dy holds dL/d(output) and is turned into dL/d(pre-activation) in
// place. Writes dL/dx to dx (when non-null) before the weight gradient reaches the target, so a
// fused SGD update never changes W under its own input gradient.
template <class T>
void linear_backward(const layer_shape& l, const T* params, const T* x, int ldx, const T* y, int ldy,
                     T* dy, int lddy, int batch, T* dx, int lddx, const grad_target<T>& target) {
  const int in = static_cast<int>(l.in);
  const int out = static_cast<int>(l.out);
  if (l.relu) relu_backward(dy, lddy, y, ldy, batch, out);
  if (dx != nullptr)
    gemm({false, false, batch, in, out}, T(1), dy, lddy, params + l.weight_offset, in, T(0), dx, lddx);
  gemm({true, false, out, in, batch}, target.scale, dy, lddy, x, ldx, target.beta,
       target.base + l.weight_offset, in);
  column_sum(dy, lddy, batch, out, target.scale, target.beta, target.base + l.bias_offset);
  if (target.layer_done != nullptr)
    target.layer_done(target.context, l.weight_offset, l.bias_offset + l.out - l.weight_offset);
}

}  // namespace

template <class T>
void dlrm_forward(const dlrm_config& config, const dense_layout& layout, const T* params,
                  const T* dense_in, int batch, dlrm_workspace<T>& ws) {
  assert(batch <= ws.capacity);
  const int n = ws.vectors;
  const int dim = ws.dim;
  const int inter_ld = n * dim;  // the bottom output is vector 0 of each example's block

  // Bottom MLP; its last layer writes straight into the interaction input.
  const auto& bottom = layout.bottom();
  const T* x = dense_in;
  int ldx = static_cast<int>(config.num_dense);
  for (std::size_t i = 0; i < bottom.size(); ++i) {
    const bool last = i + 1 == bottom.size();
    T* y = last ? ws.inter.data() : ws.bottom_out[i].data();
    const int ldy = last ? inter_ld : static_cast<int>(bottom[i].out);
    linear_forward(bottom[i], params, x, ldx, batch, y, ldy);
    x = y;
    ldx = ldy;
  }

  const int top_in = static_cast<int>(config.top_input());
  interaction_forward(ws.inter.data(), batch, n, dim, ws.top_in.data(), top_in);

  const auto& top = layout.top();
  x = ws.top_in.data();
  ldx = top_in;
  for (std::size_t i = 0; i < top.size(); ++i) {
    T* y = ws.top_out[i].data();
    linear_forward(top[i], params, x, ldx, batch, y, static_cast<int>(top[i].out));
    x = y;
    ldx = static_cast<int>(top[i].out);
  }
  const T* logits = ws.top_out.back().data();
  for (int e = 0; e < batch; ++e) ws.probs[e] = T(1) / (T(1) + std::exp(-logits[e]));
}

template <class T>
double dlrm_backward(const dlrm_config& config, const dense_layout& layout, const T* params,
                     const T* dense_in, const float* labels, int batch,
                     const grad_target<T>& target, dlrm_workspace<T>& ws) {
  assert(batch <= ws.capacity);
  const int n = ws.vectors;
  const int dim = ws.dim;
  const int inter_ld = n * dim;
  const int top_in = static_cast<int>(config.top_input());
  const T* logits = ws.top_out.back().data();

  // Mean binary cross-entropy on logits, in the overflow-free form
  // max(z, 0) - z y + log(1 + exp(-|z|)); its gradient is (sigmoid(z) - y) / batch.
  double loss = 0.0;
  T* dy = ws.grad_a.data();
  const T inv_batch = T(1) / static_cast<T>(batch);
  for (int e = 0; e < batch; ++e) {
    const double z = static_cast<double>(logits[e]);
    const double y = labels[e];
    loss += std::max(z, 0.0) - z * y + std::log1p(std::exp(-std::abs(z)));
    dy[e] = (ws.probs[e] - static_cast<T>(labels[e])) * inv_batch;
  }
  loss /= batch;

  // Top MLP, last layer first.
  const auto& top = layout.top();
  T* other = ws.grad_b.data();
  for (std::size_t i = top.size(); i-- > 0;) {
    const bool first = i == 0;
    const T* x = first ? ws.top_in.data() : ws.top_out[i - 1].data();
    const int ldx = first ? top_in : static_cast<int>(top[i - 1].out);
    T* dx = first ? ws.d_top_in.data() : other;
    linear_backward(top[i], params, x, ldx, ws.top_out[i].data(), static_cast<int>(top[i].out), dy,
                    static_cast<int>(top[i].out), batch, dx, ldx, target);
    std::swap(dy, other);
  }

  interaction_backward(ws.inter.data(), ws.d_top_in.data(), top_in, batch, n, dim, ws.d_inter.data());

  // Bottom MLP. The gradient of its output is vector 0 of d_inter (strided); copy it out so the
  // ReLU backward can work in place without touching the embedding gradients beside it.
  const auto& bottom = layout.bottom();
  dy = ws.grad_a.data();
  other = ws.grad_b.data();
  for (int e = 0; e < batch; ++e)
    std::copy_n(ws.d_inter.data() + static_cast<std::size_t>(e) * inter_ld, dim, dy + e * dim);
  for (std::size_t i = bottom.size(); i-- > 0;) {
    const bool first = i == 0;
    const bool last = i + 1 == bottom.size();
    const T* x = first ? dense_in : ws.bottom_out[i - 1].data();
    const int ldx = first ? static_cast<int>(config.num_dense) : static_cast<int>(bottom[i - 1].out);
    const T* y = last ? ws.inter.data() : ws.bottom_out[i].data();
    const int ldy = last ? inter_ld : static_cast<int>(bottom[i].out);
    T* dx = first ? nullptr : other;  // no gradient for the raw dense input
    linear_backward(bottom[i], params, x, ldx, y, ldy, dy, static_cast<int>(bottom[i].out), batch, dx,
                    ldx, target);
    std::swap(dy, other);
  }
  return loss;
}

template struct dlrm_workspace<float>;
template struct dlrm_workspace<double>;
template void dlrm_forward<float>(const dlrm_config&, const dense_layout&, const float*, const float*,
                                  int, dlrm_workspace<float>&);
template void dlrm_forward<double>(const dlrm_config&, const dense_layout&, const double*,
                                   const double*, int, dlrm_workspace<double>&);
template double dlrm_backward<float>(const dlrm_config&, const dense_layout&, const float*,
                                     const float*, const float*, int, const grad_target<float>&,
                                     dlrm_workspace<float>&);
template double dlrm_backward<double>(const dlrm_config&, const dense_layout&, const double*,
                                      const double*, const float*, int, const grad_target<double>&,
                                      dlrm_workspace<double>&);

}  // namespace ss::model
