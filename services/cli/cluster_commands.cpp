// The cluster commands: one per service (coordinator, shard, reader, trainer), each started
// alone with flags, a config file and SHADOWSYNC_* variables; and `local`, which runs a whole
// cluster on this machine, as actors in one process or as processes on loopback.
#include <caf/all.hpp>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "client.hpp"
#include "commands.hpp"
#include "ss/actors/service.hpp"
#include "ss/core/config/option_set.hpp"
#include "ss/core/data/generator.hpp"
#include "ss/core/job/job_options.hpp"
#include "ss/core/job/preflight.hpp"
#include "ss/core/job/job_report.hpp"
#include "ss/core/json.hpp"
#include "ss/core/json_value.hpp"
#include "ss/service/logging.hpp"
#include "ss/service/memory_release.hpp"
#include "ss/service/shutdown_signal.hpp"
#include "ss/storage/rocksdb_rows.hpp"
#include "ops_endpoint.hpp"
#include "ss/transport/zmq_transport.hpp"

namespace ss::cli {
namespace {

// What every service command shares.
// Seconds between returns of free heap memory to the system (--release-memory-interval).
constexpr double kDefaultReleaseMemorySeconds = 10;

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
  std::string log_level = "info";
  std::string log_format = "human";
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

void add_service_flags(config::option_set& opts, service_flags& f, const std::string& default_listen, bool member,
                       bool indexed) {
  if (f.listen.empty()) f.listen = default_listen;
  opts.add("name", &f.name, "This service's name in logs and status (default: role and index).");
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
  opts.add("log-level", &f.log_level, "Log level.").choices({"trace", "debug", "info", "warn", "error", "off"});
  opts.add("log-format", &f.log_format, "Log line format.").choices({"human", "json"});
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

std::chrono::milliseconds release_interval(double seconds) {
  return std::chrono::milliseconds(static_cast<long>(seconds * 1000));
}

// The transport security from the --curve-* flags; false (after printing why) when they are wrong.
bool load_security(const char* role, const service_flags& f, transport::transport_security& out) {
  auto sec = transport::load_curve_security(f.curve_server_key, f.curve_client_key, f.curve_authorized_keys, true);
  if (!sec.is_ok()) {
    std::fprintf(stderr, "shadowsync %s: %s\n", role, sec.error().message().c_str());
    return false;
  }
  out = *sec;
  return true;
}

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

// Binding 0.0.0.0 or * is not an address peers can dial: advertise the host name instead.
std::string advertised(const std::string& bound, const std::string& advertise) {
  if (!advertise.empty()) return advertise;
  for (const char* wildcard : {"tcp://0.0.0.0:", "tcp://*:"}) {
    const std::string w = wildcard;
    if (bound.rfind(w, 0) == 0) {
      char host[256] = {0};
      if (gethostname(host, sizeof host - 1) == 0) return "tcp://" + std::string(host) + ":" + bound.substr(w.size());
    }
  }
  return "";
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

actors::service_options to_service_options(const service_flags& f, const std::string& role) {
  actors::service_options o;
  o.name = !f.name.empty() ? f.name : (f.index >= 0 ? role + "-" + std::to_string(f.index) : role);
  o.listen = f.listen;
  o.advertise = f.advertise;
  o.coordinator = f.coordinator;
  o.index = f.index;
  o.threads = f.threads;
  o.heartbeat_interval = std::chrono::milliseconds(static_cast<long>(f.heartbeat_interval * 1000));
  o.request_timeout = std::chrono::milliseconds(static_cast<long>(f.request_timeout * 1000));
  o.max_frame_bytes = static_cast<std::size_t>(f.max_frame_mb) << 20;
  o.max_requests_in_flight = static_cast<std::uint32_t>(f.max_inflight_requests);
  return o;
}

std::unique_ptr<actors::transport> make_transport(const std::shared_ptr<zmq::context_t>& ctx, const std::string& name,
                                                  const transport::transport_security& security = {},
                                                  const service_flags* limits = nullptr) {
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

using starter = std::function<result<std::unique_ptr<actors::running_service>>(
    caf::actor_system&, std::unique_ptr<actors::transport>, const actors::service_options&)>;

// A shard's rows in RocksDB under `dir`, its memtables and block cache within `memory_mb`.
decltype(actors::service_options::open_storage) rocksdb_storage(const std::string& dir, int memory_mb) {
  const auto options = storage::rocksdb_rows_options::with_memory_budget(static_cast<std::size_t>(memory_mb) << 20);
  return [dir, options](std::uint32_t row_floats) -> result<std::unique_ptr<embedding::durable_rows>> {
    auto rows = storage::rocksdb_rows::open(dir, row_floats, options);
    if (!rows.is_ok()) return rows.error();
    return std::unique_ptr<embedding::durable_rows>(std::move(*rows));
  };
}

// The job's result as the coordinator reported it, kept (from an actor thread) until the
// services have stopped, then printed: the human summary, then the JSON line.
class kept_result {
 public:
  std::function<void(const job::job_report&, const std::string&)> keeper() {
    return [this](const job::job_report& report, const std::string& preface) {
      std::lock_guard<std::mutex> lock(mu_);
      report_ = report;
      preface_ = preface;
    };
  }
  // 0: finished and its last snapshot holds it; 3: finished, the last snapshot failed; 1: failed.
  int exit_status(bool finished) const {
    std::lock_guard<std::mutex> lock(mu_);
    return finished && report_ ? report_->exit_status() : 1;
  }
  void print() const {
    std::lock_guard<std::mutex> lock(mu_);
    if (!report_) return;
    if (!preface_.empty()) std::printf("%s\n", preface_.c_str());
    std::printf("%s%s\n", report_->summary().c_str(), report_->to_json().c_str());
    std::fflush(stdout);
  }

 private:
  mutable std::mutex mu_;
  std::optional<job::job_report> report_;
  std::string preface_;
};

// Role-specific flags and what they configure (a shard's storage).
struct role_flags {
  std::function<void(config::option_set&)> add;
  std::function<void(actors::service_options&)> configure;
};

// The service a shutdown signal interrupts. The signal thread only ends the service's wait; the
// thread that started the service stops and destroys it, so a stop never runs on an object that
// is being destroyed (it did: the signal thread's stop() woke the main thread, which destroyed
// the service while that stop() was still returning).
class signalled_service {
 public:
  void set(actors::running_service* service) {
    std::lock_guard<std::mutex> lock(mu_);
    service_ = service;
    if (service_ != nullptr && signal_ != 0) service_->interrupt();  // the signal came during start-up
  }
  void interrupt(int sig) {
    std::lock_guard<std::mutex> lock(mu_);
    signal_ = sig;
    if (service_ != nullptr) service_->interrupt();
  }
  int signal() const {
    std::lock_guard<std::mutex> lock(mu_);
    return signal_;
  }

 private:
  mutable std::mutex mu_;
  actors::running_service* service_ = nullptr;
  int signal_ = 0;
};

int run_member(const char* role, const args& a, const config::environment& env, const std::string& default_listen,
               bool indexed, const char* description, const starter& start, const role_flags& extra = {}) {
  service_flags f;
  config::option_set opts(role, description);
  add_service_flags(opts, f, default_listen, true, indexed);
  if (extra.add) extra.add(opts);
  if (auto st = opts.parse(a, env); !st.is_ok()) {
    std::fprintf(stderr, "shadowsync %s: %s\n", role, st.message().c_str());
    return 2;
  }
  if (opts.help_requested()) {
    std::printf("%s", opts.help().c_str());
    return 0;
  }
  if (indexed && f.index < 0) {
    std::fprintf(stderr, "shadowsync %s: --index is required\n", role);
    return 2;
  }
  transport::transport_security security;
  if (!load_security(role, f, security)) return 2;
  if (auto st = service::init_logging(f.log_level, f.log_format); !st.is_ok()) {
    std::fprintf(stderr, "shadowsync %s: %s\n", role, st.message().c_str());
    return 2;
  }
  auto options = to_service_options(f, role);
  options.advertise = advertised(f.listen, f.advertise);
  options.authority = authority_of(f, security);
  if (extra.configure) extra.configure(options);
  signalled_service running;
  std::atomic<bool> cancel{false};
  options.cancel = &cancel;
  service::shutdown_signal signals([&running, &cancel, &options](int sig) {
    spdlog::warn("{}: signal {}: leaving the job", options.name, sig);
    cancel.store(true);
    running.interrupt(sig);
  });
  // After the signal mask: a thread started earlier would take SIGTERM's default action.
  auto ops = ops_endpoint::start(f.ops_listen, options.name);
  if (!ops.is_ok()) {
    std::fprintf(stderr, "shadowsync %s: %s\n", role, ops.error().message().c_str());
    return 2;
  }
  service::periodic_memory_release memory_release(release_interval(f.release_memory_interval));
  auto cfg = actor_config(f.scheduler_threads);
  int rc = 0;
  {
    caf::actor_system sys{*cfg};
    auto ctx = transport::make_zmq_context();
    auto svc = start(sys, make_transport(ctx, options.name, security, &f), options);
    if (!svc.is_ok()) {
      spdlog::error("{}", svc.error().message());
      rc = cancel.load() ? 0 : 1;
    } else {
      running.set(svc->get());
      (*ops)->attach(svc->get());
      spdlog::info("{}: up{}", options.name, (*svc)->endpoint().empty() ? "" : " at " + (*svc)->endpoint());
      const bool finished = (*svc)->wait();
      (*ops)->stopping(finished ? "the job is done" : "stopping");
      running.set(nullptr);
      (*svc)->stop(finished ? "job done" : running.signal() != 0 ? "signal " + std::to_string(running.signal()) : "stopping");
      rc = finished ? 0 : (signals.received() ? 0 : 1);
      spdlog::info("{}: {}", options.name, finished ? "the job is done; exiting" : "stopped");
    }
  }
  return rc;
}

struct coordinator_flags {
  job::job_options job;
  service_flags service;
  std::string snapshot_dir;
  double snapshot_interval = 60;
  int snapshot_retain = 3;
  bool resume = false;
  std::string export_path;
  std::string export_dir;  // where `shadowsync export` may write; "" = the working directory
};

void add_coordinator_flags(config::option_set& opts, coordinator_flags& c) {
  add_service_flags(opts, c.service, "tcp://0.0.0.0:5555", false, false);
  opts.add("snapshot-dir", &c.snapshot_dir,
           "Where cluster snapshots go. A coordinator that finds snapshots of its job here continues the job "
           "from the newest valid one (a restart), or reports the result of a job that finished. Empty: no "
           "snapshots (a restarted coordinator starts the job over).");
  opts.add("snapshot-interval", &c.snapshot_interval,
           "Seconds between periodic cluster snapshots; 0: only on request (`shadowsync snapshot`).")
      .range(0.0, 86400.0 * 7);
  opts.add("snapshot-retain", &c.snapshot_retain, "Complete snapshots to keep (older ones are pruned).").range(1, 1000);
  opts.add("resume", &c.resume, "Require a snapshot to resume from in --snapshot-dir (fail if there is none).");
  opts.add("export", &c.export_path,
           "Write the final model here when the job ends (a model file for `shadowsync predict`).");
  opts.add("export-dir", &c.export_dir,
           "Where `shadowsync export --out P` may write: P relative to it, or absolute inside it; never inside "
           "--snapshot-dir, and an existing file is replaced only when it is a model file. Default: the "
           "coordinator's working directory.");
  job::add_job_options(opts, c.job);
}

// The export directory of a coordinator: the flag, else the working directory.
std::string export_dir_or_cwd(const std::string& flag) {
  std::error_code ec;
  return std::filesystem::absolute(flag.empty() ? std::filesystem::current_path(ec) : std::filesystem::path(flag), ec)
      .string();
}

// Creates `dir` (and its parents) if needed and checks that this process can write there.
status make_directory(const std::string& dir, const std::string& flag) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir, ec))
    return status(errc::invalid_argument, flag + " " + dir + ": cannot create the directory" +
                                              (ec ? ": " + ec.message() : std::string(" (a file is in the way)")));
  return job::check_writable_directory(dir, flag + " " + dir);
}

// A job refused before it starts (exit 2) still ends with a JSON line saying why, as a finished or
// failed one does, for the scripts that read only that line.
int refuse_job(const char* command, const std::string& why) {
  std::fprintf(stderr, "shadowsync %s: %s\n", command, why.c_str());
  std::printf("%s\n", json_object().add("command", "cluster").add("ok", false).add("error", why).str().c_str());
  std::fflush(stdout);
  return 2;
}

// Before anything trains: the final model's path can be written and every test and validation file
// is data of the job's schema, so that no such mistake is found only after the training.
status preflight(const job::job_options& job, const std::string& export_path) {
  SS_RETURN_IF_ERROR(job::check_output_path(export_path, "--export"));
  SS_RETURN_IF_ERROR(job::check_input_files(job.input, job.passes.validation, "--validation"));
  return job::check_input_files(job.input, job.test, "--test");
}

void configure_snapshots(const coordinator_flags& c, actors::coordinator_options& co) {
  if (!c.snapshot_dir.empty()) co.snapshots = job::directory_snapshot_store(c.snapshot_dir);
  co.snapshot_interval = c.snapshot_interval;
  co.snapshot_retain = c.snapshot_retain;
  co.require_resume = c.resume;
  co.export_path = c.export_path;
  co.export_dir = export_dir_or_cwd(c.export_dir);
  if (!c.snapshot_dir.empty()) co.protected_dirs.push_back(c.snapshot_dir);
}

}  // namespace

int run_coordinator(const args& a, const config::environment& env) {
  coordinator_flags c;
  config::option_set opts("coordinator",
                          "Runs a job's sync coordinator: members (shards, readers, trainers) register with it "
                          "and receive the job's configuration; it tracks their heartbeats, reports cluster "
                          "progress, builds the final model and scores it on the --test files. Ends with a "
                          "summary and one JSON line; exits 0 when the job finished.");
  add_coordinator_flags(opts, c);
  if (auto st = opts.parse(a, env); !st.is_ok()) {
    return refuse_job("coordinator", st.message());
  }
  if (opts.help_requested()) {
    std::printf("%s", opts.help().c_str());
    return 0;
  }
  if (auto st = service::init_logging(c.service.log_level, c.service.log_format); !st.is_ok()) {
    return refuse_job("coordinator", st.message());
  }
  if (auto st = job::check_job(c.job); !st.is_ok()) {
    return refuse_job("coordinator", st.message());
  }
  if (auto st = preflight(c.job, c.export_path); !st.is_ok()) {
    return refuse_job("coordinator", st.message());
  }
  if (!c.export_dir.empty()) {
    if (auto st = job::check_writable_directory(c.export_dir, "--export-dir"); !st.is_ok()) {
      return refuse_job("coordinator", st.message());
    }
  }
  if (!c.snapshot_dir.empty()) {
    if (auto st = make_directory(c.snapshot_dir, "--snapshot-dir"); !st.is_ok()) {
      return refuse_job("coordinator", st.message());
    }
  }
  transport::transport_security security;
  if (!load_security("coordinator", c.service, security)) return 2;
  auto options = to_service_options(c.service, "coordinator");
  options.advertise = advertised(c.service.listen, c.service.advertise);
  options.authority = authority_of(c.service, security);
  signalled_service running;
  service::shutdown_signal signals([&running](int sig) {
    spdlog::warn("coordinator: signal {}: stopping", sig);
    running.interrupt(sig);
  });
  // After the signal mask: a thread started earlier would take SIGTERM's default action.
  auto ops = ops_endpoint::start(c.service.ops_listen, options.name);
  if (!ops.is_ok()) {
    std::fprintf(stderr, "shadowsync coordinator: %s\n", ops.error().message().c_str());
    return 2;
  }
  service::periodic_memory_release memory_release(release_interval(c.service.release_memory_interval));
  actors::coordinator_options co;
  co.job = c.job;
  configure_snapshots(c, co);
  kept_result outcome;
  co.on_result = outcome.keeper();
  auto cfg = actor_config(c.service.scheduler_threads);
  int rc = 0;
  {
    caf::actor_system sys{*cfg};
    auto ctx = transport::make_zmq_context();
    auto svc = actors::start_coordinator(sys, make_transport(ctx, options.name, security, &c.service), options, co);
    if (!svc.is_ok()) {
      spdlog::error("{}", svc.error().message());
      return 1;
    }
    running.set(svc->get());
    (*ops)->attach(svc->get());
    spdlog::info("coordinator: up at {}; waiting for {} shard(s), {} reader(s) and trainers", (*svc)->endpoint(),
                 c.job.shards, c.job.readers);
    const bool finished = (*svc)->wait();
    // Members learn that the job ended from their next heartbeat: stay until they have left.
    if (!signals.received() &&
        !(*svc)->wait_for_members_to_leave(std::chrono::milliseconds(static_cast<long>(c.job.member_timeout * 1000))))
      spdlog::warn("coordinator: some members did not leave after the job ended");
    (*ops)->stopping(finished ? "the job is done" : "stopping");
    running.set(nullptr);
    (*svc)->stop(running.signal() != 0 ? "signal " + std::to_string(running.signal()) : "job ended");
    rc = signals.received() && !finished ? 0 : outcome.exit_status(finished);
    outcome.print();
  }
  return rc;
}

int run_shard(const args& a, const config::environment& env) {
  std::string data_dir;
  double flush_interval = 5;
  int storage_memory_mb = 64;
  role_flags extra;
  extra.add = [&](config::option_set& opts) {
    opts.add("data-dir", &data_dir,
             "Where the shard keeps its rows (RocksDB) and its snapshot checkpoints; a restarted shard loads "
             "them from here. Empty: rows live in memory only.");
    opts.add("flush-interval", &flush_interval,
             "Seconds between writes of changed rows to --data-dir (a kill -9 loses at most this much of the "
             "shard's updates; SIGTERM loses none). 0: only at snapshots and on SIGTERM.")
        .range(0.0, 86400.0);
    opts.add("storage-memory-mb", &storage_memory_mb,
             "RocksDB's memory with --data-dir (two memtables of a quarter each, half for the block cache), on "
             "top of the rows themselves; reported as storage_memory_bytes and storage_memory_bound_bytes.")
        .range(4, 1 << 20);
  };
  extra.configure = [&](actors::service_options& o) {
    o.flush_interval = flush_interval;
    if (data_dir.empty()) return;
    o.open_storage = rocksdb_storage(data_dir, storage_memory_mb);
  };
  return run_member("shard", a, env, "tcp://0.0.0.0:5556", true,
                    "Runs an embedding shard server: it holds the rows of every table that hash to its "
                    "--index, serves batched lookups and applies gradient pushes with the job's sparse "
                    "optimizer, and with --data-dir keeps them in RocksDB and checkpoints them for cluster "
                    "snapshots. The job's settings come from the coordinator.",
                    actors::start_shard, extra);
}

int run_reader(const args& a, const config::environment& env) {
  return run_member("reader", a, env, "tcp://0.0.0.0:5557", true,
                    "Runs a data reader: it reads its share of the job's training files (file i, i+N, ... "
                    "for --index i of N readers), parses and hashes them, and hands batches to trainers "
                    "that ask (each batch to exactly one trainer), tracking which were trained.",
                    actors::start_reader);
}

int run_sync_server(const args& a, const config::environment& env) {
  return run_member("sync-server", a, env, "tcp://0.0.0.0:5558", true,
                    "Runs an extra sync server: it holds slice --index of the dense parameters' "
                    "synchronization state (the coordinator holds slice 0; the job's --sync-servers sets "
                    "how many slices, i.e. the sync capacity) and serves the trainers' sync rounds for it.",
                    actors::start_sync_server);
}

int run_trainer(const args& a, const config::environment& env) {
  return run_member("trainer", a, env, "tcp://0.0.0.0:0", false,
                    "Runs a trainer: --threads Hogwild workers share one dense replica, pull batches from "
                    "the readers, look rows up on the shards, train and push gradients back. The job's "
                    "settings come from the coordinator.",
                    actors::start_trainer);
}

namespace {

struct local_flags {
  job::job_options job;
  int trainers = 2;
  int workers = 1;         // Hogwild workers per trainer
  int shard_threads = 1;
  bool processes = false;
  std::uint64_t rows = 200000;  // generated when --train is not given
  std::uint64_t test_rows = 20000;
  std::string data_dir = "data/local";
  int scheduler_threads = 0;
  std::string log_level = "info";
  std::string log_format = "human";
  double startup_timeout = 60;
  // State and supervision (--processes).
  std::string state_dir;   // shards' rows and the coordinator's snapshots; "" = a temporary one
  std::string run_dir;     // pid files and the coordinator's output; "" = a temporary one
  bool keep_state = false;
  double snapshot_interval = 60;
  std::string export_path;  // the final model file
  int snapshot_retain = 3;
  double flush_interval = 5;
  int storage_memory_mb = 64;
  double restart_delay = 1;
  int max_restarts = 10;
  std::string curve_dir;  // --processes: CURVE keys of every child (made here when absent); "" = plain
};

std::string self_exe() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("shadowsync") : p.string();
}

int free_port() {
  // Bind a throwaway socket to port 0 and read what the kernel chose.
  auto ctx = transport::make_zmq_context();
  transport::zmq_transport probe(ctx);
  auto ep = probe.listen("tcp://127.0.0.1:0");
  probe.stop();
  if (!ep.is_ok()) return 0;
  return std::atoi(ep->substr(ep->rfind(':') + 1).c_str());
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// One service of a local --processes cluster: how to start it and its current process.
struct child {
  std::string name;
  std::string command;  // a shell command line
  bool coordinator = false;
  pid_t pid = -1;
  int restarts = 0;
  bool done = false;  // exited after the job ended; not restarted
};

pid_t spawn_child(const child& c, const std::filesystem::path& run_dir) {
  const pid_t pid = fork();
  if (pid == 0) {
    // The coordinator's stdout (summary and JSON line) goes to a file the supervisor prints at the
    // end; a restarted coordinator appends to it. Other services' stdout is not needed.
    const std::string out = c.coordinator ? " >>" + shell_quote((run_dir / "coordinator.out").string()) : " >/dev/null";
    execl("/bin/sh", "sh", "-c", ("exec " + c.command + out).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::ofstream(run_dir / (c.name + ".pid")) << pid << "\n";
  return pid;
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

// The job's state as the coordinator reports it ("running", "done", ...), or "" when it does not
// answer (it is restarting).
std::string job_state_of(const std::string& coordinator, const transport::transport_security& security = {}) {
  const auto status = json_value::parse(query_status(coordinator, 2.0, security));
  return status.is_ok() ? (*status)["service"]["state"].string() : std::string();
}

// A coordinator prints its result line when the job ends; one stopped by a signal before that
// exits 0 too (a graceful stop), but the job goes on when it comes back.
bool has_result(const std::filesystem::path& coordinator_out) {
  std::ifstream in(coordinator_out);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] == '{' && job::job_report::from_json(line).is_ok()) return true;
  return false;
}

// Runs the cluster as child processes of this binary on loopback and supervises them: a service
// that dies before the job ends (killed, or stopped by a signal) is started again with the same
// flags, as an orchestrator would; it rejoins from its state (shards: their --data-dir; the
// coordinator: its --snapshot-dir). Relays the coordinator's result.
int run_local_processes(const local_flags& l, const std::string& job_text) {
  const std::string exe = self_exe();
  const int port = free_port();
  if (port == 0) {
    spdlog::error("local: no free tcp port on 127.0.0.1");
    return 1;
  }
  const std::string coordinator = "tcp://127.0.0.1:" + std::to_string(port);
  std::error_code ec;
  std::filesystem::path temp;
  if (l.run_dir.empty()) {
    temp = std::filesystem::temp_directory_path(ec) / ("shadowsync-local-" + std::to_string(getpid()));
    if (ec) {
      spdlog::error("local: no temporary directory ({}; TMPDIR={}): set TMPDIR or give --run-dir", ec.message(),
                    std::getenv("TMPDIR") != nullptr ? std::getenv("TMPDIR") : "");
      return 2;
    }
  }
  const std::filesystem::path run_dir = l.run_dir.empty() ? temp : std::filesystem::path(l.run_dir);
  const std::filesystem::path state_dir = l.state_dir.empty() ? run_dir / "state" : std::filesystem::path(l.state_dir);
  for (const auto& [dir, flag] : {std::pair{run_dir, "--run-dir"}, std::pair{state_dir, "--state-dir"}}) {
    if (auto st = make_directory(dir.string(), flag); !st.is_ok()) {
      spdlog::error("local: {}", st.message());
      return 2;
    }
  }
  std::filesystem::remove(run_dir / "coordinator.out", ec);
  const std::string config = (run_dir / "job.ini").string();
  {
    // For `shadowsync status --coordinator $(cat RUN_DIR/coordinator.endpoint)` and tools.
    std::ofstream(run_dir / "coordinator.endpoint") << coordinator << "\n";
  }
  {
    // The job section, renamed for the coordinator command.
    std::string text = job_text;
    const auto at = text.find("[job]");
    if (at != std::string::npos) text.replace(at, 5, "[coordinator]");
    std::ofstream f(config);
    f << text;
  }
  const std::string common = " --log-level " + l.log_level + " --log-format " + l.log_format;
  const std::string timing = " --heartbeat-interval " + std::to_string(l.job.heartbeat_interval) +
                             " --request-timeout " + std::to_string(l.job.request_timeout);
  std::vector<child> children;
  auto add = [&children](std::string name, std::string command, bool is_coordinator = false) {
    child c;
    c.name = std::move(name);
    c.command = std::move(command);
    c.coordinator = is_coordinator;
    children.push_back(std::move(c));
  };
  add("coordinator",
      shell_quote(exe) + " coordinator --config " + shell_quote(config) + " --listen " + coordinator +
          " --snapshot-dir " + shell_quote((state_dir / "snapshots").string()) + " --snapshot-interval " +
          std::to_string(l.snapshot_interval) + " --snapshot-retain " + std::to_string(l.snapshot_retain) +
          (l.export_path.empty() ? std::string()
                                 : " --export " + shell_quote(std::filesystem::absolute(l.export_path).string())) +
          " --export-dir " + shell_quote(export_dir_or_cwd("")) +
          common,
      true);
  for (int i = 0; i < l.job.shards; ++i)
    add("shard-" + std::to_string(i),
        shell_quote(exe) + " shard --index " + std::to_string(i) + " --coordinator " + coordinator +
            " --listen tcp://127.0.0.1:0 --threads " + std::to_string(l.shard_threads) + " --data-dir " +
            shell_quote((state_dir / ("shard-" + std::to_string(i))).string()) + " --flush-interval " +
            std::to_string(l.flush_interval) + " --storage-memory-mb " + std::to_string(l.storage_memory_mb) + timing +
            common);
  for (int i = 1; i < l.job.sync_servers; ++i)
    add("sync-" + std::to_string(i), shell_quote(exe) + " sync-server --index " + std::to_string(i) +
                                         " --coordinator " + coordinator + " --listen tcp://127.0.0.1:0" + timing + common);
  for (int i = 0; i < l.job.readers; ++i)
    add("reader-" + std::to_string(i), shell_quote(exe) + " reader --index " + std::to_string(i) + " --coordinator " +
                                           coordinator + " --listen tcp://127.0.0.1:0" + timing + common);
  for (int i = 0; i < l.trainers; ++i)
    add("trainer-" + std::to_string(i), shell_quote(exe) + " trainer --name trainer-" + std::to_string(i) +
                                            " --coordinator " + coordinator + " --listen tcp://127.0.0.1:0 --threads " +
                                            std::to_string(l.workers) + timing + common);
  // --curve-dir: every child gets the cluster's keys; the supervisor asks as member "local".
  transport::transport_security security;
  if (!l.curve_dir.empty()) {
    const std::filesystem::path keys = std::filesystem::absolute(l.curve_dir);
    if (!std::filesystem::exists(keys / "authorized_keys")) {
      std::vector<std::string> members{"local", "admin"};
      for (const auto& c : children) members.push_back(c.name);
      if (auto st = write_cluster_keys(keys.string(), members, {"local", "admin"}, nullptr); !st.is_ok()) {
        spdlog::error("local: --curve-dir: {}", st.message());
        return 1;
      }
      spdlog::info("local: made a CURVE key set in {} (admin.key is for shadowsync status/snapshot/export)",
                   keys.string());
    }
    for (auto& c : children) {
      if (!std::filesystem::exists(keys / (c.name + ".key"))) {
        spdlog::error("local: --curve-dir {} has no key for {} (made for another cluster shape?); use a new directory",
                      keys.string(), c.name);
        return 1;
      }
      c.command += " --curve-server-key " + shell_quote((keys / "server.key").string()) + " --curve-client-key " +
                   shell_quote((keys / (c.name + ".key")).string()) + " --curve-authorized-keys " +
                   shell_quote((keys / "authorized_keys").string());
    }
    auto sec = transport::load_curve_security((keys / "server.key").string(), (keys / "local.key").string(),
                                              (keys / "authorized_keys").string(), false);
    if (!sec.is_ok()) {
      spdlog::error("local: --curve-dir: {}", sec.error().message());
      return 1;
    }
    security = *sec;
  }
  for (auto& c : children) {
    c.pid = spawn_child(c, run_dir);
    spdlog::info("local: started {} (pid {})", c.name, c.pid);
  }
  std::atomic<bool> interrupted{false};
  service::shutdown_signal signals([&interrupted](int) { interrupted.store(true); });
  int rc = 1;
  bool finished = false;
  while (!finished) {
    if (interrupted.load()) {
      spdlog::warn("local: interrupted: stopping the cluster");
      for (auto& c : children)
        if (c.pid > 0) kill(c.pid, SIGTERM);
      rc = 130;
      break;
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    auto it = std::find_if(children.begin(), children.end(), [pid](const child& c) { return c.pid == pid; });
    if (it == children.end()) continue;
    child& c = *it;
    c.pid = -1;
    const bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (c.coordinator && clean && has_result(run_dir / "coordinator.out")) {
      rc = 0;  // the job is over; its result is in coordinator.out
      break;
    }
    if (c.coordinator && WIFEXITED(status) && WEXITSTATUS(status) == 3 && has_result(run_dir / "coordinator.out")) {
      spdlog::warn("local: the job finished, but its last snapshot failed (see snapshot_error in the result)");
      rc = 3;
      break;
    }
    if (c.coordinator && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
      spdlog::error("local: the coordinator {}: the job failed", describe_exit(status));
      rc = 1;
      break;
    }
    if (!c.coordinator) {
      const std::string state = job_state_of(coordinator, security);
      if (state == "done" || state == "failed") {
        c.done = true;  // it left because the job ended
        continue;
      }
      if (clean && state.empty()) {
        // No answer: the coordinator may have ended the job and exited already (its exit is
        // simply not reaped yet). A member that left cleanly then is done, not to be restarted.
        // Peek (WNOWAIT) so the loop above still reaps and judges the coordinator's exit.
        auto coord = std::find_if(children.begin(), children.end(), [](const child& x) { return x.coordinator; });
        siginfo_t info{};
        if (coord != children.end() && coord->pid > 0 &&
            waitid(P_PID, static_cast<id_t>(coord->pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
            info.si_pid == coord->pid && has_result(run_dir / "coordinator.out")) {
          c.done = true;
          continue;
        }
      }
    }
    if (c.restarts >= l.max_restarts) {
      spdlog::error("local: {} {} and was restarted {} times already: giving up", c.name, describe_exit(status),
                    c.restarts);
      rc = 1;
      break;
    }
    ++c.restarts;
    spdlog::warn("local: {} {} before the job ended: starting it again in {:.1f}s (restart {} of at most {})", c.name,
                 describe_exit(status), l.restart_delay, c.restarts, l.max_restarts);
    std::this_thread::sleep_for(std::chrono::duration<double>(l.restart_delay));
    c.pid = spawn_child(c, run_dir);
    spdlog::info("local: {} is pid {}", c.name, c.pid);
  }
  // The members leave once they see the job end; give them a moment, then make sure.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(rc == 0 ? 10 : 3);
  for (auto& c : children) {
    if (c.pid <= 0) continue;
    if (rc != 0 && rc != 130) kill(c.pid, SIGTERM);
    int st = 0;
    while (waitpid(c.pid, &st, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        spdlog::warn("local: {} (pid {}) did not exit; terminating it", c.name, c.pid);
        kill(c.pid, SIGKILL);
        waitpid(c.pid, &st, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  std::ifstream out(run_dir / "coordinator.out");
  std::stringstream text;
  text << out.rdbuf();
  std::printf("%s", text.str().c_str());
  std::fflush(stdout);
  if (l.run_dir.empty() && !l.keep_state) std::filesystem::remove_all(temp, ec);
  return rc;
}

int run_local_in_process(const local_flags& l) {
  std::vector<std::unique_ptr<actors::running_service>> services;
  kept_result outcome;
  std::atomic<bool> interrupted{false};
  std::mutex services_mu;
  service::shutdown_signal signals([&](int) {
    interrupted.store(true);
    std::lock_guard<std::mutex> lock(services_mu);
    for (auto& s : services) s->stop("interrupted");
  });
  service::periodic_memory_release memory_release(release_interval(kDefaultReleaseMemorySeconds));
  auto cfg = actor_config(l.scheduler_threads);
  int rc = 1;
  {
    caf::actor_system sys{*cfg};
    auto ctx = transport::make_zmq_context();
    auto base = [&](const std::string& name) {
      actors::service_options o;
      o.name = name;
      o.listen = "inproc://" + name;
      o.coordinator = "inproc://coordinator";
      o.heartbeat_interval = std::chrono::milliseconds(static_cast<long>(l.job.heartbeat_interval * 1000));
      o.request_timeout = std::chrono::milliseconds(static_cast<long>(l.job.request_timeout * 1000));
      o.register_timeout = std::chrono::milliseconds(static_cast<long>(l.startup_timeout * 1000));
      return o;
    };
    actors::coordinator_options co;
    co.job = l.job;
    co.export_path = l.export_path;
    co.export_dir = export_dir_or_cwd("");
    if (!l.state_dir.empty()) co.protected_dirs.push_back(l.state_dir);
    if (!l.state_dir.empty()) {
      co.snapshots = job::directory_snapshot_store((std::filesystem::path(l.state_dir) / "snapshots").string());
      co.snapshot_interval = l.snapshot_interval;
      co.snapshot_retain = l.snapshot_retain;
    }
    co.on_result = outcome.keeper();
    auto add = [&](result<std::unique_ptr<actors::running_service>> r) {
      if (!r.is_ok()) {
        spdlog::error("local: {}", r.error().message());
        return false;
      }
      std::lock_guard<std::mutex> lock(services_mu);
      services.push_back(std::move(*r));
      return true;
    };
    bool ok = add(actors::start_coordinator(sys, make_transport(ctx, "coordinator"), base("coordinator"), co));
    for (int i = 0; ok && i < l.job.shards; ++i) {
      auto o = base("shard-" + std::to_string(i));
      o.index = i;
      o.threads = l.shard_threads;
      o.flush_interval = l.flush_interval;
      if (!l.state_dir.empty()) {
        o.open_storage = rocksdb_storage((std::filesystem::path(l.state_dir) / o.name).string(), l.storage_memory_mb);
      }
      ok = add(actors::start_shard(sys, make_transport(ctx, o.name), o));
    }
    for (int i = 1; ok && i < l.job.sync_servers; ++i) {
      auto o = base("sync-" + std::to_string(i));
      o.index = i;
      ok = add(actors::start_sync_server(sys, make_transport(ctx, o.name), o));
    }
    for (int i = 0; ok && i < l.job.readers; ++i) {
      auto o = base("reader-" + std::to_string(i));
      o.index = i;
      ok = add(actors::start_reader(sys, make_transport(ctx, o.name), o));
    }
    for (int i = 0; ok && i < l.trainers; ++i) {
      auto o = base("trainer-" + std::to_string(i));
      o.threads = l.workers;
      ok = add(actors::start_trainer(sys, make_transport(ctx, o.name), o));
    }
    if (ok && !interrupted.load()) {
      const bool finished = services.front()->wait();
      // Let the members see the end in their next heartbeat, then stop everything.
      for (std::size_t i = 1; i < services.size(); ++i)
        services[i]->wait_for(std::chrono::milliseconds(static_cast<long>(l.job.member_timeout * 1000)));
      rc = outcome.exit_status(finished);
    }
    std::lock_guard<std::mutex> lock(services_mu);
    for (auto it = services.rbegin(); it != services.rend(); ++it) (*it)->stop("local cluster done");
    services.clear();
  }
  outcome.print();
  if (interrupted.load()) return 130;
  return rc;
}

}  // namespace

int run_local(const args& a, const config::environment& env) {
  local_flags l;
  l.job.progress_interval = 5;
  config::option_set opts("local",
                          "Runs a whole shadowsync cluster on this machine: a coordinator, --shards embedding "
                          "shard servers, --readers data readers and --trainers trainers, as actors in this "
                          "process (ZeroMQ inproc) or, with --processes, as separate processes on loopback tcp. "
                          "Trains on the --train files, or on data generated from a hidden teacher when none "
                          "are given, and ends with a summary and one JSON line like `shadowsync train`.");
  opts.add("trainers", &l.trainers, "Trainers in the cluster.").range(1, 256);
  opts.add("threads", &l.workers, "Hogwild worker threads per trainer.").range(1, 256);
  opts.add("shard-threads", &l.shard_threads, "Request workers per shard.").range(1, 256);
  opts.add("processes", &l.processes, "Run every service as its own process on loopback tcp.");
  opts.add("rows", &l.rows, "Rows to generate when no --train files are given.").min(1);
  opts.add("test-rows", &l.test_rows, "Test rows to generate when no --train files are given.");
  opts.add("data-dir", &l.data_dir, "Where generated data goes (reused when already there).");
  opts.add("scheduler-threads", &l.scheduler_threads, "CAF scheduler threads; 0 = one per core (at least 2).")
      .range(0, 256);
  opts.add("startup-timeout", &l.startup_timeout, "Seconds a service may wait to join the job.").min(1.0);
  opts.add("state-dir", &l.state_dir,
           "Where the shards keep their rows and the coordinator its snapshots (a later run with the same "
           "--state-dir resumes the job, or reports its result). Default: a temporary directory (with "
           "--processes; in one process: no persistence).");
  opts.add("run-dir", &l.run_dir, "--processes: where the supervisor writes <service>.pid files and the "
                                  "coordinator's output. Default: a temporary directory.");
  opts.add("keep-state", &l.keep_state, "--processes: keep the temporary state directory after the run.");
  opts.add("snapshot-interval", &l.snapshot_interval, "Seconds between cluster snapshots; 0: only on request.")
      .range(0.0, 86400.0 * 7);
  opts.add("snapshot-retain", &l.snapshot_retain, "Complete snapshots to keep.").range(1, 1000);
  opts.add("export", &l.export_path, "Write the final model here when the job ends (for `shadowsync predict`).");
  opts.add("flush-interval", &l.flush_interval, "Seconds between a shard's writes of changed rows to storage.")
      .range(0.0, 86400.0);
  opts.add("storage-memory-mb", &l.storage_memory_mb,
           "RocksDB's memory per shard with a state directory (memtables + block cache; see `shadowsync shard`).")
      .range(4, 1 << 20);
  opts.add("restart-delay", &l.restart_delay, "--processes: seconds before a service that died is started again.")
      .range(0.0, 3600.0);
  opts.add("max-restarts", &l.max_restarts, "--processes: restarts of one service before the run gives up.")
      .range(0, 100000);
  opts.add("log-level", &l.log_level, "Log level.").choices({"trace", "debug", "info", "warn", "error", "off"});
  opts.add("log-format", &l.log_format, "Log line format.").choices({"human", "json"});
  opts.add("curve-dir", &l.curve_dir,
           "--processes: run every link with CURVE, with the key set in this directory (made with `shadowsync "
           "keygen --cluster` when it has no authorized_keys; DIR/admin.key is for shadowsync status/snapshot/export "
           "with --curve-server-key DIR/server.pub). Empty: plain.");
  job::add_job_options(opts, l.job);
  if (auto st = opts.parse(a, env); !st.is_ok()) {
    return refuse_job("local", st.message());
  }
  if (opts.help_requested()) {
    std::printf("%s", opts.help().c_str());
    return 0;
  }
  if (auto st = service::init_logging(l.log_level, l.log_format); !st.is_ok()) {
    return refuse_job("local", st.message());
  }
  // Every trainer of a local cluster starts together: the job waits for all of them.
  if (opts.source("min-trainers") == config::value_source::default_value) l.job.min_trainers = l.trainers;
  if (l.job.train.empty() && l.job.simulate_step_ms <= 0) {
    const std::string dir = l.data_dir + "/rows-" + std::to_string(l.rows);
    const std::string train = dir + "/train.tsv", test = dir + "/test.tsv";
    if (!std::filesystem::exists(dir + "/teacher.json")) {
      spdlog::info("local: no --train files; generating {} rows from a hidden teacher into {}", l.rows, dir);
      std::filesystem::create_directories(dir);
      data::generator_options g;
      g.rows = l.rows;
      auto report = data::generate_train_test(g, l.test_rows, train, test);
      if (!report.is_ok()) {
        spdlog::error("local: {}", report.error().message());
        return 1;
      }
      std::ofstream(dir + "/teacher.json") << "{\"bayes_ne\":" << report->test.bayes_ne << "}\n";
      spdlog::info("local: the teacher's Bayes-optimal test NE is {:.5f}", report->test.bayes_ne);
    }
    l.job.train = {train};
    if (l.test_rows > 0 && l.job.test.empty()) l.job.test = {test};
  }
  if (auto st = job::resolve_feature_counts(l.job); !st.is_ok()) {
    return refuse_job("local", st.message());
  }
  if (auto st = job::check_job(l.job); !st.is_ok()) {
    return refuse_job("local", st.message());
  }
  if (auto st = preflight(l.job, l.export_path); !st.is_ok()) {
    return refuse_job("local", st.message());
  }
  if (!l.state_dir.empty()) {
    if (auto st = make_directory(l.state_dir, "--state-dir"); !st.is_ok()) {
      return refuse_job("local", st.message());
    }
  }
  spdlog::info("local: {} trainer(s) x {} thread(s), {} shard(s), {} reader(s), {}", l.trainers, l.workers,
               l.job.shards, l.job.readers, l.processes ? "separate processes on loopback" : "in this process");
  if (!l.curve_dir.empty() && !l.processes) {
    return refuse_job("local", "--curve-dir needs --processes (in one process the services talk over inproc://, "
                               "which never leaves the process and which libzmq does not encrypt)");
  }
  if (l.processes) return run_local_processes(l, job::job_config_text(l.job));
  return run_local_in_process(l);
}

}  // namespace ss::cli
