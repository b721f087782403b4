#include "ss/actors/shard.hpp"

#include <caf/all.hpp>

#include <algorithm>

#include "parts.hpp"
#include "ss/actors/gateway.hpp"

namespace ss::actors {

using shard_parts::prefetcher;
using shard_parts::persister;
using shard_parts::push_guard;
using shard_parts::shard_worker;
using shard_parts::sweeper;

shard_actors spawn_shard(caf::actor_system& sys, const gateway_actor& gateway,
                         std::shared_ptr<embedding::shard_store> store, const shard_options& options,
                         std::shared_ptr<shard_counters> counters) {
  auto guard = std::make_shared<push_guard>();
  auto publishing = std::make_shared<embedding::publish_staging>();
  auto paged = std::make_shared<embedding::placement_cache>();
  auto placement = std::make_shared<shard_parts::serving_placement>(paged->of(options.shards));
  // CAF 0.17's actor_pool is untyped: it takes its workers as caf::actor and forwards each message
  // to one of them. Both casts are needed for that, and safe: every worker is a shard_actor.
  auto factory = [&sys, store, options, placement, paged, counters, guard, publishing] {
    return caf::actor_cast<caf::actor>(
        sys.spawn(shard_worker, store, options, placement, paged, counters, guard, publishing));
  };
  shard_actors out;
  out.pool = caf::actor_cast<shard_actor>(caf::actor_pool::make(sys.dummy_execution_unit(),
                                                                 static_cast<std::size_t>(std::max(1, options.workers)),
                                                                 factory, caf::actor_pool::round_robin()));
  const request_server_actor pool_server{out.pool};
  for (std::size_t kind : {kind_of<wire::lookup_request>(), kind_of<wire::push_request>(), kind_of<wire::status_request>()})
    caf::anon_send(gateway, route_atom::value, kind, pool_server);
  // Pages of many rows (a publication's, an export's) on a thread of their own: a page reads and
  // encodes up to --export-page-rows rows, and lookups and pushes queued behind it in the pool
  // would stall training for that long (a publishing job lost a tenth of its examples/s so).
  out.bulk = sys.spawn<caf::detached>(shard_worker, store, options, placement, paged, counters, guard, publishing);
  const request_server_actor bulk_server{out.bulk};
  caf::anon_send(gateway, route_atom::value, kind_of<wire::publish_rows_request>(), bulk_server);
  // With a memory budget the export reads storage, which only the persister writes: its pages go
  // there, after a flush.
  const bool stored_dump = store->tiered() && options.storage;
  if (!stored_dump) caf::anon_send(gateway, route_atom::value, kind_of<wire::dump_request>(), bulk_server);
  if (stored_dump) {
    // Hints read storage: a thread of their own (detached), so that a burst of them never holds
    // up a lookup in the pool; a hint that waits its turn only finds its rows there already.
    out.prefetcher = sys.spawn<caf::detached>(prefetcher, store, options, placement, counters);
    caf::anon_send(gateway, route_atom::value, kind_of<wire::warm_request>(), out.prefetcher);
  } else {
    caf::anon_send(gateway, route_atom::value, kind_of<wire::warm_request>(), pool_server);
  }
  store->read_wall_clock(options.unix_seconds());  // a row TTL in seconds: before the first touch
  if (!options.storage && store->options().ttl.enabled()) {
    // Without storage nothing flushes: a sweeper of its own, on its own thread (a sweep walks
    // every row in RAM).
    out.sweeper = sys.spawn<caf::detached>(sweeper, store, options);
  }
  if (options.storage) {
    // Detached: writing to storage blocks on disk, never a scheduler thread.
    out.persister = sys.spawn<caf::detached>(persister, store, options, counters, paged);
    const request_server_actor persister_server{out.persister};
    caf::anon_send(gateway, route_atom::value, kind_of<wire::snapshot_request>(), persister_server);
    if (stored_dump) caf::anon_send(gateway, route_atom::value, kind_of<wire::dump_request>(), persister_server);
    caf::anon_send(gateway, route_atom::value, kind_of<wire::drop_rows_request>(), persister_server);
  }
  // A job that takes another shard count: rows move in through the mover (which refuses, saying
  // why, on a shard without storage: then it is asked to drop rows too).
  out.mover = shard_parts::spawn_mover(sys, options, gateway, out.persister, paged);
  const request_server_actor mover_server{out.mover};
  caf::anon_send(gateway, route_atom::value, kind_of<wire::take_rows_request>(), mover_server);
  if (!options.storage) caf::anon_send(gateway, route_atom::value, kind_of<wire::drop_rows_request>(), mover_server);
  return out;
}

}  // namespace ss::actors

