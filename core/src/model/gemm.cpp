#include "ss/core/model/gemm.hpp"

#include <dnnl.h>
#include <omp.h>

#include <cstdio>
#include <cstdlib>

namespace ss::model {
namespace {

// oneDNN parallelizes each call with OpenMP. shadowsync's parallelism is Hogwild worker
// threads, one GEMM stream each, so every calling thread pins its own OpenMP team to 1.
void pin_openmp_to_one_thread() {
  thread_local bool pinned = false;
  if (!pinned) {
    omp_set_num_threads(1);
    pinned = true;
  }
}

template <class T>
void scale(int m, int n, T beta, T* c, int ldc) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
}

}  // namespace

void gemm(const gemm_shape& s, float alpha, const float* a, int lda, const float* b, int ldb,
          float beta, float* c, int ldc) {
  if (s.m == 0 || s.n == 0) return;
  if (s.k == 0) {
    scale(s.m, s.n, beta, c, ldc);
    return;
  }
  pin_openmp_to_one_thread();
  dnnl_status_t st = dnnl_sgemm(s.trans_a ? 'T' : 'N', s.trans_b ? 'T' : 'N', s.m, s.n, s.k, alpha,
                                a, lda, b, ldb, beta, c, ldc);
  if (st != dnnl_success) {
    // Only reachable through a shape bug in our own code: the arguments are ours, not input.
    std::fprintf(stderr, "shadowsync: dnnl_sgemm failed (status %d) m=%d n=%d k=%d\n",
                 static_cast<int>(st), s.m, s.n, s.k);
    std::abort();
  }
}

void gemm(const gemm_shape& s, double alpha, const double* a, int lda, const double* b, int ldb,
          double beta, double* c, int ldc) {
  scale(s.m, s.n, beta, c, ldc);
  for (int i = 0; i < s.m; ++i) {
    for (int p = 0; p < s.k; ++p) {
      double av = s.trans_a ? a[p * lda + i] : a[i * lda + p];
      if (av == 0.0) continue;
      av *= alpha;
      for (int j = 0; j < s.n; ++j) c[i * ldc + j] += av * (s.trans_b ? b[j * ldb + p] : b[p * ldb + j]);
    }
  }
}

const char* gemm_isa() {
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    default: return "other";
  }
}

}  // namespace ss::model
