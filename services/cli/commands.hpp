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

// A command: its arguments (after the command name) and the environment in, the exit status out.
using command = int(const args& a, const config::environment& env);

command run_train, run_gen_data, run_predict;  // in this process
command run_serve;                             // predictions over HTTP
command run_local;                             // a whole cluster on this machine
command run_coordinator, run_shard, run_reader, run_trainer, run_sync_server;  // one service each
command run_status, run_snapshot, run_export, run_stop, run_reshard;  // questions to a running job's coordinator
command run_keygen;

// The names of each command's options (a SHADOWSYNC_* variable that names an option of no command
// is refused; command_table.hpp).
using option_names = std::vector<std::string>();
option_names train_option_names, gen_data_option_names, predict_option_names, serve_option_names,
    local_option_names;
option_names coordinator_option_names, shard_option_names, reader_option_names, trainer_option_names,
    sync_server_option_names;
option_names status_option_names, snapshot_option_names, export_option_names, stop_option_names, keygen_option_names,
    reshard_option_names;

// keygen --cluster: DIR/server.{key,pub}, DIR/<member>.{key,pub}, DIR/authorized_keys (written last).
status write_cluster_keys(const std::string& dir, const std::vector<std::string>& members,
                          const std::vector<std::string>& admins, std::string* server_public);

}  // namespace ss::cli
