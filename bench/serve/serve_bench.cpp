// The latency of `shadowsync serve`: POST /predict requests of --rows Criteo rows, sent one after
// another over loopback to the real server (predict_routes on ops_http_server, one worker), timed
// end to end at the client (connect, send, read, score, answer). Two phases: the model alone, then
// with updates applying concurrently (one every --update-ms: --update-rows rows spread over the
// tables, a tenth as many tombstones, and every dense parameter, as a publisher's delta). The
// model is the default DLRM shape with --table-rows rows per table, ids drawn from them (some
// unseen). Pin it to one core as the target says: `taskset -c 0 build/bench/serve/serve_bench`
// (or --cpu 0, which pins the process).
//
//   serve_bench [--requests N] [--rows R] [--table-rows T] [--update-rows U] [--update-ms M] [--cpu C]
//
// Prints a human summary and one JSON line.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ss/core/embedding/local_embeddings.hpp"
#include "ss/core/hash.hpp"
#include "ss/core/job/job_options.hpp"
#include "ss/core/json.hpp"
#include "ss/core/serving/served_model.hpp"
#include "ss/core/train/dense_model.hpp"
#include "ss/http/ops_http_server.hpp"
#include "ss/http/predict_routes.hpp"

using namespace ss;
using clock_type = std::chrono::steady_clock;

namespace {

struct bench_options {
  int requests = 2000;
  int rows = 100;
  std::uint64_t table_rows = 100000;
  std::uint64_t update_rows = 20000;
  int update_ms = 1000;
  int cpu = -1;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "serve_bench: %s\nusage: serve_bench [--requests N] [--rows R] [--table-rows T] [--update-rows U] "
               "[--update-ms M] [--cpu C]\n",
               why);
  std::exit(2);
}

bench_options parse(int argc, char** argv) {
  bench_options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(("missing value after " + a).c_str());
    const long long v = std::atoll(argv[++i]);
    if (a == "--requests") o.requests = static_cast<int>(v);
    else if (a == "--rows") o.rows = static_cast<int>(v);
    else if (a == "--table-rows") o.table_rows = static_cast<std::uint64_t>(v);
    else if (a == "--update-rows") o.update_rows = static_cast<std::uint64_t>(v);
    else if (a == "--update-ms") o.update_ms = static_cast<int>(v);
    else if (a == "--cpu") o.cpu = static_cast<int>(v);
    else usage(("unknown flag " + a).c_str());
  }
  if (o.requests < 1 || o.rows < 1 || o.table_rows < 1 || o.update_ms < 1) usage("values must be positive");
  return o;
}

std::string hex(std::uint64_t k) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(k));
  return buf;
}

// The default DLRM (13-512-256-64-16 | 367-512-256-1 | 26 x 16) with `rows` rows per table: the
// rows of the values "0" .. hex(rows - 1) of each Criteo column.
std::shared_ptr<serving::served_model> make_model(std::uint64_t rows) {
  model::loaded_model m;
  m.job.dense_features = 13;
  m.job.categorical_features = 26;
  auto s = job::resolve_model(m.job.model, 13, 26);
  if (!s.is_ok()) usage(s.error().message().c_str());
  m.setup = *s;
  m.dense = std::make_unique<train::dense_model>(m.setup.dlrm, m.setup.dense, 1);
  m.embeddings = std::make_unique<embedding::local_embeddings>(m.setup.embeddings);
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(-0.05f, 0.05f);
  for (std::uint32_t t = 0; t < 26; ++t) {
    auto& table = m.embeddings->table(t);
    for (std::uint64_t k = 0; k < rows; ++k) {
      float* row = table.find_or_create(feature_id(t, hex(k)));
      for (std::uint32_t d = 0; d < m.setup.dlrm.embedding_dim; ++d) row[d] = u(gen);
    }
  }
  return std::make_shared<serving::served_model>(std::move(m), serving::model_version{0, 0, 0});
}

// Request bodies: `rows` Criteo rows each (no label), values drawn from the tables' rows (a few
// from beyond them: unseen ids).
std::vector<std::string> make_bodies(int count, int rows, std::uint64_t table_rows) {
  std::mt19937_64 gen(11);
  std::vector<std::string> out;
  for (int b = 0; b < 64 && b < count; ++b) {
    std::string body;
    for (int r = 0; r < rows; ++r) {
      for (int i = 0; i < 13; ++i) body += std::to_string(gen() % 100) + "\t";
      for (int i = 0; i < 26; ++i) body += (i ? "\t" : "") + hex(gen() % (table_rows + table_rows / 20));
      body += "\n";
    }
    out.push_back(std::move(body));
  }
  return out;
}

// One POST over a fresh connection; the seconds it took, or a negative number when it failed.
double post(std::uint16_t port, const std::string& body) {
  const auto t0 = clock_type::now();
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  const std::string req = "POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: " +
                          std::to_string(body.size()) + "\r\n\r\n" + body;
  for (std::size_t off = 0; off < req.size();) {
    const ssize_t n = ::send(fd, req.data() + off, req.size() - off, MSG_NOSIGNAL);
    if (n <= 0) break;
    off += static_cast<std::size_t>(n);
  }
  std::string in;
  char buf[16384];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) in.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  if (in.rfind("HTTP/1.1 200", 0) != 0) return -1;
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

struct phase_result {
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
  int failed = 0;
};

phase_result run_phase(std::uint16_t port, const std::vector<std::string>& bodies, int requests) {
  std::vector<double> ms;
  phase_result r;
  for (int i = 0; i < requests; ++i) {
    const double s = post(port, bodies[static_cast<std::size_t>(i) % bodies.size()]);
    if (s < 0) ++r.failed;
    else ms.push_back(s * 1e3);
  }
  if (ms.empty()) return r;
  std::sort(ms.begin(), ms.end());
  r.p50_ms = ms[ms.size() / 2];
  r.p99_ms = ms[std::min(ms.size() - 1, ms.size() * 99 / 100)];
  r.max_ms = ms.back();
  return r;
}

// A delta as a publisher writes it: rows spread over the tables (existing and new ids), a tenth
// as many tombstones, and every dense parameter.
serving::model_update make_update(std::uint64_t sequence, std::uint64_t rows, std::uint64_t table_rows,
                                  std::size_t dense_params, std::mt19937_64& gen) {
  serving::model_update u;
  u.version = {sequence, sequence * 100000, 0};
  std::vector<float> dense(dense_params);
  std::uniform_real_distribution<float> v(-0.05f, 0.05f);
  for (auto& x : dense) x = v(gen);
  u.dense = std::move(dense);
  for (std::uint32_t t = 0; t < 26; ++t) {
    serving::table_update tu;
    tu.table = t;
    std::vector<std::uint64_t> picked;
    for (std::uint64_t i = 0; i < rows / 26; ++i) picked.push_back(gen() % (table_rows * 2));
    std::sort(picked.begin(), picked.end());
    picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
    for (std::size_t i = 0; i < picked.size(); ++i) {
      const std::uint64_t id = feature_id(t, hex(picked[i]));
      if (i % 11 == 10) {
        tu.erased.push_back(id);
      } else {
        tu.ids.push_back(id);
        for (int d = 0; d < 16; ++d) tu.values.push_back(v(gen));
      }
    }
    u.tables.push_back(std::move(tu));
  }
  return u;
}

}  // namespace

int main(int argc, char** argv) {
  const bench_options o = parse(argc, argv);
  if (o.cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(o.cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) usage("cannot pin to --cpu");
  }
  std::printf("serve_bench: building a model of 26 tables x %llu rows...\n",
              static_cast<unsigned long long>(o.table_rows));
  auto model = make_model(o.table_rows);
  const auto bodies = make_bodies(o.requests, o.rows, o.table_rows);

  steady_clock_source clock;
  http::predict_route_options ro;
  ro.max_rows = static_cast<std::size_t>(o.rows);
  ro.clock = &clock;
  ro.wall_unix_ms = [] { return std::int64_t{0}; };
  http::predict_routes routes(std::move(ro));
  routes.serve(model);
  http::ops_http_options ho;
  ho.bind = "127.0.0.1";
  ho.handler = [&routes](const http::http_request& r) { return routes.handle(r); };
  ho.max_body_bytes = std::size_t{64} << 20;
  ho.body_handler = [&routes] { return routes.make_worker_handler(); };
  ho.workers = 1;
  auto server = http::ops_http_server::start(std::move(ho));
  if (!server.is_ok()) usage(server.error().message().c_str());
  const std::uint16_t port = (*server)->port();

  run_phase(port, bodies, std::min(50, o.requests));  // warm up
  const phase_result still = run_phase(port, bodies, o.requests);

  std::atomic<bool> done{false};
  std::vector<double> apply_ms;
  std::uint64_t sequence = 0;
  const std::size_t dense_params = model::dense_layout(model->config()).size();
  std::thread updater([&] {
    std::mt19937_64 gen(13);
    auto next = clock_type::now();
    while (!done.load()) {
      auto u = make_update(++sequence, o.update_rows, o.table_rows, dense_params, gen);
      const auto t0 = clock_type::now();
      if (auto st = model->apply(u); !st.is_ok()) std::fprintf(stderr, "serve_bench: %s\n", st.message().c_str());
      apply_ms.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t0).count());
      next += std::chrono::milliseconds(o.update_ms);
      while (!done.load() && clock_type::now() < next) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  const phase_result updating = run_phase(port, bodies, o.requests);
  done.store(true);
  updater.join();
  (*server)->stop();
  std::sort(apply_ms.begin(), apply_ms.end());
  const double apply_p50 = apply_ms.empty() ? 0 : apply_ms[apply_ms.size() / 2];
  const double apply_max = apply_ms.empty() ? 0 : apply_ms.back();

  std::printf("serve_bench: %d requests of %d rows each phase, one worker, model %s\n", o.requests, o.rows,
              model->config().describe().c_str());
  std::printf("  alone           p50 %.3f ms  p99 %.3f ms  max %.3f ms  failed %d\n", still.p50_ms, still.p99_ms,
              still.max_ms, still.failed);
  std::printf("  while updating  p50 %.3f ms  p99 %.3f ms  max %.3f ms  failed %d\n", updating.p50_ms,
              updating.p99_ms, updating.max_ms, updating.failed);
  std::printf("  updates         %zu applied, %llu rows each, every %d ms; apply p50 %.1f ms, max %.1f ms\n",
              apply_ms.size(), static_cast<unsigned long long>(o.update_rows), o.update_ms, apply_p50, apply_max);
  json_object j;
  j.add("bench", "serve")
      .add("requests", o.requests)
      .add("rows_per_request", o.rows)
      .add("table_rows", static_cast<std::uint64_t>(o.table_rows))
      .add("p50_ms", still.p50_ms)
      .add("p99_ms", still.p99_ms)
      .add("p50_ms_updating", updating.p50_ms)
      .add("p99_ms_updating", updating.p99_ms)
      .add("updates", static_cast<std::uint64_t>(apply_ms.size()))
      .add("update_rows", static_cast<std::uint64_t>(o.update_rows))
      .add("update_ms", o.update_ms)
      .add("apply_p50_ms", apply_p50)
      .add("apply_max_ms", apply_max)
      .add("failed", still.failed + updating.failed);
  std::printf("%s\n", j.str().c_str());
  return still.failed + updating.failed == 0 ? 0 : 1;
}
