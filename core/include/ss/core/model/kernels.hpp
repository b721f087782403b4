// The non-GEMM kernels of the DLRM forward and backward passes, for float (training; compiled
// for AVX-512, AVX2 and baseline x86-64 and picked at run time) and double (gradient checks).
// Matrices are row-major with an explicit leading dimension `ld` (elements between rows).
#pragma once

namespace ss::model {

// y[r][c] = act(y[r][c] + bias[c]), act = ReLU or identity.
void bias_activation(float* y, int ld, int rows, int cols, const float* bias, bool relu);
void bias_activation(double* y, int ld, int rows, int cols, const double* bias, bool relu);

// dy[r][c] = 0 where y[r][c] <= 0 (ReLU backward, with y the ReLU output).
void relu_backward(float* dy, int ld_dy, const float* y, int ld_y, int rows, int cols);
void relu_backward(double* dy, int ld_dy, const double* y, int ld_y, int rows, int cols);

// out[c] = beta * out[c] + scale * sum_r dz[r][c]   (bias gradients).
void column_sum(const float* dz, int ld, int rows, int cols, float scale, float beta, float* out);
void column_sum(const double* dz, int ld, int rows, int cols, double scale, double beta, double* out);

// Dot interaction. `inter` holds, per example, n vectors of `dim` values (n * dim contiguous:
// vector 0 is the bottom MLP output, vectors 1..n-1 the pooled embeddings). Writes, per example,
// out[0:dim] = vector 0 followed by the n(n-1)/2 dot products <v_i, v_j>, i > j, in the order
// (1,0), (2,0), (2,1), (3,0), ... (the DLRM reference order).
void interaction_forward(const float* inter, int batch, int n, int dim, float* out, int ld_out);
void interaction_forward(const double* inter, int batch, int n, int dim, double* out, int ld_out);

// Backward of interaction_forward: overwrites d_inter (batch * n * dim) with dL/d(inter) given
// dL/d(out) in d_out.
void interaction_backward(const float* inter, const float* d_out, int ld_dout, int batch, int n,
                          int dim, float* d_inter);
void interaction_backward(const double* inter, const double* d_out, int ld_dout, int batch, int n,
                          int dim, double* d_inter);

}  // namespace ss::model
