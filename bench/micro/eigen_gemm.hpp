// Eigen's GEMM, compiled for AVX2+FMA in its own translation unit (Eigen picks its kernels at
// compile time); only called when the CPU has AVX2.
#pragma once

namespace ss::bench {
bool eigen_available();
void eigen_gemm(bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                float beta, float* c, int ldc);
}  // namespace ss::bench
