#include "service_flags.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>

#include "ss/storage/rocksdb_rows.hpp"
#include "ss/transport/zmq_transport.hpp"

namespace ss::cli {
namespace {

// Who may send this service control requests: roles of CURVE keys, else this host only (or, with
// --allow-remote-control, anyone, said loudly).
actors::authority_policy authority_of(const service_flags& f, const transport::transport_security& security) {
  actors::authority_policy p;
  p.authenticated = security.mode == transport::security_mode::curve;
  p.allow_remote_control = f.allow_remote_control;
  if (p.allow_remote_control && !p.authenticated) {
    spdlog::warn("shadowsync: --allow-remote-control without CURVE keys: ANYONE who can reach this service's port "
                 "can stop the job, take snapshots and export models");
  } else if (p.allow_remote_control) {
    spdlog::info("shadowsync: --allow-remote-control has no effect with CURVE keys (roles in authorized_keys decide)");
  }
  return p;
}

// What is wrong with `endpoint` as a tcp or ipc address peers in other processes can use; "" if nothing.
// `bind`: it is bound here (a wildcard host and port 0, any free port, are fine).
std::string endpoint_problem(const std::string& endpoint, bool bind) {
  if (endpoint.empty()) return "is empty";
  if (endpoint.rfind("inproc://", 0) == 0)
    return "is inproc://, which only this process can reach (a service of its own needs tcp:// or ipc://)";
  if (endpoint.rfind("ipc://", 0) == 0) return endpoint.size() > 6 ? "" : "names no socket path";
  if (endpoint.rfind("tcp://", 0) != 0) return "is not tcp://HOST:PORT or ipc://PATH";
  const std::string rest = endpoint.substr(6);
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0) return "has no HOST:PORT after tcp://";
  const std::string port = rest.substr(colon + 1);
  if (port == "*") return bind ? "" : "has the wildcard port *, which no peer can dial";
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
    return "has port '" + port + "', not a number in 0..65535";
  const long number = std::stol(port);
  if (number > 65535) return "has port " + port + ", outside 0..65535";
  if (number == 0 && !bind) return "has port 0, which no peer can dial";
  return "";
}

}  // namespace

status check_endpoints(const service_flags& f, bool member) {
  if (auto why = endpoint_problem(f.listen, true); !why.empty())
    return {errc::invalid_argument, "--listen " + (f.listen.empty() ? std::string("\"\"") : f.listen) + " " + why};
  if (!f.advertise.empty()) {
    if (auto why = endpoint_problem(f.advertise, false); !why.empty())
      return {errc::invalid_argument, "--advertise " + f.advertise + " " + why};
  }
  if (member) {
    if (auto why = endpoint_problem(f.coordinator, false); !why.empty())
      return {errc::invalid_argument,
              "--coordinator " + (f.coordinator.empty() ? std::string("\"\"") : f.coordinator) + " " + why};
  }
  return status::ok();
}

std::chrono::milliseconds milliseconds_of(double seconds) {
  return std::chrono::milliseconds(static_cast<long>(seconds * 1000));
}

void add_service_flags(config::option_set& opts, service_flags& f, const std::string& default_listen, bool member,
                       bool indexed) {
  if (f.listen.empty()) f.listen = default_listen;
  opts.add("name", &f.name,
           "This service's name in logs, status and the job (default: role and index; a trainer: "
           "trainer-HOST-XXXXXXXX, new at every start). A trainer given a name restarts as itself; a second live "
           "process with the name is refused.");
  opts.add("listen", &f.listen, "Endpoint to bind, e.g. tcp://0.0.0.0:5556 (tcp://127.0.0.1:0: any free port).");
  opts.add("advertise", &f.advertise,
           "Endpoint peers dial to reach this service (default: the bound one; with 0.0.0.0, the host name).");
  if (member) {
    opts.add("coordinator", &f.coordinator, "The coordinator's endpoint.");
    opts.add("heartbeat-interval", &f.heartbeat_interval, "Seconds between heartbeats.").range(0.01, 3600.0);
    opts.add("request-timeout", &f.request_timeout, "Seconds to wait for an answer before retrying.")
        .range(0.01, 3600.0);
  }
  if (indexed) opts.add("index", &f.index, "This service's index in the job (0-based).").range(0, 4095);
  opts.add("threads", &f.threads, "Worker actors (trainer: Hogwild workers; shard: request workers).").range(1, 256);
  opts.add("scheduler-threads", &f.scheduler_threads, "CAF scheduler threads; 0 = one per core (at least 2).")
      .range(0, 256);
  add_log_flags(opts, f.log);
  opts.add("ops-listen", &f.ops_listen,
           "HOST:PORT for HTTP /healthz, /readyz and /metrics (Prometheus), e.g. 0.0.0.0:9100 (port 0: any "
           "free port); empty: none.");
  opts.add("curve-server-key", &f.curve_server_key,
           "CURVE: the cluster's server key pair file (server.key from `shadowsync keygen --cluster`); with "
           "--curve-client-key and --curve-authorized-keys (all three or none). None: plain transport.");
  opts.add("curve-client-key", &f.curve_client_key, "CURVE: this service's client key pair file (e.g. shard-0.key).");
  opts.add("curve-authorized-keys", &f.curve_authorized_keys,
           "CURVE: the client public keys this service accepts, one per line (authorized_keys).");
  opts.add("max-frame-mb", &f.max_frame_mb,
           "Largest message in MiB, in and out: a bigger inbound one is dropped before it is read (and its "
           "connection closed), a bigger outbound one refused. Use the same value across the job.")
      .range(1, 2047);
  opts.add("max-connections", &f.max_connections,
           "Inbound connections kept open (tcp); one more is refused at its handshake until one closes. 0: no "
           "bound.")
      .range(0, 1000000);
  opts.add("max-inflight-requests", &f.max_inflight_requests,
           "Requests served at once; one more is answered 'overloaded, ask again' (callers retry). 0: no bound.")
      .range(0, 1000000);
  opts.add("max-queued-frames", &f.max_queued_frames,
           "Outbound messages waiting for a slow or absent peer; sending more fails (and is counted).")
      .range(1, 100000000);
  opts.add("max-queued-mb", &f.max_queued_mb, "The same bound on the waiting messages' size, in MiB.")
      .range(1, 1000000);
  opts.add("allow-remote-control", &f.allow_remote_control,
           "Plain transport only: serve control requests (stop, snapshot, export, and the coordinator's own to "
           "shards and sync servers) from other hosts too; without it they are served only from this host. "
           "Anyone who can reach the port can then stop the job: prefer CURVE keys with an admin role.");
  opts.add("release-memory-interval", &f.release_memory_interval,
           "Seconds between returns of the allocator's free memory to the system (malloc_trim), so that the "
           "RSS a container limit sees is the memory in use; 0: never.")
      .range(0.0, 3600.0);
}

result<transport::transport_security> load_security(const service_flags& f) {
  return transport::load_curve_security(f.curve_server_key, f.curve_client_key, f.curve_authorized_keys, true);
}

actors::service_options to_service_options(const service_flags& f, const std::string& role,
                                           const transport::transport_security& security) {
  actors::service_options o;
  // A trainer without --name gets one of its own process when it starts (start_member).
  o.name = !f.name.empty() ? f.name
           : f.index >= 0  ? role + "-" + std::to_string(f.index)
           : role == "trainer" ? ""
                               : role;
  o.listen = f.listen;
  o.advertise = f.advertise;  // none: the bound endpoint, or this host's name for a wildcard (start_gateway)
  o.coordinator = f.coordinator;
  o.index = f.index;
  o.threads = f.threads;
  o.heartbeat_interval = milliseconds_of(f.heartbeat_interval);
  o.request_timeout = milliseconds_of(f.request_timeout);
  o.max_frame_bytes = static_cast<std::size_t>(f.max_frame_mb) << 20;
  o.max_requests_in_flight = static_cast<std::uint32_t>(f.max_inflight_requests);
  o.authority = authority_of(f, security);
  return o;
}

std::unique_ptr<caf::actor_system_config> actor_config(int scheduler_threads) {
  auto cfg = std::make_unique<caf::actor_system_config>();
  const int threads = scheduler_threads > 0 ? scheduler_threads
                                            : std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
  cfg->set("scheduler.max-threads", threads);
  // Idle workers otherwise sleep 50 us between polls: every actor hop would pay it.
  cfg->set("work-stealing.moderate-poll-attempts", 0);
  cfg->set("logger.verbosity", caf::atom("quiet"));
  return cfg;
}

std::unique_ptr<actors::transport> make_transport(const std::shared_ptr<zmq::context_t>& ctx, const std::string& name,
                                                  const transport::transport_security& security,
                                                  const service_flags* limits) {
  transport::zmq_transport_options o;
  o.name = name;
  o.security = security;
  if (limits != nullptr) {
    o.max_frame_bytes = static_cast<std::size_t>(limits->max_frame_mb) << 20;
    o.max_connections = static_cast<std::size_t>(limits->max_connections);
    o.max_queued_frames = static_cast<std::size_t>(limits->max_queued_frames);
    o.max_queued_bytes = static_cast<std::size_t>(limits->max_queued_mb) << 20;
  }
  return std::make_unique<transport::zmq_transport>(ctx, o);
}

// A shard's rows in RocksDB under `dir`, its memtables and block cache within `memory_mb`; with a
// memory budget (tiered), the stored rows are not counted exactly (rocksdb_rows_options::exact_count).
decltype(actors::service_options::open_storage) rocksdb_storage(const std::string& dir, int memory_mb, bool tiered) {
  auto options = storage::rocksdb_rows_options::with_memory_budget(static_cast<std::size_t>(memory_mb) << 20);
  options.exact_count = !tiered;
  return [dir, options](std::uint32_t row_floats, const std::string& row_layout,
                        bool resuming) -> result<std::unique_ptr<embedding::durable_rows>> {
    auto with_layout = options;
    with_layout.row_layout = row_layout;
    with_layout.set_aside_other_layout = resuming;
    auto rows = storage::rocksdb_rows::open(dir, row_floats, with_layout);
    if (!rows.is_ok()) return rows.error();
    return std::unique_ptr<embedding::durable_rows>(std::move(*rows));
  };
}

}  // namespace ss::cli
