// The sync coordinator's actors: membership (registration, heartbeats, timeouts, the cluster
// view), the job's life cycle (waiting -> running -> draining -> done, or failed), cluster
// progress and status, the central dense copy, and the final evaluation on the test files.
//   (result_atom) -> std::string    the job's result JSON line, once it is done or failed
//   (done_atom) -> std::uint64_t    members still registered (they leave when they see the end)
#pragma once

#include <caf/actor.hpp>

#include <functional>
#include <string>

#include "ss/core/job/job_options.hpp"

namespace ss::actors {

struct coordinator_options {
  std::string name = "coordinator";
  job::job_options job;
  bool detached_evaluator = true;  // false on the deterministic test scheduler
  // Called with each progress line and with the final human summary (the service prints them).
  std::function<void(const std::string&)> on_progress;
  std::function<void(const std::string& summary, const std::string& json)> on_result;
  // Slice 0 of the sync state lives in the coordinator's process: the sync server actor and
  // the endpoint trainers reach it at (the coordinator's own).
  caf::actor local_sync;
  std::string endpoint;
};

caf::actor spawn_coordinator(caf::actor_system& sys, const caf::actor& gateway, coordinator_options options);

}  // namespace ss::actors
