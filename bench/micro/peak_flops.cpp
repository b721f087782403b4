#include "peak_flops.hpp"

#include <immintrin.h>

#include <chrono>

namespace ss::bench {
namespace {

// 12 independent accumulators in registers hide the FMA latency (4 cycles x 2 pipes); written
// out by hand because at -O2 an accumulator array would live in memory. The result is kept live
// so the compiler cannot drop the loop.
#define SS_FMA12(fma, a, x, y)                                                            \
  a##0 = fma(a##0, x, y); a##1 = fma(a##1, x, y); a##2 = fma(a##2, x, y);                \
  a##3 = fma(a##3, x, y); a##4 = fma(a##4, x, y); a##5 = fma(a##5, x, y);                \
  a##6 = fma(a##6, x, y); a##7 = fma(a##7, x, y); a##8 = fma(a##8, x, y);                \
  a##9 = fma(a##9, x, y); a##10 = fma(a##10, x, y); a##11 = fma(a##11, x, y)

__attribute__((target("avx512f"))) double fma_avx512(long iters) {
  __m512 a0 = _mm512_set1_ps(0.0f), a1 = _mm512_set1_ps(0.1f), a2 = _mm512_set1_ps(0.2f),
         a3 = _mm512_set1_ps(0.3f), a4 = _mm512_set1_ps(0.4f), a5 = _mm512_set1_ps(0.5f),
         a6 = _mm512_set1_ps(0.6f), a7 = _mm512_set1_ps(0.7f), a8 = _mm512_set1_ps(0.8f),
         a9 = _mm512_set1_ps(0.9f), a10 = _mm512_set1_ps(1.0f), a11 = _mm512_set1_ps(1.1f);
  const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
  for (long it = 0; it < iters; ++it) {
    SS_FMA12(_mm512_fmadd_ps, a, x, y);
  }
  __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                           _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
  s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
  float out[16];
  _mm512_storeu_ps(out, s);
  return out[0];
}

__attribute__((target("avx2,fma"))) double fma_avx2(long iters) {
  __m256 a0 = _mm256_set1_ps(0.0f), a1 = _mm256_set1_ps(0.1f), a2 = _mm256_set1_ps(0.2f),
         a3 = _mm256_set1_ps(0.3f), a4 = _mm256_set1_ps(0.4f), a5 = _mm256_set1_ps(0.5f),
         a6 = _mm256_set1_ps(0.6f), a7 = _mm256_set1_ps(0.7f), a8 = _mm256_set1_ps(0.8f),
         a9 = _mm256_set1_ps(0.9f), a10 = _mm256_set1_ps(1.0f), a11 = _mm256_set1_ps(1.1f);
  const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
  for (long it = 0; it < iters; ++it) {
    SS_FMA12(_mm256_fmadd_ps, a, x, y);
  }
  __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                           _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
  s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0];
}

}  // namespace

peak_result measure_peak_fp32(double seconds) {
  peak_result r;
  int lanes = 4;
  double (*kernel)(long) = nullptr;
  if (__builtin_cpu_supports("avx512f")) {
    kernel = fma_avx512;
    lanes = 16;
    r.isa = "avx512";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    kernel = fma_avx2;
    lanes = 8;
    r.isa = "avx2";
  } else {
    r.isa = "sse2";
    return r;  // no FMA: not a target we measure
  }
  volatile double sink = kernel(100000);  // warm up clocks
  double best = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    const long iters = 2000000;
    auto t0 = std::chrono::steady_clock::now();
    sink = sink + kernel(iters);
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, static_cast<double>(iters) * 12 * lanes * 2 / dt / 1e9);
  }
  r.gflops = best;
  return r;
}

}  // namespace ss::bench
