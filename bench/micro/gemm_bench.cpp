// Which matrix-multiply library for the DLRM? Runs the 21 GEMMs of one forward+backward pass of
// the default model at batch 128 (7 layers x {Y = X W^T, dX = dY W, dW = dY^T X}) on one core
// with every candidate Debian packages, and prints GFLOP/s and the ratio to oneDNN (our choice).
// OpenBLAS and BLIS (both export cblas_sgemm) are loaded with dlopen, so one binary compares
// them all and a missing one is reported rather than failing the build; Eigen and libxsmm are
// compiled in when present (scripts/setup.sh --bench installs them all).
//
//   gemm_bench [--seconds S]
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "eigen_gemm.hpp"
#include "xsmm_gemm.hpp"
#include "peak_flops.hpp"
#include "ss/core/model/gemm.hpp"
#include "ss/core/random.hpp"

namespace {

struct shape {
  int batch, in, out;
};
const std::vector<shape> layers = {{128, 13, 512}, {128, 512, 256}, {128, 256, 64}, {128, 64, 16},
                                   {128, 367, 512}, {128, 512, 256}, {128, 256, 1}};

// Row-major C = op(A) op(B) (+ beta C).
using gemm_fn = std::function<bool(bool ta, bool tb, int m, int n, int k, const float* a, int lda,
                                   const float* b, int ldb, float beta, float* c, int ldc)>;

struct layer_buffers {
  std::vector<float> x, w, y, dy, dx, dw;
};

double run(const gemm_fn& gemm, double seconds, bool& supported) {
  ss::rng gen(1);
  std::vector<layer_buffers> bufs;
  for (const auto& s : layers) {
    layer_buffers b;
    b.x.resize(s.batch * s.in);
    b.w.resize(s.out * s.in);
    b.y.resize(s.batch * s.out);
    b.dy.resize(s.batch * s.out);
    b.dx.resize(s.batch * s.in);
    b.dw.resize(s.out * s.in);
    for (auto* v : {&b.x, &b.w, &b.dy})
      for (auto& f : *v) f = gen.uniform_float(-1, 1);
    bufs.push_back(std::move(b));
  }
  supported = true;
  auto pass = [&] {
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const auto& s = layers[i];
      auto& b = bufs[i];
      supported &= gemm(false, true, s.batch, s.out, s.in, b.x.data(), s.in, b.w.data(), s.in, 0, b.y.data(), s.out);
      supported &= gemm(false, false, s.batch, s.in, s.out, b.dy.data(), s.out, b.w.data(), s.in, 0, b.dx.data(), s.in);
      supported &= gemm(true, false, s.out, s.in, s.batch, b.dy.data(), s.out, b.x.data(), s.in, 0, b.dw.data(), s.in);
    }
  };
  for (int i = 0; i < 20; ++i) pass();
  double flops = 0;
  for (const auto& s : layers) flops += 3.0 * 2 * s.batch * s.in * s.out;
  double best = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i) pass();
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 20;
    best = std::max(best, flops / dt / 1e9);
  }
  return best;
}

using cblas_sgemm_t = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float,
                               float*, int);

gemm_fn cblas_from(const char* library) {
  void* h = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) return nullptr;
  auto f = reinterpret_cast<cblas_sgemm_t>(dlsym(h, "cblas_sgemm"));
  if (f == nullptr) return nullptr;
  return [f](bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float beta,
             float* c, int ldc) {
    f(101, ta ? 112 : 111, tb ? 112 : 111, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);  // CblasRowMajor
    return true;
  };
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 1.0;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--seconds" && i + 1 < argc) seconds = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: gemm_bench [--seconds S]\n");
      return 2;
    }
  }
  setenv("OMP_NUM_THREADS", "1", 1);
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  setenv("BLIS_NUM_THREADS", "1", 1);

  struct candidate {
    std::string name;
    gemm_fn fn;
  };
  std::vector<candidate> candidates;
  candidates.push_back({"oneDNN 2.6 (dnnl_sgemm, JIT)", [](bool ta, bool tb, int m, int n, int k, const float* a, int lda,
                                                            const float* b, int ldb, float beta, float* c, int ldc) {
                          ss::model::gemm({ta, tb, m, n, k}, 1.0f, a, lda, b, ldb, beta, c, ldc);
                          return true;
                        }});
  candidates.push_back({"OpenBLAS 0.3 (pthread, auto core)", cblas_from("libopenblas.so.0")});
  candidates.push_back({"BLIS 0.9", cblas_from("libblis.so.4")});
  candidates.push_back({"libxsmm 1.17 (JIT)", ss::bench::xsmm_available() ? gemm_fn(ss::bench::xsmm_gemm) : nullptr});
  if (ss::bench::eigen_available())
    candidates.push_back({"Eigen 3.4 (AVX2+FMA build)", [](bool ta, bool tb, int m, int n, int k, const float* a,
                                                           int lda, const float* b, int ldb, float beta, float* c,
                                                           int ldc) {
                            ss::bench::eigen_gemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
                            return true;
                          }});

  const auto peak = ss::bench::measure_peak_fp32();
  std::printf("GEMMs of one DLRM forward+backward pass (default model, batch 128), one core\n");
  std::printf("measured FP32 FMA peak: %.1f GFLOP/s (%s)\n\n", peak.gflops, peak.isa.c_str());
  std::printf("%-36s %10s %10s %10s\n", "library", "GFLOP/s", "vs oneDNN", "of peak");
  double base = 0;
  std::string json = "{\"bench\":\"gemm\",\"peak_gflops\":" + std::to_string(peak.gflops) + ",\"libraries\":{";
  bool first = true;
  for (const auto& c : candidates) {
    if (!c.fn) {
      std::printf("%-36s %10s\n", c.name.c_str(), "not installed");
      continue;
    }
    bool supported = true;
    const double g = run(c.fn, seconds, supported);
    if (!supported) {
      // libxsmm generates no kernel for Y = X W^T (a transposed A in its column-major terms).
      std::printf("%-36s %10s\n", c.name.c_str(), "refuses some of the shapes");
      continue;
    }
    if (base == 0) base = g;
    std::printf("%-36s %10.1f %9.2fx %9.0f%%\n", c.name.c_str(), g, g / base, 100 * g / peak.gflops);
    json += std::string(first ? "" : ",") + "\"" + c.name + "\":" + std::to_string(g);
    first = false;
  }
  std::printf("%s}}\n", json.c_str());
  return 0;
}
