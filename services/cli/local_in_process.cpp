// `shadowsync local` without --processes: every service of the cluster as actors in this process,
// over ZeroMQ inproc://, with one actor system.
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "cluster_job.hpp"
#include "local_cluster.hpp"
#include "ops_endpoint.hpp"
#include "service_flags.hpp"
#include "ss/service/memory_release.hpp"
#include "ss/service/shutdown_signal.hpp"
#include "ss/transport/zmq_transport.hpp"

namespace ss::cli {
namespace {

// The options every service of the in-process cluster shares, for the one named `name`.
actors::service_options inproc_options(const local_flags& l, const std::string& name) {
  actors::service_options o;
  o.name = name;
  o.listen = "inproc://" + name;
  o.coordinator = "inproc://coordinator";
  o.heartbeat_interval = milliseconds_of(l.job.heartbeat_interval);
  o.request_timeout = milliseconds_of(l.job.request_timeout);
  o.register_timeout = milliseconds_of(l.startup_timeout);
  return o;
}

// The cluster's services, the coordinator first; a signal stops them from its own thread.
class local_services {
 public:
  // Keeps a started service; false (after logging why) when it did not start.
  bool add(result<std::unique_ptr<actors::running_service>> started) {
    if (!started.is_ok()) {
      spdlog::error("local: {}", started.error().message());
      return false;
    }
    std::lock_guard<std::mutex> lock(mu_);
    services_.push_back(std::move(*started));
    return true;
  }
  void stop_all(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = services_.rbegin(); it != services_.rend(); ++it) (*it)->stop(why);
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    services_.clear();
  }
  // The coordinator's end of the job: true when it finished. Then the members get their
  // heartbeat's time to see it. `ended` is called at the coordinator's end.
  bool wait(std::chrono::milliseconds member_timeout, const std::function<void()>& ended) {
    const bool finished = services_.front()->wait();
    ended();
    for (std::size_t i = 1; i < services_.size(); ++i) services_[i]->wait_for(member_timeout);
    return finished;
  }
  actors::running_service* coordinator() { return services_.empty() ? nullptr : services_.front().get(); }
  // A following job ends as at the end of its data; false when the coordinator has not started.
  bool end_input(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    if (services_.empty()) return false;
    services_.front()->end_input(why);
    return true;
  }

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<actors::running_service>> services_;
};

// Places one instance of `role` (its state under --state-dir), lets the role configure it and
// starts it; false when it did not start.
bool start_one(const local_flags& l, service_role& role, actors::service_options o, caf::actor_system& sys,
               const std::shared_ptr<zmq::context_t>& ctx, local_services& services) {
  if (auto placed = role.place(l.state_dir, o.name); !placed.is_ok()) {
    spdlog::error("local: {}: {}", o.name, placed.message());
    return false;
  }
  role.configure(o);
  return services.add(role.start(sys, make_transport(ctx, o.name), o));
}

// Starts the coordinator, then the shards, sync servers, readers and trainers; false when one
// did not start.
bool start_cluster(local_flags& l, caf::actor_system& sys, const std::shared_ptr<zmq::context_t>& ctx,
                   local_services& services) {
  cluster_roles& roles = l.roles;
  bool ok = start_one(l, roles.coordinator, inproc_options(l, "coordinator"), sys, ctx, services);
  auto indexed = [&](service_role& role, const std::string& prefix, int index, int threads) {
    auto o = inproc_options(l, prefix + std::to_string(index));
    o.index = index;
    o.threads = threads;
    return start_one(l, role, o, sys, ctx, services);
  };
  const int shards = std::max(l.job.shards, l.shards_to_start);
  for (int i = 0; ok && i < shards; ++i) ok = indexed(roles.shard, "shard-", i, l.shard_threads);
  for (int i = 1; ok && i < l.job.sync_servers; ++i) ok = indexed(roles.sync_server, "sync-", i, 1);
  for (int i = 0; ok && i < l.job.readers; ++i) ok = indexed(roles.reader, "reader-", i, 1);
  for (int i = 0; ok && i < l.trainers; ++i) {
    auto o = inproc_options(l, "trainer-" + std::to_string(i));
    o.threads = l.workers;
    ok = start_one(l, roles.trainer, o, sys, ctx, services);
  }
  return ok;
}

}  // namespace

int run_local_in_process(local_flags& l) {
  local_services services;
  coordinator_role& coordinator = l.roles.coordinator;
  std::atomic<bool> interrupted{false};
  service::shutdown_signal signals([&](int sig) {
    // A following job ends as at the end of its data (a second signal exits at once).
    const std::string why = "local: signal " + std::to_string(sig);
    if (l.job.follow.enabled && services.end_input(why)) {
      spdlog::warn("{}: the following job ends as at the end of its data (a second signal stops it at once)", why);
      return;
    }
    interrupted.store(true);
    services.stop_all("interrupted");
  });
  service::periodic_memory_release memory_release(milliseconds_of(kDefaultReleaseMemorySeconds));
  // The coordinator's endpoint and dashboard (after the signal mask, like every thread).
  auto ops = ops_endpoint::start(l.ops_listen, "coordinator", /*dashboard=*/true);
  if (!ops.is_ok()) {
    spdlog::error("local: {}", ops.error().message());
    return 2;
  }
  auto cfg = actor_config(l.scheduler_threads);
  int rc = 1;
  {
    caf::actor_system sys{*cfg};
    auto ctx = transport::make_zmq_context();
    if (start_cluster(l, sys, ctx, services) && !interrupted.load()) {
      (*ops)->attach(services.coordinator());
      rc = coordinator.exit_status(
          services.wait(milliseconds_of(l.job.member_timeout), [&ops] { (*ops)->job_ended(); }));
    }
    (*ops)->stopping("the job has ended");
    services.stop_all("local cluster done");
    services.clear();
  }
  coordinator.report();
  if (interrupted.load()) return 130;
  // A following job ended by a signal does not linger either.
  (*ops)->linger(coordinator.ops_linger(), [&interrupted, &signals] { return interrupted.load() || signals.received(); });
  return rc;
}

}  // namespace ss::cli
