// The subcommands of the `shadowsync` binary. Each takes its arguments (after the command name)
// and the process environment, and returns the process exit status:
//   0 success, 1 the work failed (bad data, I/O, a peer), 2 bad usage (flags, config).
#pragma once

#include <string>
#include <vector>

#include "ss/core/config/environment.hpp"
#include "ss/core/status.hpp"

namespace ss::cli {

using args = std::vector<std::string>;

int run_train(const args& a, const config::environment& env);
int run_gen_data(const args& a, const config::environment& env);
int run_local(const args& a, const config::environment& env);
int run_coordinator(const args& a, const config::environment& env);
int run_shard(const args& a, const config::environment& env);
int run_reader(const args& a, const config::environment& env);
int run_trainer(const args& a, const config::environment& env);
int run_sync_server(const args& a, const config::environment& env);
int run_status(const args& a, const config::environment& env);
int run_snapshot(const args& a, const config::environment& env);
int run_export(const args& a, const config::environment& env);
int run_predict(const args& a, const config::environment& env);
int run_keygen(const args& a, const config::environment& env);

// keygen --cluster: DIR/server.{key,pub}, DIR/<member>.{key,pub}, DIR/authorized_keys (written last).
status write_cluster_keys(const std::string& dir, const std::vector<std::string>& members,
                          const std::vector<std::string>& admins, std::string* server_public);

}  // namespace ss::cli
