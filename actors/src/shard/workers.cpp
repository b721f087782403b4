// The shard's request workers (a pool) and its prefetcher: lookups, pushes, hints and dump pages.
#include <caf/all.hpp>

#include <chrono>

#include <spdlog/spdlog.h>

#include "parts.hpp"
#include "ss/core/embedding/sharding.hpp"
#include "ss/core/embedding/table_runs.hpp"
#include "ss/core/io/hex.hpp"

namespace ss::actors::shard_parts {
namespace {

status check_ownership(const shard_options& o, const embedding::placement& placement,
                       const std::vector<std::uint32_t>& tables, const std::vector<std::uint64_t>& ids) {
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto owner = placement.shard_of(tables[i], ids[i]);
    if (owner != o.index)
      return {errc::invalid_argument, o.name + " owns no row (" + std::to_string(tables[i]) + ", " +
                                          std::to_string(ids[i]) + "): it belongs to shard " + std::to_string(owner) +
                                          " of " + std::to_string(placement.shards()) +
                                          " (do trainer and shard agree on --shards?)"};
  }
  return status::ok();
}

body_ptr refuse(shard_counters& c, const status& st) {
  c.refused.fetch_add(1, std::memory_order_relaxed);
  if (st.code() == errc::resource_exhausted) c.table_full.fetch_add(1, std::memory_order_relaxed);
  return make_body(wire::error_reply{st.code(), st.message()});
}

body_ptr serve_lookup(embedding::shard_store& store, const shard_options& o, const embedding::placement& placement,
                      shard_counters& c, const wire::lookup_request& req) {
  if (auto st = check_ownership(o, placement, req.tables, req.ids); !st.is_ok()) return refuse(c, st);
  // A training lookup's batch moves the clock of a row TTL in examples.
  if (req.create) store.count_examples(req.examples);
  wire::lookup_reply reply;
  reply.dim = store.options().dim;
  reply.precision = store.options().precision;  // exact: the values are decoded from rows at it
  reply.values.resize(req.ids.size() * reply.dim);
  if (auto st = store.lookup(req.tables.data(), req.ids.data(), req.ids.size(), req.create, reply.values.data());
      !st.is_ok())
    return refuse(c, st);
  c.lookups.fetch_add(1, std::memory_order_relaxed);
  c.rows_looked_up.fetch_add(req.ids.size(), std::memory_order_relaxed);
  return make_body(std::move(reply));
}

// A push of a trainer whose membership is over is refused (fenced); one applied before (a resend)
// is answered as applied, without applying it again. Checked after the request's own checks, so
// that a malformed push is refused for what it is.
body_ptr serve_push(embedding::shard_store& store, const shard_options& o, const embedding::placement& placement,
                    shard_counters& c, push_guard& guard, const wire::push_request& req) {
  if (auto st = check_ownership(o, placement, req.tables, req.ids); !st.is_ok()) return refuse(c, st);
  const std::size_t dim = store.options().dim;
  if (req.grads.size() != req.ids.size() * dim)
    return refuse(c, status(errc::invalid_argument, "push of " + std::to_string(req.ids.size()) + " rows carries " +
                                                        std::to_string(req.grads.size()) + " gradient values, expected " +
                                                        std::to_string(req.ids.size() * dim)));
  if (req.trainer != 0) {
    std::unique_lock<std::mutex> lock(guard.mu);
    if (guard.fence.fenced(req.trainer, req.membership)) {
      const std::uint64_t now = guard.fence.membership_of(req.trainer);
      lock.unlock();
      c.pushes_fenced.fetch_add(1, std::memory_order_relaxed);
      return make_body(wire::error_reply{
          errc::fenced, o.name + ": push " + std::to_string(req.number) + " of trainer " + ss::io::hex(req.trainer, 16) +
                            " under membership " + std::to_string(req.membership) + " not applied: " +
                            (now == 0 ? std::string("the trainer was dropped from the job")
                                      : "the trainer holds membership " + std::to_string(now) + " now") +
                            " and its batches went to others"});
    }
    if (!guard.ledger.record(req.trainer, req.number)) {
      lock.unlock();
      c.pushes_duplicate.fetch_add(1, std::memory_order_relaxed);
      return make_body(wire::push_reply{0, true});
    }
  }
  if (auto st = store.push(req.tables.data(), req.ids.data(), req.ids.size(), req.grads.data(), req.lr_scale);
      !st.is_ok()) {
    if (req.trainer != 0) {
      std::lock_guard<std::mutex> lock(guard.mu);
      guard.ledger.forget(req.trainer, req.number);  // not applied: a resend may be
    }
    return refuse(c, st);
  }
  c.pushes.fetch_add(1, std::memory_order_relaxed);
  c.rows_pushed.fetch_add(req.ids.size(), std::memory_order_relaxed);
  return make_body(wire::push_reply{req.ids.size()});
}

// A prefetch hint. Without a memory budget every row is in RAM: the answer says so, and the
// trainer sends no more.
body_ptr serve_warm(embedding::shard_store& store, const shard_options& o, const embedding::placement& placement,
                    shard_counters& c, const wire::warm_request& req) {
  if (!store.tiered()) return make_body(wire::warm_reply{0, false});
  if (auto st = check_ownership(o, placement, req.tables, req.ids); !st.is_ok()) return refuse(c, st);
  c.warm_requests.fetch_add(1, std::memory_order_relaxed);
  auto warmed = store.warm(req.tables.data(), req.ids.data(), req.ids.size());
  if (!warmed.is_ok()) {
    // The lookup that follows reads the rows itself and reports the error if it persists.
    c.warm_errors.fetch_add(1, std::memory_order_relaxed);
    return make_body(wire::error_reply{warmed.error().code(), o.name + ": " + warmed.error().message()});
  }
  return make_body(wire::warm_reply{*warmed, true});
}

}  // namespace

result<std::shared_ptr<const embedding::placement>> placement_for(const shard_options& o,
                                                                   embedding::placement_cache& paged,
                                                                   std::uint32_t shards, const std::string& what) {
  if (shards == 0 || shards > embedding::max_shards)
    return status(errc::invalid_argument, o.name + ": " + what + " for a placement over " + std::to_string(shards) +
                                              " shards (rows can be placed on 1 to " +
                                              std::to_string(embedding::max_shards) + ")");
  return paged.of(shards);
}

void add_to_page(wire::dump_reply& page, const embedding::shard_store& store, bool whole_rows, const float* row) {
  if (whole_rows) {
    page.values.insert(page.values.end(), row, row + store.row_floats());
    return;
  }
  const std::uint32_t dim = store.options().dim;
  page.values.resize(page.values.size() + dim);
  embedding::decode_values(row, dim, store.options().precision, page.values.data() + page.values.size() - dim);
}

result<std::shared_ptr<const embedding::placement>> placement_of_dump(const shard_options& o,
                                                                      embedding::placement_cache& paged,
                                                                      const wire::dump_request& req) {
  if (req.placement_shards == 0) return std::shared_ptr<const embedding::placement>();
  return placement_for(o, paged, req.placement_shards, "a page of rows");
}

status live_copy_refusal(const shard_options& o, const wire::dump_request& req) {
  if (req.placement_shards == 0 || !req.whole_rows)
    return status(errc::invalid_argument, o.name + ": a reshard's copy of rows needs a placement and whole rows");
  return status::ok();
}

result<std::pair<std::uint32_t, std::uint64_t>> page_left_rows(const embedding::shard_store& store,
                                                               const embedding::placement& to,
                                                               const wire::dump_request& req, std::uint32_t t,
                                                               std::uint64_t position, std::size_t max_rows,
                                                               wire::dump_reply& reply, const left_rows_standing& stand) {
  const std::uint32_t max_tables = store.options().max_tables;
  std::vector<std::uint64_t> ids, placed;
  auto room = [&] { return max_rows - std::min(max_rows, reply.ids.size() + reply.gone_ids.size()); };
  for (; t < 2 * max_tables && room() > 0; ++t, position = 0) {
    const embedding::embedding_table* tab = store.existing_table(t - max_tables);
    if (tab == nullptr) continue;
    ids.clear();
    position = tab->moved_out(static_cast<std::size_t>(position), room(), ids);
    placed.clear();
    for (const std::uint64_t id : ids)
      if (to.shard_of(t - max_tables, id) == req.placement_index) placed.push_back(id);
    if (!placed.empty()) SS_RETURN_IF_ERROR(stand(t - max_tables, placed, reply));
    if (position != 0) break;  // the page is full inside this list
  }
  return std::make_pair(t, position);
}

body_ptr sealed_page(wire::dump_reply&& page, std::size_t row_floats, shard_counters& c) {
  page.row_floats = static_cast<std::uint32_t>(row_floats);
  page.crc32c = wire::dump_page_crc(page);
  c.rows_dumped.fetch_add(page.ids.size(), std::memory_order_relaxed);
  return make_body(std::move(page));
}

std::pair<std::uint32_t, std::uint64_t> page_from_ram(embedding::shard_store& store, const embedding::placement* to,
                                                      const wire::dump_request& req, std::size_t max_rows,
                                                      wire::dump_reply& reply) {
  const bool moving = req.pass != wire::move_pass::whole;
  const std::size_t floats = store.row_floats();
  std::vector<std::uint64_t> ids;
  std::vector<float> rows;
  std::uint32_t t = req.table;
  std::uint64_t position = req.position;
  for (; t < store.options().max_tables && reply.ids.size() < max_rows; ++t, position = 0) {
    embedding::embedding_table* tab = store.existing_table(t);
    if (tab == nullptr) continue;
    const std::function<bool(std::uint64_t)> requesters = [to, t, &req](std::uint64_t id) {
      return to->shard_of(t, id) == req.placement_index;
    };
    do {  // with a placement, copies on until the page is full or the table ends
      ids.clear();
      rows.clear();
      position = moving ? tab->copy_rows_to_move(position, max_rows - reply.ids.size(),
                                                 req.pass == wire::move_pass::copy, requesters, ids, rows)
                        : tab->copy_rows(position, max_rows - reply.ids.size(), ids, rows);
      for (std::size_t i = 0; i < ids.size(); ++i) {
        // (A move's copy was filtered by the placement already, under the stripe's lock.)
        if (!moving && to != nullptr && to->shard_of(t, ids[i]) != req.placement_index) continue;
        reply.tables.push_back(t);
        reply.ids.push_back(ids[i]);
        add_to_page(reply, store, req.whole_rows, rows.data() + i * floats);
      }
    } while (to != nullptr && position != 0 && reply.ids.size() < max_rows);
    if (position != 0) break;  // the page is full inside this table
  }
  return {t, position};
}

namespace {

// A page of rows: for the exported model, values only (FP32, whatever the rows' precision); for
// moving rows to another shard count, only those a placement gives to one shard, whole, as stored
// (values at the rows' precision, optimizer state, TTL stamp).
body_ptr serve_dump(embedding::shard_store& store, const shard_options& o, embedding::placement_cache& paged,
                    shard_counters& c, const wire::dump_request& req) {
  auto to = placement_of_dump(o, paged, req);
  if (!to.is_ok()) return refuse(c, to.error());
  const bool moving = req.pass != wire::move_pass::whole;
  if (moving) {
    if (auto why = live_copy_refusal(o, req); !why.is_ok()) return refuse(c, why);
    // Rows given up for good from now on are remembered: the copy may carry them.
    if (req.pass == wire::move_pass::copy) store.track_moves(true);
  }
  wire::dump_reply reply;
  const std::size_t keep = req.whole_rows ? store.row_floats() : store.options().dim;
  const std::size_t max_rows = std::clamp<std::size_t>(req.max_rows, 1, 1u << 20);
  const std::uint32_t max_tables = store.options().max_tables;
  std::tie(reply.next_table, reply.next_position) = page_from_ram(store, to->get(), req, max_rows, reply);
  if (req.pass == wire::move_pass::changed && reply.next_table >= max_tables && reply.ids.empty()) {
    // Then the rows given up for good since the copy began: one RAM holds again (made anew) was
    // marked, or copied since, as it stands; the others are gone.
    const left_rows_standing gone_unless_in_ram = [&store](std::uint32_t t, const std::vector<std::uint64_t>& ids,
                                                           wire::dump_reply& page) {
      const embedding::embedding_table* tab = store.existing_table(t);
      for (const std::uint64_t id : ids) {
        if (tab->find(id) != nullptr) continue;
        page.gone_tables.push_back(t);
        page.gone_ids.push_back(id);
      }
      return status::ok();
    };
    auto left = page_left_rows(store, **to, req, std::max(reply.next_table, max_tables), reply.next_position, max_rows,
                               reply, gone_unless_in_ram);
    if (!left.is_ok()) return refuse(c, left.error());
    std::tie(reply.next_table, reply.next_position) = *left;
    reply.done = reply.next_table >= 2 * max_tables;
  } else {
    reply.done = reply.next_table >= max_tables && req.pass != wire::move_pass::changed;
  }
  return sealed_page(std::move(reply), keep, c);
}

// A page of the rows of publication req.sequence (delta publishing): the first page stages them
// (publish_staging), each page reads their values as they stand now, in RAM or storage; a staged
// row the shard no longer holds goes out as a tombstone. A base only clears the marks.
body_ptr serve_publish_rows(embedding::shard_store& store, const shard_options& o, shard_counters& c,
                            embedding::publish_staging& staging, const wire::publish_rows_request& req) {
  wire::publish_rows_reply reply;
  if (req.base) {
    if (req.position == 0) staging.start_base(store, req.sequence);
    c.publications_started.fetch_add(1, std::memory_order_relaxed);
    return make_body(std::move(reply));
  }
  if (req.position == 0) {
    auto staged = staging.stage(store, req.sequence, req.last_written);
    if (!staged.is_ok()) return refuse(c, status(staged.error().code(), o.name + ": " + staged.error().message()));
    if (*staged == embedding::publish_staging::stage_result::needs_base) {
      reply.needs_base = true;
      return make_body(std::move(reply));
    }
    c.publications_started.fetch_add(1, std::memory_order_relaxed);
  } else if (staging.sequence() != req.sequence) {
    return refuse(c, status(errc::internal, o.name + ": publication " + std::to_string(req.sequence) +
                                                           " is not the one staged here (" +
                                                           std::to_string(staging.sequence()) + ")"));
  }
  const std::size_t dim = store.options().dim;
  const std::size_t max_rows = std::clamp<std::size_t>(req.max_rows, 1, 1u << 20);
  std::vector<std::uint32_t> tables;
  std::vector<std::uint64_t> ids;
  reply.next_position = staging.page(req.position, max_rows, tables, ids);
  reply.staged = staging.staged();
  // Staged rows are sorted by table: one read per run of a table.
  std::vector<float> values(ids.size() * dim);
  std::vector<std::uint8_t> present(ids.size());
  if (auto st = embedding::for_each_table_run(tables,
                                              [&](std::size_t begin, std::size_t end) {
                                                return store.read_published(tables[begin], ids.data() + begin,
                                                                            end - begin, values.data() + begin * dim,
                                                                            present.data() + begin);
                                              });
      !st.is_ok())
    return refuse(c, status(st.code(), o.name + ": " + st.message()));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (present[i] == 0) {
      reply.gone_tables.push_back(tables[i]);
      reply.gone_ids.push_back(ids[i]);
      continue;
    }
    reply.tables.push_back(tables[i]);
    reply.ids.push_back(ids[i]);
    reply.values.insert(reply.values.end(), values.begin() + static_cast<std::ptrdiff_t>(i * dim),
                        values.begin() + static_cast<std::ptrdiff_t>((i + 1) * dim));
  }
  c.rows_published.fetch_add(reply.ids.size(), std::memory_order_relaxed);
  c.tombstones_published.fetch_add(reply.gone_ids.size(), std::memory_order_relaxed);
  return make_body(std::move(reply));
}

}  // namespace

shard_actor::behavior_type shard_worker(shard_actor::stateful_pointer<shard_worker_state> self,
                                        std::shared_ptr<embedding::shard_store> store, shard_options options,
                                        std::shared_ptr<serving_placement> placement,
                                        std::shared_ptr<embedding::placement_cache> paged,
                                        std::shared_ptr<shard_counters> counters, std::shared_ptr<push_guard> guard,
                                        std::shared_ptr<embedding::publish_staging> publishing) {
  (void)self;
  return {
      // The trainers of the view: whose pushes are fenced; and the shard count rows are placed
      // over, which a live reshard changes (any worker of the pool takes it; the view comes while
      // the job's input is held, so no lookup or push is under way).
      [store, guard, placement, paged, counters, name = options.name,
       persisted = options.storage != nullptr](view_atom, const wire::cluster_view& view) {
        guard->follow(view);
        // Workers of the pool may take two views out of order: only the newest counts here.
        std::uint64_t seen = counters->view_epoch.load(std::memory_order_relaxed);
        while (view.epoch > seen && !counters->view_epoch.compare_exchange_weak(seen, view.epoch)) {
        }
        const bool newest = view.epoch >= seen;
        // No reshard copies rows from here any more (ended, rolled back or forgotten); a shard
        // with storage hears it from its persister, which takes views in order.
        if (newest && !persisted && !view.reshaping) store->track_moves(false);
        if (view.placement_shards != 0 && view.placement_shards != placement->get()->shards()) {
          spdlog::info("{}: rows are placed over {} shards from now on (were {})", name, view.placement_shards,
                       placement->get()->shards());
          placement->set(paged->of(view.placement_shards));
        }
      },
      [](state_atom, wire::job_state) {},  // sent with the view; nothing to do with it
      [store, options, placement, paged, counters, guard, publishing](serve_atom,
                                                                      const envelope_ptr& env) -> body_ptr {
        const auto start = std::chrono::steady_clock::now();
        body_ptr out;
        if (const auto* req = std::get_if<wire::lookup_request>(&env->message)) {
          out = serve_lookup(*store, options, *placement->get(), *counters, *req);
        } else if (const auto* push = std::get_if<wire::push_request>(&env->message)) {
          out = serve_push(*store, options, *placement->get(), *counters, *guard, *push);
        } else if (const auto* dump = std::get_if<wire::dump_request>(&env->message)) {
          out = serve_dump(*store, options, *paged, *counters, *dump);
        } else if (const auto* warm = std::get_if<wire::warm_request>(&env->message)) {
          out = serve_warm(*store, options, *placement->get(), *counters, *warm);
        } else if (const auto* publish = std::get_if<wire::publish_rows_request>(&env->message)) {
          out = serve_publish_rows(*store, options, *counters, *publishing, *publish);
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


shard_prefetcher_actor::behavior_type prefetcher(shard_prefetcher_actor::stateful_pointer<prefetcher_state> self,
                                                 std::shared_ptr<embedding::shard_store> store, shard_options options,
                                                 std::shared_ptr<serving_placement> placement,
                                                 std::shared_ptr<shard_counters> counters) {
  (void)self;
  return {
      [store, options, placement, counters](serve_atom, const envelope_ptr& env) -> body_ptr {
        if (const auto* req = std::get_if<wire::warm_request>(&env->message))
          return serve_warm(*store, options, *placement->get(), *counters, *req);
        return make_body(wire::error_reply{errc::invalid_argument, std::string("the prefetcher does not serve ") +
                                                                       wire::message_name(env->message)});
      },
  };
}

}  // namespace ss::actors::shard_parts
