// `shadowsync local --processes`: the cluster as child processes of this binary on loopback, and
// their supervisor. A service that dies before the job ends (killed, or stopped by a signal) is
// started again with the same flags, as an orchestrator would; it rejoins from its state (shards:
// their --data-dir; the coordinator: its --snapshot-dir). Shards follow `shadowsync reshard`: the
// new ones are started, those that leave are not started again. The coordinator's result is relayed.
//
// The supervisor sleeps in one poll() on the children's pidfds, a wake-up from the signal thread,
// the deadline of the next restart and that of the next look at the job's shard count (a second).
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "child_process.hpp"
#include "client.hpp"
#include "cluster_job.hpp"
#include "commands.hpp"
#include "local_cluster.hpp"
#include "ss/core/json_value.hpp"
#include "ss/service/shutdown_signal.hpp"
#include "ss/transport/zmq_transport.hpp"

namespace ss::cli {
namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

std::string self_exe() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("shadowsync") : p.string();
}

// The kernel's range of ports for port-0 binds ("32768 60999" by default).
std::pair<int, int> ephemeral_ports() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int lo = 32768, hi = 60999;
  in >> lo >> hi;
  return {lo, hi};
}

// A free port for the coordinator, below the kernel's ephemeral range: every other service binds
// port 0, and a port from that range, once free, could go to one of them (a service started
// meanwhile, or restarted while the coordinator is down), leaving the coordinator unable to bind
// its endpoint again. Tried by binding a throwaway socket.
int free_port() {
  const int below = ephemeral_ports().first;
  const int lo = std::max(1024, below / 2);
  if (below - lo < 16) return 0;
  std::mt19937 pick(std::random_device{}());
  std::uniform_int_distribution<int> port(lo, below - 1);
  auto ctx = transport::make_zmq_context();
  for (int attempt = 0; attempt < 64; ++attempt) {
    const int p = port(pick);
    transport::zmq_transport probe(ctx);
    auto ep = probe.listen("tcp://127.0.0.1:" + std::to_string(p));
    probe.stop();
    if (ep.is_ok()) return p;
  }
  return 0;
}

// Where a run keeps its files, and the coordinator's endpoint.
struct run_layout {
  fs::path temp;       // the temporary run directory when there is no --run-dir ("" otherwise)
  fs::path run_dir;    // <service>.pid, coordinator.out, coordinator.endpoint, cluster.ini
  fs::path state_dir;  // the shards' rows and the coordinator's snapshots
  std::string coordinator;
  fs::path coordinator_out() const { return run_dir / "coordinator.out"; }
  fs::path settings() const { return run_dir / "cluster.ini"; }
};

// The run's directories and files, before any service starts. Errors: invalid_argument for a
// directory that cannot be used (exit 2), unavailable for no free port (exit 1).
result<run_layout> prepare_run(local_flags& l) {
  run_layout r;
  const int port = free_port();
  if (port == 0) return status(errc::unavailable, "no free tcp port on 127.0.0.1");
  r.coordinator = "tcp://127.0.0.1:" + std::to_string(port);
  std::error_code ec;
  if (l.run_dir.empty()) {
    r.temp = fs::temp_directory_path(ec) / ("shadowsync-local-" + std::to_string(getpid()));
    if (ec) {
      const char* tmpdir = std::getenv("TMPDIR");
      return status(errc::invalid_argument, "no temporary directory (" + ec.message() + "; TMPDIR=" +
                                                (tmpdir != nullptr ? tmpdir : "") + "): set TMPDIR or give --run-dir");
    }
  }
  r.run_dir = l.run_dir.empty() ? r.temp : fs::path(l.run_dir);
  r.state_dir = l.state_dir.empty() ? r.run_dir / "state" : fs::path(l.state_dir);
  SS_RETURN_IF_ERROR(make_directory(r.run_dir.string(), "--run-dir"));
  SS_RETURN_IF_ERROR(make_directory(r.state_dir.string(), "--state-dir"));
  fs::remove(r.coordinator_out(), ec);
  // For `shadowsync status --coordinator $(cat RUN_DIR/coordinator.endpoint)` and tools.
  std::ofstream(r.run_dir / "coordinator.endpoint") << r.coordinator << "\n";
  // Every role's settings, a section each: what every child reads with --config.
  std::ofstream settings(r.settings());
  for (service_role* role : std::initializer_list<service_role*>{&l.roles.coordinator, &l.roles.shard,
                                                                  &l.roles.trainer})
    settings << role->settings_config() << "\n";
  if (!settings.flush()) return status(errc::invalid_argument, "cannot write " + r.settings().string());
  return r;
}

// One service of the cluster: how to start it, and its process.
struct supervised_child {
  std::string name;
  std::vector<std::string> argv;
  bool coordinator = false;
  int shard = -1;  // a shard's index
  child_process process;
  int restarts = 0;
  std::optional<clock_type::time_point> restart_at;  // died before the job ended; started again then
};

// One service's command line: it reads its role's settings from the run's config file and is
// given its place and its instance's flags.
supervised_child plan_child(const local_flags& l, const run_layout& r, std::string name, const service_role& role,
                            const std::vector<std::string>& flags) {
  supervised_child c;
  c.name = std::move(name);
  c.coordinator = &role == &l.roles.coordinator;
  c.argv = {self_exe(), role.kind().command, "--config", r.settings().string()};
  const args place = role.placement(r.state_dir.string(), c.name);
  c.argv.insert(c.argv.end(), place.begin(), place.end());
  c.argv.insert(c.argv.end(), flags.begin(), flags.end());
  if (!c.coordinator) {
    c.argv.insert(c.argv.end(), {"--coordinator", r.coordinator, "--listen", "tcp://127.0.0.1:0", "--heartbeat-interval",
                                 std::to_string(l.job.heartbeat_interval), "--request-timeout",
                                 std::to_string(l.job.request_timeout)});
  }
  c.argv.insert(c.argv.end(), {"--log-level", l.log.level, "--log-format", l.log.format});
  return c;
}

std::vector<std::string> indexed(int i) { return {"--index", std::to_string(i)}; }

supervised_child plan_shard(const local_flags& l, const run_layout& r, int index) {
  auto flags = indexed(index);
  flags.insert(flags.end(), {"--threads", std::to_string(l.shard_threads)});
  auto c = plan_child(l, r, "shard-" + std::to_string(index), l.roles.shard, flags);
  c.shard = index;
  return c;
}

// The command lines of the cluster's services, the coordinator first.
std::vector<supervised_child> plan_children(const local_flags& l, const run_layout& r) {
  std::vector<supervised_child> children;
  std::vector<std::string> coordinator = {"--listen", r.coordinator, "--export-dir", export_dir_or_cwd("")};
  if (!l.ops_listen.empty()) coordinator.insert(coordinator.end(), {"--ops-listen", l.ops_listen});
  children.push_back(plan_child(l, r, "coordinator", l.roles.coordinator, coordinator));
  for (int i = 0; i < std::max(l.job.shards, l.shards_to_start); ++i) children.push_back(plan_shard(l, r, i));
  for (int i = 1; i < l.job.sync_servers; ++i)
    children.push_back(plan_child(l, r, "sync-" + std::to_string(i), l.roles.sync_server, indexed(i)));
  for (int i = 0; i < l.job.readers; ++i)
    children.push_back(plan_child(l, r, "reader-" + std::to_string(i), l.roles.reader, indexed(i)));
  for (int i = 0; i < l.trainers; ++i) {
    const std::string name = "trainer-" + std::to_string(i);
    children.push_back(plan_child(l, r, name, l.roles.trainer, {"--name", name, "--threads", std::to_string(l.workers)}));
  }
  return children;
}

// --curve-dir: every child gets the cluster's keys (made here when the directory has none); the
// supervisor asks the coordinator as member "local".
result<transport::transport_security> use_curve_keys(const local_flags& l, std::vector<supervised_child>& children) {
  if (l.curve_dir.empty()) return transport::transport_security{};
  const fs::path keys = fs::absolute(l.curve_dir);
  if (!fs::exists(keys / "authorized_keys")) {
    std::vector<std::string> members{"local", "admin"};
    for (const auto& c : children) members.push_back(c.name);
    const status made = write_cluster_keys(keys.string(), members, {"local", "admin"}, nullptr);
    SS_RETURN_IF_ERROR(made.with_context("--curve-dir"));
    spdlog::info("local: made a CURVE key set in {} (admin.key is for shadowsync status/snapshot/export)",
                 keys.string());
  }
  for (auto& c : children) {
    if (!fs::exists(keys / (c.name + ".key")))
      return status(errc::invalid_argument, "--curve-dir " + keys.string() + " has no key for " + c.name +
                                                " (made for another cluster shape?); use a new directory");
    c.argv.insert(c.argv.end(), {"--curve-server-key", (keys / "server.key").string(), "--curve-client-key",
                                 (keys / (c.name + ".key")).string(), "--curve-authorized-keys",
                                 (keys / "authorized_keys").string()});
  }
  auto security = transport::load_curve_security((keys / "server.key").string(), (keys / "local.key").string(),
                                                 (keys / "authorized_keys").string(), false);
  if (!security.is_ok()) return security.error().with_context("--curve-dir");
  return security;
}

// The job's state as the coordinator reports it ("running", "done", ...), or "" when it does not
// answer (it is restarting).
std::string job_state_of(const std::string& coordinator, const transport::transport_security& security) {
  const auto status = json_value::parse(query_status(coordinator, 2.0, security));
  return status.is_ok() ? (*status)["service"]["state"].string() : std::string();
}

// A coordinator prints its result line when the job ends; one stopped by a signal before that
// exits 0 too (a graceful stop), but the job goes on when it comes back.
bool has_result(const fs::path& coordinator_out) {
  std::ifstream in(coordinator_out);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] == '{' && job::job_report::from_json(line).is_ok()) return true;
  return false;
}

int milliseconds_until(clock_type::time_point t) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(t - clock_type::now()).count();
  return static_cast<int>(std::clamp<long long>(left + 1, 0, 24LL * 3600 * 1000));
}

class supervisor {
 public:
  supervisor(const local_flags& l, const run_layout& run, std::vector<supervised_child> children,
             transport::transport_security security)
      : l_(l), run_(run), children_(std::move(children)), security_(std::move(security)),
        wake_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)), signals_([this](int sig) {
          // A following job ends as at the end of its data (a second signal exits at once).
          if (l_.job.follow.enabled) {
            end_signal_.store(sig);
          } else {
            interrupted_.store(true);
          }
          const std::uint64_t one = 1;
          const ssize_t written = ::write(wake_fd_, &one, sizeof one);  // fails only when the counter is full
          (void)written;
        }) {}
  ~supervisor() { ::close(wake_fd_); }
  supervisor(const supervisor&) = delete;
  supervisor& operator=(const supervisor&) = delete;

  // Starts every service; false (after saying why) when one cannot be started.
  bool start_all() {
    for (auto& c : children_) {
      if (!start(c)) return false;
      spdlog::info("local: started {} (pid {})", c.name, c.process.pid());
    }
    return true;
  }

  // Until the job ends, a signal comes or a service is given up on; returns the exit status.
  int supervise() {
    for (;;) {
      if (end_signal_.load() != 0) end_the_job();
      if (interrupted_.load()) {
        spdlog::warn("local: interrupted: stopping the cluster");
        for (auto& c : children_) c.process.signal(SIGTERM);
        return 130;
      }
      for (auto& c : children_) {
        if (interrupted_.load()) break;
        if (c.process.running() && c.process.exited()) {
          if (auto rc = on_exit(c, c.process.reap())) return *rc;
        } else if (c.restart_at && clock_type::now() >= *c.restart_at) {
          if (!start(c)) return 1;
          spdlog::info("local: {} is pid {}", c.name, c.process.pid());
        }
      }
      if (!follow_shard_count()) return 1;
      sleep_until_something_happens();
    }
  }

  // The members leave once they see the job end: gives them a moment (after a failure, asks them
  // to), then makes sure.
  void wind_down(int rc) {
    const auto deadline = clock_type::now() + std::chrono::seconds(rc == 0 ? 10 : 3);
    if (rc != 0 && rc != 130)
      for (auto& c : children_) c.process.signal(SIGTERM);
    for (auto& c : children_) {
      if (!c.process.running()) continue;
      if (!c.process.wait_exit(milliseconds_until(deadline))) {
        spdlog::warn("local: {} (pid {}) did not exit; terminating it", c.name, c.process.pid());
        c.process.signal(SIGKILL);
      }
      c.process.reap();
    }
  }

 private:
  bool start(supervised_child& c) {
    c.restart_at.reset();
    // The coordinator's stdout (summary and JSON line) goes to a file relayed at the end; a
    // restarted coordinator appends to it. Other services' stdout is not needed.
    auto started = child_process::start(c.argv, c.coordinator ? run_.coordinator_out().string() : "/dev/null",
                                        &environment_);
    if (!started.is_ok()) {
      spdlog::error("local: {}: {}", c.name, started.error().message());
      return false;
    }
    c.process = std::move(*started);
    std::ofstream(run_.run_dir / (c.name + ".pid")) << c.process.pid() << "\n";
    return true;
  }

  // A signal to a following job: the coordinator is asked to end it as at the end of its data, and
  // asked again every few seconds until it does (a coordinator that restarted meanwhile forgot).
  void end_the_job() {
    const auto now = clock_type::now();
    if (end_asked_at_ && now - *end_asked_at_ < kEndAgain) return;
    const std::string reason = "local: signal " + std::to_string(end_signal_.load());
    if (!end_asked_at_)
      spdlog::warn("local: {}: the following job ends as at the end of its data (a second signal stops it at once)",
                   reason);
    end_asked_at_ = now;
    auto reply = call_once(run_.coordinator, wire::stop_request{reason}, 2.0, security_);
    if (!reply.is_ok() || !std::holds_alternative<wire::ack>(*reply))
      spdlog::warn("local: the coordinator did not take the stop yet ({}); asking again in {} s",
                   reply.is_ok() ? wire::message_name(*reply) : reply.error().message(),
                   std::chrono::duration_cast<std::chrono::seconds>(kEndAgain).count());
  }

  // `shadowsync reshard` to more shards than run here: the coordinator counts the shards of both
  // counts while it changes (its status's service.shards), and waits for the new ones to register;
  // they are started, and supervised from then on like the others. (Fewer: those beyond the new
  // count leave by themselves once their rows moved, and are not started again: on_exit.) Asked
  // once a second; false (after saying why) when a shard cannot be started.
  bool follow_shard_count() {
    const auto now = clock_type::now();
    if (now < next_shard_check_) return true;
    next_shard_check_ = now + kShardCheckEvery;
    const int shards = job_shards(0.5);
    int started = 0;
    for (const auto& c : children_) started = std::max(started, c.shard + 1);
    for (int i = started; i < shards; ++i) {
      children_.push_back(plan_shard(l_, run_, i));
      if (!start(children_.back())) return false;
      spdlog::info("local: the job takes {} shards (shadowsync reshard): started {} (pid {})", shards,
                   children_.back().name, children_.back().process.pid());
    }
    return true;
  }

  // Blocks until a child exits, a signal comes, the next restart is due or the shard count is to
  // be looked at again.
  void sleep_until_something_happens() {
    std::vector<pollfd> fds{{wake_fd_, POLLIN, 0}};
    int timeout_ms = milliseconds_until(next_shard_check_);
    if (end_asked_at_) timeout_ms = std::min(timeout_ms, milliseconds_until(*end_asked_at_ + kEndAgain));
    for (const auto& c : children_) {
      if (c.process.running()) {
        fds.push_back({c.process.pidfd(), POLLIN, 0});
      } else if (c.restart_at) {
        const int due = milliseconds_until(*c.restart_at);
        timeout_ms = timeout_ms < 0 ? due : std::min(timeout_ms, due);
      }
    }
    if (::poll(fds.data(), fds.size(), timeout_ms) > 0 && (fds[0].revents & POLLIN) != 0) {
      std::uint64_t wake_ups = 0;
      const ssize_t got = ::read(wake_fd_, &wake_ups, sizeof wake_ups);  // resets the eventfd
      (void)got;
    }
  }

  // A child's exit: the exit status of the run when it ends the run, nothing when it goes on.
  std::optional<int> on_exit(supervised_child& c, int wait_status) {
    const bool exited = WIFEXITED(wait_status);
    const int code = exited ? WEXITSTATUS(wait_status) : -1;
    if (c.coordinator && exited && code == 0 && has_result(run_.coordinator_out())) {
      return 0;  // the job is over; its result is in coordinator.out
    }
    if (c.coordinator && exited && code == 3 && has_result(run_.coordinator_out())) {
      spdlog::warn("local: the job finished, but its last snapshot failed (see snapshot_error in the result)");
      return 3;
    }
    if (c.coordinator && exited && code != 0) {
      spdlog::error("local: the coordinator {}: the job failed", describe_exit(wait_status));
      return 1;
    }
    if (!c.coordinator && left_because_the_job_ended(exited && code == 0)) return std::nullopt;  // not restarted
    if (const int shards = c.shard >= 0 ? job_shards(2.0) : 0; c.shard >= shards && shards > 0) {
      // Whatever its exit, it has no place to come back to: its rows moved to the job's other
      // shards (a resume on fewer, a reshard), or it was to join a reshard that was called off.
      spdlog::info("local: {} is beyond the job's {} shard(s): not started again", c.name, shards);
      return std::nullopt;
    }
    if (c.restarts >= l_.max_restarts) {
      spdlog::error("local: {} {} and was restarted {} times already: giving up", c.name, describe_exit(wait_status),
                    c.restarts);
      return 1;
    }
    ++c.restarts;
    spdlog::warn("local: {} {} before the job ended: starting it again in {:.1f}s (restart {} of at most {})", c.name,
                 describe_exit(wait_status), l_.restart_delay, c.restarts, l_.max_restarts);
    c.restart_at = clock_type::now() + std::chrono::duration_cast<clock_type::duration>(
                                           std::chrono::duration<double>(l_.restart_delay));
    return std::nullopt;
  }

  // The job's shard count as the coordinator reports it (those of both counts while it changes);
  // 0 when it does not answer within `timeout_seconds`.
  int job_shards(double timeout_seconds) const {
    const auto status = json_value::parse(query_status(run_.coordinator, timeout_seconds, security_));
    if (!status.is_ok()) return 0;
    const auto& shards = (*status)["service"]["shards"];
    return shards.type() == json_value::kind::number ? static_cast<int>(shards.int64()) : 0;
  }

  // Whether a member that exited left because the job ended (then it is not started again).
  bool left_because_the_job_ended(bool clean) const {
    const std::string state = job_state_of(run_.coordinator, security_);
    if (state == "done" || state == "failed") return true;
    if (!clean || !state.empty()) return false;
    // No answer: the coordinator may have ended the job and be exiting, or have exited already
    // (not reaped yet); a loaded machine can keep its answer past the query's timeout. A member
    // that left cleanly is done once the coordinator prints its result, which it does before it
    // exits: waits a while for that exit rather than restart a member of a finished job. The
    // coordinator's exit is only looked at here; supervise() reaps and judges it.
    if (has_result(run_.coordinator_out())) return true;
    const auto& coordinator = children_.front();
    return coordinator.process.running() && coordinator.process.wait_exit(kCoordinatorExitWaitMs) &&
           has_result(run_.coordinator_out());
  }

  const local_flags& l_;
  const run_layout& run_;
  // The children's: without SHADOWSYNC_* variables, which this process has resolved into their
  // settings and flags already (inherited, one would override what the settings file says).
  const std::vector<std::string> environment_ = environment_without("SHADOWSYNC_");
  std::vector<supervised_child> children_;  // the coordinator first
  transport::transport_security security_;
  std::atomic<bool> interrupted_{false};
  // A following job: the signal that ends it, and when the coordinator was last asked to.
  static constexpr auto kEndAgain = std::chrono::seconds(5);
  // How long a member that left cleanly waits on a coordinator that does not answer, to tell a
  // finished job (the coordinator exits) from a live one (a restart is due).
  static constexpr int kCoordinatorExitWaitMs = 15'000;
  static constexpr auto kShardCheckEvery = std::chrono::seconds(1);
  clock_type::time_point next_shard_check_{};
  std::atomic<int> end_signal_{0};
  std::optional<clock_type::time_point> end_asked_at_;
  int wake_fd_;                        // the signal thread's wake-up (an eventfd)
  service::shutdown_signal signals_;  // last: its thread uses the members above
};

}  // namespace

int run_local_processes(local_flags& l) {
  auto run = prepare_run(l);
  if (!run.is_ok()) {
    spdlog::error("local: {}", run.error().message());
    return run.error().code() == errc::invalid_argument ? 2 : 1;
  }
  auto children = plan_children(l, *run);
  auto security = use_curve_keys(l, children);
  if (!security.is_ok()) {
    spdlog::error("local: {}", security.error().message());
    return 1;
  }
  int rc = 1;
  {
    supervisor cluster(l, *run, std::move(children), *security);
    rc = cluster.start_all() ? cluster.supervise() : 1;
    cluster.wind_down(rc);
  }
  std::ifstream out(run->coordinator_out());
  std::stringstream text;
  text << out.rdbuf();
  std::printf("%s", text.str().c_str());
  std::fflush(stdout);
  std::error_code ec;
  if (l.run_dir.empty() && !l.keep_state) fs::remove_all(run->temp, ec);
  return rc;
}

}  // namespace ss::cli
