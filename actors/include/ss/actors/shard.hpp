// The embedding shard server's actors: a pool of workers serving lookup_request, push_request
// and status_request against one shared shard_store (thread-safe), routed by the gateway.
#pragma once

#include <caf/fwd.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "ss/core/embedding/shard_store.hpp"

namespace ss::actors {

struct shard_options {
  std::string name = "shard";
  std::uint32_t index = 0;   // this shard's index
  std::uint32_t shards = 1;  // shards in the job: keys are checked against shard_of()
  int workers = 1;           // actors serving requests concurrently
};

struct shard_counters {
  std::atomic<std::uint64_t> lookups{0}, rows_looked_up{0}, pushes{0}, rows_pushed{0};
  std::atomic<std::uint64_t> refused{0};  // misrouted keys, bad sizes, full tables
  std::atomic<std::uint64_t> busy_ns{0};  // time spent serving
};

// Spawns the workers and routes the shard's message types to them through `gateway`.
caf::actor spawn_shard(caf::actor_system& sys, const caf::actor& gateway,
                       std::shared_ptr<embedding::shard_store> store, const shard_options& options,
                       std::shared_ptr<shard_counters> counters);

}  // namespace ss::actors
