#include "eigen_gemm.hpp"

#if SS_HAVE_EIGEN
#include <Eigen/Dense>
#endif

namespace ss::bench {

#if SS_HAVE_EIGEN
bool eigen_available() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

void eigen_gemm(bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                float beta, float* c, int ldc) {
  using row_major = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using stride = Eigen::OuterStride<>;
  Eigen::Map<const row_major, 0, stride> am(a, ta ? k : m, ta ? m : k, stride(lda));
  Eigen::Map<const row_major, 0, stride> bm(b, tb ? n : k, tb ? k : n, stride(ldb));
  Eigen::Map<row_major, 0, stride> cm(c, m, n, stride(ldc));
  if (beta == 0.0f) cm.setZero();
  else cm *= beta;
  if (ta && tb) cm.noalias() += am.transpose() * bm.transpose();
  else if (ta) cm.noalias() += am.transpose() * bm;
  else if (tb) cm.noalias() += am * bm.transpose();
  else cm.noalias() += am * bm;
}
#else
bool eigen_available() { return false; }
void eigen_gemm(bool, bool, int, int, int, const float*, int, const float*, int, float, float*, int) {}
#endif

}  // namespace ss::bench
