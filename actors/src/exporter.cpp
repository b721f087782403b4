#include "ss/actors/exporter.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <memory>
#include <optional>

#include "ss/actors/messages.hpp"

namespace ss::actors {
namespace {

struct exporter_state {
  static inline const char* name = "exporter";
  exporter_input in;
  caf::actor gateway, report_to;
  std::optional<model::model_writer> writer;
  std::chrono::steady_clock::time_point started;
  std::size_t shard = 0;  // the shard being dumped
  std::uint32_t link = 0;
  wire::dump_request next;
  std::uint64_t rows = 0;
};
using exporter_actor = caf::stateful_actor<exporter_state>;

void fail(exporter_actor* self, const std::string& why) {
  auto& st = self->state;
  st.writer.reset();  // an unfinished writer removes its temporary file
  spdlog::error("exporter: exporting the model to {} failed: {}", st.in.path, why);
  self->send(st.report_to, result_atom::value,
             make_body(wire::error_reply{errc::unavailable, "export to " + st.in.path + ": " + why}));
  self->quit();
}

void next_shard(exporter_actor* self);

void next_page(exporter_actor* self) {
  auto& st = self->state;
  self->request(st.gateway, caf::infinite, call_atom::value, st.link, make_body(st.next),
                std::chrono::duration_cast<caf::timespan>(st.in.timeout))
      .then(
          [self](const envelope_ptr& env) {
            auto& s = self->state;
            const auto* page = std::get_if<wire::dump_reply>(&env->message);
            if (page == nullptr) {
              const auto* err = std::get_if<wire::error_reply>(&env->message);
              return fail(self, "shard " + std::to_string(s.shard) + " answered " +
                                    (err != nullptr ? err->message : std::string(wire::message_name(env->message))));
            }
            const std::size_t n = page->ids.size();
            const std::size_t dim = s.in.header.dim;
            if (page->tables.size() != n || page->values.size() != n * dim)
              return fail(self, "shard " + std::to_string(s.shard) + " sent a malformed page");
            // A page may span tables: one block per run of rows of the same table.
            for (std::size_t begin = 0; begin < n;) {
              std::size_t end = begin + 1;
              while (end < n && page->tables[end] == page->tables[begin]) ++end;
              auto added = s.writer->add_rows(page->tables[begin], page->ids.data() + begin,
                                              page->values.data() + begin * dim, end - begin);
              if (!added.is_ok()) return fail(self, added.message());
              begin = end;
            }
            s.rows += n;
            if (page->done) {
              ++s.shard;
              return next_shard(self);
            }
            s.next.table = page->next_table;
            s.next.position = page->next_position;
            next_page(self);
          },
          [self](const caf::error& err) {
            fail(self, "shard " + std::to_string(self->state.shard) + ": " + self->system().render(err));
          });
}

void next_shard(exporter_actor* self) {
  auto& st = self->state;
  if (st.shard == st.in.shard_endpoints.size()) {
    auto done = st.writer->finish();
    if (!done.is_ok()) return fail(self, done.error().message());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - st.started).count();
    spdlog::info("exporter: wrote the model to {}: {} dense parameters, {} embedding rows, {:.1f} MB in {:.2f}s",
                 st.in.path, st.in.dense.size(), done->rows, static_cast<double>(done->bytes) / 1e6, seconds);
    self->send(st.report_to, result_atom::value,
               make_body(wire::export_reply{st.in.path, done->rows, done->bytes, seconds}));
    return self->quit();
  }
  st.next = wire::dump_request{0, 0, st.in.page_rows};
  self->request(st.gateway, caf::infinite, link_atom::value, st.in.shard_endpoints[st.shard])
      .then(
          [self](std::uint32_t link) {
            self->state.link = link;
            next_page(self);
          },
          [self](const caf::error& err) {
            fail(self, "cannot reach shard " + std::to_string(self->state.shard) + ": " + self->system().render(err));
          });
}

caf::behavior exporter(exporter_actor* self, std::shared_ptr<exporter_input> input, caf::actor gateway,
                       caf::actor report_to) {
  auto& st = self->state;
  st.in = std::move(*input);
  st.gateway = std::move(gateway);
  st.report_to = std::move(report_to);
  st.started = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < st.in.shard_endpoints.size(); ++i)
    if (st.in.shard_endpoints[i].empty()) {
      fail(self, "shard " + std::to_string(i) + " is absent");
      return {};
    }
  auto writer = model::model_writer::open(st.in.path, st.in.header);
  if (!writer.is_ok()) {
    fail(self, writer.error().message());
    return {};
  }
  st.writer.emplace(std::move(*writer));
  if (auto w = st.writer->write_dense(st.in.dense.data(), st.in.dense.size()); !w.is_ok()) {
    fail(self, w.message());
    return {};
  }
  next_shard(self);
  return {[](start_atom) {}};
}

}  // namespace

caf::actor spawn_exporter(caf::actor_system& sys, const caf::actor& gateway, exporter_input input,
                          const caf::actor& report_to, bool detached) {
  auto in = std::make_shared<exporter_input>(std::move(input));
  // Detached: writing the file blocks on the disk, never a scheduler thread.
  if (detached) return sys.spawn<caf::detached>(exporter, in, gateway, report_to);
  return sys.spawn(exporter, in, gateway, report_to);
}

}  // namespace ss::actors
