// shadowsync coordinator: a job's sync coordinator as a service of its own (run_service), with
// its snapshots, its export and the job's result.
#include <spdlog/spdlog.h>

#include <filesystem>
#include <string>

#include "cluster_job.hpp"
#include "commands.hpp"
#include "service_flags.hpp"
#include "roles.hpp"
#include "service_root.hpp"
#include "ss/core/job/job_options.hpp"
#include "ss/core/job/preflight.hpp"

namespace ss::cli {
namespace {

actors::coordinator_options to_coordinator_options(const coordinator_flags& c) {
  actors::coordinator_options co;
  co.job = c.job;
  if (!c.snapshot_dir.empty()) co.snapshots = job::directory_snapshot_store(c.snapshot_dir);
  co.snapshot_interval = c.snapshot_interval;
  co.snapshot_retain = c.snapshot_retain;
  co.require_resume = c.resume;
  co.grow_shards = c.grow_shards;
  co.export_path = c.export_path;
  co.export_dir = export_dir_or_cwd(c.export_dir);
  if (!c.snapshot_dir.empty()) co.protected_dirs.push_back(c.snapshot_dir);
  co.publish_dir = c.publish_dir;
  co.publish_interval = c.publish_interval;
  co.publish_base_every = c.publish_base_every;
  co.publish_retain = c.publish_retain;
  co.publish_rows = c.publish_rows;
  return co;
}

}  // namespace

coordinator_role::coordinator_role()
    : service_role({"coordinator",
                    "Runs a job's sync coordinator: members (shards, readers, trainers) register with it "
                    "and receive the job's configuration; it tracks their heartbeats, reports cluster "
                    "progress, builds the final model and scores it on the --test files. Ends with a "
                    "summary and one JSON line; exits 0 when the job finished.",
                    "tcp://0.0.0.0:5555", /*member=*/false, /*indexed=*/false}) {}

void coordinator_role::add_flags(config::option_set& opts, flag_groups groups) {
  coordinator_flags& c = flags_;
  if (groups.placement) {
    opts.add("snapshot-dir", &c.snapshot_dir,
             "Where cluster snapshots go. A coordinator that finds snapshots of its job here continues the job "
             "from the newest valid one (a restart), or reports the result of a job that finished. Empty: no "
             "snapshots (a restarted coordinator starts the job over).");
  }
  if (groups.settings) {
    opts.add("snapshot-interval", &c.snapshot_interval,
             "Seconds between periodic cluster snapshots; 0: only on request (`shadowsync snapshot`).")
        .range(0.0, 86400.0 * 7);
    opts.add("snapshot-retain", &c.snapshot_retain, "Complete snapshots to keep (older ones are pruned).")
        .range(1, 1000);
    opts.add("grow-shards", &c.grow_shards,
             "A shard that registers with an index beyond the job's shard count (a StatefulSet scaled up) makes "
             "the running job grow to include it, as `shadowsync reshard --shards INDEX+1` does. Off: it is "
             "refused. An index the job gave up by shrinking is refused either way (its rows moved away).");
  }
  if (groups.placement)
    opts.add("resume", &c.resume, "Require a snapshot to resume from in --snapshot-dir (fail if there is none).");
  if (groups.settings) {
    opts.add("export", &c.export_path,
             "Write the final model here when the job ends (a model file for `shadowsync predict`).");
    opts.add("publish-dir", &c.publish_dir,
             "Publish the model here while the job trains, for `shadowsync serve`: every --publish-interval "
             "seconds the rows changed since the last publication and the dense parameters (a delta), a full "
             "model (a base) first and every --publish-base-every deltas, and the final model at the end. "
             "Empty: no publishing.");
    opts.add("publish-interval", &c.publish_interval, "Seconds between two publications.").range(0.05, 86400.0);
    opts.add("publish-base-every", &c.publish_base_every,
             "Deltas between two bases (also a base once the rows of the deltas since the last add up to more bytes than its rows).")
        .range(1, 1000000);
    opts.add("publish-retain", &c.publish_retain,
             "Publications kept in --publish-dir (never the newest base nor what follows it).")
        .range(1, 1000000);
    opts.add("publish-rows", &c.publish_rows,
             "How deltas store rows: exact (at the rows' own --row-precision: fp32, or 16 bits for bf16 and fp16 "
             "rows), fp32, bf16, fp16 (half the bytes, rounded to the nearest), or int8 (one scale per row, a "
             "quarter of the bytes, error at most 1/254 of a row's largest value).")
        .choices({"exact", "fp32", "bf16", "fp16", "int8"});
  }
  if (groups.placement) {
    opts.add("export-dir", &c.export_dir,
             "Where `shadowsync export --out P` may write: P relative to it, or absolute inside it; never inside "
             "--snapshot-dir, and an existing file is replaced only when it is a model file. Default: the "
             "coordinator's working directory.");
  }
  if (!groups.settings) return;
  opts.add("ops-linger", &c.ops_linger, ops_linger_help).range(0.0, 86400.0 * 7);
  job::add_job_options(opts, c.job);
}

// A cluster's coordinator keeps its snapshots in STATE_DIR/snapshots.
args coordinator_role::placement(const std::string& state_dir, const std::string& /*name*/) const {
  if (state_dir.empty()) return {};
  return {"--snapshot-dir", (std::filesystem::path(state_dir) / "snapshots").string()};
}

// The job, its directories and its outputs, checked before the coordinator starts.
status coordinator_role::check() {
  const coordinator_flags& c = flags_;
  SS_RETURN_IF_ERROR(job::check_job(c.job));
  SS_RETURN_IF_ERROR(preflight(c.job, c.export_path));
  if (!c.export_dir.empty()) SS_RETURN_IF_ERROR(job::check_writable_directory(c.export_dir, "--export-dir"));
  if (!c.snapshot_dir.empty()) SS_RETURN_IF_ERROR(make_directory(c.snapshot_dir, "--snapshot-dir"));
  if (!c.publish_dir.empty()) SS_RETURN_IF_ERROR(make_directory(c.publish_dir, "--publish-dir"));
  return status::ok();
}

result<std::unique_ptr<actors::running_service>> coordinator_role::start(caf::actor_system& sys,
                                                                         std::unique_ptr<actors::transport> transport,
                                                                         const actors::service_options& options) {
  auto co = to_coordinator_options(flags_);
  co.on_result = outcome_.keeper();
  return actors::start_coordinator(sys, std::move(transport), options, std::move(co));
}

// The counts are the coordinator's to say (it logs them as it starts): a resumed job may keep
// another shard count than --shards.
std::string coordinator_role::up_message(const actors::running_service& service) const {
  return fmt::format("coordinator: up at {}; waiting for the job's members", service.endpoint());
}

// Members learn that the job ended from their next heartbeat; one dropped for silence (cut off
// near the end) from its registration once its link heals: waited for a while, then not.
std::chrono::milliseconds coordinator_role::linger() const {
  return std::chrono::milliseconds(static_cast<long>((flags_.job.member_timeout + 10) * 1000));
}

int run_coordinator(const args& a, const config::environment& env) { return run_role<coordinator_role>(a, env); }

std::vector<std::string> coordinator_option_names() { return role_option_names<coordinator_role>(); }

}  // namespace ss::cli
