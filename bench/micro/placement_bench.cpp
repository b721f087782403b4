// Row placement when the shard count changes: of a million distinct rows, how many change owner
// from S to S' shards under this build's placement (key ranges, an even table) against hash modulo
// the shard count (the placement before it), and the least any placement must move (what the new
// shards take, or what the removed ones held). Also how evenly each spreads the rows, and what
// placing a row costs.
//
//   placement_bench [--rows N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "ss/core/embedding/sharding.hpp"
#include "ss/core/hash.hpp"

using namespace ss;

namespace {

struct key {
  std::uint32_t table;
  std::uint64_t id;
};

std::uint32_t modulo_owner(const key& k, std::uint32_t shards) {
  return static_cast<std::uint32_t>(hash_combine(k.id, 0x7ab1eULL + k.table) % shards);
}
// The placement tables, built once per shard count as a service does.
struct range_owner {
  std::vector<embedding::placement> tables;
  range_owner() {
    for (std::uint32_t s = 1; s <= 16; ++s) tables.emplace_back(s);
  }
  std::uint32_t operator()(const key& k, std::uint32_t shards) const { return tables[shards - 1].shard_of(k.table, k.id); }
};

template <class Owner>
double moved_share(const std::vector<key>& keys, std::uint32_t from, std::uint32_t to, const Owner& owner) {
  std::size_t moved = 0;
  for (const auto& k : keys) moved += owner(k, from) != owner(k, to);
  return static_cast<double>(moved) / static_cast<double>(keys.size());
}

// The fullest shard's rows over the mean.
template <class Owner>
double max_over_mean(const std::vector<key>& keys, std::uint32_t shards, const Owner& owner) {
  std::vector<std::size_t> n(shards, 0);
  for (const auto& k : keys) ++n[owner(k, shards)];
  return static_cast<double>(*std::max_element(n.begin(), n.end())) * shards / static_cast<double>(keys.size());
}

template <class Owner>
double ns_per_row(const std::vector<key>& keys, std::uint32_t shards, const Owner& owner) {
  const auto t0 = std::chrono::steady_clock::now();
  std::uint64_t sink = 0;
  for (int rep = 0; rep < 5; ++rep)
    for (const auto& k : keys) sink += owner(k, shards);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (sink == 42) std::puts("");  // keeps the loop
  return s * 1e9 / (5.0 * static_cast<double>(keys.size()));
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t rows = 1000000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rows") == 0 && i + 1 < argc) {
      rows = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: placement_bench [--rows N]\n");
      return 2;
    }
  }
  const range_owner ranges;
  const auto t0 = std::chrono::steady_clock::now();
  const embedding::placement sixteen(16);
  const double build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::vector<key> keys(rows);
  for (std::size_t i = 0; i < rows; ++i) keys[i] = {static_cast<std::uint32_t>(i % 26), mix64(i + 1)};

  const std::vector<std::pair<std::uint32_t, std::uint32_t>> changes = {
      {1, 2}, {2, 3}, {3, 4}, {4, 5}, {7, 8}, {8, 9}, {15, 16}, {2, 4}, {4, 8}, {4, 2}, {3, 2}, {8, 4}, {16, 12}};
  std::printf("placement_bench: %zu distinct rows (26 tables), %u key ranges\n\n", rows, embedding::placement_ranges);
  std::printf("%-9s %12s %12s %12s %14s\n", "S -> S'", "least", "ranges", "modulo", "ranges/least");
  std::string json = "{\"bench\":\"placement\",\"rows\":" + std::to_string(rows) +
                     ",\"ranges\":" + std::to_string(embedding::placement_ranges) + ",\"changes\":[";
  for (std::size_t c = 0; c < changes.size(); ++c) {
    const auto [from, to] = changes[c];
    const double least = static_cast<double>(to > from ? to - from : from - to) / std::max(from, to);
    const double ranged = moved_share(keys, from, to, ranges);
    const double mod = moved_share(keys, from, to, modulo_owner);
    std::printf("%2u -> %-3u %11.2f%% %11.2f%% %11.2f%% %14.3f\n", from, to, 100 * least, 100 * ranged, 100 * mod,
                ranged / least);
    char line[200];
    std::snprintf(line, sizeof line, "%s{\"from\":%u,\"to\":%u,\"least\":%.5f,\"ranges\":%.5f,\"modulo\":%.5f}",
                  c ? "," : "", from, to, least, ranged, mod);
    json += line;
  }
  json += "],\"balance\":[";
  std::printf("\n%-7s %22s %22s\n", "shards", "fullest/mean (ranges)", "fullest/mean (modulo)");
  bool first = true;
  for (std::uint32_t shards : {2U, 3U, 4U, 8U, 16U}) {
    const double a = max_over_mean(keys, shards, ranges), b = max_over_mean(keys, shards, modulo_owner);
    std::printf("%-7u %22.4f %22.4f\n", shards, a, b);
    char line[120];
    std::snprintf(line, sizeof line, "%s{\"shards\":%u,\"ranges\":%.5f,\"modulo\":%.5f}", first ? "" : ",",
                  shards, a, b);
    json += line;
    first = false;
  }
  const double ns_ranges = ns_per_row(keys, 4, ranges), ns_mod = ns_per_row(keys, 4, modulo_owner);
  const double ns_ranges16 = ns_per_row(keys, 16, ranges);
  std::printf("\nplacing a row: %.2f ns (ranges, 4 shards), %.2f ns (16 shards), %.2f ns (modulo); the table for 16 "
              "shards built in %.2f ms\n",
              ns_ranges, ns_ranges16, ns_mod, build_ms);
  char tail[200];
  std::snprintf(tail, sizeof tail, "],\"ns_per_row\":{\"ranges_4\":%.3f,\"ranges_16\":%.3f,\"modulo_4\":%.3f},\"table_16_ms\":%.3f}",
                ns_ranges, ns_ranges16, ns_mod, build_ms);
  json += tail;
  std::printf("%s\n", json.c_str());
  return 0;
}
