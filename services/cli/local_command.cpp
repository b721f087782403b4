// shadowsync local: parses the flags of a whole cluster on this machine, generates training data
// when none is given, checks the job, then runs it in this process or as supervised processes.
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cluster_job.hpp"
#include "commands.hpp"
#include "local_cluster.hpp"
#include "service_flags.hpp"
#include "ss/core/data/generator.hpp"

namespace ss::cli {
namespace {

const char* const local_help =
    "Runs a whole shadowsync cluster on this machine: a coordinator, --shards embedding shard servers, "
    "--readers data readers and --trainers trainers, as actors in this process (ZeroMQ inproc) or, with "
    "--processes, as separate processes on loopback tcp. Trains on the --train files, or on data generated "
    "from a hidden teacher when none are given, and ends with a summary and one JSON line like `shadowsync "
    "train`.";

void add_local_flags(config::option_set& opts, local_flags& l) {
  opts.add("trainers", &l.trainers, "Trainers in the cluster.").range(1, 256);
  opts.add("threads", &l.workers, "Hogwild worker threads per trainer.").range(1, 256);
  opts.add("shard-threads", &l.shard_threads, "Request workers per shard.").range(1, 256);
  opts.add("processes", &l.processes, "Run every service as its own process on loopback tcp.");
  opts.add("rows", &l.rows, "Rows to generate when no --train files are given.").min(1);
  opts.add("test-rows", &l.test_rows, "Test rows to generate when no --train files are given.");
  opts.add("data-dir", &l.data_dir, "Where generated data goes (reused when already there).");
  opts.add("scheduler-threads", &l.scheduler_threads, "CAF scheduler threads; 0 = one per core (at least 2).")
      .range(0, 256);
  opts.add("startup-timeout", &l.startup_timeout, "Seconds a service may wait to join the job.").min(1.0);
  opts.add("state-dir", &l.state_dir,
           "Where the shards keep their rows and the coordinator its snapshots (a later run with the same "
           "--state-dir resumes the job, or reports its result). Default: a temporary directory (with "
           "--processes; in one process: no persistence).");
  opts.add("run-dir", &l.run_dir, "--processes: where the supervisor writes <service>.pid files and the "
                                  "coordinator's output. Default: a temporary directory.");
  opts.add("keep-state", &l.keep_state, "--processes: keep the temporary state directory after the run.");
  // The roles' own settings, declared by each role (`shadowsync shard --help` and so on).
  l.roles.shard.add_flags(opts, settings_only);
  l.roles.trainer.add_flags(opts, settings_only);
  opts.add("restart-delay", &l.restart_delay, "--processes: seconds before a service that died is started again.")
      .range(0.0, 3600.0);
  opts.add("max-restarts", &l.max_restarts, "--processes: restarts of one service before the run gives up.")
      .range(0, 100000);
  add_log_flags(opts, l.log);
  opts.add("curve-dir", &l.curve_dir,
           "--processes: run every link with CURVE, with the key set in this directory (made with `shadowsync "
           "keygen --cluster` when it has no authorized_keys; DIR/admin.key is for shadowsync status/snapshot/export "
           "with --curve-server-key DIR/server.pub). Empty: plain.");
  opts.add("ops-listen", &l.ops_listen,
           "HOST:PORT of the coordinator's HTTP endpoint: the job's dashboard at /, /api/status, /api/history, and "
           "/healthz, /readyz, /metrics (port 0: any free port); empty: none.");
  // The coordinator's settings, the job's among them.
  l.roles.coordinator.add_flags(opts, settings_only);
}

// Without --train files (and unless the steps are simulated): train on data drawn from a hidden
// teacher, generated into --data-dir once and reused.
status use_generated_data(local_flags& l) {
  if (!l.job.train.empty() || l.job.simulate_step_ms > 0) return status::ok();
  const std::string dir = l.data_dir + "/rows-" + std::to_string(l.rows);
  const std::string train = dir + "/train.tsv", test = dir + "/test.tsv";
  if (!std::filesystem::exists(dir + "/teacher.json")) {
    spdlog::info("local: no --train files; generating {} rows from a hidden teacher into {}", l.rows, dir);
    std::filesystem::create_directories(dir);
    data::generator_options g;
    g.rows = l.rows;
    auto report = data::generate_train_test(g, l.test_rows, train, test);
    if (!report.is_ok()) return report.error();
    std::ofstream(dir + "/teacher.json") << "{\"bayes_ne\":" << report->test.bayes_ne << "}\n";
    spdlog::info("local: the teacher's Bayes-optimal test NE is {:.5f}", report->test.bayes_ne);
  }
  l.job.train = {train};
  if (l.test_rows > 0 && l.job.test.empty()) l.job.test = {test};
  return status::ok();
}

// The job and its outputs, checked before any service starts.
status check_local(local_flags& l) {
  job::resolve_sync(l.job, l.trainers);
  SS_RETURN_IF_ERROR(job::resolve_feature_counts(l.job));
  coordinator_flags& c = l.roles.coordinator.flags();
  // A child process may run elsewhere than here; the in-process coordinator too, in effect.
  if (!c.export_path.empty()) c.export_path = std::filesystem::absolute(c.export_path).string();
  if (!c.publish_dir.empty()) c.publish_dir = std::filesystem::absolute(c.publish_dir).string();
  SS_RETURN_IF_ERROR(l.roles.coordinator.check());
  if (!l.state_dir.empty()) SS_RETURN_IF_ERROR(make_directory(l.state_dir, "--state-dir"));
  return status::ok();
}

// The shards to start: the job's, and when it resumes from a snapshot of more shards (or the first
// snapshot after it went from more), those too, which hand their rows to the others and leave.
int shards_to_start(const local_flags& l) {
  std::string dir = l.roles.coordinator.flags().snapshot_dir;
  if (dir.empty() && !l.state_dir.empty()) dir = (std::filesystem::path(l.state_dir) / "snapshots").string();
  std::error_code ec;
  if (dir.empty() || !std::filesystem::is_directory(dir, ec)) return l.job.shards;
  auto store = job::directory_snapshot_store(dir);
  if (store->read_result().is_ok()) return l.job.shards;  // finished: it reports its result
  std::vector<std::string> skipped;
  auto latest = job::latest_valid_snapshot(*store, &skipped);
  if (!latest.is_ok()) return l.job.shards;
  const auto& m = latest->manifest;
  return std::max({l.job.shards, static_cast<int>(m.shards.size()), static_cast<int>(m.reshaped_from)});
}

}  // namespace

int run_local(const args& a, const config::environment& env) {
  local_flags l;
  l.job.progress_interval = 5;
  // A refused job ends with a JSON line too, for the scripts that read only that line.
  command_line cmd({"local", "cluster"}, local_help);
  add_local_flags(cmd.options(), l);
  if (auto done = cmd.parse(a, env, &l.log)) return *done;
  // Contradicting flags are refused before any data is generated.
  if (!l.curve_dir.empty() && !l.processes) {
    return cmd.refuse("--curve-dir needs --processes (in one process the services talk over inproc://, which never "
                      "leaves the process and which libzmq does not encrypt)");
  }
  // A shard's own checks, where a cluster in this process places it (with --processes, the
  // supervisor gives every shard a state directory).
  if (!l.processes) {
    if (auto st = l.roles.shard.place(l.state_dir, "shard-0"); !st.is_ok()) return cmd.refuse(st.message());
    if (auto st = l.roles.shard.check(); !st.is_ok())
      return cmd.refuse(st.message() + " (in one process: give --state-dir, or use --processes)");
  }
  if (l.job.follow.enabled && l.job.train.empty())
    return cmd.refuse("--follow needs --train: the file or directory to follow (generated data does not grow)");
  // Every trainer of a local cluster starts together: the job waits for all of them.
  if (cmd.options().source("min-trainers") == config::value_source::default_value) l.job.min_trainers = l.trainers;
  if (auto st = use_generated_data(l); !st.is_ok()) {
    spdlog::error("local: {}", st.message());
    return 1;
  }
  if (auto st = check_local(l); !st.is_ok()) return cmd.refuse(st.message());
  l.shards_to_start = shards_to_start(l);
  if (l.shards_to_start > l.job.shards)
    spdlog::info("local: the job resumes from a snapshot of {} shards on {}: {} more start to hand their rows over, "
                 "then leave", l.shards_to_start, l.job.shards, l.shards_to_start - l.job.shards);
  spdlog::info("local: {} trainer(s) x {} thread(s), {} shard(s), {} reader(s), {}", l.trainers, l.workers,
               l.job.shards, l.job.readers, l.processes ? "separate processes on loopback" : "in this process");
  if (l.processes) return run_local_processes(l);
  return run_local_in_process(l);
}

std::vector<std::string> local_option_names() { return names_of_options<local_flags>(add_local_flags); }

}  // namespace ss::cli
