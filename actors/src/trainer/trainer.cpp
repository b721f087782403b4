// The trainer actor: follows the cluster view (readers, shards, sync servers) and the job state,
// starts from the central dense copy, spawns the feeder, the workers and the syncer
// (parts.hpp lists their messages), serves its replica and its status, and reports the
// replica to the coordinator once the input is exhausted.
//
// Messages: view_atom + cluster_view (from the membership agent), state_atom + job_state,
// finished_atom (a worker trained everything it took: once all did, the closing round, then the
// report), fetch_atom (fetch the central copy again),
// report_atom (report the replica again), serve_atom + envelope -> body (dense_request,
// status_request, sync_close: an epoch's closing round).
#include <caf/all.hpp>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "ss/actors/gateway.hpp"
#include "ss/actors/status_metrics.hpp"
#include "ss/core/json.hpp"
#include "ss/core/metrics/status_metrics.hpp"
#include "parts.hpp"

namespace ss::actors {
namespace {

using namespace trainer_detail;

struct trainer_state {
  static inline const char* name = "trainer";
  context_ptr ctx;
  member_agent_actor member;
  syncer_actor syncer;
  feeder_actor feeder;
  std::vector<worker_actor> workers;
  std::vector<std::string> shard_endpoints;
  std::vector<std::uint64_t> shard_incarnations;  // as the view last named them (0: not yet)
  links shard_links;
  std::uint32_t coordinator_link = 0;
  std::vector<std::string> sync_endpoints;
  std::vector<std::uint64_t> sync_incarnations;
  bool started = false;
  bool model_ready = false;  // started from the central copy (or the seeded model)
  bool job_running = false;  // the coordinator says every member is there
  int workers_done = 0;
  bool reported = false;
  wire::cluster_view last_view;
  bool have_view = false;
  wire::job_state job_state = wire::job_state::waiting;
};
using trainer_self = trainer_actor::stateful_pointer<trainer_state>;

void report_replica(trainer_self self) {
  auto& st = self->state;
  self->send(st.syncer, stop_atom::value);
  auto report = std::make_shared<wire::dense_report>();
  report->trainer = st.ctx->options.incarnation;
  report->examples = st.ctx->progress->snapshot().examples;
  report->params.assign(st.ctx->model->params(), st.ctx->model->params() + st.ctx->model->size());
  self->request(st.ctx->gateway, caf::infinite, call_atom::value, st.coordinator_link,
                std::make_shared<const wire::body>(*report), st.ctx->timeout)
      .then(
          [self](const envelope_ptr&) {
            auto& ctx = *self->state.ctx;
            ctx.progress->set_finished();
            const auto t = ctx.progress->timings();
            const double busy = t.compute_seconds + t.wait_seconds;
            spdlog::info("{}: input exhausted; replica reported to the coordinator. Workers computed {:.0f}% of "
                         "their time and waited {:.0f}% (for lookups or batches); shard lookups took p50 {:.2f} ms, "
                         "p99 {:.2f} ms ({} requests), pushes p50 {:.2f} ms, p99 {:.2f} ms",
                         ctx.options.name, busy > 0 ? 100 * t.compute_seconds / busy : 0.0,
                         busy > 0 ? 100 * t.wait_seconds / busy : 0.0, t.lookup_p50_ms, t.lookup_p99_ms, t.lookups,
                         t.push_p50_ms, t.push_p99_ms);
            if (ctx.sync.algo != sync::algorithm::none) {
              const auto p = ctx.progress->snapshot();
              spdlog::info("{}: {} sync rounds ({}; per slice {}), sync gap {:.1f} batches, round p50 {:.2f} ms "
                           "p99 {:.2f} ms, replica distance {:.4f}, workers stopped {:.1f} worker-seconds for syncs",
                           ctx.options.name, p.sync_rounds, sync::to_string(ctx.sync),
                           fmt::join(ctx.progress->slice_rounds(), " "), p.sync_gap,
                           p.sync_latency_p50_ms, p.sync_latency_p99_ms, p.sync_distance, p.sync_wait_seconds);
            }
          },
          [self](const caf::error&) { self->delayed_send(self, retry_delay, report_atom::value); });
}

// The input is exhausted: the closing round folds this replica's last progress into the model
// (bounded by the syncer's deadline), then the replica is reported.
void close_then_report(trainer_self self) {
  auto& st = self->state;
  if (st.ctx->sync.algo == sync::algorithm::none) return report_replica(self);
  self->request(st.syncer, caf::infinite, close_atom::value, final_closing)
      .then([self](bool) { report_replica(self); }, [self](const caf::error&) { report_replica(self); });
}

void start_workers(trainer_self self) {
  auto& st = self->state;
  if (st.started || !st.model_ready || !st.job_running) return;
  st.started = true;
  st.feeder = spawn_feeder(self, st.ctx);
  if (st.have_view) self->send(st.feeder, view_atom::value, st.last_view);
  self->send(st.feeder, shards_atom::value, st.shard_links);
  self->send(st.feeder, state_atom::value, st.job_state);
  for (int w = 0; w < std::max(1, st.ctx->options.workers); ++w) {
    auto a = spawn_worker(self, st.ctx, st.feeder, st.syncer);
    st.workers.push_back(a);
    self->send(a, shards_atom::value, st.shard_links);
    self->send(a, start_atom::value);
  }
  self->send(st.syncer, workers_atom::value, st.workers);
  if (st.ctx->sync.when == sync::mode::shadow) self->send(st.syncer, start_atom::value);
  spdlog::info("{}: training with {} worker{}{}{}", st.ctx->options.name, st.workers.size(),
               st.workers.size() == 1 ? "" : "s", st.ctx->sync.algo == sync::algorithm::none ? "" : ", sync ",
               st.ctx->sync.algo == sync::algorithm::none ? "" : sync::to_string(st.ctx->sync));
}

// The optimizer state that comes with the central copy (a resumed job's snapshot, or the one
// gathered last): taken, so that the first updates continue the job's instead of being
// full-size steps on every parameter, as a fresh Adam's or Adagrad's are.
void take_optimizer_state(trainer_state& st, const wire::dense_reply& reply) {
  const auto& name = st.ctx->options.name;
  auto& model = *st.ctx->model;
  if (model.optimizer_state_size() == 0) return;  // SGD: nothing to take
  const char* kind = optim::to_string(model.optimizer().kind);
  if (reply.optimizer.empty()) {
    if (!reply.params.empty())
      spdlog::info("{}: the central copy comes without {} state (none kept yet): the optimizer starts afresh", name,
                   kind);
    return;
  }
  if (reply.optimizer.size() != model.optimizer_state_size()) {
    spdlog::warn("{}: the central copy's optimizer state has {} values, this trainer's {} optimizer {} (another "
                 "--dense-optimizer before the resume?): it starts afresh",
                 name, reply.optimizer.size(), kind, model.optimizer_state_size());
    return;
  }
  model.restore_optimizer(reply.optimizer.data(), reply.optimizer_steps);
  spdlog::info("{}: took the job's {} state ({} updates) with the central copy", name, kind, reply.optimizer_steps);
}

void fetch_central_model(trainer_self self) {
  auto& st = self->state;
  self->request(st.ctx->gateway, caf::infinite, call_atom::value, st.coordinator_link, make_body(wire::dense_request{}),
                st.ctx->timeout)
      .then(
          [self](const envelope_ptr& env) {
            auto& s = self->state;
            const auto* reply = std::get_if<wire::dense_reply>(&env->message);
            if (reply == nullptr || (!reply->params.empty() && reply->params.size() != s.ctx->model->size())) {
              const std::string why = reply == nullptr ? std::string("unexpected answer ") + wire::message_name(env->message)
                                                       : "central copy has " + std::to_string(reply->params.size()) +
                                                             " parameters, this trainer's model " +
                                                             std::to_string(s.ctx->model->size());
              spdlog::error("{}: cannot start from the central model: {}", s.ctx->options.name, why);
              s.ctx->progress->set_error(why);
              return;
            }
            // An empty central copy: this is the first trainer; its seeded initialization is the
            // same every trainer computes.
            if (!reply->params.empty())
              std::copy(reply->params.begin(), reply->params.end(), s.ctx->model->params());
            take_optimizer_state(s, *reply);
            s.model_ready = true;
            start_workers(self);
          },
          [self](const caf::error&) { self->delayed_send(self, retry_delay, fetch_atom::value); });
}

// The cluster view changed: link to shards and sync servers at their (new) endpoints, and pass
// the readers on to the feeder.
void follow_view(trainer_self self, const wire::cluster_view& view) {
  auto& st = self->state;
  st.last_view = view;
  st.have_view = true;
  // Its membership: a new one when it came back to a job that went on without it. The feeder
  // (which sees the same view) hands on the batches of the old one; the workers drop theirs.
  if (const std::uint64_t membership = membership_in(view, st.ctx->options.incarnation); membership != 0) {
    const std::uint64_t before = st.ctx->membership.exchange(membership);
    if (before != 0 && before != membership)
      spdlog::warn("{}: the job went on without this trainer (dropped for silence): membership {} -> {}; the batches "
                   "it held went to other trainers, its pushes and rounds under the old membership are refused",
                   st.ctx->options.name, before, membership);
  }
  if (st.shard_endpoints.size() < view.shards.size()) {
    st.shard_endpoints.resize(view.shards.size());
    st.shard_incarnations.resize(view.shards.size());
  }
  // A live reshard: the shards that join are linked as they appear in the view; rows go by their
  // new count once the view says so.
  if (st.shard_links.size() < view.shards.size()) st.shard_links.resize(view.shards.size(), 0);
  if (view.placement_shards != 0 && view.placement_shards != st.ctx->shards.load()) {
    spdlog::info("{}: rows are routed over {} shards from now on (were {})", st.ctx->options.name,
                 view.placement_shards, st.ctx->shards.load());
    st.ctx->shards.store(view.placement_shards);
  }
  for (std::uint32_t s = 0; s < view.shards.size() && s < st.shard_links.size(); ++s) {
    const std::uint64_t incarnation = s < view.shard_incarnations.size() ? view.shard_incarnations[s] : 0;
    const bool same_endpoint = view.shards[s] == st.shard_endpoints[s];
    if (incarnation != 0 && st.shard_incarnations[s] != 0 && incarnation != st.shard_incarnations[s] && same_endpoint)
      for (auto& w : st.workers) self->send(w, restarted_atom::value, s);
    if (incarnation != 0) st.shard_incarnations[s] = incarnation;
    if (view.shards[s].empty() || same_endpoint) continue;
    st.shard_endpoints[s] = view.shards[s];
    self->request(st.ctx->gateway, caf::infinite, link_atom::value, view.shards[s])
        .then([self, s](std::uint32_t link) {
          auto& state = self->state;
          state.shard_links[s] = link;
          for (auto& w : state.workers) self->send(w, shards_atom::value, state.shard_links);
          if (state.feeder) self->send(state.feeder, shards_atom::value, state.shard_links);
        });
  }
  if (st.feeder) self->send(st.feeder, view_atom::value, view);
  if (st.syncer) self->send(st.syncer, peers_atom::value, static_cast<std::uint32_t>(view.trainers.size()));
  if (st.sync_endpoints.size() < view.syncs.size()) {
    st.sync_endpoints.resize(view.syncs.size());
    st.sync_incarnations.resize(view.syncs.size());
  }
  for (std::uint32_t k = 0; k < view.syncs.size() && k < st.ctx->slices; ++k) {
    const std::uint64_t incarnation = k < view.sync_incarnations.size() ? view.sync_incarnations[k] : 0;
    if (view.syncs[k].empty() ||
        (view.syncs[k] == st.sync_endpoints[k] && incarnation == st.sync_incarnations[k]))
      continue;
    const bool restarted = !st.sync_endpoints[k].empty();
    st.sync_endpoints[k] = view.syncs[k];
    st.sync_incarnations[k] = incarnation;
    self->request(st.ctx->gateway, caf::infinite, link_atom::value, view.syncs[k])
        .then([self, k, restarted](std::uint32_t link) {
          self->send(self->state.syncer, slink_atom::value, k, link, restarted);
        });
  }
  st.ctx->progress->set_view_epoch(view.epoch);
}

// The coordinator asks for a closing round: a scored epoch ended and the workers are idle. The
// answer (an ack) comes once the syncer folded the replica or gave up at its deadline.
caf::result<body_ptr> close_epoch(trainer_self self, const wire::sync_close& close) {
  auto promise = self->make_response_promise<body_ptr>();
  if (close.generation == 0 || close.generation == final_closing) {
    promise.deliver(make_body(wire::error_reply{errc::invalid_argument, "sync_close: no such epoch " +
                                                                            std::to_string(close.generation)}));
    return promise;
  }
  self->request(self->state.syncer, caf::infinite, close_atom::value, close.generation)
      .then([promise](bool) mutable { promise.deliver(make_body(wire::ack{})); },
            [promise](const caf::error&) mutable { promise.deliver(make_body(wire::ack{})); });
  return promise;
}

// What a trainer's status reads its fields from.
struct trainer_view {
  const trainer_state& st;
  const wire::member_progress& p;
  const trainer_progress::timing& t;
};

// The trainer's status (what `shadowsync status` shows), declared once: its JSON key, type and
// help on /metrics, and how it is read.
const metrics::status_table<trainer_view>& trainer_fields() {
  using v = const trainer_view&;
  using t = metrics::metric_type;
  static const metrics::status_table<trainer_view> table = {
      {"compute_seconds", t::counter, "Worker-seconds computing.", [](v x) { return x.t.compute_seconds; }},
      {"wait_seconds", t::counter, "Worker-seconds waiting for lookups or batches.",
       [](v x) { return x.t.wait_seconds; }},
      {"lookup_p50_ms", t::gauge, "Median shard lookup latency.", [](v x) { return x.t.lookup_p50_ms; }},
      {"lookup_p99_ms", t::gauge, "99th percentile shard lookup latency.", [](v x) { return x.t.lookup_p99_ms; }},
      {"push_p50_ms", t::gauge, "Median gradient push latency.", [](v x) { return x.t.push_p50_ms; }},
      {"push_p99_ms", t::gauge, "99th percentile gradient push latency.", [](v x) { return x.t.push_p99_ms; }},
      {"role", t::status_only, "The service's role.", [](v) { return "trainer"; }},
      {"name", t::status_only, "The trainer's name.", [](v x) { return x.st.ctx->options.name; }},
      {"workers", t::gauge, "Hogwild workers.", [](v x) { return static_cast<std::uint64_t>(x.st.workers.size()); }},
      {"examples", t::counter, "Examples trained (trainers: this one; coordinator: the job).",
       [](v x) { return x.p.examples; }},
      {"batches", t::counter, "Batches trained.", [](v x) { return x.p.batches; }},
      {"train_logloss", t::gauge, "Mean training log loss so far.",
       [](v x) { return x.p.examples ? x.p.loss_sum / x.p.examples : 0.0; }},
      {"sync", t::status_only, "The sync algorithm and its settings.",
       [](v x) { return sync::to_string(x.st.ctx->sync); }},
      {"sync_rounds", t::counter, "Dense sync rounds completed.", [](v x) { return x.p.sync_rounds; }},
      {"sync_slice_rounds", t::status_only, "Sync rounds completed per slice.",
       [](v x) {
         std::vector<std::string> rounds;
         for (const std::uint64_t r : x.st.ctx->progress->slice_rounds()) rounds.push_back(std::to_string(r));
         return metrics::raw_json{json_array(rounds)};
       }},
      {"sync_gap", t::gauge, "Batches trained between sync rounds, mean.", [](v x) { return x.p.sync_gap; }},
      {"sync_latency_p50_ms", t::gauge, "Median sync round latency.", [](v x) { return x.p.sync_latency_p50_ms; }},
      {"sync_latency_p99_ms", t::gauge, "99th percentile sync round latency.",
       [](v x) { return x.p.sync_latency_p99_ms; }},
      {"sync_distance", t::gauge, "Relative distance of the replica to the central model, last round.",
       [](v x) { return x.p.sync_distance; }},
      {"sync_wait_seconds", t::counter, "Worker-seconds stopped for foreground syncs.",
       [](v x) { return x.p.sync_wait_seconds; }},
      {"sync_quantize", t::status_only, "Whether sync rounds are quantized to 8 bits.",
       [](v x) { return x.st.ctx->job.sync_quantize; }},
      {"sync_bytes", t::counter, "Bytes sent and received by sync rounds (trainer).", [](v x) { return x.p.sync_bytes; }},
      {"finished", t::gauge, "1 once this member finished its part of the job.", [](v x) { return x.p.finished; }},
      {"error", t::status_only, "Why the trainer failed, if it did.", [](v x) { return x.st.ctx->progress->error(); }},
  };
  return table;
}

// What `shadowsync status` shows of this trainer.
std::string status_json(trainer_self self) {
  auto& st = self->state;
  const auto p = st.ctx->progress->snapshot();
  const auto t = st.ctx->progress->timings();
  return metrics::to_json(trainer_fields(), trainer_view{st, p, t});
}

trainer_actor::behavior_type trainer(trainer_self self, context_ptr ctx, gateway_actor gateway, member_agent_actor member) {
  self->state.ctx = ctx;
  self->state.member = member;
  self->state.syncer = spawn_syncer(self, ctx);
  self->state.shard_links.assign(ctx->shards, 0);
  self->send(member, view_atom::value, view_subscriber_actor{trainer_actor{self}});
  self->request(gateway, caf::infinite, link_atom::value, ctx->options.coordinator).then([self](std::uint32_t link) {
    self->state.coordinator_link = link;
    fetch_central_model(self);
  });
  return {
      [self](fetch_atom) { fetch_central_model(self); },
      [self](view_atom, const wire::cluster_view& view) { follow_view(self, view); },
      [self](state_atom, wire::job_state state) {
        self->state.job_state = state;
        if (self->state.feeder) self->send(self->state.feeder, state_atom::value, state);
        if (state == wire::job_state::running || state == wire::job_state::draining) {
          self->state.job_running = true;
          start_workers(self);
        }
        if (state == wire::job_state::done || state == wire::job_state::failed) {
          for (auto& w : self->state.workers) self->send_exit(w, caf::exit_reason::user_shutdown);
          if (self->state.feeder) self->send_exit(self->state.feeder, caf::exit_reason::user_shutdown);
        }
      },
      [self](finished_atom) {
        auto& st = self->state;
        if (++st.workers_done == static_cast<int>(st.workers.size())) close_then_report(self);
      },
      [self](report_atom) { report_replica(self); },
      [self](serve_atom, const envelope_ptr& env) -> caf::result<body_ptr> {
        auto& st = self->state;
        if (const auto* close = std::get_if<wire::sync_close>(&env->message)) return close_epoch(self, *close);
        if (std::holds_alternative<wire::dense_request>(env->message)) {
          // The replica: the coordinator snapshots it (no central copy without sync) and builds
          // the final model from it. Not before this trainer has its starting point: its seeded
          // initialization would pass for training.
          if (!st.model_ready)
            return make_body(wire::error_reply{errc::unavailable, st.ctx->options.name + " has no replica yet: it is "
                                                                                          "fetching the central copy"});
          const auto& model = *st.ctx->model;
          wire::dense_reply reply{st.ctx->progress->batches(), std::vector<float>(model.params(), model.params() + model.size()), {}};
          if (std::get<wire::dense_request>(env->message).optimizer && model.optimizer_state_size() > 0) {
            reply.optimizer.assign(model.optimizer_state(), model.optimizer_state() + model.optimizer_state_size());
            reply.optimizer_steps = model.steps();
          }
          reply.examples = st.ctx->progress->snapshot().examples;
          return make_body(std::move(reply));
        }
        if (!std::holds_alternative<wire::status_request>(env->message))
          return make_body(wire::error_reply{errc::invalid_argument, std::string("a trainer does not serve ") +
                                                                         wire::message_name(env->message)});
        return make_body(wire::status_reply{status_json(self)});
      },
  };
}

}  // namespace

metrics::field_list trainer_field_list() { return metrics::describe(trainer_fields()); }

trainer_actor spawn_trainer(caf::actor_system& sys, const gateway_actor& gateway, const member_agent_actor& member_agent,
                           const job::job_options& job, std::shared_ptr<train::dense_model> model,
                           std::vector<std::uint64_t> buckets, const trainer_options& options,
                           std::shared_ptr<trainer_progress> progress) {
  auto ctx = std::make_shared<trainer_context>();
  ctx->shards = static_cast<std::uint32_t>(job.shards);
  ctx->slices = static_cast<std::uint32_t>(job.sync_servers);
  if (auto spec = sync::parse_sync(job.sync); spec.is_ok()) ctx->sync = *spec;
  if (ctx->sync.when == sync::mode::foreground)
    ctx->gate = std::make_unique<foreground_gate>(static_cast<std::uint64_t>(job.sync_every));
  ctx->simulated_left.store(static_cast<std::int64_t>(job.simulate_steps));
  ctx->gateway = gateway;
  ctx->job = job;
  ctx->model = std::move(model);
  ctx->buckets = std::move(buckets);
  ctx->options = options;
  ctx->progress = std::move(progress);
  ctx->timeout = std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(job.request_timeout));
  auto a = sys.spawn(trainer, ctx, gateway, member_agent);
  const request_server_actor server{a};
  caf::anon_send(gateway, route_atom::value, kind_of<wire::status_request>(), server);
  caf::anon_send(gateway, route_atom::value, kind_of<wire::dense_request>(), server);
  caf::anon_send(gateway, route_atom::value, kind_of<wire::sync_close>(), server);
  return a;
}

}  // namespace ss::actors
