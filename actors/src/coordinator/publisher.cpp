#include "ss/actors/publisher.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <deque>
#include <filesystem>
#include <memory>
#include <optional>

#include "ss/actors/exporter.hpp"
#include "ss/actors/messages.hpp"
#include "ss/core/embedding/table_runs.hpp"
#include "ss/core/job/preflight.hpp"
#include "ss/core/model_file/model_file.hpp"
#include "ss/core/publish/delta_file.hpp"

namespace ss::actors {
namespace {

using publish::publication_kind;

struct publisher_state {
  static inline const char* name = "publisher";
  publisher_options options;
  gateway_actor gateway;
  publisher_listener_actor report_to;
  view_source_actor view_source;
  publish::model_shape shape;
  std::uint64_t config_digest = 0;
  // Where the chain stands: the next number, the newest publication written and its base.
  std::uint64_t next_sequence = publish::first_sequence;
  std::uint64_t last_written = 0;
  std::uint64_t base = 0;
  // Bytes of rows (dense parts left out) of the base and of the deltas since it.
  std::uint64_t base_bytes = 0, delta_bytes_since_base = 0;
  std::uint32_t deltas_since_base = 0;
  bool need_base = true;
  // The publication being written.
  std::deque<publication_request_ptr> waiting;
  publication_request_ptr current;
  publication_kind kind = publication_kind::delta;
  std::optional<publish::delta_writer> writer;
  std::size_t shard = 0;
  std::uint64_t position = 0;
  std::uint64_t rows = 0;
  std::chrono::steady_clock::time_point started;
  bool busy = false;
};
using publisher_self = publisher_actor::stateful_pointer<publisher_state>;

std::int64_t wall_ms(const publisher_options& o) {
  if (o.wall_clock_ms) return o.wall_clock_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void begin_next(publisher_self self);

void report(publisher_self self, publication_outcome outcome) {
  auto& st = self->state;
  if (outcome.sequence == 0) outcome.sequence = st.next_sequence;
  outcome.kind = st.kind;
  outcome.examples_trained = st.current->examples_trained;
  outcome.final = st.current->final;
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - st.started).count();
  st.busy = false;
  st.current.reset();
  self->send(st.report_to, published_atom::value, std::make_shared<const publication_outcome>(std::move(outcome)));
  begin_next(self);
}

// Nothing was published this time; the next request tries the same number again.
void fail(publisher_self self, const status& why) {
  auto& st = self->state;
  if (st.writer) st.writer->abort();
  st.writer.reset();
  publication_outcome out;
  out.result = status(why.code(), "publication " + std::to_string(st.next_sequence) + " (" +
                                      publish::to_string(st.kind) + "): " + why.message());
  report(self, std::move(out));
}

// The data file is in place: its manifest makes it a publication; older ones are pruned.
void complete(publisher_self self, std::uint64_t rows, std::uint64_t tombstones, std::uint64_t bytes,
              std::uint32_t crc) {
  auto& st = self->state;
  publish::manifest m;
  m.job_id = st.options.job_id;
  m.sequence = st.next_sequence;
  m.kind = st.kind;
  m.base = st.kind == publication_kind::base ? st.next_sequence : st.base;
  m.previous = st.kind == publication_kind::base ? 0 : st.last_written;
  m.examples_trained = st.current->examples_trained;
  m.train_click_rate = st.current->click_rate;
  m.wall_unix_ms = wall_ms(st.options);
  m.data_file = publish::data_file_name(m.sequence, m.kind);
  m.data_bytes = bytes;
  m.data_crc32c = crc;
  m.shape = st.shape;
  m.config_digest = st.config_digest;
  m.rows = rows;
  m.tombstones = tombstones;
  m.encoding = st.kind == publication_kind::base ? publish::row_encoding::fp32 : st.options.encoding;
  if (auto w = publish::write_manifest(st.options.dir, m); !w.is_ok()) return fail(self, w);
  // What applying the chain costs grows with its rows; each delta's dense part replaces the last.
  const std::uint64_t dense_bytes = 4 * st.shape.dense_params;
  const std::uint64_t row_bytes = bytes > dense_bytes ? bytes - dense_bytes : 0;
  if (st.kind == publication_kind::base) {
    st.base = m.sequence;
    st.base_bytes = row_bytes;
    st.delta_bytes_since_base = 0;
    st.deltas_since_base = 0;
    st.need_base = false;
  } else {
    st.delta_bytes_since_base += row_bytes;
    ++st.deltas_since_base;
  }
  st.last_written = m.sequence;
  st.next_sequence = m.sequence + 1;
  publication_outcome out;
  out.sequence = m.sequence;
  out.rows = rows;
  out.tombstones = tombstones;
  out.bytes = bytes;
  auto pruned = publish::prune(st.options.dir, st.options.retain);
  if (pruned.is_ok()) out.pruned = pruned->publications_removed;
  else spdlog::warn("publisher: pruning {} failed: {}", st.options.dir, pruned.error().message());
  report(self, std::move(out));
}

void next_shard(publisher_self self);

// Sends one request to the current shard and hands its reply to `on_reply`.
void call_shard(publisher_self self, wire::publish_rows_request req,
                std::function<void(const wire::publish_rows_reply&)> on_reply) {
  auto& st = self->state;
  const auto& endpoints = st.current->shard_endpoints;
  const std::string endpoint = st.shard < endpoints.size() ? endpoints[st.shard] : std::string();
  const std::string who = "shard " + std::to_string(st.shard);
  if (endpoint.empty()) return fail(self, status(errc::unavailable, who + " is not in the cluster view"));
  self->request(st.gateway, caf::infinite, link_atom::value, endpoint)
      .then(
          [self, req, on_reply, who](std::uint32_t link) {
            auto& s = self->state;
            self->request(s.gateway, caf::infinite, call_atom::value, link, make_body(req),
                          std::chrono::duration_cast<caf::timespan>(s.options.timeout))
                .then(
                    [self, on_reply, who](const envelope_ptr& env) {
                      if (const auto* r = std::get_if<wire::publish_rows_reply>(&env->message)) return on_reply(*r);
                      const auto* err = std::get_if<wire::error_reply>(&env->message);
                      fail(self, err != nullptr ? status(err->code, who + ": " + err->message)
                                                : status(errc::internal, who + " answered " +
                                                                             wire::message_name(env->message)));
                    },
                    [self, who](const caf::error& e) {
                      fail(self, status(errc::unavailable, who + ": " + self->system().render(e)));
                    });
          },
          [self, who](const caf::error& e) {
            fail(self, status(errc::unavailable, "cannot reach " + who + ": " + self->system().render(e)));
          });
}

wire::publish_rows_request rows_request(const publisher_state& st, bool base) {
  wire::publish_rows_request r;
  r.sequence = st.next_sequence;
  r.last_written = st.last_written;
  r.base = base;
  r.position = st.position;
  r.max_rows = st.options.page_rows;
  return r;
}

// Adds a page's rows and tombstones to the delta: one block per run of the same table (pages are
// sorted by table, then id).
status add_page(publisher_state& st, const wire::publish_rows_reply& page) {
  const std::size_t n = page.ids.size(), dim = st.shape.dim;
  if (page.tables.size() != n || page.values.size() != n * dim || page.gone_tables.size() != page.gone_ids.size())
    return status(errc::parse_error, "shard " + std::to_string(st.shard) + " sent a malformed page");
  SS_RETURN_IF_ERROR(embedding::for_each_table_run(page.tables, [&](std::size_t begin, std::size_t end) {
    return st.writer->add_rows(page.tables[begin], page.ids.data() + begin, page.values.data() + begin * dim,
                               end - begin);
  }));
  SS_RETURN_IF_ERROR(embedding::for_each_table_run(page.gone_tables, [&](std::size_t begin, std::size_t end) {
    return st.writer->add_tombstones(page.gone_tables[begin], page.gone_ids.data() + begin, end - begin);
  }));
  st.rows += n;
  return status::ok();
}

void start_base(publisher_self self);

void delta_page(publisher_self self) {
  call_shard(self, rows_request(self->state, false), [self](const wire::publish_rows_reply& page) {
    auto& st = self->state;
    if (page.needs_base) {
      spdlog::info("publisher: shard {} started after the last base: publishing a base instead of delta {}", st.shard,
                   st.next_sequence);
      st.need_base = true;
      st.writer->abort();
      st.writer.reset();
      return start_base(self);
    }
    if (auto added = add_page(st, page); !added.is_ok()) return fail(self, added);
    st.position = page.next_position;
    if (page.next_position < page.staged && (!page.ids.empty() || !page.gone_ids.empty())) return delta_page(self);
    ++st.shard;
    st.position = 0;
    next_shard(self);
  });
}

void base_export(publisher_self self);

void base_reset(publisher_self self) {
  call_shard(self, rows_request(self->state, true), [self](const wire::publish_rows_reply&) {
    ++self->state.shard;
    next_shard(self);
  });
}

void next_shard(publisher_self self) {
  auto& st = self->state;
  const bool base = st.kind == publication_kind::base;
  if (st.shard < st.current->shard_endpoints.size()) return base ? base_reset(self) : delta_page(self);
  if (base) return base_export(self);
  auto done = st.writer->finish();
  st.writer.reset();
  if (!done.is_ok()) return fail(self, done.error());
  complete(self, done->rows, done->tombstones, done->bytes, done->crc32c);
}

// Every shard's publisher marks are cleared: the rows are copied from now on, so whatever changes
// meanwhile is in the next delta as well.
void base_export(publisher_self self) {
  auto& st = self->state;
  auto header = model::header_for_job(st.options.job, st.current->click_rate, st.current->examples_trained,
                                      "shadowsync publisher, job " + st.options.job_id);
  if (!header.is_ok()) return fail(self, header.error());
  exporter_input in;
  in.path = (std::filesystem::path(st.options.dir) / publish::data_file_name(st.next_sequence, publication_kind::base))
                .string();
  in.header = std::move(*header);
  in.dense = st.current->dense;
  in.shard_endpoints = st.current->shard_endpoints;
  in.shard_incarnations = st.current->shard_incarnations;
  in.page_rows = st.options.page_rows;
  in.timeout = st.options.timeout;
  in.shard_wait = st.options.shard_wait;
  spawn_exporter(self->system(), st.gateway, std::move(in), exporter_listener_actor{self}, st.view_source,
                 st.options.detached);
}

void start_base(publisher_self self) {
  auto& st = self->state;
  st.kind = publication_kind::base;
  st.shard = 0;
  st.position = 0;
  st.rows = 0;
  next_shard(self);
}

void begin_next(publisher_self self) {
  auto& st = self->state;
  if (st.busy || st.waiting.empty()) return;
  st.current = st.waiting.front();
  st.waiting.pop_front();
  st.busy = true;
  st.started = std::chrono::steady_clock::now();
  if (st.current->dense.size() != st.shape.dense_params)
    return fail(self, status(errc::internal, "the dense state has " + std::to_string(st.current->dense.size()) +
                                                 " parameters, the model " + std::to_string(st.shape.dense_params)));
  const bool base_due = st.need_base || st.deltas_since_base >= st.options.base_every ||
                        (st.base_bytes > 0 && st.delta_bytes_since_base > st.base_bytes);
  if (base_due) return start_base(self);
  st.kind = publication_kind::delta;
  st.shard = 0;
  st.position = 0;
  st.rows = 0;
  publish::delta_head head;
  head.sequence = st.next_sequence;
  head.base = st.base;
  head.previous = st.last_written;
  head.shape = st.shape;
  head.encoding = st.options.encoding;
  auto writer = publish::delta_writer::open(
      (std::filesystem::path(st.options.dir) / publish::data_file_name(st.next_sequence, publication_kind::delta))
          .string(),
      head);
  if (!writer.is_ok()) return fail(self, writer.error());
  st.writer.emplace(std::move(*writer));
  if (auto w = st.writer->write_dense(st.current->dense.data(), st.current->dense.size()); !w.is_ok())
    return fail(self, w);
  next_shard(self);
}

publisher_actor::behavior_type publisher(publisher_self self, std::shared_ptr<publisher_state> initial) {
  self->state = std::move(*initial);
  // The coordinator gone (stopped, or failed): nobody waits for publications any more, and the
  // service's actor system would wait for this actor forever. A delta being written is dropped.
  self->monitor(self->state.report_to);
  self->set_down_handler([self](const caf::down_msg&) {
    auto& st = self->state;
    if (st.writer) st.writer->abort();
    st.writer.reset();
    self->quit();
  });
  return {
      [self](publish_atom, const publication_request_ptr& request) {
        self->state.waiting.push_back(request);
        begin_next(self);
      },
      // A base's model file was written, or not.
      [self](exported_atom, const body_ptr& b) {
        auto& st = self->state;
        if (!st.busy || st.kind != publication_kind::base) return;
        if (const auto* e = std::get_if<wire::error_reply>(b.get())) return fail(self, status(e->code, e->message));
        const auto* r = std::get_if<wire::export_reply>(b.get());
        if (r == nullptr) return fail(self, status(errc::internal, std::string("the exporter answered ") + wire::message_name(*b)));
        auto digest = publish::digest_file(r->path);
        if (!digest.is_ok()) return fail(self, digest.error());
        complete(self, r->rows, 0, digest->bytes, digest->crc32c);
      },
  };
}

}  // namespace

result<publisher_actor> spawn_publisher(caf::actor_system& sys, const gateway_actor& gateway,
                                        const publisher_listener_actor& report_to, const view_source_actor& view_source,
                                        publisher_options options) {
  auto st = std::make_shared<publisher_state>();
  SS_RETURN_IF_ERROR(job::resolve_feature_counts(options.job));
  auto header = model::header_for_job(options.job, 0, 0, "");
  if (!header.is_ok()) return header.error();
  st->shape = publish::model_shape{header->tables, header->dim, header->dense_params};
  st->config_digest = publish::model_config_digest(options.job);
  auto next = publish::next_sequence(options.dir, options.job_id);
  if (!next.is_ok()) return next.error().with_context("--publish-dir " + options.dir);
  st->next_sequence = next->sequence;
  // A delta follows the newest publication of this chain; without one (or of another model) the
  // first is a base.
  if (next->newest && next->newest->config_digest == st->config_digest && next->newest->shape == st->shape) {
    const publish::manifest& newest = *next->newest;
    st->last_written = newest.sequence;
    st->base = newest.base;
    st->need_base = false;
    spdlog::info("publisher: {} continues after publication {} (base {})", options.dir, newest.sequence, newest.base);
  }
  st->gateway = gateway;
  st->report_to = report_to;
  st->view_source = view_source;
  st->options = std::move(options);
  // Detached: writing and fsyncing files blocks on the disk, never a scheduler thread.
  if (st->options.detached) return sys.spawn<caf::detached>(publisher, st);
  return sys.spawn(publisher, st);
}

}  // namespace ss::actors
