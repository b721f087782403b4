// Embedding rows beyond memory: training throughput against cache hit rate on a Zipf id stream.
//
// One shard store over real RocksDB, fed like a trainer feeds a shard: per batch of 128 examples x
// 26 tables (ids drawn from a Zipf law per table), a lookup of its distinct rows, a step of
// simulated compute (--compute-us, spinning: a trainer's forward and backward pass), and a push
// of their gradients; a flusher thread writes changed rows back every --flush-ms and, as the
// shard's persister does, writes back and evicts the rows eviction takes next once RAM is past the
// budget. Configurations, each on a fresh store
// and the same batches:
//   ram         every row in RAM (the baseline; storage still written, as a persisted shard's)
//   budget      --budget-pct of the rows the baseline ended with, in RAM; the rest in RocksDB
//   +prefetch   the same, with a prefetch thread warming batch k + --ahead while batch k trains
// and, with --read-delay-us, the budget runs again over storage whose every batched read takes that
// much longer (SIMULATED: a disk slower than this machine's page cache).
// Prints a table (examples/s against the baseline, hit rate, peak rows in RAM against the budget)
// and one JSON line.
//
// With --same-mb-precision bf16|fp16, one more budget run keeps rows at that precision in the
// bytes the FP32 budget takes (row_bytes_in_memory: more rows in the same memory).
//
//   tiered_bench [--batches N] [--vocab V] [--zipf S] [--budget-pct P] [--compute-us C]
//                [--ahead A] [--flush-ms F] [--read-delay-us D] [--same-mb-precision P] [--dir DIR]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "ss/core/embedding/forwarding_rows.hpp"
#include "ss/core/embedding/shard_store.hpp"
#include "ss/core/json.hpp"
#include "ss/core/random.hpp"
#include "ss/storage/rocksdb_rows.hpp"

using namespace ss;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr std::uint32_t tables = 26, examples_per_batch = 128, dim = 16;

struct batch {
  std::vector<std::uint32_t> tables;
  std::vector<std::uint64_t> ids;  // distinct per table
};

// Zipf(s) ranks over [0, vocab) by inversion of the (continuous) cumulative weight: cheap, and
// close enough to the discrete law for a cache's point of view.
class zipf {
 public:
  zipf(double s, std::uint64_t vocab) : s_(s), vocab_(static_cast<double>(vocab)) {
    total_ = h(vocab_ + 0.5) - h(0.5);
  }
  std::uint64_t draw(rng& g) const {
    const double u = g.uniform() * total_ + h(0.5);
    const double x = std::pow(u * (1.0 - s_), 1.0 / (1.0 - s_)) - 0.5;
    return std::min(static_cast<std::uint64_t>(std::max(0.0, x)), static_cast<std::uint64_t>(vocab_) - 1);
  }

 private:
  double h(double x) const { return std::pow(x, 1.0 - s_) / (1.0 - s_); }
  double s_, vocab_, total_;
};

std::vector<batch> make_batches(std::size_t n, std::uint64_t vocab, double s) {
  rng g(7);
  zipf law(s, vocab);
  std::vector<batch> out(n);
  std::vector<std::uint64_t> ids;
  for (auto& b : out) {
    for (std::uint32_t t = 0; t < tables; ++t) {
      ids.clear();
      for (std::uint32_t e = 0; e < examples_per_batch; ++e) ids.push_back(mix64(law.draw(g) * 31 + t));
      std::sort(ids.begin(), ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
      for (auto id : ids) {
        b.tables.push_back(t);
        b.ids.push_back(id);
      }
    }
  }
  return out;
}

// Storage whose batched reads that find rows take `delay` longer (SIMULATED slow disk); everything
// else as is.
class slow_reads final : public embedding::forwarding_rows {
 public:
  slow_reads(std::unique_ptr<embedding::durable_rows> inner, std::chrono::microseconds delay)
      : forwarding_rows(std::move(inner)), delay_(delay) {}
  status read(const std::uint32_t* t, const std::uint64_t* i, std::size_t n, float* r,
              std::uint8_t* found) const override {
    // Only a read that finds a row waits: absent keys are answered by RocksDB's bloom filters
    // without touching the disk.
    auto st = forwarding_rows::read(t, i, n, r, found);
    if (delay_.count() > 0 && std::any_of(found, found + n, [](std::uint8_t f) { return f != 0; }))
      std::this_thread::sleep_for(delay_);
    return st;
  }

 private:
  std::chrono::microseconds delay_;
};

struct run_result {
  std::string name;
  double examples_per_sec = 0, hit_rate = 1;
  std::uint64_t rows = 0, budget_rows = 0, peak_rows = 0, warmed = 0, storage_reads = 0;
  std::uint64_t misses = 0, loaded = 0, warm_skipped = 0;
  double lookup_ms = 0, push_ms = 0;  // per batch, in the training thread
};

struct settings {
  std::size_t batches = 3000;
  std::uint64_t vocab = 200000;
  double zipf_s = 1.05;
  double budget_pct = 10;
  // Also a budget run at this precision with the FP32 budget's bytes (fp32: none).
  embedding::row_precision same_mb_precision = embedding::row_precision::fp32;
  int compute_us = 2000;
  int ahead = 4;
  int flush_ms = 1000;
  int read_delay_us = 0;
  std::string dir;
};

void spin(std::chrono::microseconds d) {
  const auto until = clock_type::now() + d;
  while (clock_type::now() < until) {
  }
}

run_result run(const std::string& name, const settings& s, const std::vector<batch>& batches,
               std::uint64_t budget_rows, bool prefetch, int read_delay_us,
               embedding::row_precision precision = embedding::row_precision::fp32) {
  const std::string dir = s.dir + "/" + name;
  std::filesystem::remove_all(dir);
  embedding::shard_store_options o;
  o.dim = dim;
  o.precision = precision;
  o.optimizer.kind = optim::sparse_kind::rowwise_adagrad;
  const std::uint32_t row_floats = embedding::shard_row_floats(o);
  auto opened = storage::rocksdb_rows::open(dir, row_floats, storage::rocksdb_rows_options{});
  if (!opened.is_ok()) {
    std::fprintf(stderr, "tiered_bench: %s\n", opened.error().message().c_str());
    std::exit(1);
  }
  auto storage = std::make_shared<slow_reads>(std::move(*opened), std::chrono::microseconds(read_delay_us));
  o.cold = storage;
  o.max_rows_in_memory = budget_rows;
  embedding::shard_store store(o);

  std::atomic<bool> done{false};
  std::atomic<std::size_t> training{0};  // the batch the trainer is at
  std::thread flusher([&] {
    std::vector<std::uint32_t> tabs;
    const embedding::shard_store::dirty_sink sink = [&](std::uint32_t t, const std::uint64_t* ids, const float* rows,
                                                        std::size_t n) {
      tabs.assign(n, t);
      return storage->write(tabs.data(), ids, rows, n);
    };
    const embedding::shard_store::erase_sink erase = [&](std::uint32_t t, const std::uint64_t* ids, std::size_t n) {
      tabs.assign(n, t);
      return storage->erase(tabs.data(), ids, n);
    };
    auto flush = [&] {
      (void)store.take_dirty(sink, erase);
      store.shrink_to_budget();
    };
    auto last = clock_type::now();
    while (!done.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (clock_type::now() - last >= std::chrono::milliseconds(s.flush_ms)) {
        flush();
        last = clock_type::now();
      } else if (store.under_pressure()) {
        (void)store.write_back(sink);
      }
    }
    flush();
  });
  std::thread prefetcher;
  if (prefetch) {
    prefetcher = std::thread([&] {
      std::size_t next = 0;
      while (!done.load()) {
        const std::size_t want = training.load() + static_cast<std::size_t>(s.ahead);
        if (next < training.load() + 1) next = training.load() + 1;  // fell behind: skip to what is still ahead
        if (next > want || next >= batches.size()) {
          std::this_thread::sleep_for(std::chrono::microseconds(50));
          continue;
        }
        const auto& b = batches[next++];
        (void)store.warm(b.tables.data(), b.ids.data(), b.ids.size());
      }
    });
  }
  std::vector<float> values, grads;
  double lookup_s = 0, push_s = 0;
  const auto start = clock_type::now();
  for (std::size_t k = 0; k < batches.size(); ++k) {
    training.store(k);
    const auto& b = batches[k];
    values.resize(b.ids.size() * dim);
    grads.assign(b.ids.size() * dim, 0.001f);
    const auto t0 = clock_type::now();
    if (auto st = store.lookup(b.tables.data(), b.ids.data(), b.ids.size(), true, values.data()); !st.is_ok()) {
      std::fprintf(stderr, "tiered_bench: lookup: %s\n", st.message().c_str());
      std::exit(1);
    }
    const auto t1 = clock_type::now();
    spin(std::chrono::microseconds(s.compute_us));
    const auto t2 = clock_type::now();
    if (auto st = store.push(b.tables.data(), b.ids.data(), b.ids.size(), grads.data()); !st.is_ok()) {
      std::fprintf(stderr, "tiered_bench: push: %s\n", st.message().c_str());
      std::exit(1);
    }
    lookup_s += std::chrono::duration<double>(t1 - t0).count();
    push_s += std::chrono::duration<double>(clock_type::now() - t2).count();
  }
  const double seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  done.store(true);
  if (prefetcher.joinable()) prefetcher.join();
  flusher.join();
  const auto st = store.stats();
  run_result r;
  r.name = name;
  r.examples_per_sec = static_cast<double>(batches.size() * examples_per_batch) / seconds;
  r.hit_rate = st.hit_rate();
  r.rows = budget_rows > 0 ? st.rows_stored : st.rows;
  r.budget_rows = budget_rows;
  r.peak_rows = budget_rows > 0 ? st.peak_rows_in_memory : st.rows;
  r.warmed = st.warmed;
  r.misses = st.misses;
  r.loaded = st.loaded;
  r.warm_skipped = st.warm_skipped;
  r.lookup_ms = 1e3 * lookup_s / static_cast<double>(batches.size());
  r.push_ms = 1e3 * push_s / static_cast<double>(batches.size());
  r.storage_reads = storage->io().reads;
  std::filesystem::remove_all(dir);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  s.dir = std::filesystem::temp_directory_path().string() + "/tiered_bench-" + std::to_string(getpid());
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string("0"); };
    if (a == "--batches") s.batches = std::stoul(next());
    else if (a == "--vocab") s.vocab = std::stoull(next());
    else if (a == "--zipf") s.zipf_s = std::stod(next());
    else if (a == "--budget-pct") s.budget_pct = std::stod(next());
    else if (a == "--compute-us") s.compute_us = std::stoi(next());
    else if (a == "--ahead") s.ahead = std::stoi(next());
    else if (a == "--flush-ms") s.flush_ms = std::stoi(next());
    else if (a == "--read-delay-us") s.read_delay_us = std::stoi(next());
    else if (a == "--dir") s.dir = next();
    else if (a == "--same-mb-precision") {
      auto p = embedding::parse_row_precision(next());
      if (!p.is_ok()) {
        std::fprintf(stderr, "tiered_bench: %s\n", p.error().message().c_str());
        return 2;
      }
      s.same_mb_precision = *p;
    }
    else {
      std::fprintf(stderr,
                   "usage: tiered_bench [--batches N] [--vocab V] [--zipf S] [--budget-pct P] [--compute-us C] "
                   "[--ahead A] [--flush-ms F] [--read-delay-us D] [--same-mb-precision bf16|fp16] [--dir DIR]\n");
      return 2;
    }
  }
  if (s.batches == 0 || s.vocab == 0 || !(s.zipf_s > 1.0) || !(s.budget_pct > 0 && s.budget_pct <= 100) ||
      s.compute_us < 0 || s.ahead < 1 || s.flush_ms < 1 || s.read_delay_us < 0) {
    std::fprintf(stderr, "tiered_bench: bad option (zipf > 1, budget-pct in (0, 100], ahead >= 1)\n");
    return 2;
  }
  std::filesystem::create_directories(s.dir);
  std::fprintf(stderr, "making %zu batches of %u examples x %u tables (Zipf %.2f over %llu ids per table)...\n",
               s.batches, examples_per_batch, tables, s.zipf_s, static_cast<unsigned long long>(s.vocab));
  const auto batches = make_batches(s.batches, s.vocab, s.zipf_s);

  std::vector<run_result> runs;
  auto report = [&](const run_result& r) {
    std::fprintf(stderr, "  %-26s %8.0f ex/s  hit rate %.3f  peak %llu rows in RAM; %llu misses, %llu read back, "
                 "%llu warmed, %llu hints skipped; lookup %.2f ms, push %.2f ms a batch\n", r.name.c_str(), r.examples_per_sec, r.hit_rate,
                 static_cast<unsigned long long>(r.peak_rows), static_cast<unsigned long long>(r.misses),
                 static_cast<unsigned long long>(r.loaded), static_cast<unsigned long long>(r.warmed),
                 static_cast<unsigned long long>(r.warm_skipped), r.lookup_ms, r.push_ms);
    runs.push_back(r);
  };
  report(run("ram", s, batches, 0, false, 0));
  const std::uint64_t budget = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(static_cast<double>(runs[0].rows) * s.budget_pct / 100.0));
  report(run("budget", s, batches, budget, false, 0));
  report(run("budget+prefetch", s, batches, budget, true, 0));
  if (s.same_mb_precision != embedding::row_precision::fp32) {
    // The budget's bytes at FP32, spent on 16-bit rows: more of them stay in RAM.
    embedding::shard_store_options wide, narrow;
    wide.dim = narrow.dim = dim;
    wide.optimizer.kind = narrow.optimizer.kind = optim::sparse_kind::rowwise_adagrad;
    narrow.precision = s.same_mb_precision;
    const std::uint64_t bytes = budget * embedding::row_bytes_in_memory(embedding::shard_row_floats(wide));
    const std::uint64_t narrow_budget = embedding::rows_in_budget(bytes, embedding::shard_row_floats(narrow));
    report(run(std::string("budget-") + embedding::to_string(s.same_mb_precision) + " (same MB)", s, batches,
               narrow_budget, false, 0, s.same_mb_precision));
  }
  if (s.read_delay_us > 0) {
    report(run("budget-slow-disk", s, batches, budget, false, s.read_delay_us));
    report(run("budget-slow-disk+prefetch", s, batches, budget, true, s.read_delay_us));
  }
  std::filesystem::remove_all(s.dir);

  const double base = runs[0].examples_per_sec;
  std::printf("Zipf %.2f over %llu ids x %u tables, %zu batches of %u, %d us of compute per batch; budget %.0f%% "
              "of the %llu rows (%llu rows)%s\n\n",
              s.zipf_s, static_cast<unsigned long long>(s.vocab), tables, s.batches, examples_per_batch, s.compute_us,
              s.budget_pct, static_cast<unsigned long long>(runs[0].rows), static_cast<unsigned long long>(budget),
              s.read_delay_us > 0 ? (", slow disk: +" + std::to_string(s.read_delay_us) + " us per read (SIMULATED)").c_str()
                                  : "");
  std::printf("| run | ex/s | vs ram | hit rate | peak rows in RAM / budget | rows warmed | storage reads |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  std::string arr = "[";
  for (const auto& r : runs) {
    const double vs = r.examples_per_sec / base;
    const double peak = r.budget_rows > 0 ? static_cast<double>(r.peak_rows) / static_cast<double>(r.budget_rows) : 0;
    std::printf("| %s | %.0f | %.1f%% | %.3f | %s | %llu | %llu |\n", r.name.c_str(), r.examples_per_sec, 100 * vs,
                r.hit_rate, r.budget_rows > 0 ? (std::to_string(static_cast<int>(100 * peak + 0.5)) + "%").c_str() : "-",
                static_cast<unsigned long long>(r.warmed), static_cast<unsigned long long>(r.storage_reads));
    if (arr.size() > 1) arr += ",";
    arr += json_object()
                    .add("run", r.name)
                    .add("examples_per_sec", r.examples_per_sec)
                    .add("vs_ram", vs)
                    .add("hit_rate", r.hit_rate)
                    .add("rows", r.rows)
                    .add("budget_rows", r.budget_rows)
                    .add("peak_rows_in_memory", r.peak_rows)
                    .add("rows_warmed", r.warmed)
                    .add("storage_reads", r.storage_reads)
                    .str();
  }
  std::printf("%s\n", json_object()
                          .add("bench", "tiered")
                          .add("batches", static_cast<std::uint64_t>(s.batches))
                          .add("vocab", s.vocab)
                          .add("zipf", s.zipf_s)
                          .add("budget_pct", s.budget_pct)
                          .add("compute_us", s.compute_us)
                          .add("ahead", s.ahead)
                          .add("read_delay_us", s.read_delay_us)
                          .add_raw("runs", arr + "]")
                          .str()
                          .c_str());
  return 0;
}
