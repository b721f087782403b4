// Kernel bodies are written once as always-inline templates and instantiated into
// target_clones wrappers for float, so each ISA gets its own vectorized copy and the loader
// picks one at start-up (no -march=native: the binary runs on any x86-64). This file is
// compiled with -fvect-cost-model=dynamic so -O2 vectorizes these loops.
#include "ss/core/model/kernels.hpp"

#include <algorithm>
#include <cstring>

#define SS_ALWAYS_INLINE inline __attribute__((always_inline))
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define SS_MULTIVERSION __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SS_MULTIVERSION
#endif

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

// Gram matrix of one example's n vectors through a transposed copy, so the inner loop runs
// along contiguous memory and vectorizes (dim is 16 in the default model: one AVX-512 register
// per vector would need a horizontal sum per dot product instead).
constexpr int max_vectors = 128;  // n = 1 + categorical features; checked by dlrm_config

template <class T>
SS_ALWAYS_INLINE void interaction_forward_impl(const T* __restrict inter, int batch, int n, int dim,
                                               T* __restrict out, int ld_out) {
  const int npad = (n + 15) / 16 * 16;
  alignas(64) T transposed[64 * max_vectors];  // dim x npad, dim <= 64 on this path
  alignas(64) T gram[max_vectors];
  for (int e = 0; e < batch; ++e) {
    const T* __restrict v = inter + static_cast<long>(e) * n * dim;
    T* __restrict o = out + static_cast<long>(e) * ld_out;
    for (int d = 0; d < dim; ++d) o[d] = v[d];
    T* __restrict pairs = o + dim;
    if (dim <= 64) {
      for (int d = 0; d < dim; ++d) {
        T* __restrict trow = transposed + d * npad;
        for (int j = 0; j < n; ++j) trow[j] = v[j * dim + d];
        for (int j = n; j < npad; ++j) trow[j] = T(0);
      }
      int k = 0;
      for (int i = 1; i < n; ++i) {
        const int width = (i + 15) / 16 * 16;  // only j < i is needed
        for (int j = 0; j < width; ++j) gram[j] = T(0);
        const T* __restrict vi = v + i * dim;
        for (int d = 0; d < dim; ++d) {
          const T a = vi[d];
          const T* __restrict trow = transposed + d * npad;
          for (int j = 0; j < width; ++j) gram[j] += a * trow[j];
        }
        for (int j = 0; j < i; ++j) pairs[k++] = gram[j];
      }
    } else {
      int k = 0;
      for (int i = 1; i < n; ++i) {
        for (int j = 0; j < i; ++j) {
          T s = T(0);
          for (int d = 0; d < dim; ++d) s += v[i * dim + d] * v[j * dim + d];
          pairs[k++] = s;
        }
      }
    }
  }
}

// Each pair (i, j) adds w * v_j to dv_i and w * v_i to dv_j. With the dimension known at compile
// time (16 in the default model) the inner loop becomes one or two full vector operations.
template <class T, int Dim>
SS_ALWAYS_INLINE void interaction_backward_pairs(const T* __restrict v, const T* __restrict gp, int n,
                                                 int dim, T* __restrict dv) {
  const int d_count = Dim > 0 ? Dim : dim;
  int k = 0;
  for (int i = 1; i < n; ++i) {
    const T* __restrict vi = v + i * d_count;
    T* __restrict dvi = dv + i * d_count;
    for (int j = 0; j < i; ++j, ++k) {
      const T w = gp[k];
      const T* __restrict vj = v + j * d_count;
      T* __restrict dvj = dv + j * d_count;
      for (int d = 0; d < d_count; ++d) {
        dvi[d] += w * vj[d];
        dvj[d] += w * vi[d];
      }
    }
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
