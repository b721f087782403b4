// Embedding rows at FP32, bf16 and fp16 (--row-precision): what a row costs a shard, and how fast
// the shard serves them.
//
// For one precision per run (row_precision.sh runs each in a process of its own, so that RSS is
// this precision's alone): a shard store with row-wise Adagrad makes --rows rows of --dim values
// (26 tables), then serves --batches batches of lookups and pushes of 4,096 rows drawn uniformly
// from them (what a shard's workers do, without the network). Measured: the store's bytes per
// row (its own count: slots, index, tiering marks), the process's RSS growth per million rows,
// the rows looked up and pushed a second, and the bytes of one lookup reply and one push of
// 4,096 rows as encoded for the wire.
//
//   row_precision_bench --precision fp32|bf16|fp16 [--rows N] [--dim D] [--batches B]
// Prints a human summary and one JSON line.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "ss/core/embedding/shard_store.hpp"
#include "ss/core/json.hpp"
#include "ss/core/random.hpp"
#include "ss/wire/codec.hpp"

using namespace ss;
using clock_type = std::chrono::steady_clock;

namespace {

std::uint64_t rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

int main(int argc, char** argv) {
  std::string precision_name = "fp32";
  std::uint64_t rows = 1'000'000;
  std::uint32_t dim = 16;
  int batches = 400;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--precision") precision_name = value;
    else if (flag == "--rows") rows = std::stoull(value);
    else if (flag == "--dim") dim = static_cast<std::uint32_t>(std::stoul(value));
    else if (flag == "--batches") batches = std::stoi(value);
    else {
      std::fprintf(stderr, "row_precision_bench: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  auto precision = embedding::parse_row_precision(precision_name);
  if (!precision.is_ok()) {
    std::fprintf(stderr, "row_precision_bench: %s\n", precision.error().message().c_str());
    return 2;
  }
  constexpr std::uint32_t tables = 26;
  constexpr std::size_t batch_rows = 4096;
  embedding::shard_store_options o;
  o.dim = dim;
  o.precision = *precision;
  o.optimizer.kind = optim::sparse_kind::rowwise_adagrad;
  o.optimizer.learning_rate = 0.03f;

  const std::uint64_t rss_before = rss_bytes();
  embedding::shard_store store(o);
  {
    std::vector<std::uint32_t> t(batch_rows);
    std::vector<std::uint64_t> ids(batch_rows);
    std::vector<float> values(batch_rows * dim);
    for (std::uint64_t made = 0; made < rows;) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(batch_rows, rows - made));
      for (std::size_t i = 0; i < n; ++i) {
        t[i] = static_cast<std::uint32_t>((made + i) % tables);
        ids[i] = made + i;
      }
      if (auto st = store.lookup(t.data(), ids.data(), n, true, values.data()); !st.is_ok()) {
        std::fprintf(stderr, "row_precision_bench: %s\n", st.message().c_str());
        return 1;
      }
      made += n;
    }
  }
  const std::uint64_t rss_after = rss_bytes();
  const auto stats = store.stats();

  // Lookups and pushes over the rows made.
  rng g(7);
  std::vector<std::uint32_t> t(batch_rows);
  std::vector<std::uint64_t> ids(batch_rows);
  std::vector<float> values(batch_rows * dim), grads(batch_rows * dim);
  for (auto& v : grads) v = static_cast<float>(g.uniform() - 0.5) * 0.01f;
  const auto start = clock_type::now();
  for (int b = 0; b < batches; ++b) {
    for (std::size_t i = 0; i < batch_rows; ++i) {
      const std::uint64_t id = g.below(rows);
      t[i] = static_cast<std::uint32_t>(id % tables);
      ids[i] = id;
    }
    if (!store.lookup(t.data(), ids.data(), batch_rows, false, values.data()).is_ok() ||
        !store.push(t.data(), ids.data(), batch_rows, grads.data()).is_ok()) {
      std::fprintf(stderr, "row_precision_bench: a lookup or push failed\n");
      return 1;
    }
  }
  const double seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  const double rows_per_second = static_cast<double>(batches) * batch_rows / seconds;

  // One lookup reply and one push of batch_rows rows, as the wire carries them.
  wire::lookup_reply reply;
  reply.dim = dim;
  reply.values = values;
  reply.precision = *precision;
  wire::push_request push;
  push.tables = t;
  push.ids = ids;
  push.grads = grads;
  push.precision = *precision;
  const std::size_t reply_bytes = wire::encode(wire::envelope{wire::protocol_version, 1, reply})->size();
  const std::size_t push_bytes = wire::encode(wire::envelope{wire::protocol_version, 2, push})->size();

  const double bytes_per_row = static_cast<double>(stats.bytes) / static_cast<double>(stats.rows);
  const double rss_per_million = static_cast<double>(rss_after - rss_before) * 1e6 / static_cast<double>(rows);
  std::printf("row_precision_bench: %s, %llu rows of %u values (+1 row-wise Adagrad value), %u slots a row\n",
              precision_name.c_str(), static_cast<unsigned long long>(rows), dim, store.row_floats());
  std::printf("  store bytes per row   %8.1f\n", bytes_per_row);
  std::printf("  RSS per million rows  %8.1f MB\n", rss_per_million / 1e6);
  std::printf("  lookups + pushes      %8.0f rows/s (%d batches of %zu)\n", rows_per_second, batches, batch_rows);
  std::printf("  lookup reply          %8zu bytes, push %zu bytes (%zu rows)\n", reply_bytes, push_bytes, batch_rows);
  json_object out;
  out.add("bench", "row_precision").add("precision", precision_name).add("rows", rows).add("dim", dim);
  out.add("row_slots", store.row_floats()).add("store_bytes_per_row", bytes_per_row);
  out.add("rss_bytes_per_million_rows", rss_per_million).add("rows_per_second", rows_per_second);
  out.add("lookup_reply_bytes", static_cast<std::uint64_t>(reply_bytes)).add("push_bytes", static_cast<std::uint64_t>(push_bytes));
  std::printf("%s\n", out.str().c_str());
  return 0;
}
