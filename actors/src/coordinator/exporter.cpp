#include "ss/actors/exporter.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <memory>
#include <optional>

#include "ss/actors/actors.hpp"
#include "ss/actors/messages.hpp"
#include "ss/core/embedding/embedding_table.hpp"

namespace ss::actors {
namespace {

constexpr auto watch_every = std::chrono::seconds(1);    // how often the view is checked mid-dump
constexpr auto retry_after = std::chrono::milliseconds(500);

struct exporter_state {
  static inline const char* name = "exporter";
  exporter_input in;
  gateway_actor gateway;
  exporter_listener_actor report_to;
  view_source_actor view_source;
  std::optional<model::model_writer> writer;
  std::chrono::steady_clock::time_point started;
  std::size_t shard = 0;  // the shard being dumped
  std::uint32_t link = 0;
  std::uint64_t incarnation = 0;  // of the shard process being dumped (0: unknown)
  model::model_writer::rows_mark shard_start;  // the file before this shard's rows
  wire::dump_request next;
  embedding::copied_rows_filter copied;  // of the shard being dumped
  std::uint64_t call = 0;  // the page call whose answer counts; older ones are abandoned
  bool waiting = false;    // between a failed page and the retry
  std::optional<std::chrono::steady_clock::time_point> trouble_since;
  bool finished = false;
};
using exporter_self = exporter_actor::stateful_pointer<exporter_state>;

// Ends the export with `code` and the reason. `unavailable` only for what asking again may mend
// (a shard or the coordinator away): a client that asked for the export asks again on it.
void fail(exporter_self self, errc code, const std::string& why) {
  auto& st = self->state;
  if (st.finished) return;
  st.finished = true;
  st.writer.reset();  // an unfinished writer removes its temporary file
  spdlog::error("exporter: exporting the model to {} failed: {}", st.in.path, why);
  self->send(st.report_to, exported_atom::value, make_body(wire::error_reply{code, "export to " + st.in.path + ": " + why}));
  self->quit();
}
void fail(exporter_self self, const status& why) { fail(self, why.code(), why.message()); }

void next_shard(exporter_self self);
void next_page(exporter_self self);

std::uint64_t incarnation_in(const wire::cluster_view& view, std::size_t shard) {
  return shard < view.shard_incarnations.size() ? view.shard_incarnations[shard] : 0;
}

// Dumps the current shard from the page in st.next, at `endpoint`.
void dump_at(exporter_self self, const std::string& endpoint) {
  self->request(self->state.gateway, caf::infinite, link_atom::value, endpoint)
      .then(
          [self](std::uint32_t link) {
            self->state.link = link;
            next_page(self);
          },
          [self](const caf::error& err) {
            fail(self, errc::unavailable, "cannot reach shard " + std::to_string(self->state.shard) + ": " + self->system().render(err));
          });
}

// The shard did not answer the page (a timeout, `unavailable` while it loads or stops, a restart):
// wait for it through the cluster view, within in.shard_wait. A new incarnation keeps its rows in
// another order, so its dump starts over and the rows written from its predecessor are taken back.
void retry(exporter_self self, const std::string& why) {
  auto& st = self->state;
  if (!st.view_source) return fail(self, errc::unavailable, "shard " + std::to_string(st.shard) + ": " + why);
  const auto now = std::chrono::steady_clock::now();
  if (!st.trouble_since) {
    st.trouble_since = now;
    spdlog::warn("exporter: shard {}: {}; waiting for it (at most {} s)", st.shard, why, st.in.shard_wait.count() / 1000);
  }
  if (now - *st.trouble_since > st.in.shard_wait)
    return fail(self, errc::timeout, "shard " + std::to_string(st.shard) + " did not come back within " +
                          std::to_string(st.in.shard_wait.count() / 1000) + " s: " + why);
  ++st.call;  // an answer to the page in flight no longer counts
  st.waiting = true;
  self->delayed_send(self, retry_after, tick_atom::value, st.call);
}

void resume(exporter_self self, const wire::cluster_view& view) {
  auto& st = self->state;
  const std::string endpoint = st.shard < view.shards.size() ? view.shards[st.shard] : std::string();
  if (endpoint.empty()) return retry(self, "it is not in the cluster view (restarting?)");
  const std::uint64_t incarnation = incarnation_in(view, st.shard);
  st.waiting = false;
  if (incarnation != st.incarnation) {
    spdlog::warn("exporter: shard {} restarted during the export: dumping it again from its first row", st.shard);
    if (auto r = st.writer->rewind(st.shard_start); !r.is_ok()) return fail(self, r);
    st.incarnation = incarnation;
    st.next = wire::dump_request{0, 0, st.in.page_rows};
    st.copied.reset();
  }
  dump_at(self, endpoint);
}

// Writes a page's rows, each once: a page may span tables (one block per run of rows of the same
// table), and a stripe the shard copied again (its index grew while training went on) repeats rows.
status add_page(exporter_state& s, const wire::dump_reply& page) {
  const std::size_t n = page.ids.size(), dim = s.in.header.dim;
  std::vector<std::uint64_t> ids;
  std::vector<float> values;
  for (std::size_t begin = 0; begin < n;) {
    const std::uint32_t table = page.tables[begin];
    ids.clear();
    values.clear();
    std::size_t end = begin;
    for (; end < n && page.tables[end] == table; ++end) {
      if (!s.copied.first_time(table, page.ids[end])) continue;
      ids.push_back(page.ids[end]);
      values.insert(values.end(), page.values.begin() + static_cast<std::ptrdiff_t>(end * dim),
                    page.values.begin() + static_cast<std::ptrdiff_t>((end + 1) * dim));
    }
    if (!ids.empty()) SS_RETURN_IF_ERROR(s.writer->add_rows(table, ids.data(), values.data(), ids.size()));
    begin = end;
  }
  return status::ok();
}

void next_page(exporter_self self) {
  auto& st = self->state;
  const std::uint64_t call = ++st.call;
  self->request(st.gateway, caf::infinite, call_atom::value, st.link, make_body(st.next),
                std::chrono::duration_cast<caf::timespan>(st.in.timeout))
      .then(
          [self, call](const envelope_ptr& env) {
            auto& s = self->state;
            if (call != s.call || s.finished) return;
            const auto* page = std::get_if<wire::dump_reply>(&env->message);
            if (page == nullptr) {
              const auto* err = std::get_if<wire::error_reply>(&env->message);
              if (err != nullptr && err->code == errc::unavailable) return retry(self, err->message);
              return fail(self, err != nullptr ? err->code : errc::internal, "shard " + std::to_string(s.shard) + " answered " +
                                    (err != nullptr ? err->message : std::string(wire::message_name(env->message))));
            }
            s.trouble_since.reset();
            const std::size_t n = page->ids.size();
            const std::size_t dim = s.in.header.dim;
            if (page->tables.size() != n || page->values.size() != n * dim)
              return fail(self, errc::parse_error, "shard " + std::to_string(s.shard) + " sent a malformed page");
            if (auto added = add_page(s, *page); !added.is_ok()) return fail(self, added);
            if (page->done) {
              ++s.shard;
              return next_shard(self);
            }
            s.next.table = page->next_table;
            s.next.position = page->next_position;
            next_page(self);
          },
          [self, call](const caf::error& err) {
            if (call != self->state.call || self->state.finished) return;
            retry(self, self->system().render(err));
          });
}

void next_shard(exporter_self self) {
  auto& st = self->state;
  if (st.shard == st.in.shard_endpoints.size()) {
    auto done = st.writer->finish();
    if (!done.is_ok()) return fail(self, done.error());
    st.finished = true;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - st.started).count();
    spdlog::info("exporter: wrote the model to {}: {} dense parameters, {} embedding rows, {:.1f} MB in {:.2f}s",
                 st.in.path, st.in.dense.size(), done->rows, static_cast<double>(done->bytes) / 1e6, seconds);
    self->send(st.report_to, exported_atom::value,
               make_body(wire::export_reply{st.in.path, done->rows, done->bytes, seconds}));
    return self->quit();
  }
  st.shard_start = st.writer->mark();
  st.incarnation = st.shard < st.in.shard_incarnations.size() ? st.in.shard_incarnations[st.shard] : 0;
  st.next = wire::dump_request{0, 0, st.in.page_rows};
  st.copied.reset();
  st.trouble_since.reset();
  const std::string& endpoint = st.in.shard_endpoints[st.shard];
  if (endpoint.empty()) return retry(self, "it is not in the cluster view (restarting?)");
  dump_at(self, endpoint);
}

exporter_actor::behavior_type exporter_behavior(exporter_self self) {
  return {
      // A retry: where is the shard now?
      [self](tick_atom, std::uint64_t call) {
        auto& s = self->state;
        if (call != s.call || !s.waiting || s.finished) return;
        self->request(s.view_source, std::chrono::seconds(10), view_atom::value)
            .then([self, call](const wire::cluster_view& view) {
                    if (call == self->state.call && self->state.waiting) resume(self, view);
                  },
                  [self](const caf::error& err) { fail(self, errc::unavailable, "the coordinator's view: " + self->system().render(err)); });
      },
      // The watch: a page call to a process that has died is never answered; abandon it as soon
      // as the view shows the shard gone or replaced, instead of waiting out its timeout.
      [self](view_atom) {
        auto& s = self->state;
        if (s.finished) return;
        self->delayed_send(self, watch_every, view_atom::value);
        if (s.waiting || s.shard >= s.in.shard_endpoints.size()) return;
        self->request(s.view_source, std::chrono::seconds(10), view_atom::value)
            .then([self, shard = s.shard, incarnation = s.incarnation](const wire::cluster_view& view) {
                    auto& t = self->state;
                    if (t.finished || t.waiting || t.shard != shard || t.incarnation != incarnation) return;
                    const bool gone = shard >= view.shards.size() || view.shards[shard].empty();
                    const std::uint64_t now_inc = incarnation_in(view, shard);
                    if (gone) retry(self, "it left the cluster view (restarting?)");
                    else if (incarnation != 0 && now_inc != 0 && now_inc != incarnation) retry(self, "it restarted");
                  },
                  [](const caf::error&) {});
      },
  };
}

exporter_actor::behavior_type exporter(exporter_self self, std::shared_ptr<exporter_input> input, gateway_actor gateway,
                                       exporter_listener_actor report_to, view_source_actor view_source) {
  auto& st = self->state;
  st.in = std::move(*input);
  st.gateway = std::move(gateway);
  st.report_to = std::move(report_to);
  st.view_source = std::move(view_source);
  st.started = std::chrono::steady_clock::now();
  // The coordinator gone (stopped by a signal, or failed): nobody waits for this export any more,
  // and the service's actor system would wait for this actor forever.
  if (st.report_to) self->monitor(st.report_to);
  if (st.view_source) self->monitor(st.view_source);
  self->set_down_handler([self](const caf::down_msg&) {
    auto& s = self->state;
    if (!s.finished) spdlog::warn("exporter: the coordinator stopped; the export to {} is abandoned", s.in.path);
    s.finished = true;
    s.writer.reset();  // an unfinished writer removes its temporary file
    self->quit();
  });
  auto writer = model::model_writer::open(st.in.path, st.in.header);
  if (!writer.is_ok()) {
    fail(self, writer.error());
    return exporter_behavior(self);  // it has quit; a typed behavior cannot be empty in CAF 0.17
  }
  st.writer.emplace(std::move(*writer));
  if (auto w = st.writer->write_dense(st.in.dense.data(), st.in.dense.size()); !w.is_ok()) {
    fail(self, w);
    return exporter_behavior(self);
  }
  next_shard(self);
  if (st.view_source) self->delayed_send(self, watch_every, view_atom::value);
  return exporter_behavior(self);
}

}  // namespace

exporter_actor spawn_exporter(caf::actor_system& sys, const gateway_actor& gateway, exporter_input input,
                              const exporter_listener_actor& report_to, const view_source_actor& view_source,
                              bool detached) {
  auto in = std::make_shared<exporter_input>(std::move(input));
  // Detached: writing the file blocks on the disk, never a scheduler thread.
  if (detached) return sys.spawn<caf::detached>(exporter, in, gateway, report_to, view_source);
  return sys.spawn(exporter, in, gateway, report_to, view_source);
}

}  // namespace ss::actors
