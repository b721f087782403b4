#include "xsmm_gemm.hpp"

#if SS_HAVE_XSMM
#include <libxsmm.h>
#endif

namespace ss::bench {

#if SS_HAVE_XSMM
bool xsmm_available() { return true; }

bool xsmm_gemm(bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float beta,
               float* c, int ldc) {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
  const int flags = (tb ? LIBXSMM_GEMM_FLAG_TRANS_A : 0) | (ta ? LIBXSMM_GEMM_FLAG_TRANS_B : 0);
  const float alpha = 1.0f;
  libxsmm_smmfunction kernel = libxsmm_smmdispatch(n, m, k, &ldb, &lda, &ldc, &alpha, &beta, &flags, nullptr);
  if (kernel == nullptr) return false;
  kernel(b, a, c);
  return true;
}
#else
bool xsmm_available() { return false; }
bool xsmm_gemm(bool, bool, int, int, int, const float*, int, const float*, int, float, float*, int) { return false; }
#endif

}  // namespace ss::bench
