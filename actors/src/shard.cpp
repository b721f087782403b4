#include "ss/actors/shard.hpp"

#include <caf/all.hpp>

#include <chrono>

#include "ss/actors/gateway.hpp"
#include "ss/actors/messages.hpp"
#include "ss/core/embedding/sharding.hpp"
#include "ss/core/json.hpp"

namespace ss::actors {
namespace {

struct shard_worker_state {
  static inline const char* name = "shard-worker";
};

status check_ownership(const shard_options& o, const std::vector<std::uint32_t>& tables,
                       const std::vector<std::uint64_t>& ids) {
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto owner = embedding::shard_of(tables[i], ids[i], o.shards);
    if (owner != o.index)
      return {errc::invalid_argument, o.name + " owns no row (" + std::to_string(tables[i]) + ", " +
                                          std::to_string(ids[i]) + "): it belongs to shard " + std::to_string(owner) +
                                          " of " + std::to_string(o.shards) + " (do trainer and shard agree on --shards?)"};
  }
  return status::ok();
}

body_ptr refuse(shard_counters& c, const status& st) {
  c.refused.fetch_add(1, std::memory_order_relaxed);
  return make_body(wire::error_reply{st.code(), st.message()});
}

body_ptr serve_lookup(embedding::shard_store& store, const shard_options& o, shard_counters& c,
                      const wire::lookup_request& req) {
  if (auto st = check_ownership(o, req.tables, req.ids); !st.is_ok()) return refuse(c, st);
  wire::lookup_reply reply;
  reply.dim = store.options().dim;
  reply.values.resize(req.ids.size() * reply.dim);
  if (auto st = store.lookup(req.tables.data(), req.ids.data(), req.ids.size(), req.create, reply.values.data());
      !st.is_ok())
    return refuse(c, st);
  c.lookups.fetch_add(1, std::memory_order_relaxed);
  c.rows_looked_up.fetch_add(req.ids.size(), std::memory_order_relaxed);
  return make_body(std::move(reply));
}

body_ptr serve_push(embedding::shard_store& store, const shard_options& o, shard_counters& c,
                    const wire::push_request& req) {
  if (auto st = check_ownership(o, req.tables, req.ids); !st.is_ok()) return refuse(c, st);
  const std::size_t dim = store.options().dim;
  if (req.grads.size() != req.ids.size() * dim)
    return refuse(c, status(errc::invalid_argument, "push of " + std::to_string(req.ids.size()) + " rows carries " +
                                                        std::to_string(req.grads.size()) + " gradient values, expected " +
                                                        std::to_string(req.ids.size() * dim)));
  if (auto st = store.push(req.tables.data(), req.ids.data(), req.ids.size(), req.grads.data()); !st.is_ok())
    return refuse(c, st);
  c.pushes.fetch_add(1, std::memory_order_relaxed);
  c.rows_pushed.fetch_add(req.ids.size(), std::memory_order_relaxed);
  return make_body(wire::push_reply{req.ids.size()});
}

body_ptr serve_status(embedding::shard_store& store, const shard_options& o, shard_counters& c) {
  const auto s = store.stats();
  return make_body(wire::status_reply{json_object()
                                          .add("role", "shard")
                                          .add("name", o.name)
                                          .add("index", o.index)
                                          .add("shards", o.shards)
                                          .add("rows", s.rows)
                                          .add("bytes", s.bytes)
                                          .add("tables", s.tables)
                                          .add("lookups", c.lookups.load())
                                          .add("rows_looked_up", c.rows_looked_up.load())
                                          .add("pushes", c.pushes.load())
                                          .add("rows_pushed", c.rows_pushed.load())
                                          .add("refused", c.refused.load())
                                          .add("busy_seconds", static_cast<double>(c.busy_ns.load()) * 1e-9)
                                          .str()});
}

caf::behavior shard_worker(caf::stateful_actor<shard_worker_state>* self,
                           std::shared_ptr<embedding::shard_store> store, shard_options options,
                           std::shared_ptr<shard_counters> counters) {
  (void)self;
  return {
      [store, options, counters](serve_atom, const envelope_ptr& env) -> body_ptr {
        const auto start = std::chrono::steady_clock::now();
        body_ptr out;
        if (const auto* req = std::get_if<wire::lookup_request>(&env->message)) {
          out = serve_lookup(*store, options, *counters, *req);
        } else if (const auto* push = std::get_if<wire::push_request>(&env->message)) {
          out = serve_push(*store, options, *counters, *push);
        } else if (std::holds_alternative<wire::status_request>(env->message)) {
          out = serve_status(*store, options, *counters);
        } else {
          out = refuse(*counters, status(errc::invalid_argument, std::string("a shard does not serve ") +
                                                                     wire::message_name(env->message)));
        }
        counters->busy_ns.fetch_add(static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                                   std::chrono::steady_clock::now() - start)
                                                                   .count()),
                                    std::memory_order_relaxed);
        return out;
      },
  };
}

}  // namespace

caf::actor spawn_shard(caf::actor_system& sys, const caf::actor& gateway,
                       std::shared_ptr<embedding::shard_store> store, const shard_options& options,
                       std::shared_ptr<shard_counters> counters) {
  auto factory = [&sys, store, options, counters] {
    return sys.spawn(shard_worker, store, options, counters);
  };
  auto pool = caf::actor_pool::make(sys.dummy_execution_unit(), static_cast<std::size_t>(std::max(1, options.workers)),
                                    factory, caf::actor_pool::round_robin());
  caf::anon_send(gateway, route_atom::value, kind_of<wire::lookup_request>(), pool);
  caf::anon_send(gateway, route_atom::value, kind_of<wire::push_request>(), pool);
  caf::anon_send(gateway, route_atom::value, kind_of<wire::status_request>(), pool);
  return pool;
}

}  // namespace ss::actors
