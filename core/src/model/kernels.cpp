// Kernel bodies are written once as always-inline templates and instantiated into
// target_clones wrappers for float, so each ISA gets its own vectorized copy and the loader
// picks one at start-up (no -march=native: the binary runs on any x86-64). This file is
// compiled with -fvect-cost-model=dynamic so -O2 vectorizes these loops.
#include "ss/core/model/kernels.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "ss/core/multiversion.hpp"

#define SS_ALWAYS_INLINE inline __attribute__((always_inline))

namespace ss::model {
namespace {

template <class T>
SS_ALWAYS_INLINE void bias_activation_impl(T* __restrict y, int ld, int rows, int cols,
                                           const T* __restrict bias, bool relu) {
  for (int r = 0; r < rows; ++r) {
    T* __restrict row = y + static_cast<long>(r) * ld;
    if (relu) {
      for (int c = 0; c < cols; ++c) row[c] = std::max(row[c] + bias[c], T(0));
    } else {
      for (int c = 0; c < cols; ++c) row[c] += bias[c];
    }
  }
}

template <class T>
SS_ALWAYS_INLINE void relu_backward_impl(T* __restrict dy, int ld_dy, const T* __restrict y, int ld_y,
                                         int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    T* __restrict d = dy + static_cast<long>(r) * ld_dy;
    const T* __restrict v = y + static_cast<long>(r) * ld_y;
    for (int c = 0; c < cols; ++c) d[c] = v[c] > T(0) ? d[c] : T(0);
  }
}

template <class T>
SS_ALWAYS_INLINE void column_sum_impl(const T* __restrict dz, int ld, int rows, int cols, T scale,
                                      T beta, T* __restrict out) {
  if (beta == T(0)) {
    for (int c = 0; c < cols; ++c) out[c] = T(0);
  } else if (beta != T(1)) {
    for (int c = 0; c < cols; ++c) out[c] *= beta;
  }
  for (int r = 0; r < rows; ++r) {
    const T* __restrict row = dz + static_cast<long>(r) * ld;
    for (int c = 0; c < cols; ++c) out[c] += scale * row[c];
  }
}

// Dot interaction, forward. Per example the n vectors are transposed (dim x npad) so that row i
// of the Gram matrix is sum_d v_i[d] * transposed[d][:], a loop along contiguous memory. With
// npad and dim known at compile time (the default model: 27 vectors of 16, npad 32) the row
// accumulators stay in registers instead of bouncing through memory on every d. n = 1 +
// categorical features is at most 128 (dlrm_config checks it).

template <class T, int NPad, int Dim>
SS_ALWAYS_INLINE void gram_pairs_fixed(const T* __restrict v, int n, T* __restrict pairs) {
  alignas(64) T transposed[Dim * NPad];
  for (int d = 0; d < Dim; ++d) {
    for (int j = 0; j < n; ++j) transposed[d * NPad + j] = v[j * Dim + d];
    for (int j = n; j < NPad; ++j) transposed[d * NPad + j] = T(0);
  }
  int k = 0;
  for (int i = 1; i < n; ++i) {
    alignas(64) T acc[NPad];
    for (int j = 0; j < NPad; ++j) acc[j] = T(0);
    const T* __restrict vi = v + i * Dim;
    for (int d = 0; d < Dim; ++d) {
      const T a = vi[d];
      for (int j = 0; j < NPad; ++j) acc[j] += a * transposed[d * NPad + j];
    }
    for (int j = 0; j < i; ++j) pairs[k++] = acc[j];
  }
}

// The default model's case (dim 16, at most 32 vectors) for float, written with GCC vector
// types so the two row accumulators are registers (at -O2 GCC keeps a local array in memory and
// every FMA would round-trip through the stack). In the AVX-512 clone each is one zmm register.
typedef float float16_vec __attribute__((vector_size(64)));

// Unaligned load; by reference because returning a 64-byte vector draws GCC's ABI warning for
// the baseline clone.
SS_ALWAYS_INLINE void load16(float16_vec& v, const float* p) { std::memcpy(&v, p, sizeof v); }

SS_ALWAYS_INLINE void gram_pairs_dim16(const float* __restrict v, int n, float* __restrict pairs) {
  alignas(64) float transposed[16 * 32];
  for (int d = 0; d < 16; ++d) {
    for (int j = 0; j < n; ++j) transposed[d * 32 + j] = v[j * 16 + d];
    for (int j = n; j < 32; ++j) transposed[d * 32 + j] = 0.0f;
  }
  int k = 0;
  for (int i = 1; i < n; ++i) {
    float16_vec lo = {}, hi = {};
    const float* __restrict vi = v + i * 16;
    for (int d = 0; d < 16; ++d) {
      const float a = vi[d];
      float16_vec t;
      load16(t, transposed + d * 32);
      lo += a * t;
      if (i > 16) {
        load16(t, transposed + d * 32 + 16);
        hi += a * t;
      }
    }
    alignas(64) float row[32];
    std::memcpy(row, &lo, sizeof lo);
    std::memcpy(row + 16, &hi, sizeof hi);
    for (int j = 0; j < i; ++j) pairs[k++] = row[j];
  }
}

template <class T>
SS_ALWAYS_INLINE void gram_pairs_generic(const T* __restrict v, int n, int dim, T* __restrict pairs) {
  int k = 0;
  for (int i = 1; i < n; ++i) {
    for (int j = 0; j < i; ++j) {
      T s = T(0);
      for (int d = 0; d < dim; ++d) s += v[i * dim + d] * v[j * dim + d];
      pairs[k++] = s;
    }
  }
}

template <class T>
SS_ALWAYS_INLINE void interaction_forward_impl(const T* __restrict inter, int batch, int n, int dim,
                                               T* __restrict out, int ld_out) {
  for (int e = 0; e < batch; ++e) {
    const T* __restrict v = inter + static_cast<long>(e) * n * dim;
    T* __restrict o = out + static_cast<long>(e) * ld_out;
    for (int d = 0; d < dim; ++d) o[d] = v[d];
    T* __restrict pairs = o + dim;
    if constexpr (std::is_same_v<T, float>) {
      if (dim == 16 && n <= 32) {
        gram_pairs_dim16(v, n, pairs);
        continue;
      }
    }
    if (dim == 16 && n <= 16) {
      gram_pairs_fixed<T, 16, 16>(v, n, pairs);
    } else if (dim == 16 && n <= 32) {
      gram_pairs_fixed<T, 32, 16>(v, n, pairs);
    } else if (dim == 32 && n <= 32) {
      gram_pairs_fixed<T, 32, 32>(v, n, pairs);
    } else {
      gram_pairs_generic(v, n, dim, pairs);
    }
  }
}

// Dot interaction, backward: pair (i, j) adds w * v_j to dv_i and w * v_i to dv_j. dv_i is
// accumulated in a local array across j (it cannot alias dv_j as far as the compiler knows, so
// in place it would be reloaded and stored on every pair); with dim fixed at compile time that
// array is one or two registers.
template <class T, int Dim>
SS_ALWAYS_INLINE void interaction_backward_pairs(const T* __restrict v, const T* __restrict gp, int n,
                                                 int dim, T* __restrict dv) {
  constexpr int max_dim = Dim > 0 ? Dim : 1024;
  const int d_count = Dim > 0 ? Dim : dim;
  int k = 0;
  for (int i = 1; i < n; ++i) {
    const T* __restrict vi = v + i * d_count;
    T acc[max_dim];
    for (int d = 0; d < d_count; ++d) acc[d] = T(0);
    for (int j = 0; j < i; ++j, ++k) {
      const T w = gp[k];
      const T* __restrict vj = v + j * d_count;
      T* __restrict dvj = dv + j * d_count;
      for (int d = 0; d < d_count; ++d) {
        acc[d] += w * vj[d];
        dvj[d] += w * vi[d];
      }
    }
    T* __restrict dvi = dv + i * d_count;
    for (int d = 0; d < d_count; ++d) dvi[d] += acc[d];
  }
}

template <class T>
SS_ALWAYS_INLINE void interaction_backward_impl(const T* __restrict inter, const T* __restrict d_out,
                                                int ld_dout, int batch, int n, int dim,
                                                T* __restrict d_inter) {
  for (int e = 0; e < batch; ++e) {
    const T* __restrict v = inter + static_cast<long>(e) * n * dim;
    const T* __restrict g = d_out + static_cast<long>(e) * ld_dout;
    T* __restrict dv = d_inter + static_cast<long>(e) * n * dim;
    for (int d = 0; d < dim; ++d) dv[d] = g[d];
    for (int d = dim; d < n * dim; ++d) dv[d] = T(0);
    if (dim == 16) {
      interaction_backward_pairs<T, 16>(v, g + dim, n, dim, dv);
    } else if (dim == 32) {
      interaction_backward_pairs<T, 32>(v, g + dim, n, dim, dv);
    } else {
      interaction_backward_pairs<T, 0>(v, g + dim, n, dim, dv);
    }
  }
}

}  // namespace

SS_MULTIVERSION void bias_activation(float* y, int ld, int rows, int cols, const float* bias, bool relu) {
  bias_activation_impl(y, ld, rows, cols, bias, relu);
}
void bias_activation(double* y, int ld, int rows, int cols, const double* bias, bool relu) {
  bias_activation_impl(y, ld, rows, cols, bias, relu);
}

SS_MULTIVERSION void relu_backward(float* dy, int ld_dy, const float* y, int ld_y, int rows, int cols) {
  relu_backward_impl(dy, ld_dy, y, ld_y, rows, cols);
}
void relu_backward(double* dy, int ld_dy, const double* y, int ld_y, int rows, int cols) {
  relu_backward_impl(dy, ld_dy, y, ld_y, rows, cols);
}

SS_MULTIVERSION void column_sum(const float* dz, int ld, int rows, int cols, float scale, float beta,
                                float* out) {
  column_sum_impl(dz, ld, rows, cols, scale, beta, out);
}
void column_sum(const double* dz, int ld, int rows, int cols, double scale, double beta, double* out) {
  column_sum_impl(dz, ld, rows, cols, scale, beta, out);
}

SS_MULTIVERSION void interaction_forward(const float* inter, int batch, int n, int dim, float* out,
                                         int ld_out) {
  interaction_forward_impl(inter, batch, n, dim, out, ld_out);
}
void interaction_forward(const double* inter, int batch, int n, int dim, double* out, int ld_out) {
  interaction_forward_impl(inter, batch, n, dim, out, ld_out);
}

SS_MULTIVERSION void interaction_backward(const float* inter, const float* d_out, int ld_dout, int batch,
                                          int n, int dim, float* d_inter) {
  interaction_backward_impl(inter, d_out, ld_dout, batch, n, dim, d_inter);
}
void interaction_backward(const double* inter, const double* d_out, int ld_dout, int batch, int n,
                          int dim, double* d_inter) {
  interaction_backward_impl(inter, d_out, ld_dout, batch, n, dim, d_inter);
}

}  // namespace ss::model
