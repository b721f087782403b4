// The flags every service command shares (listen, coordinator, CURVE keys, resource bounds, ...)
// and what they become: the service's options, its transport, its actor system's configuration.
#pragma once

#include <caf/fwd.hpp>

#include <chrono>
#include <memory>
#include <string>

#include "command_line.hpp"
#include "ss/actors/service.hpp"
#include "ss/core/config/option_set.hpp"
#include "ss/transport/curve.hpp"

namespace zmq {
class context_t;
}

namespace ss::cli {

// Seconds between returns of free heap memory to the system (--release-memory-interval).
constexpr double kDefaultReleaseMemorySeconds = 10;

// --ops-linger (the coordinator and `local`): the finished job's dashboard stays readable.
constexpr const char* ops_linger_help =
    "Seconds the ops endpoint (--ops-listen: the dashboard, /api/status, /metrics) stays up after the job has ended, "
    "showing its final state and curves; a signal (Ctrl-C) ends the wait. 0: exit at once (an open dashboard "
    "keeps the last state it read).";

struct service_flags {
  std::string name;
  std::string listen;
  std::string advertise;
  std::string coordinator = "tcp://127.0.0.1:5555";
  int index = -1;
  int threads = 1;
  int scheduler_threads = 0;  // 0: the machine's cores (at least 2)
  double heartbeat_interval = 1.0;
  double request_timeout = 5.0;
  log_flags log;
  std::string ops_listen;  // HOST:PORT of the HTTP health/metrics endpoint; "" = none
  std::string curve_server_key;       // the cluster's server pair (server.key); "" = plain
  std::string curve_client_key;       // this service's client pair
  std::string curve_authorized_keys;  // the client keys every listener accepts
  // Resource bounds (zmq_transport_options, gateway_options).
  int max_frame_mb = 64;
  int max_connections = 1024;
  int max_inflight_requests = 4096;
  int max_queued_frames = 65536;
  int max_queued_mb = 256;
  double release_memory_interval = kDefaultReleaseMemorySeconds;  // 0: never
  bool allow_remote_control = false;  // plain mode: control requests from other hosts too
};

// `member`: it registers with a coordinator (--coordinator, --heartbeat-interval, --request-timeout);
// `indexed`: it has an --index in the job.
void add_service_flags(config::option_set& opts, service_flags& f, const std::string& default_listen, bool member,
                       bool indexed);

// A standalone service's --listen, --advertise and (members) --coordinator, refused at start when
// no peer could use them: empty, inproc:// (only this process could reach it), a tcp port outside
// 0..65535 (ZeroMQ would bind a random one), a scheme ZeroMQ does not serve here.
status check_endpoints(const service_flags& f, bool member);

// The service's options from its flags: its name (--name, else ROLE-INDEX or ROLE), endpoints,
// timings, bounds and who may send it control requests.
actors::service_options to_service_options(const service_flags& f, const std::string& role,
                                           const transport::transport_security& security);

// The transport security from the --curve-* flags (plain when none is given).
result<transport::transport_security> load_security(const service_flags& f);

// --heartbeat-interval 1.5 and the like, as a duration.
std::chrono::milliseconds milliseconds_of(double seconds);

std::unique_ptr<caf::actor_system_config> actor_config(int scheduler_threads);

// A ZeroMQ transport named `name`; `limits`: the resource bound flags (else the defaults).
std::unique_ptr<actors::transport> make_transport(const std::shared_ptr<zmq::context_t>& ctx, const std::string& name,
                                                  const transport::transport_security& security = {},
                                                  const service_flags* limits = nullptr);

// A shard's rows in RocksDB under `dir`, its memtables and block cache within `memory_mb`; with a
// memory budget (`tiered`) the stored rows are estimated, not counted (rocksdb_rows_options::exact_count).
decltype(actors::service_options::open_storage) rocksdb_storage(const std::string& dir, int memory_mb, bool tiered);

}  // namespace ss::cli
