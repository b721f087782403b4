#include "ss/actors/evaluator.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "ss/actors/messages.hpp"
#include "ss/core/embedding/sharding.hpp"
#include "ss/core/metrics/accumulator.hpp"
#include "ss/core/train/train_step.hpp"

namespace ss::actors {
namespace {

struct evaluator_state {
  static inline const char* name = "evaluator";
  evaluator_input in;
  caf::actor gateway;
  caf::actor report_to;
  std::unique_ptr<data::batch_reader> reader;
  std::vector<std::uint32_t> links;
  std::unique_ptr<train::worker_scratch> scratch;
  embedding::batch_rows rows;
  embedding::shard_split split;
  data::example_batch batch;
  metrics::accumulator acc;
  int pending = 0;
  bool failed = false;
  caf::timespan timeout;
};
using evaluator_actor = caf::stateful_actor<evaluator_state>;

void fail(evaluator_actor* self, const std::string& why) {
  if (self->state.failed) return;
  self->state.failed = true;
  self->send(self->state.report_to, result_atom::value, why);
  self->quit();
}

void next_batch(evaluator_actor* self);

void lookup(evaluator_actor* self, std::uint32_t shard, int attempt) {
  auto& st = self->state;
  const auto& part = st.split.of(shard);
  self->request(st.gateway, caf::infinite, call_atom::value, st.links[shard],
                make_body(wire::lookup_request{false, part.tables, part.ids}), st.timeout)
      .then(
          [self, shard](const envelope_ptr& env) {
            auto& s = self->state;
            if (const auto* err = std::get_if<wire::error_reply>(&env->message))
              return fail(self, "shard " + std::to_string(shard) + " refused a lookup: " + err->message);
            const auto* reply = std::get_if<wire::lookup_reply>(&env->message);
            if (reply == nullptr || !s.split.scatter_values(shard, reply->values, s.rows))
              return fail(self, "shard " + std::to_string(shard) + " answered a lookup badly");
            if (--s.pending > 0) return;
            s.rows.use_values();
            train::predict_batch(*s.in.model, s.batch, s.rows, *s.scratch);
            s.acc.add(s.scratch->ws.probs.data(), s.batch.labels.data(), s.batch.size());
            next_batch(self);
          },
          [self, shard, attempt](const caf::error&) {
            if (attempt >= 30) return fail(self, "shard " + std::to_string(shard) + " does not answer lookups");
            lookup(self, shard, attempt + 1);
          });
}

void next_batch(evaluator_actor* self) {
  auto& st = self->state;
  auto more = st.reader->next(st.batch);
  if (!more.is_ok()) return fail(self, "test data: " + more.error().message());
  if (!*more) {
    self->send(st.report_to, result_atom::value, st.acc.compute(st.in.base_click_rate),
               st.reader->counters().bad);
    self->quit();
    return;
  }
  if (auto check = train::check_batch(st.in.model->config(), st.batch); !check.is_ok())
    return fail(self, "test data: " + check.message());
  st.rows.build(st.batch, st.in.buckets, st.in.model->config().embedding_dim);
  st.split.build(st.rows, static_cast<std::uint32_t>(st.links.size()));
  st.pending = 0;
  for (std::uint32_t s = 0; s < st.split.shards(); ++s)
    if (!st.split.of(s).ids.empty()) ++st.pending;
  for (std::uint32_t s = 0; s < st.split.shards(); ++s)
    if (!st.split.of(s).ids.empty()) lookup(self, s, 0);
}

caf::behavior evaluator(evaluator_actor* self, std::shared_ptr<evaluator_input> in, caf::actor gateway,
                        caf::actor report_to) {
  auto& st = self->state;
  st.in = *in;
  st.gateway = std::move(gateway);
  st.report_to = std::move(report_to);
  st.timeout = std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(st.in.job.request_timeout));
  st.scratch = std::make_unique<train::worker_scratch>(st.in.model->config(), 4096);
  auto ropts = job::reader_options(st.in.job.input, st.in.job.test, 4096);
  if (!ropts.is_ok()) {
    fail(self, ropts.error().message());
    return {};
  }
  auto reader = data::batch_reader::open(*ropts);
  if (!reader.is_ok()) {
    fail(self, "test data: " + reader.error().message());
    return {};
  }
  st.reader = std::make_unique<data::batch_reader>(std::move(*reader));
  st.links.assign(st.in.shard_endpoints.size(), 0);
  // Open a link per shard, then start.
  auto remaining = std::make_shared<std::size_t>(st.links.size());
  for (std::uint32_t s = 0; s < st.links.size(); ++s) {
    self->request(st.gateway, caf::infinite, link_atom::value, st.in.shard_endpoints[s])
        .then(
            [self, s, remaining](std::uint32_t link) {
              self->state.links[s] = link;
              if (--*remaining == 0) next_batch(self);
            },
            [self](const caf::error& err) { fail(self, "cannot reach a shard: " + self->system().render(err)); });
  }
  return {[](start_atom) {}};
}

}  // namespace

caf::actor spawn_evaluator(caf::actor_system& sys, const caf::actor& gateway, evaluator_input input,
                           const caf::actor& report_to, bool detached) {
  auto in = std::make_shared<evaluator_input>(std::move(input));
  return detached ? sys.spawn<caf::detached>(evaluator, in, gateway, report_to)
                  : sys.spawn(evaluator, in, gateway, report_to);
}

}  // namespace ss::actors
