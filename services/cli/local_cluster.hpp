// `shadowsync local`: a whole cluster on this machine. The command (local_command.cpp) parses its
// flags and prepares the job; the cluster then runs as actors in this process
// (local_in_process.cpp) or, with --processes, as child processes this one supervises
// (local_supervisor.cpp).
#pragma once

#include <cstdint>
#include <string>

#include "command_line.hpp"
#include "roles.hpp"
#include "ss/core/job/job_options.hpp"

namespace ss::cli {

// The roles of the cluster, whose settings are flags of `local` too.
struct cluster_roles {
  coordinator_role coordinator;
  shard_role shard;
  reader_role reader;
  sync_server_role sync_server;
  trainer_role trainer;
};

struct local_flags {
  cluster_roles roles;
  job::job_options& job = roles.coordinator.flags().job;
  int trainers = 2;
  int workers = 1;         // Hogwild workers per trainer
  int shard_threads = 1;
  bool processes = false;
  std::uint64_t rows = 200000;  // generated when --train is not given
  std::uint64_t test_rows = 20000;
  std::string data_dir = "data/local";
  int scheduler_threads = 0;
  log_flags log;
  double startup_timeout = 60;
  // State and supervision (--processes).
  std::string state_dir;   // shards' rows and the coordinator's snapshots; "" = a temporary one
  std::string run_dir;     // pid files and the coordinator's output; "" = a temporary one
  bool keep_state = false;
  double restart_delay = 1;
  int max_restarts = 10;
  std::string curve_dir;  // --processes: CURVE keys of every child (made here when absent); "" = plain
  std::string ops_listen;  // the coordinator's ops endpoint and dashboard, HOST:PORT; "" = none
  // Shard processes to start: the job's, and while a resumed job goes to fewer, those of the
  // snapshot too (they hand their rows over, then leave). Set from the state directory.
  int shards_to_start = 0;
};

// Both return the exit status of `shadowsync local` (commands.hpp; 130 when interrupted).
int run_local_in_process(local_flags& l);
int run_local_processes(local_flags& l);

}  // namespace ss::cli
