// The root of every service process (coordinator, shard, reader, trainer, sync-server):
// run_service() parses the shared flags and the role's, loads the CURVE keys, starts logging, the
// signal thread, the ops endpoint and the actor system, starts the role's service, waits for the
// job to end (or a signal), stops it and returns the exit status. A role supplies only what is
// its own, by overriding service_role.
#pragma once

#include <caf/fwd.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "commands.hpp"
#include "ss/actors/service.hpp"
#include "ss/core/config/option_set.hpp"
#include "ss/core/status.hpp"

namespace ss::cli {

struct service_kind {
  const char* command;         // "shard": the command; the service's name is COMMAND-INDEX unless --name
  const char* description;     // the first paragraph of --help
  const char* default_listen;  // --listen's default
  bool member = true;          // registers with a coordinator (--coordinator, heartbeats)
  bool indexed = false;        // has a required --index in the job
};

// Which of a role's flags to declare (service_role::add_flags).
struct flag_groups {
  bool settings = true;
  bool placement = true;
};
inline constexpr flag_groups settings_only{true, false};
inline constexpr flag_groups placement_only{false, true};

class service_role {
 public:
  explicit service_role(const service_kind& kind) : kind_(kind) {}
  virtual ~service_role() = default;
  service_role(const service_role&) = delete;
  service_role& operator=(const service_role&) = delete;

  const service_kind& kind() const { return kind_; }
  // How it refuses to run (exit 2).
  virtual refusal refuse() const { return {kind_.command, ""}; }
  // Its own flags, declared once, listed after the shared ones, in two groups: its settings, which
  // every instance of the role in a cluster shares (a shard's --memory-budget-mb), and its
  // placement, where one instance keeps its state (a shard's --data-dir). A standalone command
  // adds both; `local` adds every role's settings to its own flags and lays out the placement.
  virtual void add_flags(config::option_set&, flag_groups) {}
  // The placement flags of the instance `name` of a cluster that keeps its state under `state_dir`
  // ("" = nowhere): how `local` lays a cluster out, as flags a child process is given.
  virtual args placement(const std::string& /*state_dir*/, const std::string& /*name*/) const { return {}; }
  // Sets the placement of an instance in process, from the same flags (refused ones are a bug).
  status place(const std::string& state_dir, const std::string& name);
  // The settings as a config file section ([<command>] key = value), for a child process.
  std::string settings_config();
  // After parsing: what keeps it from starting, found before anything starts.
  virtual status check() { return status::ok(); }
  // Its part of the service's options (a shard's storage).
  virtual void configure(actors::service_options&) {}
  virtual result<std::unique_ptr<actors::running_service>> start(caf::actor_system& sys,
                                                                 std::unique_ptr<actors::transport> transport,
                                                                 const actors::service_options& options) = 0;
  // The log line that says it is up.
  virtual std::string up_message(const actors::running_service& service) const;
  // How long it stays once the job has ended, until the members have left (the coordinator).
  virtual std::chrono::milliseconds linger() const { return std::chrono::milliseconds(0); }
  // Seconds the ops endpoint stays up with the final state once the service has stopped
  // (the coordinator's --ops-linger, for its dashboard); a signal ends it.
  virtual double ops_linger() const { return 0; }
  // The exit status when no signal stopped it: 0 when the job finished.
  virtual int exit_status(bool finished) const { return finished ? 0 : 1; }
  // After it has stopped: what it prints (the coordinator: the job's result).
  virtual void report() const {}

 private:
  service_kind kind_;
};

// Exit statuses: 0 the job finished (or a signal stopped the service), 1 it failed, 2 bad flags or
// keys, and what role.exit_status() says (the coordinator: 3 when the job's last snapshot failed).
int run_service(service_role& role, const args& a, const config::environment& env);

// The names of the options of `role`'s command: the shared ones and its own.
std::vector<std::string> service_option_names(service_role& role);

}  // namespace ss::cli
