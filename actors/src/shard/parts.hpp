// What the shard's source files share (private to ss_actors): shard.cpp wires the actors
// (spawn_shard), workers.cpp serves lookups, pushes, hints and dumps, status.cpp declares the
// status, persister.cpp writes rows to storage and takes checkpoints, restore.cpp decides what a
// starting shard serves. Their typed interfaces (shard_actor, shard_persister_actor, ...) are in
// actors.hpp, since spawn_shard hands them out.
#pragma once

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "ss/actors/messages.hpp"
#include "ss/actors/shard.hpp"
#include "ss/core/embedding/publish_staging.hpp"
#include "ss/core/embedding/push_ledger.hpp"
#include "ss/core/embedding/sharding.hpp"
#include "ss/core/job/membership_fence.hpp"

namespace ss::actors::shard_parts {

// What the shard's workers share about the trainers that push: whose membership is over (the
// view's) and which pushes were applied lately (a resend is not applied twice).
struct push_guard {
  std::mutex mu;
  job::membership_fence fence;
  embedding::push_ledger ledger;

  void follow(const wire::cluster_view& view) {
    std::lock_guard<std::mutex> lock(mu);
    fence.follow(view.trainer_incarnations, view.trainer_memberships, view.dropped_trainers);
    std::vector<std::uint64_t> keep = view.trainer_incarnations;
    keep.insert(keep.end(), view.dropped_trainers.begin(), view.dropped_trainers.end());
    ledger.prune(keep);
  }
};

// The clock of a row TTL in examples, kept with the rows so that a restarted shard goes on from it.
constexpr const char* ttl_clock_key = "ttl_clock";

// ---- restore.cpp ----
// Which shard of the job a storage holds, "<index> of <shards>" (its `shard` meta): recorded with
// the job id whenever a shard loads or claims it.
std::string shard_claim(std::uint32_t index, std::uint32_t shards);

// ---- workers.cpp ----
// The placement the shard serves by: the job's, until a live reshard's view names another shard
// count. Shared by the workers and the prefetcher, swapped whole (a request holds the one it
// started with).
class serving_placement {
 public:
  explicit serving_placement(std::shared_ptr<const embedding::placement> p) : current_(std::move(p)) {}
  std::shared_ptr<const embedding::placement> get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return current_;
  }
  void set(std::shared_ptr<const embedding::placement> p) {
    std::lock_guard<std::mutex> lock(mu_);
    current_ = std::move(p);
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const embedding::placement> current_;
};

struct shard_worker_state {
  static inline const char* name = "shard-worker";
};
shard_actor::behavior_type shard_worker(shard_actor::stateful_pointer<shard_worker_state> self,
                                        std::shared_ptr<embedding::shard_store> store, shard_options options,
                                        std::shared_ptr<serving_placement> placement,
                                        std::shared_ptr<embedding::placement_cache> paged,
                                        std::shared_ptr<shard_counters> counters, std::shared_ptr<push_guard> guard,
                                        std::shared_ptr<embedding::publish_staging> publishing);
// The placement over `shards` shards, from `paged`; refused, naming `what` was asked ("a page of
// rows"), for a shard count no job can have.
result<std::shared_ptr<const embedding::placement>> placement_for(const shard_options& o,
                                                                   embedding::placement_cache& paged,
                                                                   std::uint32_t shards, const std::string& what);
// The placement a page of rows is filtered by (dump_request's placement_shards): null for every
// row (0 shards); else placement_for.
// Appends `row` (row_floats() slots, as the store keeps it) to a dump page: whole, as stored, for
// a move to another shard; else its values decoded to FP32 (an export).
void add_to_page(wire::dump_reply& page, const embedding::shard_store& store, bool whole_rows, const float* row);
result<std::shared_ptr<const embedding::placement>> placement_of_dump(const shard_options& o,
                                                                      embedding::placement_cache& paged,
                                                                      const wire::dump_request& req);
// A live reshard's copies (dump_request pass copy or changed) are whole rows of a placement, read
// from RAM for a shard without a memory budget, from storage for one with a budget. ok, or the
// refusal with the reason.
status live_copy_refusal(const shard_options& o, const wire::dump_request& req);
// How the rows that left RAM since a live reshard's copy began stand at the hold: adds to the page
// each of `ids` (of table t, all given to the requester) as a row, or as gone (a tombstone).
using left_rows_standing =
    std::function<status(std::uint32_t t, const std::vector<std::uint64_t>& ids, wire::dump_reply& page)>;
// Under the hold, after the rows marked in RAM: the rows that left RAM since the copy began
// (embedding_table::moved_out: marked for the move, or given up for good), from (t, position) on,
// where t = max_tables + a table pages that table's list by index; those the placement gives to
// req.placement_index, as `stand` finds them, until the page holds max_rows rows and tombstones.
// Returns where the next page starts; t at or past 2 * max_tables: done.
result<std::pair<std::uint32_t, std::uint64_t>> page_left_rows(const embedding::shard_store& store,
                                                               const embedding::placement& to,
                                                               const wire::dump_request& req, std::uint32_t t,
                                                               std::uint64_t position, std::size_t max_rows,
                                                               wire::dump_reply& reply, const left_rows_standing& stand);
// A dump page as it goes out: its row width, its checksum, counted in rows_dumped.
body_ptr sealed_page(wire::dump_reply&& page, std::size_t row_floats, shard_counters& c);
// Appends to `reply` up to max_rows rows from RAM from (req.table, req.position) on: every row (an
// export's values), or those `to` gives to req.placement_index (a move's whole rows; a reshard's
// copy or the rows marked since, per req.pass). Returns where the next page starts; a table at or
// past max_tables: done.
std::pair<std::uint32_t, std::uint64_t> page_from_ram(embedding::shard_store& store, const embedding::placement* to,
                                                      const wire::dump_request& req, std::size_t max_rows,
                                                      wire::dump_reply& reply);
// With a memory budget: serves the trainers' prefetch hints.
struct prefetcher_state {
  static inline const char* name = "shard-prefetcher";
};
shard_prefetcher_actor::behavior_type prefetcher(shard_prefetcher_actor::stateful_pointer<prefetcher_state> self,
                                                 std::shared_ptr<embedding::shard_store> store, shard_options options,
                                                 std::shared_ptr<serving_placement> placement,
                                                 std::shared_ptr<shard_counters> counters);

// ---- status.cpp ----
body_ptr serve_status(embedding::shard_store& store, const shard_options& o, shard_counters& c);

// ---- persister.cpp ----
struct persister_state {
  static inline const char* name = "shard-persister";
  std::shared_ptr<embedding::shard_store> store;
  shard_options options;
  std::shared_ptr<shard_counters> counters;
  std::shared_ptr<embedding::placement_cache> paged;  // placements its pages of rows were asked for
  std::vector<std::uint32_t> tables;                  // scratch: the table of each row of a write
  // The shard count rows are placed over, as the views say (the job's, until a live reshard's
  // switch names another).
  std::uint32_t in_force = 0;
  // The shard count of a reshard whose rows came here and are not settled yet (storage's `taking`
  // meta, so that a restart knows it too); 0: none.
  std::uint32_t taking = 0;
};
using persister_self = shard_persister_actor::stateful_pointer<persister_state>;
shard_persister_actor::behavior_type persister(persister_self self, std::shared_ptr<embedding::shard_store> store,
                                               shard_options options, std::shared_ptr<shard_counters> counters,
                                               std::shared_ptr<embedding::placement_cache> paged);
// ---- mover.cpp ----
shard_mover_actor spawn_mover(caf::actor_system& sys, shard_options options, gateway_actor gateway,
                              shard_persister_actor persister, std::shared_ptr<embedding::placement_cache> paged);

// A row TTL's sweeps, for a shard without storage (the persister sweeps before each flush otherwise).
shard_sweeper_actor::behavior_type sweeper(shard_sweeper_actor::pointer self, std::shared_ptr<embedding::shard_store> store,
                                           shard_options options);

}  // namespace ss::actors::shard_parts
