#include "ss/actors/evaluator.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "ss/actors/actors.hpp"
#include "ss/actors/messages.hpp"
#include "ss/core/embedding/sharding.hpp"
#include "ss/core/metrics/accumulator.hpp"
#include "ss/core/train/train_step.hpp"

namespace ss::actors {
namespace {

constexpr auto renew_after = std::chrono::milliseconds(500);

struct evaluator_state {
  static inline const char* name = "evaluator";
  evaluator_input in;
  gateway_actor gateway;
  evaluator_listener_actor report_to;
  view_source_actor view_source;
  std::unique_ptr<data::batch_reader> reader;
  std::vector<std::uint32_t> links;
  std::vector<bool> linked;
  // Per shard: since when it has not answered (unset while it answers).
  std::vector<std::optional<std::chrono::steady_clock::time_point>> trouble_since;
  std::unique_ptr<train::worker_scratch> scratch;
  embedding::batch_rows rows;
  embedding::shard_split split;
  data::example_batch batch;
  metrics::accumulator acc;
  int pending = 0;
  bool started = false;
  bool failed = false;
  caf::timespan timeout;
};
using evaluator_self = evaluator_actor::stateful_pointer<evaluator_state>;

void fail(evaluator_self self, const std::string& why) {
  if (self->state.failed) return;
  self->state.failed = true;
  self->send(self->state.report_to, unscored_atom::value, why);
  self->quit();
}

void next_batch(evaluator_self self);
void lookup(evaluator_self self, std::uint32_t shard);

// Shard `shard` did not answer (a timeout, `unavailable` while it loads or stops, a restart at
// another address): look it up in the cluster view again in a moment, within in.shard_wait. The
// lookups are read-only, so a restarted shard answers them as its predecessor did; scoring goes
// on from the batch it was at.
void retry(evaluator_self self, std::uint32_t shard, const std::string& why) {
  auto& st = self->state;
  if (st.failed) return;
  const auto now = std::chrono::steady_clock::now();
  auto& since = st.trouble_since[shard];
  if (!since) {
    since = now;
    spdlog::warn("evaluator: shard {}: {}; waiting for it (at most {} s)", shard, why, st.in.shard_wait.count() / 1000);
  }
  if (now - *since > st.in.shard_wait)
    return fail(self, "shard " + std::to_string(shard) + " did not answer lookups for " +
                          std::to_string(st.in.shard_wait.count() / 1000) + " s (--peer-wait): " + why);
  self->delayed_send(self, renew_after, renew_atom::value, shard);
}

// Links to shard `shard` at the address the cluster view has for it now, then goes on.
void relink(evaluator_self self, std::uint32_t shard, const std::string& endpoint) {
  if (endpoint.empty()) return retry(self, shard, "it is not in the cluster view (restarting?)");
  self->request(self->state.gateway, caf::infinite, link_atom::value, endpoint)
      .then(
          [self, shard](std::uint32_t link) {
            auto& st = self->state;
            st.links[shard] = link;
            st.linked[shard] = true;
            if (st.started) return lookup(self, shard);
            if (std::all_of(st.linked.begin(), st.linked.end(), [](bool b) { return b; })) {
              st.started = true;
              next_batch(self);
            }
          },
          [self, shard](const caf::error& err) {
            retry(self, shard, "cannot reach it: " + self->system().render(err));
          });
}

void lookup(evaluator_self self, std::uint32_t shard) {
  auto& st = self->state;
  const auto& part = st.split.of(shard);
  self->request(st.gateway, caf::infinite, call_atom::value, st.links[shard],
                make_body(wire::lookup_request{false, part.tables, part.ids}), st.timeout)
      .then(
          [self, shard](const envelope_ptr& env) {
            auto& s = self->state;
            if (const auto* err = std::get_if<wire::error_reply>(&env->message)) {
              if (err->code == errc::unavailable) return retry(self, shard, err->message);
              return fail(self, "shard " + std::to_string(shard) + " refused a lookup: " + err->message);
            }
            const auto* reply = std::get_if<wire::lookup_reply>(&env->message);
            if (reply == nullptr || !s.split.scatter_values(shard, reply->values, s.rows))
              return fail(self, "shard " + std::to_string(shard) + " answered a lookup badly");
            s.trouble_since[shard].reset();
            if (--s.pending > 0) return;
            s.rows.use_values();
            train::predict_batch(*s.in.model, s.batch, s.rows, *s.scratch);
            s.acc.add(s.scratch->ws.probs.data(), s.batch.labels.data(), s.batch.size());
            next_batch(self);
          },
          [self, shard](const caf::error& err) { retry(self, shard, self->system().render(err)); });
}

void next_batch(evaluator_self self) {
  auto& st = self->state;
  auto more = st.reader->next(st.batch);
  if (!more.is_ok()) return fail(self, st.in.what + ": " + more.error().message());
  if (!*more) {
    self->send(st.report_to, scored_atom::value, st.acc.compute(st.in.base_click_rate),
               st.reader->counters().bad);
    self->quit();
    return;
  }
  if (auto check = train::check_batch(st.in.model->config(), st.batch); !check.is_ok())
    return fail(self, st.in.what + ": " + check.message());
  st.rows.build(st.batch, st.in.buckets, st.in.model->config().embedding_dim);
  st.split.build(st.rows, static_cast<std::uint32_t>(st.links.size()));
  st.pending = 0;
  for (std::uint32_t s = 0; s < st.split.shards(); ++s)
    if (!st.split.of(s).ids.empty()) ++st.pending;
  for (std::uint32_t s = 0; s < st.split.shards(); ++s)
    if (!st.split.of(s).ids.empty()) lookup(self, s);
}

evaluator_actor::behavior_type evaluator_behavior(evaluator_self self) {
  return {
      // A retry: where is the shard now? Without a view, the address it had.
      [self](renew_atom, std::uint32_t shard) {
        auto& s = self->state;
        if (s.failed) return;
        if (!s.view_source) return relink(self, shard, s.in.shard_endpoints[shard]);
        self->request(s.view_source, std::chrono::seconds(10), view_atom::value)
            .then(
                [self, shard](const wire::cluster_view& view) {
                  relink(self, shard, shard < view.shards.size() ? view.shards[shard] : std::string());
                },
                [self](const caf::error& err) { fail(self, "the coordinator's view: " + self->system().render(err)); });
      },
  };
}

evaluator_actor::behavior_type evaluator(evaluator_self self, std::shared_ptr<evaluator_input> in, gateway_actor gateway,
                                         evaluator_listener_actor report_to, view_source_actor view_source) {
  auto& st = self->state;
  st.in = *in;
  st.gateway = std::move(gateway);
  st.report_to = std::move(report_to);
  st.view_source = std::move(view_source);
  st.timeout = std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(st.in.job.request_timeout));
  // The coordinator gone (stopped by a signal): nobody waits for the scores any more, and the
  // service's actor system would wait for this actor forever.
  if (st.report_to) self->monitor(st.report_to);
  if (st.view_source) self->monitor(st.view_source);
  self->set_down_handler([self](const caf::down_msg&) {
    if (!self->state.failed) spdlog::warn("evaluator: the coordinator stopped; {} is abandoned", self->state.in.what);
    self->state.failed = true;
    self->quit();
  });
  st.scratch = std::make_unique<train::worker_scratch>(st.in.model->config(), 4096);
  auto ropts = job::reader_options(st.in.job.input, st.in.files, 4096);
  if (!ropts.is_ok()) {
    fail(self, ropts.error().message());
    return evaluator_behavior(self);  // it has quit; a typed behavior cannot be empty in CAF 0.17
  }
  auto reader = data::batch_reader::open(*ropts);
  if (!reader.is_ok()) {
    fail(self, st.in.what + ": " + reader.error().message());
    return evaluator_behavior(self);
  }
  st.reader = std::make_unique<data::batch_reader>(std::move(*reader));
  const std::size_t shards = st.in.shard_endpoints.size();
  st.links.assign(shards, 0);
  st.linked.assign(shards, false);
  st.trouble_since.assign(shards, std::nullopt);
  // A link per shard (a shard away at the start is waited for like one that leaves later), then start.
  for (std::uint32_t s = 0; s < shards; ++s) relink(self, s, st.in.shard_endpoints[s]);
  return evaluator_behavior(self);
}

}  // namespace

evaluator_actor spawn_evaluator(caf::actor_system& sys, const gateway_actor& gateway, evaluator_input input,
                                const evaluator_listener_actor& report_to, const view_source_actor& view_source,
                                bool detached) {
  auto in = std::make_shared<evaluator_input>(std::move(input));
  return detached ? sys.spawn<caf::detached>(evaluator, in, gateway, report_to, view_source)
                  : sys.spawn(evaluator, in, gateway, report_to, view_source);
}

}  // namespace ss::actors
