// The dashboard's data at its worst case: a 64-member job (1 coordinator: 48 trainers, 8 shards,
// 8 readers) whose history is full (every series at its 512-point bound, after a long job), and
// its status. Times, on one thread:
//   - record(): parsing the coordinator's status and adding a sample (the coordinator does this
//     once a second);
//   - the full /api/history answer (a page opening) and an incremental one (?since=, a page
//     polling);
//   - parsing a 64-member status (what /metrics and the history do with it).
// The history is fed the status JSON the coordinator builds, as the coordinator feeds it
// (actors::record_status), with time injected (no clock in job_history). Prints a human summary and one JSON line. The HTTP round trip on a real 64-member
// cluster is measured by bench/experiments/dashboard_latency/dashboard_latency.sh.
//
//   build/bench/dashboard_bench [--samples N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ss/actors/status_metrics.hpp"
#include "ss/core/json.hpp"
#include "ss/core/json_value.hpp"
#include "ss/core/metrics/history.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

// A coordinator status of 48 trainers, 8 shards and 8 readers after `t` seconds.
std::string status_of_64_members(double t) {
  std::vector<std::string> members;
  const auto examples = static_cast<std::uint64_t>(t * 20000);
  for (int i = 0; i < 48; ++i)
    members.push_back(ss::json_object()
                          .add("id", static_cast<std::uint64_t>(i + 1))
                          .add("name", "trainer-" + std::to_string(i))
                          .add("role", "trainer")
                          .add("index", -1)
                          .add("endpoint", "tcp://10.0.0." + std::to_string(i) + ":5558")
                          .add("examples", examples / 48)
                          .add("finished", false)
                          .add("seconds_since_heartbeat", 0.4)
                          .add("health", "ok")
                          .add("sync_rounds", static_cast<std::uint64_t>(t))
                          .add("sync_gap", 10.0 + i * 0.1)
                          .add("sync_latency_p50_ms", 3.2)
                          .add("sync_latency_p99_ms", 9.7)
                          .add("sync_distance", 0.012)
                          .str());
  for (int i = 0; i < 8; ++i)
    members.push_back(ss::json_object()
                          .add("name", "shard-" + std::to_string(i))
                          .add("role", "shard")
                          .add("examples", examples * 3)
                          .add("health", "ok")
                          .add("rows", examples / 8)
                          .add("row_bytes", examples * 10)
                          .add("rows_looked_up", examples * 3)
                          .str());
  for (int i = 0; i < 8; ++i)
    members.push_back(ss::json_object()
                          .add("name", "reader-" + std::to_string(i))
                          .add("role", "reader")
                          .add("health", "ok")
                          .add("bytes_done", examples * 100)
                          .add("bytes_total", std::uint64_t{1} << 40)
                          .str());
  return ss::json_object()
      .add("role", "coordinator")
      .add("state", "running")
      .add("examples", examples)
      .add("examples_committed", examples)
      .add("progressive_ne", 0.8 + 0.1 / (1 + t))
      .add("progressive_auc", 0.78 - 0.05 / (1 + t))
      .add("progressive_calibration", 1.0)
      .add("progressive_logloss", 0.45)
      .add("train_logloss", 0.46)
      .add("progress", 0.5)
      .add("trainers", 48)
      .add("members_late", 0)
      .add("snapshots", static_cast<std::uint64_t>(t / 60))
      .add("seconds_since_snapshot", 12.0)
      .add_raw("members", ss::json_array(members))
      .str();
}

template <class F>
double median_ms(int reps, F&& f) {
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    const auto start = clock_type::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}


// Feeds `samples` statuses (one a second) and times the answers.
void run(int samples, const char* what) {
  ss::metrics::job_history history;
  double record_total_ms = 0;
  for (int s = 0; s < samples; ++s) {
    const std::string text = status_of_64_members(s);
    const auto start = clock_type::now();
    auto parsed = ss::json_value::parse(text);
    ss::actors::record_status(history, s, *parsed);
    record_total_ms += std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
  }
  const std::string status = status_of_64_members(samples);
  std::size_t full_bytes = 0, incremental_bytes = 0;
  const double full_ms = median_ms(50, [&] { full_bytes = history.to_json().size(); });
  const double incremental_ms = median_ms(200, [&] { incremental_bytes = history.to_json(samples - 2).size(); });
  const double parse_ms = median_ms(200, [&] { (void)ss::json_value::parse(status); });
  std::printf("%s: a 64-member job after %d samples: %zu series, longest %zu points (bound 512 per series)\n", what,
              samples, history.series_count(), history.longest_series());
  std::printf("  record (parse status + add):   %.3f ms per sample (mean)\n", record_total_ms / samples);
  std::printf("  /api/history full:              %.3f ms median, %zu bytes\n", full_ms, full_bytes);
  std::printf("  /api/history?since= (polling):  %.3f ms median, %zu bytes\n", incremental_ms, incremental_bytes);
  std::printf("  parse a 64-member status:       %.3f ms median, %zu bytes\n", parse_ms, status.size());
  std::printf("{\"bench\":\"dashboard\",\"case\":\"%s\",\"members\":64,\"samples\":%d,\"series\":%zu,"
              "\"longest_series\":%zu,\"record_ms\":%.4f,\"history_full_ms\":%.4f,\"history_full_bytes\":%zu,"
              "\"history_since_ms\":%.4f,\"history_since_bytes\":%zu,\"status_parse_ms\":%.4f,\"status_bytes\":%zu}\n",
              what, samples, history.series_count(), history.longest_series(), record_total_ms / samples, full_ms,
              full_bytes, incremental_ms, incremental_bytes, parse_ms, status.size());
}

}  // namespace

int main(int argc, char** argv) {
  int samples = 20000;  // a 5.5-hour job at one sample a second: every series thinned several times
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--samples") == 0) samples = std::atoi(argv[i + 1]);
  // The most points the history holds: 511 samples, every series one short of its first thinning.
  run(511, "fullest");
  run(samples, "long job");
  return 0;
}
