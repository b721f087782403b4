// The member services, each a process of its own (run_service): shard, reader, trainer and
// sync-server register with a coordinator and take the job's settings from it.
#include <string>

#include "commands.hpp"
#include "service_flags.hpp"
#include "service_root.hpp"

namespace ss::cli {
namespace {

using starter = result<std::unique_ptr<actors::running_service>> (*)(caf::actor_system&,
                                                                       std::unique_ptr<actors::transport>,
                                                                       const actors::service_options&);

// A member with no flags of its own: the shared ones are all it needs.
class member_role : public service_role {
 public:
  member_role(const service_kind& kind, starter start_service) : service_role(kind), start_(start_service) {}

  result<std::unique_ptr<actors::running_service>> start(caf::actor_system& sys,
                                                         std::unique_ptr<actors::transport> transport,
                                                         const actors::service_options& options) override {
    return start_(sys, std::move(transport), options);
  }

 private:
  starter start_;
};

// A shard, with its storage.
class shard_role final : public member_role {
 public:
  shard_role()
      : member_role({"shard",
                     "Runs an embedding shard server: it holds the rows of every table that hash to its "
                     "--index, serves batched lookups and applies gradient pushes with the job's sparse "
                     "optimizer, and with --data-dir keeps them in RocksDB and checkpoints them for cluster "
                     "snapshots. The job's settings come from the coordinator.",
                     "tcp://0.0.0.0:5556", /*member=*/true, /*indexed=*/true},
                    actors::start_shard) {}

  void add_flags(config::option_set& opts) override {
    opts.add("data-dir", &data_dir_,
             "Where the shard keeps its rows (RocksDB) and its snapshot checkpoints; a restarted shard loads "
             "them from here. Empty: rows live in memory only.");
    opts.add("flush-interval", &flush_interval_,
             "Seconds between writes of changed rows to --data-dir (a kill -9 loses at most this much of the "
             "shard's updates; SIGTERM loses none). 0: only at snapshots and on SIGTERM.")
        .range(0.0, 86400.0);
    opts.add("storage-memory-mb", &storage_memory_mb_,
             "RocksDB's memory with --data-dir (two memtables of a quarter each, half for the block cache), on "
             "top of the rows themselves; reported as storage_memory_bytes and storage_memory_bound_bytes.")
        .range(4, 1 << 20);
    opts.add("memory-budget-mb", &memory_budget_mb_,
             "RAM for the shard's rows (values and optimizer state, plus 48 bytes of index each): the rows "
             "touched most recently stay in RAM, the others in --data-dir, read back on a miss "
             "(docs/embeddings.md). 0: every row in RAM.")
        .range(0, 1 << 24);
  }

  void configure(actors::service_options& o) override {
    o.flush_interval = flush_interval_;
    o.memory_budget_bytes = static_cast<std::uint64_t>(memory_budget_mb_) << 20;
    if (!data_dir_.empty()) o.open_storage = rocksdb_storage(data_dir_, storage_memory_mb_, memory_budget_mb_ > 0);
  }

 private:
  std::string data_dir_;
  double flush_interval_ = 5;
  int storage_memory_mb_ = 64;
  int memory_budget_mb_ = 0;
};

// The members whose flags are all shared ones.
struct plain_member {
  service_kind kind;
  starter start;
};

const plain_member reader{{"reader",
                           "Runs a data reader: it reads its share of the job's training files (file i, i+N, ... for "
                           "--index i of N readers), parses and hashes them, and hands batches to trainers that ask "
                           "(each batch to exactly one trainer), tracking which were trained.",
                           "tcp://0.0.0.0:5557", /*member=*/true, /*indexed=*/true},
                          actors::start_reader};
const plain_member sync_server{
    {"sync-server",
     "Runs an extra sync server: it holds slice --index of the dense parameters' synchronization state (the "
     "coordinator holds slice 0; the job's --sync-servers sets how many slices, i.e. the sync capacity) and serves "
     "the trainers' sync rounds for it.",
     "tcp://0.0.0.0:5558", /*member=*/true, /*indexed=*/true},
    actors::start_sync_server};
// A trainer, with its prefetch hints.
class trainer_role final : public member_role {
 public:
  trainer_role()
      : member_role({"trainer",
                     "Runs a trainer: --threads Hogwild workers share one dense replica, pull batches from the "
                     "readers, look rows up on the shards, train and push gradients back. The job's settings "
                     "come from the coordinator.",
                     "tcp://0.0.0.0:0", /*member=*/true, /*indexed=*/false},
                    actors::start_trainer) {}

  void add_flags(config::option_set& opts) override {
    opts.add("prefetch", &prefetch_,
             "Hint each batch's rows to the shards while it waits for a worker, so that a shard with "
             "--memory-budget-mb reads them from its storage ahead of the lookup (docs/embeddings.md). A shard "
             "that keeps every row in RAM declines the hints. Worth it where storage reads wait on a disk and "
             "the shards have cores to spare; on a machine whose cores the job shares it cost more than it "
             "saved.");
  }

  void configure(actors::service_options& o) override { o.prefetch = prefetch_; }

 private:
  bool prefetch_ = false;
};

int run_member(const plain_member& m, const args& a, const config::environment& env) {
  member_role role(m.kind, m.start);
  return run_service(role, a, env);
}

}  // namespace

int run_shard(const args& a, const config::environment& env) {
  shard_role role;
  return run_service(role, a, env);
}

int run_reader(const args& a, const config::environment& env) {
  return run_member(reader, a, env);
}

int run_sync_server(const args& a, const config::environment& env) {
  return run_member(sync_server, a, env);
}

int run_trainer(const args& a, const config::environment& env) {
  trainer_role role;
  return run_service(role, a, env);
}

}  // namespace ss::cli
