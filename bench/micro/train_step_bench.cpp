// Forward + backward throughput of the default DLRM at batch 128, per core: the full training
// step of `shadowsync train` (distinct rows, embedding fetch, forward, backward with the in-place
// dense update, embedding update, and the progressive evaluation window the step's predictions go
// to) on synthetic Criteo-shaped batches, with the time split by phase and set against this
// core's measured FP32 FMA peak.
//
//   train_step_bench [--seconds S] [--batch B] [--threads T] [--optimizer sgd|adagrad|adam]
//                    [--sparse-optimizer sgd|rowwise-adagrad] [--dense-update per-layer|one-pass]
//
// --optimizer is the dense one (default sgd, as --sparse-optimizer; a job's defaults are adam and
// rowwise-adagrad). --dense-update: a stateful optimizer's update per layer inside the backward
// pass (the default) or in one pass after it (bench/micro/optimizer_cost.sh compares them).
//
// Prints a human summary and one JSON line.
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "peak_flops.hpp"
#include "ss/core/embedding/local_embeddings.hpp"
#include "ss/core/metrics/progressive.hpp"
#include "ss/core/model/gemm.hpp"
#include "ss/core/random.hpp"
#include "ss/core/train/train_step.hpp"

using namespace ss;
using clock_type = std::chrono::steady_clock;

namespace {

// Batches with Criteo-like id statistics: table t has a vocabulary between 10 and 1M and
// skewed (squared-uniform) draws, so distinct-row counts and table sizes look like the real thing.
std::vector<data::example_batch> synthetic_batches(int count, int size, std::uint64_t seed) {
  rng gen(seed);
  std::vector<data::example_batch> out(count);
  for (auto& b : out) {
    b.reset(13, 26);
    for (int e = 0; e < size; ++e) {
      b.begin_example(gen.bernoulli(0.25) ? 1.0f : 0.0f);
      for (int j = 0; j < 13; ++j) b.add_dense(static_cast<float>(std::log1p(gen.uniform() * 100)));
      for (int t = 0; t < 26; ++t) {
        const double vocab = std::pow(10.0, 1.0 + 5.0 * t / 25.0);
        const double u = gen.uniform();
        b.add_id(mix64(static_cast<std::uint64_t>(u * u * vocab) + 1000003ULL * t));
        b.end_feature();
      }
    }
  }
  return out;
}

double flops_per_example(const model::dlrm_config& c) {
  const model::dense_layout layout(c);
  double macs = 0;
  for (const auto& l : layout.bottom()) macs += 2.0 * l.in * l.out;  // forward + weight grad
  for (std::size_t i = 1; i < layout.bottom().size(); ++i)
    macs += static_cast<double>(layout.bottom()[i].in) * layout.bottom()[i].out;  // input grad
  for (const auto& l : layout.top()) macs += 3.0 * l.in * l.out;
  macs += 3.0 * c.interaction_pairs() * c.embedding_dim;  // dots forward, two axpys backward
  return 2.0 * macs;
}

std::string cpu_model() {
  FILE* f = std::fopen("/proc/cpuinfo", "r");
  if (f == nullptr) return "unknown";
  char line[512];
  std::string model = "unknown";
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, "model name", 10) == 0) {
      const char* colon = std::strchr(line, ':');
      if (colon != nullptr) model = std::string(colon + 2, std::strcspn(colon + 2, "\n"));
      break;
    }
  }
  std::fclose(f);
  return model;
}

struct phase_times {
  double rows = 0, fetch = 0, compute = 0, apply = 0, progressive = 0;
};

}  // namespace

int main(int argc, char** argv) {
  double seconds = 5;
  int batch_size = 128;
  int threads = 1;
  std::string optimizer = "sgd";
  std::string dense_update = "per-layer";
  std::string sparse = "sgd";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--seconds") seconds = std::atof(value().c_str());
    else if (a == "--batch") batch_size = std::atoi(value().c_str());
    else if (a == "--threads") threads = std::atoi(value().c_str());
    else if (a == "--optimizer") optimizer = value();
    else if (a == "--dense-update") dense_update = value();
    else if (a == "--sparse-optimizer") sparse = value();
    else {
      std::fprintf(stderr, "usage: train_step_bench [--seconds S] [--batch B] [--threads T] [--optimizer sgd|adagrad|adam] "
                           "[--sparse-optimizer sgd|rowwise-adagrad] [--dense-update per-layer|one-pass]\n");
      return 2;
    }
  }
  if (dense_update != "per-layer" && dense_update != "one-pass") {
    std::fprintf(stderr, "train_step_bench: --dense-update is per-layer or one-pass, not '%s'\n", dense_update.c_str());
    return 2;
  }
  if (seconds <= 0 || batch_size <= 0 || threads <= 0) {
    std::fprintf(stderr, "train_step_bench: --seconds, --batch and --threads must be positive\n");
    return 2;
  }

  model::dlrm_config config;
  optim::dense_optimizer dense_opt;
  auto kind = optim::parse_dense_kind(optimizer);
  if (!kind.is_ok()) {
    std::fprintf(stderr, "train_step_bench: %s\n", kind.error().message().c_str());
    return 2;
  }
  dense_opt.kind = *kind;
  dense_opt.epsilon = optim::dense_optimizer::default_epsilon(*kind);
  dense_opt.learning_rate = *kind == optim::dense_kind::adam ? 0.001f : dense_opt.learning_rate;
  dense_opt.per_layer = dense_update == "per-layer";
  train::dense_model model(config, dense_opt, 1);
  embedding::embedding_options eo;
  auto sparse_kind = optim::parse_sparse_kind(sparse);
  if (!sparse_kind.is_ok()) {
    std::fprintf(stderr, "train_step_bench: %s\n", sparse_kind.error().message().c_str());
    return 2;
  }
  eo.optimizer.kind = *sparse_kind;
  embedding::local_embeddings store(eo);
  const auto batches = synthetic_batches(64, batch_size, 7);

  // Warm-up: the tables fill, oneDNN JITs its kernels.
  {
    train::worker_scratch scratch(config, batch_size);
    for (int i = 0; i < 64; ++i) {
      train::prepare_rows(config, batches[i], {}, scratch);
      (void)store.fetch(scratch.rows);
      train::train_batch(model, batches[i], scratch);
      store.apply(scratch.rows);
    }
  }

  std::atomic<long> steps{0};
  std::vector<phase_times> phases(threads);
  std::vector<std::thread> workers;
  const auto start = clock_type::now();
  const auto stop_at = start + std::chrono::duration<double>(seconds);
  for (int w = 0; w < threads; ++w) {
    workers.emplace_back([&, w] {
      train::worker_scratch scratch(config, batch_size);
      metrics::progressive_window window;  // a trainer's is shared under its progress lock
      phase_times& pt = phases[w];
      for (long i = w; clock_type::now() < stop_at; i += threads) {
        const auto& b = batches[i % batches.size()];
        auto t0 = clock_type::now();
        train::prepare_rows(config, b, {}, scratch);
        auto t1 = clock_type::now();
        (void)store.fetch(scratch.rows);
        auto t2 = clock_type::now();
        train::train_batch(model, b, scratch);
        auto t3 = clock_type::now();
        store.apply(scratch.rows);
        auto t4 = clock_type::now();
        window.add(std::chrono::duration<double>(t4 - start).count(), scratch.ws.probs.data(), b.labels.data(),
                   b.size());
        auto t5 = clock_type::now();
        pt.progressive += std::chrono::duration<double>(t5 - t4).count();
        pt.rows += std::chrono::duration<double>(t1 - t0).count();
        pt.fetch += std::chrono::duration<double>(t2 - t1).count();
        pt.compute += std::chrono::duration<double>(t3 - t2).count();
        pt.apply += std::chrono::duration<double>(t4 - t3).count();
        steps.fetch_add(1);
      }
    });
  }
  for (auto& t : workers) t.join();
  const double elapsed = std::chrono::duration<double>(clock_type::now() - start).count();
  const double examples = static_cast<double>(steps.load()) * batch_size;
  const double eps = examples / elapsed;
  phase_times total;
  for (const auto& p : phases) {
    total.rows += p.rows;
    total.fetch += p.fetch;
    total.compute += p.compute;
    total.apply += p.apply;
    total.progressive += p.progressive;
  }
  const double busy = total.rows + total.fetch + total.compute + total.apply + total.progressive;

  const auto peak = bench::measure_peak_fp32();
  const double fpe = flops_per_example(config);
  const double gflops_per_core = eps / threads * fpe / 1e9;

  std::printf("shadowsync train-step benchmark\n");
  std::printf("  model      %s, batch %d, dense optimizer %s (%s), sparse optimizer %s\n", config.describe().c_str(),
              batch_size, optimizer.c_str(), dense_opt.fused() ? "fused into the backward pass" : dense_update.c_str(),
              sparse.c_str());
  std::printf("  machine    %s, %u hardware threads; oneDNN ISA %s\n", cpu_model().c_str(),
              std::thread::hardware_concurrency(), model::gemm_isa());
  std::printf("  peak       %.1f GFLOP/s FP32 per core (measured FMA loop, %s)\n", peak.gflops, peak.isa.c_str());
  std::printf("  throughput %.0f examples/s with %d thread(s) = %.0f examples/s per thread\n", eps, threads, eps / threads);
  std::printf("  compute    %.2f MFLOP per example -> %.1f GFLOP/s per thread = %.0f%% of peak\n", fpe / 1e6,
              gflops_per_core, peak.gflops > 0 ? 100.0 * gflops_per_core / peak.gflops : 0.0);
  std::printf("  time split distinct-rows %.1f%%, fetch %.1f%%, forward+backward+dense update %.1f%%, embedding update %.1f%%, "
              "progressive evaluation %.2f%% (%.0f ns per example)\n",
              100 * total.rows / busy, 100 * total.fetch / busy, 100 * total.compute / busy, 100 * total.apply / busy,
              100 * total.progressive / busy, 1e9 * total.progressive / examples);
  std::printf("{\"bench\":\"train_step\",\"batch\":%d,\"threads\":%d,\"optimizer\":\"%s\",\"dense_update\":\"%s\",\"sparse_optimizer\":\"%s\","
              "\"examples_per_sec\":%.1f,"
              "\"examples_per_sec_per_thread\":%.1f,\"mflop_per_example\":%.4f,\"gflops_per_thread\":%.2f,"
              "\"peak_gflops\":%.2f,\"fraction_of_peak\":%.4f,\"gemm_isa\":\"%s\",\"split\":{\"rows\":%.4f,\"fetch\":%.4f,"
              "\"compute\":%.4f,\"apply\":%.4f,\"progressive\":%.5f}}\n",
              batch_size, threads, optimizer.c_str(), dense_opt.fused() ? "fused" : dense_update.c_str(), sparse.c_str(), eps,
              eps / threads, fpe / 1e6, gflops_per_core, peak.gflops,
              peak.gflops > 0 ? gflops_per_core / peak.gflops : 0.0, model::gemm_isa(), total.rows / busy,
              total.fetch / busy, total.compute / busy, total.apply / busy, total.progressive / busy);
  return 0;
}
