// `shadowsync local` without --processes: every service of the cluster as actors in this process,
// over ZeroMQ inproc://, with one actor system.
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

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

// With --state-dir, the coordinator's snapshots go to STATE_DIR/snapshots (a later run resumes).
actors::coordinator_options local_coordinator_options(const local_flags& l) {
  actors::coordinator_options co;
  co.job = l.job;
  co.export_path = l.export_path;
  co.export_dir = export_dir_or_cwd("");
  if (!l.state_dir.empty()) {
    co.protected_dirs.push_back(l.state_dir);
    co.snapshots = job::directory_snapshot_store((std::filesystem::path(l.state_dir) / "snapshots").string());
    co.snapshot_interval = l.snapshot_interval;
    co.snapshot_retain = l.snapshot_retain;
  }
  return co;
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

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<actors::running_service>> services_;
};

// Starts the coordinator, then the shards, sync servers, readers and trainers; false when one
// did not start.
bool start_cluster(const local_flags& l, caf::actor_system& sys, const std::shared_ptr<zmq::context_t>& ctx,
                   actors::coordinator_options co, local_services& services) {
  bool ok = services.add(actors::start_coordinator(sys, make_transport(ctx, "coordinator"),
                                                   inproc_options(l, "coordinator"), std::move(co)));
  for (int i = 0; ok && i < l.job.shards; ++i) {
    auto o = inproc_options(l, "shard-" + std::to_string(i));
    o.index = i;
    o.threads = l.shard_threads;
    o.flush_interval = l.flush_interval;
    o.memory_budget_bytes = static_cast<std::uint64_t>(l.memory_budget_mb) << 20;
    if (!l.state_dir.empty())
      o.open_storage = rocksdb_storage((std::filesystem::path(l.state_dir) / o.name).string(), l.storage_memory_mb,
                                       l.memory_budget_mb > 0);
    ok = services.add(actors::start_shard(sys, make_transport(ctx, o.name), o));
  }
  for (int i = 1; ok && i < l.job.sync_servers; ++i) {
    auto o = inproc_options(l, "sync-" + std::to_string(i));
    o.index = i;
    ok = services.add(actors::start_sync_server(sys, make_transport(ctx, o.name), o));
  }
  for (int i = 0; ok && i < l.job.readers; ++i) {
    auto o = inproc_options(l, "reader-" + std::to_string(i));
    o.index = i;
    ok = services.add(actors::start_reader(sys, make_transport(ctx, o.name), o));
  }
  for (int i = 0; ok && i < l.trainers; ++i) {
    auto o = inproc_options(l, "trainer-" + std::to_string(i));
    o.threads = l.workers;
    o.prefetch = l.prefetch;
    ok = services.add(actors::start_trainer(sys, make_transport(ctx, o.name), o));
  }
  return ok;
}

}  // namespace

int run_local_in_process(const local_flags& l) {
  local_services services;
  kept_result outcome;
  std::atomic<bool> interrupted{false};
  service::shutdown_signal signals([&](int) {
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
    auto co = local_coordinator_options(l);
    co.on_result = outcome.keeper();
    if (start_cluster(l, sys, ctx, std::move(co), services) && !interrupted.load()) {
      (*ops)->attach(services.coordinator());
      rc = outcome.exit_status(
          services.wait(milliseconds_of(l.job.member_timeout), [&ops] { (*ops)->job_ended(); }));
    }
    (*ops)->stopping("the job has ended");
    services.stop_all("local cluster done");
    services.clear();
  }
  outcome.print();
  if (interrupted.load()) return 130;
  (*ops)->linger(l.ops_linger, [&interrupted] { return interrupted.load(); });
  return rc;
}

}  // namespace ss::cli
