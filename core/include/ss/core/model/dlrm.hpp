// DLRM forward and backward over a flat buffer of dense parameters.
//
// The dense parameters of all layers live in one contiguous buffer described by dense_layout:
// one replica is shared by every Hogwild worker of a trainer, synced by the shadow, saved in
// checkpoints and exported, always as that one buffer. Each worker owns a dlrm_workspace
// (activations and gradients for one batch). The embedding part is not here: callers put the
// pooled embeddings into the workspace before forward and read their gradients after backward.
//
// Templated on the scalar: float for training, double for finite-difference gradient checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ss/core/aligned_buffer.hpp"
#include "ss/core/model/dlrm_config.hpp"

namespace ss::model {

struct layer_shape {
  std::uint32_t in = 0;
  std::uint32_t out = 0;
  std::size_t weight_offset = 0;  // out x in, row-major (PyTorch's nn.Linear layout)
  std::size_t bias_offset = 0;    // out
  bool relu = true;               // every layer but the last top layer
};

class dense_layout {
 public:
  explicit dense_layout(const dlrm_config& config);
  const std::vector<layer_shape>& bottom() const { return bottom_; }
  const std::vector<layer_shape>& top() const { return top_; }
  std::size_t size() const { return size_; }  // parameters in all layers

 private:
  std::vector<layer_shape> bottom_;
  std::vector<layer_shape> top_;
  std::size_t size_ = 0;
};

// DLRM's initialization: W ~ N(0, sqrt(2 / (in + out))), b ~ N(0, sqrt(1 / out)), from `seed`.
void init_dense_parameters(const dense_layout& layout, std::uint64_t seed, float* params);

// Where backward puts the dense gradient g (same layout as the parameters):
// base = beta * base + scale * g. Materialize with {grads, 1, 0}; fuse plain SGD into the
// backward pass with {params, -learning_rate, 1} (the Hogwild update, written as soon as each
// layer's gradient is known, and after that layer's input gradient was computed).
//
// A stateful optimizer (Adam, Adagrad) is fused the other way: the gradient is materialized, and
// `layer_done` is called as soon as each layer's weight and bias gradients are in `base` (from
// `offset`, `count` values: the layer's weights and bias are contiguous), after that layer's input
// gradient was computed, so the update reads the gradient while it is in cache.
template <class T>
struct grad_target {
  T* base = nullptr;
  T scale = T(1);
  T beta = T(0);
  void (*layer_done)(void* context, std::size_t offset, std::size_t count) = nullptr;
  void* context = nullptr;
};

// Per-worker scratch for one batch: activations on the way forward, gradients on the way back.
// Plain data; not shared between threads.
template <class T>
struct dlrm_workspace {
  dlrm_workspace() = default;
  dlrm_workspace(const dlrm_config& config, int max_batch) { reserve(config, max_batch); }
  void reserve(const dlrm_config& config, int max_batch);

  // Interaction input, per example n = num_sparse + 1 vectors of embedding_dim values. Vector 0
  // is written by forward (the bottom output); callers fill vector f + 1 with the pooled
  // embedding of table f before forward.
  T* embedding_slot(int example, int table) {
    return inter.data() + (static_cast<std::size_t>(example) * vectors + 1 + table) * dim;
  }
  // After backward: dL/d(pooled embedding of `table` in `example`).
  const T* embedding_grad(int example, int table) const {
    return d_inter.data() + (static_cast<std::size_t>(example) * vectors + 1 + table) * dim;
  }

  int capacity = 0;
  int vectors = 0;  // num_sparse + 1
  int dim = 0;      // embedding_dim
  std::vector<aligned_buffer<T>> bottom_out;  // per bottom layer but the last: batch x out
  aligned_buffer<T> inter;                    // batch x vectors x dim
  aligned_buffer<T> top_in;                   // batch x top_input
  std::vector<aligned_buffer<T>> top_out;     // per top layer: batch x out; the last = logits
  aligned_buffer<T> probs;                    // batch
  aligned_buffer<T> grad_a, grad_b;           // ping-pong dL/d(activation), batch x widest
  aligned_buffer<T> d_inter;                  // batch x vectors x dim
  aligned_buffer<T> d_top_in;                 // batch x top_input
};

// Forward pass for `batch` examples. dense_in is batch x num_dense.
template <class T>
void dlrm_forward(const dlrm_config& config, const dense_layout& layout, const T* params,
                  const T* dense_in, int batch, dlrm_workspace<T>& ws);

// Backward pass after dlrm_forward on the same workspace. labels are 0/1. The loss is the mean
// binary cross-entropy over the batch (returned); gradients are of that mean. Dense gradients go
// to `target`; the interaction-input gradient stays in the workspace. dense_in must be the one
// given to forward (the first layer's weight gradient needs it).
template <class T>
double dlrm_backward(const dlrm_config& config, const dense_layout& layout, const T* params,
                     const T* dense_in, const float* labels, int batch,
                     const grad_target<T>& target, dlrm_workspace<T>& ws);

}  // namespace ss::model
