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

// One stage of a 16 x 16 transpose in registers: rows r and r + B (r without bit B) trade their
// blocks of B lanes. Four stages (B = 8, 4, 2, 1) transpose; each shuffle is one two-source
// permute on AVX-512 (a scalar transpose of the block was a third of the kernel's time).
// __builtin_shufflevector (GCC 12 and clang) takes the lanes as constants, hence one line per B.
template <int B>
SS_ALWAYS_INLINE void trade_blocks(const float16_vec& a, const float16_vec& b, float16_vec& lo, float16_vec& hi) {
  if constexpr (B == 8) {
    lo = __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
    hi = __builtin_shufflevector(a, b, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
  } else if constexpr (B == 4) {
    lo = __builtin_shufflevector(a, b, 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27);
    hi = __builtin_shufflevector(a, b, 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31);
  } else if constexpr (B == 2) {
    lo = __builtin_shufflevector(a, b, 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29);
    hi = __builtin_shufflevector(a, b, 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31);
  } else {
    static_assert(B == 1);
    lo = __builtin_shufflevector(a, b, 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30);
    hi = __builtin_shufflevector(a, b, 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31);
  }
}

template <int B>
SS_ALWAYS_INLINE void transpose_stage(float16_vec (&rows)[16]) {
  for (int r = 0; r < 16; ++r) {
    if (r & B) continue;
    const float16_vec a = rows[r], b = rows[r + B];
    trade_blocks<B>(a, b, rows[r], rows[r + B]);
  }
}

// transposed[d * 32 + j] = v[j * 16 + d] for the 16 vectors from `first` (zero past n).
SS_ALWAYS_INLINE void transpose_block(const float* __restrict v, int n, int first, float* __restrict transposed) {
  float16_vec rows[16];
  for (int r = 0; r < 16; ++r) {
    if (first + r < n) load16(rows[r], v + (first + r) * 16);
    else rows[r] = float16_vec{};
  }
  transpose_stage<8>(rows);
  transpose_stage<4>(rows);
  transpose_stage<2>(rows);
  transpose_stage<1>(rows);
  for (int d = 0; d < 16; ++d) std::memcpy(transposed + d * 32 + first, &rows[d], sizeof rows[d]);
}

// Rows of the Gram matrix are done four at a time: their accumulators are independent, so the
// FMAs overlap instead of each waiting on the one before it (16 in a chain per row was the
// kernel's bound), and each load of the transposed block serves four rows. Row i's i pairs are
// written as whole vectors at their place; what a vector writes beyond them is overwritten by
// the rows after it, so only a row whose vectors would pass the last pair is copied by the count.
SS_ALWAYS_INLINE void gram_pairs_dim16(const float* __restrict v, int n, float* __restrict pairs) {
  alignas(64) float transposed[16 * 32];
  transpose_block(v, n, 0, transposed);
  transpose_block(v, n, 16, transposed);
  const int total = n * (n - 1) / 2;
  // Stores row `row`'s pairs from its accumulators (hi only matters past 16 vectors).
  auto store_row = [&](int row, const float16_vec& lo, const float16_vec& hi) __attribute__((always_inline)) {
    if (row >= n) return;  // a row past n: computed on a repeated input, not stored
    float* out = pairs + row * (row - 1) / 2;
    const int width = row > 16 ? 32 : 16;
    if (row * (row - 1) / 2 + width <= total) {
      std::memcpy(out, &lo, sizeof lo);
      if (width == 32) std::memcpy(out + 16, &hi, sizeof hi);
    } else {
      alignas(64) float whole[32];
      std::memcpy(whole, &lo, sizeof lo);
      std::memcpy(whole + 16, &hi, sizeof hi);
      std::memcpy(out, whole, sizeof(float) * row);
    }
  };
  // Named accumulators, not an array: GCC keeps an array of vectors on the stack.
  for (int i = 1; i < n; i += 4) {
    const float* v0 = v + i * 16;
    const float* v1 = v + std::min(i + 1, n - 1) * 16;
    const float* v2 = v + std::min(i + 2, n - 1) * 16;
    const float* v3 = v + std::min(i + 3, n - 1) * 16;
    float16_vec lo0 = {}, lo1 = {}, lo2 = {}, lo3 = {}, hi0 = {}, hi1 = {}, hi2 = {}, hi3 = {};
    if (i + 3 > 16) {
      for (int d = 0; d < 16; ++d) {
        float16_vec tl, th;
        load16(tl, transposed + d * 32);
        load16(th, transposed + d * 32 + 16);
        lo0 += v0[d] * tl;
        hi0 += v0[d] * th;
        lo1 += v1[d] * tl;
        hi1 += v1[d] * th;
        lo2 += v2[d] * tl;
        hi2 += v2[d] * th;
        lo3 += v3[d] * tl;
        hi3 += v3[d] * th;
      }
    } else {
      for (int d = 0; d < 16; ++d) {
        float16_vec tl;
        load16(tl, transposed + d * 32);
        lo0 += v0[d] * tl;
        lo1 += v1[d] * tl;
        lo2 += v2[d] * tl;
        lo3 += v3[d] * tl;
      }
    }
    store_row(i, lo0, hi0);
    store_row(i + 1, lo1, hi1);
    store_row(i + 2, lo2, hi2);
    store_row(i + 3, lo3, hi3);
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

SS_ALWAYS_INLINE void store16(float* p, const float16_vec& v) { std::memcpy(p, &v, sizeof v); }

// The default model's case (dim 16) for float, as dv = G v with G the symmetric matrix of the
// pairs' gradients: four rows of dv at a time, each in a register over every j, each v_j loaded
// once for the four. (Pair by pair, each pair loaded and stored dv_j: a store a pair bounded the
// kernel.) Row i's coefficient for j < i is in row i's pairs, for j > i in row j's, where those of
// four consecutive rows lie side by side.
SS_ALWAYS_INLINE void interaction_backward_dim16(const float* __restrict v, const float* __restrict gp, int n,
                                                 float* __restrict dv) {
  auto tri = [](int i) { return i * (i - 1) / 2; };  // where row i's pairs start
  auto coef = [&](int i, int j) -> float { return i == j ? 0.0f : i > j ? gp[tri(i) + j] : gp[tri(j) + i]; };
  for (int i0 = 0; i0 < n; i0 += 4) {
    // Rows past n repeat row n - 1: computed on valid coefficients, not stored.
    const int r0 = i0, r1 = std::min(i0 + 1, n - 1), r2 = std::min(i0 + 2, n - 1), r3 = std::min(i0 + 3, n - 1);
    float16_vec a0 = {}, a1 = {}, a2 = {}, a3 = {};
    for (int j = 0; j < i0; ++j) {
      float16_vec vj;
      load16(vj, v + j * 16);
      a0 += gp[tri(r0) + j] * vj;
      a1 += gp[tri(r1) + j] * vj;
      a2 += gp[tri(r2) + j] * vj;
      a3 += gp[tri(r3) + j] * vj;
    }
    const int upper = std::min(i0 + 4, n);
    for (int j = i0; j < upper; ++j) {
      float16_vec vj;
      load16(vj, v + j * 16);
      a0 += coef(r0, j) * vj;
      a1 += coef(r1, j) * vj;
      a2 += coef(r2, j) * vj;
      a3 += coef(r3, j) * vj;
    }
    for (int j = upper; j < n; ++j) {
      float16_vec vj;
      load16(vj, v + j * 16);
      const float* c = gp + tri(j) + i0;
      a0 += c[0] * vj;
      a1 += c[1] * vj;
      a2 += c[2] * vj;
      a3 += c[3] * vj;
    }
    auto add_row = [&](int i, const float16_vec& a) __attribute__((always_inline)) {
      if (i >= n) return;
      float16_vec d;
      load16(d, dv + i * 16);
      d += a;
      store16(dv + i * 16, d);
    };
    add_row(i0, a0);
    add_row(i0 + 1, a1);
    add_row(i0 + 2, a2);
    add_row(i0 + 3, a3);
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
    if constexpr (std::is_same_v<T, float>) {
      if (dim == 16) {
        interaction_backward_dim16(v, g + dim, n, dv);
        continue;
      }
    }
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
