// Measures this machine's single-core FP32 FMA peak, so benchmarks can say how close to it they
// run. The kernel is compiled for AVX-512 and AVX2 and picked at run time.
#pragma once

#include <string>

namespace ss::bench {

struct peak_result {
  double gflops = 0;  // FP32, one core
  std::string isa;    // "avx512", "avx2" or "sse2"
};

peak_result measure_peak_fp32(double seconds = 0.3);

}  // namespace ss::bench
