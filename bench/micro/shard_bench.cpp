// Embedding shard server throughput: rows looked up and updated per second per core, through
// the whole service (Cap'n Proto frames over ZeroMQ tcp loopback, gateway, shard workers)
// against the ceiling of the same shard store called in-process. Requests look like a trainer's:
// the distinct rows of a 128-example Criteo batch that fall to one shard, several in flight.
//
//   shard_bench [--seconds S] [--rows-per-request N] [--in-flight K] [--workers W]
#include <caf/all.hpp>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ss/actors/gateway.hpp"
#include "ss/actors/shard.hpp"
#include "ss/core/embedding/shard_store.hpp"
#include "ss/core/json.hpp"
#include "ss/core/random.hpp"
#include "ss/transport/zmq_transport.hpp"
#include "ss/wire/codec.hpp"

using namespace ss;
using clock_type = std::chrono::steady_clock;

namespace {

// A request's keys: 26 tables, ids skewed like Criteo (vocabularies 10..1M).
struct request_keys {
  std::vector<std::uint32_t> tables;
  std::vector<std::uint64_t> ids;
};

std::vector<request_keys> make_requests(int count, int rows, std::uint64_t seed) {
  rng gen(seed);
  std::vector<request_keys> out(count);
  for (auto& r : out) {
    for (int i = 0; i < rows; ++i) {
      const std::uint32_t t = static_cast<std::uint32_t>(gen.below(26));
      const double vocab = std::pow(10.0, 1.0 + 5.0 * t / 25.0);
      const double u = gen.uniform();
      r.tables.push_back(t);
      r.ids.push_back(mix64(static_cast<std::uint64_t>(u * u * vocab) + 1000003ULL * t));
    }
  }
  return out;
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

embedding::shard_store_options store_options() {
  embedding::shard_store_options o;
  o.dim = 16;
  o.optimizer.kind = optim::sparse_kind::rowwise_adagrad;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3;
  int rows = 1000, in_flight = 4, workers = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::atof(argv[++i]) : 0.0; };
    if (a == "--seconds") seconds = next();
    else if (a == "--rows-per-request") rows = static_cast<int>(next());
    else if (a == "--in-flight") in_flight = static_cast<int>(next());
    else if (a == "--workers") workers = static_cast<int>(next());
    else {
      std::fprintf(stderr, "usage: shard_bench [--seconds S] [--rows-per-request N] [--in-flight K] [--workers W]\n");
      return 2;
    }
  }
  if (seconds <= 0 || rows <= 0 || in_flight <= 0 || workers <= 0) {
    std::fprintf(stderr, "shard_bench: every option must be positive\n");
    return 2;
  }
  const auto requests = make_requests(256, rows, 5);
  const std::vector<float> grads(static_cast<std::size_t>(rows) * 16, 0.001f);

  // 1. The ceiling: the shard store in-process, one thread, one lookup and one push per request.
  double ceiling = 0;
  {
    embedding::shard_store store(store_options());
    std::vector<float> values(static_cast<std::size_t>(rows) * 16);
    for (const auto& r : requests) (void)store.lookup(r.tables.data(), r.ids.data(), r.ids.size(), true, values.data());
    std::uint64_t done = 0;
    const auto start = clock_type::now();
    for (std::size_t i = 0; clock_type::now() - start < std::chrono::duration<double>(seconds); ++i) {
      const auto& r = requests[i % requests.size()];
      (void)store.lookup(r.tables.data(), r.ids.data(), r.ids.size(), true, values.data());
      (void)store.push(r.tables.data(), r.ids.data(), r.ids.size(), grads.data());
      done += r.ids.size();
    }
    ceiling = static_cast<double>(done) / std::chrono::duration<double>(clock_type::now() - start).count();
  }

  // 2. Through the service: a shard on tcp loopback, a client keeping `in_flight` requests out.
  double service_rows = 0, service_cpu = 0, shard_busy = 0;
  {
    caf::actor_system_config cfg;
    cfg.set("scheduler.max-threads", 2);
    cfg.set("work-stealing.moderate-poll-attempts", 0);
    cfg.set("logger.verbosity", caf::atom("quiet"));
    caf::actor_system sys{cfg};
    auto ctx = transport::make_zmq_context();
    transport::zmq_transport server(ctx);
    auto counters = std::make_shared<actors::gateway_counters>();
    auto gateway = actors::spawn_gateway(sys, server, {"shard-0", {}}, counters);
    auto endpoint = server.listen("tcp://127.0.0.1:0");
    if (!endpoint.is_ok()) {
      std::fprintf(stderr, "shard_bench: %s\n", endpoint.error().message().c_str());
      return 1;
    }
    auto store = std::make_shared<embedding::shard_store>(store_options());
    auto shard_counters = std::make_shared<actors::shard_counters>();
    actors::shard_options so;
    so.shards = 1;
    so.workers = workers;
    auto shard = actors::spawn_shard(sys, gateway, store, so, shard_counters).pool;

    transport::zmq_transport client(ctx);
    std::mutex mu;
    std::condition_variable cv;
    int outstanding = 0;
    std::uint64_t answered_rows = 0;
    client.on_frame([&](const actors::peer_address&, wire::frame f) {
      auto e = wire::decode(*f);
      std::lock_guard<std::mutex> lock(mu);
      --outstanding;
      if (e.is_ok() && std::holds_alternative<wire::lookup_reply>(e->message))
        answered_rows += std::get<wire::lookup_reply>(e->message).values.size() / 16;
      cv.notify_one();
    });
    auto link = client.connect(*endpoint);
    // Pre-encode the frames: the client's own work must not limit the shard.
    std::vector<wire::frame> lookups, pushes;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      wire::envelope l{wire::protocol_version, 2 * i + 1, wire::lookup_request{true, requests[i].tables, requests[i].ids}};
      wire::envelope p{wire::protocol_version, 2 * i + 2, wire::push_request{requests[i].tables, requests[i].ids, grads}};
      lookups.push_back(wire::encode(l));
      pushes.push_back(wire::encode(p));
    }
    const double cpu0 = cpu_seconds();
    const auto start = clock_type::now();
    std::size_t i = 0;
    std::uint64_t warm_rows = 0;
    while (clock_type::now() - start < std::chrono::duration<double>(seconds)) {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return outstanding < 2 * in_flight; });
      outstanding += 2;
      lock.unlock();
      (void)client.send(actors::peer_address{*link, {}}, lookups[i % lookups.size()]);
      (void)client.send(actors::peer_address{*link, {}}, pushes[i % pushes.size()]);
      ++i;
    }
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait_for(lock, std::chrono::seconds(10), [&] { return outstanding == 0; });
      warm_rows = answered_rows;
    }
    const double elapsed = std::chrono::duration<double>(clock_type::now() - start).count();
    service_cpu = cpu_seconds() - cpu0;
    service_rows = static_cast<double>(warm_rows) / elapsed;
    shard_busy = static_cast<double>(shard_counters->busy_ns.load()) * 1e-9 / elapsed;
    client.stop();
    server.stop();
    caf::anon_send_exit(gateway, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(shard, caf::exit_reason::user_shutdown);
  }
  const double per_core = service_cpu > 0 ? service_rows * 1.0 / (service_cpu / seconds) : 0;
  std::printf("shard server: %d rows per request (lookup + push), %d request pairs in flight, %d worker(s)\n", rows,
              in_flight, workers);
  std::printf("  in-process shard store (ceiling)   %10.0f rows/s looked up and updated, 1 core\n", ceiling);
  std::printf("  through the service (tcp loopback)  %10.0f rows/s; the bench process used %.2f cores (client "
              "included) -> %.0f rows/s per core = %.0f%% of the ceiling; shard workers busy %.0f%% of the time\n",
              service_rows, service_cpu / seconds, per_core, 100 * per_core / ceiling, 100 * shard_busy);
  std::printf("%s\n", json_object()
                          .add("bench", "shard")
                          .add("rows_per_request", rows)
                          .add("in_flight", in_flight)
                          .add("workers", workers)
                          .add("ceiling_rows_per_sec", ceiling)
                          .add("service_rows_per_sec", service_rows)
                          .add("cores_used", service_cpu / seconds)
                          .add("service_rows_per_sec_per_core", per_core)
                          .add("fraction_of_ceiling", per_core / ceiling)
                          .str()
                          .c_str());
  return 0;
}
