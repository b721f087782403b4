// The shard's mover: while a job resumes on another shard count, it pulls from the shards that held
// them the whole rows the new placement gives to this shard (dump_request pages, a page in flight
// at a time, so memory holds one page), checks that each is this shard's, and has the persister
// store them. Any failure ends the take with the reason; the coordinator asks again (a take asked
// while another is under way replaces it), and a page stored twice stores the same rows.
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "parts.hpp"

namespace ss::actors::shard_parts {

// One take_rows_request on its way: the source being paged, where its next page starts, totals.
struct take_in_progress {
  wire::take_rows_request request;
  caf::response_promise answer;
  std::shared_ptr<const embedding::placement> to;
  std::size_t source = 0;  // index into request.sources
  std::uint32_t link = 0;
  wire::dump_request next;
  std::uint64_t rows = 0, bytes = 0;
  std::uint64_t gone = 0;  // rows the sources gave up for good after their copy (tombstones)
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::uint64_t serial = 0;  // tells a paused take's tick from an earlier take's
  std::chrono::steady_clock::time_point page_asked;
};

struct mover_state {
  static inline const char* name = "shard-mover";
  shard_options options;
  gateway_actor gateway;
  shard_persister_actor persister;
  std::shared_ptr<embedding::placement_cache> paged;
  std::optional<take_in_progress> take;  // one at a time
  std::uint64_t takes = 0;
};

namespace {

// A page from a shard that reads it from storage (a memory budget) takes milliseconds; one that
// takes longer than this is a shard that is gone or paused (the coordinator asks again).
constexpr auto page_timeout = std::chrono::seconds(30);
// A live reshard's copy while the job trains pauses this many times as long as its last page took
// (asked, sent, stored) before asking the next: the copy then takes at most about a third of the
// CPU it would, which on a machine the job's services share is the training's (measured on 2
// vCPUs: unpaced, the job trained 28% of its examples a second while rows were copied). Under the
// hold, nothing trains: no pause.
constexpr int copy_pause_factor = 2;

using mover_self = shard_mover_actor::stateful_pointer<mover_state>;

void finish(mover_self self, body_ptr answer) {
  auto& st = self->state;
  if (!st.take) return;
  if (const auto* err = std::get_if<wire::error_reply>(answer.get())) {
    // A copy while the job trains that ends short is no failure: the coordinator moves every row
    // under the hold instead (a source whose rows leave RAM refuses to be copied from).
    if (st.take->request.pass == wire::move_pass::copy)
      spdlog::warn("{}: the copy of the rows that move here, while the job trains, ended: {}", st.options.name,
                   err->message);
    else
      spdlog::error("{}: taking the rows that move here failed: {}", st.options.name, err->message);
  }
  st.take->answer.deliver(std::move(answer));
  st.take.reset();
}

void fail(mover_self self, errc code, const std::string& why) {
  finish(self, make_body(wire::error_reply{code, self->state.options.name + ": " + why}));
}

void next_source(mover_self self);

// The take `serial` is still the one under way (an answer for a superseded one is dropped).
bool current(mover_self self, std::uint64_t serial) {
  return self->state.take && self->state.take->serial == serial;
}

std::string source_name(const take_in_progress& t) { return "the shard at " + t.request.sources[t.source]; }

// For the log: what kind of take it was.
const char* pass_name(wire::move_pass p) {
  switch (p) {
    case wire::move_pass::whole: return "every row";
    case wire::move_pass::copy: return "copied while training";
    case wire::move_pass::changed: return "those changed since their copy";
  }
  return "?";
}

// Every row of a page, and every row it says is gone, must be this shard's under the new
// placement: a source that sends another shard's rows (another build's placement, a bug) would
// have them served, or deleted, by the wrong shard.
std::string foreign_row(const take_in_progress& t, const wire::dump_reply& page, std::uint32_t me) {
  auto check = [&](const std::vector<std::uint32_t>& tables, const std::vector<std::uint64_t>& ids,
                   const char* what) -> std::string {
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const std::uint32_t owner = t.to->shard_of(tables[i], ids[i]);
      if (owner != me)
        return source_name(t) + " sent " + what + std::to_string(ids[i]) + " of table " + std::to_string(tables[i]) +
               ", which the placement over " + std::to_string(t.to->shards()) + " shards gives to shard " +
               std::to_string(owner);
    }
    return {};
  };
  std::string why = check(page.tables, page.ids, "row ");
  return why.empty() ? check(page.gone_tables, page.gone_ids, "as gone row ") : why;
}

void next_page(mover_self self) {
  auto& st = self->state;
  auto& t = *st.take;
  t.page_asked = std::chrono::steady_clock::now();
  const std::uint64_t serial = t.serial;
  self->request(st.gateway, caf::infinite, call_atom::value, t.link, make_body(t.next),
                std::chrono::duration_cast<caf::timespan>(page_timeout))
      .then(
          [self, serial](const envelope_ptr& env) {
            auto& s = self->state;
            if (!current(self, serial)) return;
            auto& tk = *s.take;
            const auto* page = std::get_if<wire::dump_reply>(&env->message);
            if (page == nullptr) {
              const auto* err = std::get_if<wire::error_reply>(&env->message);
              return fail(self, err != nullptr ? err->code : errc::internal,
                          source_name(tk) + " answered a page of rows with " +
                              (err != nullptr ? err->message : std::string(wire::message_name(env->message))));
            }
            if (auto foreign = foreign_row(tk, *page, s.options.index); !foreign.empty())
              return fail(self, errc::invalid_argument, foreign);
            const bool done = page->done;
            const std::uint32_t next_table = page->next_table;
            const std::uint64_t next_position = page->next_position;
            const std::uint64_t rows = page->ids.size(), bytes = page->values.size() * sizeof(float);
            const std::uint64_t gone = page->gone_ids.size();
            self->request(s.persister, caf::infinite, moved_rows_atom::value, body_ptr(env, &env->message))
                .then(
                    [self, serial, done, next_table, next_position, rows, bytes, gone](const body_ptr& stored) {
                      auto& s2 = self->state;
                      if (!current(self, serial)) return;
                      if (std::holds_alternative<wire::error_reply>(*stored)) return finish(self, stored);
                      auto& t2 = *s2.take;
                      t2.rows += rows;
                      t2.gone += gone;
                      t2.bytes += bytes;
                      if (done) {
                        ++t2.source;
                        return next_source(self);
                      }
                      t2.next.table = next_table;
                      t2.next.position = next_position;
                      if (t2.request.pass != wire::move_pass::copy) return next_page(self);
                      const auto took = std::chrono::steady_clock::now() - t2.page_asked;
                      self->delayed_send(self, std::chrono::duration_cast<caf::timespan>(took * copy_pause_factor),
                                         tick_atom::value, t2.serial);
                    },
                    [self, serial](const caf::error& err) {
                      if (current(self, serial))
                        fail(self, errc::internal, "storing moved rows: " + self->system().render(err));
                    });
          },
          [self, serial](const caf::error& err) {
            auto& s = self->state;
            if (!current(self, serial)) return;
            fail(self, errc::unavailable, source_name(*s.take) + " did not answer a page of rows: " +
                                              self->system().render(err));
          });
}

// Asks the persister `atom` with the take's shard count, then `next` once it agreed: an error_reply
// ends the take with it (`what` names the request when the persister does not answer).
template <class Atom, class Next>
void with_persister(mover_self self, Atom atom, const char* what, Next next) {
  auto& t = *self->state.take;
  self->request(self->state.persister, caf::infinite, atom, t.request.placement_shards)
      .then(
          [self, next, serial = t.serial](const body_ptr& answer) {
            if (!current(self, serial)) return;
            if (std::holds_alternative<wire::error_reply>(*answer)) return finish(self, answer);
            next();
          },
          [self, what, serial = t.serial](const caf::error& err) {
            if (current(self, serial)) fail(self, errc::internal, std::string(what) + ": " + self->system().render(err));
          });
}

void next_source(mover_self self) {
  auto& st = self->state;
  auto& t = *st.take;
  if (t.source == t.request.sources.size()) {
    const auto report = [self] {
      auto& s = self->state;
      const auto& tk = *s.take;
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - tk.started).count();
      spdlog::info("{}: took {} rows ({:.1f} MB, {}) from {} shard(s) in {:.2f}s{}", s.options.name, tk.rows,
                   static_cast<double>(tk.bytes) / 1e6, pass_name(tk.request.pass), tk.request.sources.size(),
                   seconds,
                   tk.gone == 0 ? std::string()
                                : "; applied " + std::to_string(tk.gone) +
                                      " tombstones (rows the source gave up for good since the copy began)");
      finish(self, make_body(wire::take_rows_reply{tk.rows, tk.bytes, seconds}));
    };
    // A live reshard's copy while the job trains is not the move yet: the placement in force is
    // still the old one, and the copy under the hold claims the storage.
    if (t.request.pass == wire::move_pass::copy) return report();
    // Every row that moves here is stored: the storage is this shard's under the new count.
    return with_persister(self, claim_atom::value, "claiming its storage", report);
  }
  t.next = wire::dump_request{0, 0, std::max<std::uint32_t>(1, st.options.move_page_rows), t.request.placement_shards,
                              st.options.index, true, t.request.pass};
  self->request(st.gateway, caf::infinite, link_atom::value, t.request.sources[t.source])
      .then(
          [self, serial = t.serial](std::uint32_t link) {
            if (!current(self, serial)) return;
            self->state.take->link = link;
            next_page(self);
          },
          [self, serial = t.serial](const caf::error& err) {
            if (!current(self, serial)) return;
            fail(self, errc::unavailable, "cannot reach " + source_name(*self->state.take) + ": " +
                                              self->system().render(err));
          });
}

// A shard without storage keeps no checkpoint: the snapshot that commits a change of shard count
// could not hold its rows. It takes no part in one (without storage the persister is absent and
// drop_rows_request comes here too).
body_ptr no_storage(const mover_state& st) {
  return make_body(wire::error_reply{errc::invalid_argument,
                                     st.options.name + ": it has no storage (--data-dir): a job can take another "
                                                       "shard count only with shards that keep their rows in "
                                                       "checkpoints"});
}

caf::result<body_ptr> serve_take(mover_self self, const wire::take_rows_request& req) {
  auto& st = self->state;
  auto refuse = [&st](errc code, const std::string& why) {
    return make_body(wire::error_reply{code, st.options.name + ": " + why});
  };
  if (!st.persister) return no_storage(st);
  auto placed = placement_for(st.options, *st.paged, req.placement_shards, "taking rows");
  if (!placed.is_ok()) return make_body(wire::error_reply{placed.error().code(), placed.error().message()});
  if (st.options.index >= req.placement_shards)
    return refuse(errc::invalid_argument, "asked to take rows for a placement over " +
                                              std::to_string(req.placement_shards) + " shards, which has no shard " +
                                              std::to_string(st.options.index));
  if (st.take) {
    // The coordinator asks again only when it starts its stage over (a source restarted, a failure,
    // the hold after a copy) and no longer waits for the answer to the take under way, which may
    // itself be waiting up to page_timeout for a source that died: the new take replaces it.
    fail(self, errc::cancelled,
         st.take->request.pass == wire::move_pass::copy && req.pass != wire::move_pass::copy
             ? "its copy while the job trained was cut short by a move under the hold"
             : "the coordinator asked again (" + std::string(pass_name(req.pass)) + ")");
  }
  auto promise = self->make_response_promise<body_ptr>();
  st.take.emplace();
  st.take->serial = ++st.takes;
  st.take->request = req;
  st.take->answer = promise;
  st.take->to = *placed;
  spdlog::info("{}: taking the rows the placement over {} shards gives it from {} shard(s) ({})", st.options.name,
               req.placement_shards, req.sources.size(), pass_name(req.pass));
  // Recorded in storage before the first row comes: should the reshard not happen, the shard
  // drops them again, even after a restart. (A take from no source, a shard of the old count when
  // the job grows, brings none.)
  if (req.sources.empty()) next_source(self);
  else with_persister(self, taking_atom::value, "recording the take", [self] { next_source(self); });
  return promise;
}

shard_mover_actor::behavior_type mover(mover_self self, shard_options options, gateway_actor gateway,
                                       shard_persister_actor persister,
                                       std::shared_ptr<embedding::placement_cache> paged) {
  auto& st = self->state;
  st.options = std::move(options);
  st.gateway = std::move(gateway);
  st.persister = std::move(persister);
  st.paged = std::move(paged);
  return {
      [self](serve_atom, const envelope_ptr& env) -> caf::result<body_ptr> {
        if (const auto* req = std::get_if<wire::take_rows_request>(&env->message)) return serve_take(self, *req);
        return no_storage(self->state);
      },
      [self](tick_atom, std::uint64_t serial) {
        if (current(self, serial)) next_page(self);
      },
  };
}

}  // namespace

shard_mover_actor spawn_mover(caf::actor_system& sys, shard_options options, gateway_actor gateway,
                              shard_persister_actor persister, std::shared_ptr<embedding::placement_cache> paged) {
  return sys.spawn(mover, std::move(options), std::move(gateway), std::move(persister), std::move(paged));
}

}  // namespace ss::actors::shard_parts
