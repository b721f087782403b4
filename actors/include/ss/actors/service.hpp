// Starting and stopping one shadowsync service (coordinator, shard, reader or trainer) inside an
// actor system, over a transport the caller provides (ZeroMQ in production, in-memory in tests).
// The standalone service commands and the in-process cluster of `shadowsync local` both use
// these, so a service behaves the same whether it has a process of its own or not.
#pragma once

#include <caf/fwd.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include "ss/actors/authority.hpp"
#include "ss/actors/coordinator.hpp"
#include "ss/actors/transport.hpp"
#include "ss/core/embedding/durable_rows.hpp"
#include "ss/core/status.hpp"
#include "ss/wire/messages.hpp"

namespace ss::actors {

struct service_options {
  std::string name;          // "shard-0", "trainer-3f2a", ...
  std::string listen;        // endpoint to bind ("tcp://0.0.0.0:5556", "inproc://shard-0"); "" = none
  std::string advertise;     // endpoint peers should dial, if not the bound one ("tcp://shard-0.shards:5556")
  std::string coordinator;   // the coordinator's endpoint (members only)
  std::int32_t index = -1;   // shard and reader index
  int threads = 1;           // trainer workers, shard request workers
  bool detached = true;      // compute actors on their own threads (false on the test scheduler)
  std::chrono::milliseconds heartbeat_interval{1000};
  std::chrono::milliseconds request_timeout{5000};
  // How long a member waits for the coordinator to accept its registration.
  std::chrono::milliseconds register_timeout{std::chrono::hours(24)};
  // Set from outside (a signal) to give up waiting for the registration.
  const std::atomic<bool>* cancel = nullptr;
  // Shards: opens the shard's storage for rows of `row_floats` slots each, laid out as `row_layout`
  // says (embedding::shard_row_layout; a store of another layout is refused, or with `resuming`,
  // when a snapshot's checkpoint replaces its rows, set aside), or unset: rows live in memory only
  // and a restarted shard starts empty. Injected: RocksDB in production.
  std::function<result<std::unique_ptr<embedding::durable_rows>>(std::uint32_t row_floats,
                                                                 const std::string& row_layout, bool resuming)>
      open_storage;
  double flush_interval = 5;  // shards: seconds between writes of changed rows to storage
  // Shards: the RAM their rows may take (embedding::shard_store_options::max_rows_in_memory); the
  // rest stay in storage, which it needs. 0: every row in RAM.
  std::uint64_t memory_budget_bytes = 0;
  // Shards: rows per page pulled from another shard while the job takes another shard count.
  std::uint32_t move_page_rows = 8192;
  // Trainers: hint each waiting batch's rows to the shards (trainer_options::prefetch).
  bool prefetch = false;
  // Inbound bounds (gateway_options): the largest frame decoded, requests served at once.
  std::size_t max_frame_bytes = std::size_t{64} << 20;
  std::uint32_t max_requests_in_flight = 4096;
  // Who may send control requests (authority.hpp).
  authority_policy authority;
};

// A running service. wait() blocks until the job is done (or failed, or stop() was called);
// stop() leaves the job and releases everything; the destructor stops.
class running_service {
 public:
  virtual ~running_service() = default;
  virtual const std::string& name() const = 0;
  virtual std::string endpoint() const = 0;  // where peers reach it ("" if it does not listen)
  // Blocks until the job ends: true when it finished, false when it failed or was stopped.
  // stop() drains first: a shard writes its changed rows to storage.
  virtual bool wait() = 0;
  // Waits at most `d`; nullopt-like: returns 0 still running, 1 finished, -1 failed/stopped.
  virtual int wait_for(std::chrono::milliseconds d) = 0;
  // Why this service's part ended before the job did, when it did (a shard whose rows all moved to
  // the others: "its rows moved to the job's other shards"); "" when it ended with the job.
  virtual std::string end_reason() const { return {}; }
  // The service's status JSON (served to status_request too).
  virtual std::string status() = 0;
  // Coordinator: its status's history since `since` seconds after it started (metrics::job_history's
  // JSON), for the dashboard; cheap, it does not ask the actors. Other services: none.
  virtual std::optional<std::string> history_json(double since) {
    (void)since;
    return std::nullopt;
  }
  // Coordinator: waits until every member has left (each leaves once it sees the job end) or
  // `limit` passes; true when none is left. Other services: true at once.
  virtual bool wait_for_members_to_leave(std::chrono::milliseconds limit) = 0;
  // Ends wait() at once, as if the job had failed (a signal): thread-safe and cheap, so a signal
  // thread may call it; the thread that waits then calls stop(), and only it destroys the service.
  virtual void interrupt() = 0;
  // The coordinator of a following job (--follow): ends the job as `shadowsync stop` does (its
  // readers hand out no new batches; the job ends as at the end of its data). Thread-safe and
  // cheap, like interrupt(). Other services, and jobs over fixed files: nothing.
  virtual void end_input(const std::string& reason) { (void)reason; }
  virtual void stop(const std::string& reason) = 0;
};

result<std::unique_ptr<running_service>> start_coordinator(caf::actor_system& sys, std::unique_ptr<transport> t,
                                                           const service_options& options,
                                                           coordinator_options coordinator);
result<std::unique_ptr<running_service>> start_shard(caf::actor_system& sys, std::unique_ptr<transport> t,
                                                     const service_options& options);
result<std::unique_ptr<running_service>> start_reader(caf::actor_system& sys, std::unique_ptr<transport> t,
                                                      const service_options& options);
result<std::unique_ptr<running_service>> start_trainer(caf::actor_system& sys, std::unique_ptr<transport> t,
                                                       const service_options& options);
// An extra sync server (slice `index` >= 1 of the job's --sync-servers; the coordinator holds 0).
result<std::unique_ptr<running_service>> start_sync_server(caf::actor_system& sys, std::unique_ptr<transport> t,
                                                           const service_options& options);

}  // namespace ss::actors
