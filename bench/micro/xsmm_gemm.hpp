// libxsmm's JIT small-matrix GEMM (Debian ships it as static libraries), for gemm_bench.
#pragma once

namespace ss::bench {
bool xsmm_available();
// false when libxsmm will not generate a kernel for this shape/transpose.
bool xsmm_gemm(bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float beta,
               float* c, int ldc);
}  // namespace ss::bench
