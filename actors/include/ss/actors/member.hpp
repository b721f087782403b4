// A service's membership agent: registers with the coordinator (retrying until it answers),
// heartbeats with the service's progress, re-registers when the coordinator has forgotten it (a
// coordinator restart), and tells subscribers about cluster view and job state changes. A refused
// registration (first or again) is final: it quits with registration_refusal's error. Messages
// (typed as member_agent_actor in actors.hpp):
//   (await_atom) -> wire::register_reply     answered once registered (the job config is in it)
//   (view_atom, view_subscriber_actor s)      s receives (view_atom, cluster_view) and
//                                             (state_atom, job_state) on every change
//   (stop_atom, std::string reason)           leave the job and quit
#pragma once

#include <caf/fwd.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "ss/actors/actors.hpp"
#include "ss/core/status.hpp"
#include "ss/wire/messages.hpp"

namespace ss::actors {

struct member_options {
  wire::register_request identity;
  std::string coordinator;  // endpoint of the coordinator
  std::chrono::milliseconds heartbeat_interval{1000};
  std::chrono::milliseconds request_timeout{5000};
  // The service's progress; runs on the agent's thread, so it must only read thread-safe state.
  std::function<wire::member_progress()> progress;
};

member_agent_actor spawn_member_agent(caf::actor_system& sys, gateway_actor gateway, member_options options);

// The coordinator's refusal of the registration (its code and reason) when the agent ended, or an
// `await` failed, with `err` because of one; nullopt for any other error.
std::optional<status> registration_refusal(const caf::error& err);

}  // namespace ss::actors
