#include "service_root.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <atomic>
#include <mutex>

#include "ops_endpoint.hpp"
#include "service_flags.hpp"
#include "ss/service/memory_release.hpp"
#include "ss/service/shutdown_signal.hpp"
#include "ss/transport/zmq_transport.hpp"

namespace ss::cli {
namespace {

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

// From "up" to "stopped": waits for the job's end (or a signal), stops the service, and returns
// the exit status.
int serve_until_done(const service_role& role, actors::running_service& service, signalled_service& running,
                     const service::shutdown_signal& signals, ops_endpoint& ops) {
  running.set(&service);
  ops.attach(&service);
  spdlog::info("{}", role.up_message(service));
  const bool finished = service.wait();
  ops.job_ended();
  // Members learn that the job ended from their next heartbeat: the coordinator stays until they
  // have left.
  if (!signals.received() && !service.wait_for_members_to_leave(role.linger()))
    spdlog::warn("{}: some members did not leave after the job ended", service.name());
  // A shard whose rows all moved to the others ends before the job, with its own reason.
  const std::string left = finished ? service.end_reason() : std::string();
  ops.stopping(finished ? (left.empty() ? "the job is done" : left) : "stopping");
  running.set(nullptr);
  const int sig = running.signal();
  service.stop(finished ? (left.empty() ? "job done" : left) : sig != 0 ? "signal " + std::to_string(sig) : "stopping");
  spdlog::info("{}: {}", service.name(),
               finished ? (left.empty() ? "the job is done" : "it left the job: " + left) + "; exiting" : "stopped");
  const int rc = signals.received() && !finished ? 0 : role.exit_status(finished);
  role.report();
  if (!signals.received()) ops.linger(role.ops_linger(), [&signals] { return signals.received(); });
  return rc;
}

// The process around the service: the signal thread, the ops endpoint, the memory release and
// the actor system, in the order each needs the one before.
int serve(service_role& role, const service_flags& f, const transport::transport_security& security,
          actors::service_options& options) {
  signalled_service running;
  std::atomic<bool> cancel{false};
  options.cancel = &cancel;
  service::shutdown_signal signals([&running, &cancel, &options, &role](int sig) {
    spdlog::warn("{}: signal {}: {}", options.name, sig, role.kind().member ? "leaving the job" : "stopping");
    cancel.store(true);
    running.interrupt(sig);
  });
  // After the signal mask: a thread started earlier would take SIGTERM's default action.
  // A coordinator's endpoint also serves the job's dashboard.
  auto ops = ops_endpoint::start(f.ops_listen, options.name, /*dashboard=*/!role.kind().member);
  if (!ops.is_ok()) return role.refuse()(ops.error().message());
  service::periodic_memory_release memory_release(milliseconds_of(f.release_memory_interval));
  auto cfg = actor_config(f.scheduler_threads);
  caf::actor_system sys{*cfg};
  auto ctx = transport::make_zmq_context();
  auto started = role.start(sys, make_transport(ctx, options.name, security, &f), options);
  if (!started.is_ok()) {
    spdlog::error("{}", started.error().message());
    return cancel.load() ? 0 : 1;  // a signal during start-up is a stop, not a failure
  }
  return serve_until_done(role, **started, running, signals, **ops);
}

}  // namespace

status service_role::place(const std::string& state_dir, const std::string& name) {
  config::option_set opts(kind_.command, "");
  add_flags(opts, placement_only);
  return opts.parse(placement(state_dir, name), config::environment{});
}

std::string service_role::settings_config() {
  config::option_set opts(kind_.command, "");
  add_flags(opts, settings_only);
  return opts.effective_config();
}

std::string service_role::up_message(const actors::running_service& service) const {
  return service.name() + ": up" + (service.endpoint().empty() ? "" : " at " + service.endpoint());
}

namespace {

// Every flag of the role's command: the shared ones, then its own.
void add_all_flags(service_role& role, config::option_set& opts, service_flags& f) {
  const service_kind& kind = role.kind();
  add_service_flags(opts, f, kind.default_listen, kind.member, kind.indexed);
  role.add_flags(opts, flag_groups{});
}

}  // namespace

std::vector<std::string> service_option_names(service_role& role) {
  return names_of_options<service_flags>(
      [&role](config::option_set& opts, service_flags& f) { add_all_flags(role, opts, f); });
}

int run_service(service_role& role, const args& a, const config::environment& env) {
  const service_kind& kind = role.kind();
  const refusal refuse = role.refuse();
  service_flags f;
  command_line cmd(refuse, kind.description);
  add_all_flags(role, cmd.options(), f);
  if (auto done = cmd.parse(a, env, &f.log)) return *done;
  if (kind.indexed && f.index < 0) return refuse("--index is required");
  if (auto st = check_endpoints(f, kind.member); !st.is_ok()) return refuse(st.message());
  if (auto st = role.check(); !st.is_ok()) return refuse(st.message());
  auto security = load_security(f);
  if (!security.is_ok()) return refuse(security.error().message());
  auto options = to_service_options(f, kind.command, *security);
  role.configure(options);
  return serve(role, f, *security, options);
}

}  // namespace ss::cli
