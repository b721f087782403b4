// The member services, each a process of its own (run_service): shard, reader, trainer and
// sync-server register with a coordinator and take the job's settings from it.
#include <filesystem>
#include <string>

#include "commands.hpp"
#include "roles.hpp"
#include "service_flags.hpp"

namespace ss::cli {

struct shard_role::flags {
  std::string data_dir;
  double flush_interval = 5;
  int storage_memory_mb = 64;
  int memory_budget_mb = 0;
  int move_page_rows = 8192;
};

shard_role::~shard_role() = default;

shard_role::shard_role()
    : member_role({"shard",
                   "Runs an embedding shard server: it holds the rows of every table that hash to its "
                   "--index, serves batched lookups and applies gradient pushes with the job's sparse "
                   "optimizer, and with --data-dir keeps them in RocksDB and checkpoints them for cluster "
                   "snapshots. The job's settings come from the coordinator.",
                   "tcp://0.0.0.0:5556", /*member=*/true, /*indexed=*/true},
                  actors::start_shard),
      flags_(std::make_unique<flags>()) {}

void shard_role::add_flags(config::option_set& opts, flag_groups groups) {
  flags& f = *flags_;
  if (groups.placement) {
    opts.add("data-dir", &f.data_dir,
             "Where the shard keeps its rows (RocksDB) and its snapshot checkpoints; a restarted shard loads "
             "them from here. Empty: rows live in memory only.");
  }
  if (!groups.settings) return;
  opts.add("flush-interval", &f.flush_interval,
           "Seconds between writes of changed rows to the shard's storage (a kill -9 loses at most this much of the "
           "shard's updates; SIGTERM loses none). 0: only at snapshots and on SIGTERM.")
      .range(0.0, 86400.0);
  opts.add("storage-memory-mb", &f.storage_memory_mb,
           "RocksDB's memory, where the shard keeps its rows in storage (two memtables of a quarter each, half for the block cache), on "
           "top of the rows themselves; reported as storage_memory_bytes and storage_memory_bound_bytes.")
      .range(4, 1 << 20);
  opts.add("memory-budget-mb", &f.memory_budget_mb,
           "RAM for the shard's rows (values and optimizer state, plus 48 bytes of index each): the rows "
           "touched most recently stay in RAM, the others in the shard's storage, read back on a miss "
           "(docs/embeddings.md). 0: every row in RAM.")
      .range(0, 1 << 24);
  opts.add("move-page-rows", &f.move_page_rows,
           "Rows per page the shard pulls from another while a job resumes on another shard count (its memory "
           "holds one page at a time: a page of 8,192 rows of dimension 64 is 2.2 MB).")
      .range(1, 1 << 20);
}

// A cluster's shard keeps its rows in STATE_DIR/<name>.
args shard_role::placement(const std::string& state_dir, const std::string& name) const {
  if (state_dir.empty()) return {};
  return {"--data-dir", (std::filesystem::path(state_dir) / name).string()};
}

status shard_role::check() {
  if (flags_->memory_budget_mb > 0 && flags_->data_dir.empty())
    return {errc::invalid_argument, "--memory-budget-mb needs --data-dir: the rows beyond the budget live in the "
                                    "shard's storage"};
  return status::ok();
}

void shard_role::configure(actors::service_options& o) {
  const flags& f = *flags_;
  o.flush_interval = f.flush_interval;
  o.memory_budget_bytes = static_cast<std::uint64_t>(f.memory_budget_mb) << 20;
  o.move_page_rows = static_cast<std::uint32_t>(f.move_page_rows);
  if (!f.data_dir.empty()) o.open_storage = rocksdb_storage(f.data_dir, f.storage_memory_mb, f.memory_budget_mb > 0);
}

struct trainer_role::flags {
  bool prefetch = false;
};

trainer_role::~trainer_role() = default;

trainer_role::trainer_role()
    : member_role({"trainer",
                   "Runs a trainer: --threads Hogwild workers share one dense replica, pull batches from the "
                   "readers, look rows up on the shards, train and push gradients back. The job's settings "
                   "come from the coordinator.",
                   "tcp://0.0.0.0:0", /*member=*/true, /*indexed=*/false},
                  actors::start_trainer),
      flags_(std::make_unique<flags>()) {}

void trainer_role::add_flags(config::option_set& opts, flag_groups groups) {
  if (!groups.settings) return;
  opts.add("prefetch", &flags_->prefetch,
           "Hint each batch's rows to the shards while it waits for a worker, so that a shard with "
           "--memory-budget-mb reads them from its storage ahead of the lookup (docs/embeddings.md). A shard "
           "that keeps every row in RAM declines the hints. Worth it where storage reads wait on a disk and "
           "the shards have cores to spare; on a machine whose cores the job shares it cost more than it "
           "saved.");
}

void trainer_role::configure(actors::service_options& o) { o.prefetch = flags_->prefetch; }

reader_role::reader_role()
    : member_role({"reader",
                   "Runs a data reader: it reads its share of the job's training files (file i, i+N, ... for "
                   "--index i of N readers), parses and hashes them, and hands batches to trainers that ask "
                   "(each batch to exactly one trainer), tracking which were trained.",
                   "tcp://0.0.0.0:5557", /*member=*/true, /*indexed=*/true},
                  actors::start_reader) {}

sync_server_role::sync_server_role()
    : member_role({"sync-server",
                   "Runs an extra sync server: it holds slice --index of the dense parameters' synchronization "
                   "state (the coordinator holds slice 0; the job's --sync-servers sets how many slices, i.e. the "
                   "sync capacity) and serves the trainers' sync rounds for it.",
                   "tcp://0.0.0.0:5558", /*member=*/true, /*indexed=*/true},
                  actors::start_sync_server) {}

int run_shard(const args& a, const config::environment& env) { return run_role<shard_role>(a, env); }

int run_reader(const args& a, const config::environment& env) { return run_role<reader_role>(a, env); }

int run_sync_server(const args& a, const config::environment& env) { return run_role<sync_server_role>(a, env); }

int run_trainer(const args& a, const config::environment& env) { return run_role<trainer_role>(a, env); }

std::vector<std::string> shard_option_names() { return role_option_names<shard_role>(); }

std::vector<std::string> reader_option_names() { return role_option_names<reader_role>(); }

std::vector<std::string> sync_server_option_names() { return role_option_names<sync_server_role>(); }

std::vector<std::string> trainer_option_names() { return role_option_names<trainer_role>(); }

}  // namespace ss::cli
