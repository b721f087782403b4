// The running service behind every start_* of service.hpp: its gateway, its registration with
// the coordinator, its status and its orderly stop. Internal to ss_actors: service.cpp builds each
// role on it.
#pragma once

#include <caf/all.hpp>

#include <array>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "ss/actors/actors.hpp"
#include "ss/actors/gateway.hpp"
#include "ss/actors/reader.hpp"
#include "ss/actors/service.hpp"
#include "ss/actors/shard.hpp"
#include "ss/actors/trainer.hpp"
#include "ss/core/embedding/shard_store.hpp"
#include "ss/core/job/job_options.hpp"

namespace ss::actors {

std::uint64_t random_incarnation();

// This machine's host name ("" when it has none).
std::string host_name();

// The endpoint peers dial: `advertise` when given, else the `bound` one, whose wildcard address
// becomes this host's name: tcp://0.0.0.0:41234 (bound for tcp://0.0.0.0:0) is tcp://HOST:41234.
std::string advertised_endpoint(const std::string& advertise, const std::string& bound);

// The name of a member started without one: ROLE-HOST-XXXXXXXX (the incarnation's high bits).
std::string process_name(const std::string& role, std::uint64_t incarnation);

// The end of a service's job, settled once: 1 finished, -1 failed or stopped.
class job_end {
 public:
  // `why`: for a service whose part ends before the job does (a shard whose rows moved away).
  void settle(int outcome, std::string why = {});
  int wait_for(std::chrono::milliseconds d);
  bool wait();
  std::string why() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool settled_ = false;
  int outcome_ = 0;
  std::string why_;
};

// Answers the requests a service will serve once it is ready (a shard loading its rows) with
// `unavailable`, so peers retry instead of failing.
request_server_actor::behavior_type not_ready(request_server_actor::pointer, std::string why);

// The requests a shard serves from its rows: refused while it loads them and while it stops.
std::array<std::size_t, 5> shard_request_kinds();

class service_impl final : public running_service {
 public:
  service_impl(caf::actor_system& sys, std::unique_ptr<transport> t, service_options options)
      : sys_(sys), transport_(std::move(t)), options_(std::move(options)),
        counters_(std::make_shared<gateway_counters>()), end_(std::make_shared<job_end>()) {}

  ~service_impl() override { stop("shutdown"); }

  const std::string& name() const override { return options_.name; }
  std::string endpoint() const override { return endpoint_; }
  bool wait() override { return end_->wait(); }
  int wait_for(std::chrono::milliseconds d) override { return end_->wait_for(d); }
  std::string end_reason() const override { return end_->why(); }

  std::string status() override;
  std::optional<std::string> history_json(double since) override {
    if (!history_) return std::nullopt;
    return history_->to_json(since);
  }

  bool wait_for_members_to_leave(std::chrono::milliseconds limit) override;

  void interrupt() override { end_->settle(-1); }
  void end_input(const std::string& reason) override {
    if (coordinator_) caf::anon_send(coordinator_, end_input_atom::value, reason);
  }

  void stop(const std::string& reason) override;

  // ---- start-up steps shared by the roles ----

  ss::status start_gateway();
  // Every kind the service serves is routed: requests nobody serves are refused for good from now on.
  void open_gateway();

  // Registers with the coordinator and returns its reply (the job configuration).
  result<wire::register_reply> join(wire::role role, std::function<wire::member_progress()> progress);

  caf::actor_system& sys_;
  std::unique_ptr<transport> transport_;
  service_options options_;
  std::shared_ptr<gateway_counters> counters_;
  std::shared_ptr<job_end> end_;
  std::string endpoint_;
  member_agent_actor member_;
  gateway_actor gateway_;
  request_server_actor role_;     // whichever role this service runs (each serves its status)
  coordinator_actor coordinator_;  // the same actor as role_, in the coordinator only
  view_subscriber_actor watcher_;
  sync_server_actor sync_;  // the coordinator's slice 0
  shard_persister_actor persister_;
  shard_actor bulk_;
  shard_prefetcher_actor prefetcher_;
  shard_mover_actor mover_;
  shard_sweeper_actor sweeper_;
  request_server_actor not_ready_, stopping_;  // a shard's refusers: while it loads, while it stops
  std::mutex stop_mu_;
  std::atomic<bool> stopped_{false};
  const std::uint64_t incarnation_ = random_incarnation();
  bool is_coordinator_ = false;
  std::shared_ptr<metrics::job_history> history_;  // the coordinator's
  // Role state the progress callbacks read.
  std::shared_ptr<embedding::shard_store> store_;
  std::shared_ptr<shard_counters> shard_counters_;
  std::shared_ptr<reader_counters> reader_counters_;
  std::shared_ptr<trainer_progress> trainer_progress_;
};

// The job a coordinator's registration reply carries.
result<job::job_options> job_of(const wire::register_reply& reply, const std::string& name);

// A sync server for slice `k` of the job's dense parameters; `awaits_restore`: the job resumes
// and the coordinator sends the snapshot's state (sync_server_options::awaits_restore).
result<sync_server_actor> make_sync_server(caf::actor_system& sys, const gateway_actor& gateway,
                                           const job::job_options& job, std::uint32_t k, const std::string& name,
                                           bool awaits_restore);

}  // namespace ss::actors
