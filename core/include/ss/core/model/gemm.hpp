// Row-major GEMM: C = alpha * op(A) * op(B) + beta * C, with op(X) = X or X^T.
//
// float runs on oneDNN's JIT sgemm, which picks AVX-512, AVX2 or SSE4.1 kernels at run time
// (chosen by measurement, see bench/micro/gemm_bench.cpp and docs/performance.md). double runs on a plain
// reference loop: it exists for the finite-difference gradient checks, never for training.
#pragma once

#include <cstdint>

namespace ss::model {

struct gemm_shape {
  bool trans_a = false;
  bool trans_b = false;
  int m = 0;  // rows of op(A) and C
  int n = 0;  // columns of op(B) and C
  int k = 0;  // columns of op(A), rows of op(B)
};

void gemm(const gemm_shape& s, float alpha, const float* a, int lda, const float* b, int ldb,
          float beta, float* c, int ldc);
void gemm(const gemm_shape& s, double alpha, const double* a, int lda, const double* b, int ldb,
          double beta, double* c, int ldc);

// The ISA oneDNN dispatches to on this machine ("avx512_core", "avx2", ...), for reports.
const char* gemm_isa();

}  // namespace ss::model
