// The roles of a cluster, each with its flags declared once: a service command runs one of them
// (run_service); `local` runs them all, adding their settings to its own flags, and starts them in
// process or hands children their settings as config file sections.
#pragma once

#include <memory>
#include <string>

#include "cluster_job.hpp"
#include "service_root.hpp"
#include "ss/core/job/job_options.hpp"

namespace ss::cli {

// The flags of a coordinator that are its own (the job's among them).
struct coordinator_flags {
  job::job_options job;
  std::string snapshot_dir;
  double snapshot_interval = 60;
  int snapshot_retain = 3;
  bool resume = false;
  bool grow_shards = false;
  std::string export_path;
  std::string export_dir;  // where `shadowsync export` may write; "" = the working directory
  double ops_linger = 0;   // seconds the dashboard stays up after the end
  // Delta publishing for serving (docs/online.md).
  std::string publish_dir;
  double publish_interval = 1;
  int publish_base_every = 100;
  int publish_retain = 50;
  std::string publish_rows = "exact";
};

class coordinator_role final : public service_role {
 public:
  coordinator_role();

  // A refused job ends with a JSON line too, for the scripts that read only that line.
  refusal refuse() const override { return {"coordinator", "cluster"}; }
  void add_flags(config::option_set& opts, flag_groups groups) override;
  args placement(const std::string& state_dir, const std::string& name) const override;
  status check() override;
  result<std::unique_ptr<actors::running_service>> start(caf::actor_system& sys,
                                                         std::unique_ptr<actors::transport> transport,
                                                         const actors::service_options& options) override;
  std::string up_message(const actors::running_service& service) const override;
  std::chrono::milliseconds linger() const override;
  double ops_linger() const override { return flags_.ops_linger; }
  int exit_status(bool finished) const override { return outcome_.exit_status(finished); }
  void report() const override { outcome_.print(); }

  coordinator_flags& flags() { return flags_; }
  const coordinator_flags& flags() const { return flags_; }

 private:
  coordinator_flags flags_;
  kept_result outcome_;
};

using service_starter = result<std::unique_ptr<actors::running_service>> (*)(caf::actor_system&,
                                                                               std::unique_ptr<actors::transport>,
                                                                               const actors::service_options&);

// A member: it registers with a coordinator and takes the job's settings from it.
class member_role : public service_role {
 public:
  member_role(const service_kind& kind, service_starter start_service) : service_role(kind), start_(start_service) {}
  result<std::unique_ptr<actors::running_service>> start(caf::actor_system& sys,
                                                         std::unique_ptr<actors::transport> transport,
                                                         const actors::service_options& options) override {
    return start_(sys, std::move(transport), options);
  }

 private:
  service_starter start_;
};

// A shard, with its storage.
class shard_role final : public member_role {
 public:
  shard_role();
  void add_flags(config::option_set& opts, flag_groups groups) override;
  args placement(const std::string& state_dir, const std::string& name) const override;
  status check() override;
  void configure(actors::service_options& o) override;
  ~shard_role() override;

 private:
  struct flags;  // in member_commands.cpp, with their declarations: a new flag touches that file only
  std::unique_ptr<flags> flags_;
};

// A trainer, with its prefetch hints.
class trainer_role final : public member_role {
 public:
  trainer_role();
  void add_flags(config::option_set& opts, flag_groups groups) override;
  void configure(actors::service_options& o) override;
  ~trainer_role() override;

 private:
  struct flags;  // in member_commands.cpp
  std::unique_ptr<flags> flags_;
};

// The members whose flags are all shared ones.
class reader_role final : public member_role {
 public:
  reader_role();
};

class sync_server_role final : public member_role {
 public:
  sync_server_role();
};

// A role's command, and the names of its options.
template <class Role>
int run_role(const args& a, const config::environment& env) {
  Role role;
  return run_service(role, a, env);
}

template <class Role>
std::vector<std::string> role_option_names() {
  Role role;
  return service_option_names(role);
}

}  // namespace ss::cli
