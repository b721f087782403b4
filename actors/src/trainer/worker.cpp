// A Hogwild worker: takes batches from the feeder, looks up their rows on the shards (the next
// batches' lookups in flight while it computes), trains the shared replica, pushes the row
// gradients, and has the feeder ack each batch once every shard applied them (messages:
// worker_actor in parts.hpp).
#include <spdlog/spdlog.h>

#include <map>
#include <utility>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmath>
#include <deque>
#include <optional>

#include "ss/core/metrics/metrics.hpp"
#include "ss/core/train/train_step.hpp"
#include "parts.hpp"

namespace ss::actors::trainer_detail {
namespace {

struct worker_state {
  static inline const char* name = "worker";
  context_ptr ctx;
  feeder_actor feeder;
  syncer_actor syncer;
  caf::actor trainer;
  links shard_links;
  std::unique_ptr<train::worker_scratch> scratch;
  std::deque<fed_batch> incoming;
  std::deque<slot_ptr> fetching;
  std::vector<slot_ptr> spare;
  int requested = 0;
  int pushing = 0;  // batches whose pushes are outstanding
  bool input_done = false;
  bool reported = false;
  std::uint64_t generation = 0;
  // Lookups and pushes awaiting a shard's answer, by call: a shard that restarted or moved never
  // answers those, so they go to its new process at once instead of after --request-timeout.
  struct shard_call {
    slot_ptr slot;
    std::uint32_t shard = 0;
    std::uint64_t generation = 0;  // a lookup's slot generation
    push_ptr push;                 // a push's request (null: a lookup)
  };
  std::map<std::uint64_t, shard_call> calls;
  std::uint64_t next_call = 0;
  // Set when the worker ran out of work to compute; the gap until the next compute is waiting.
  std::optional<std::chrono::steady_clock::time_point> idle_since;
  bool parked = false;  // stopped for a foreground sync
  std::uint64_t fenced_logged = 0;  // the membership whose refused pushes were last logged
};
using worker_self = worker_actor::stateful_pointer<worker_state>;

bool held_for_sync(const worker_state& st) { return st.parked || (st.ctx->gate && st.ctx->gate->closed()); }

void advance(worker_self self);

void send_lookup(worker_self self, const slot_ptr& slot, std::uint32_t shard) {
  auto& st = self->state;
  const auto link = shard < st.shard_links.size() ? st.shard_links[shard] : 0;
  const auto generation = slot->generation;
  if (link == 0) {  // the shard's endpoint is not known yet
    self->delayed_send(self, retry_delay, lookup_atom::value, slot, shard, generation);
    return;
  }
  const auto& part = slot->split.of(shard);
  // The batch's examples count on every shard's clock (a row TTL in examples).
  wire::lookup_request req{true, part.tables, part.ids, static_cast<std::uint32_t>(slot->batch->batch.size())};
  const auto sent = std::chrono::steady_clock::now();
  const std::uint64_t call = ++st.next_call;
  st.calls[call] = {slot, shard, generation, nullptr};
  self->request(st.ctx->gateway, caf::infinite, call_atom::value, link, make_body(std::move(req)), st.ctx->timeout)
      .then(
          [self, slot, shard, generation, sent, call](const envelope_ptr& env) {
            if (self->state.calls.erase(call) == 0) return;  // sent again to the shard's new process
            auto& progress = *self->state.ctx->progress;
            progress.add_lookup_latency(std::chrono::steady_clock::now() - sent);
            if (slot->generation != generation) return;
            if (const auto* reply = std::get_if<wire::lookup_reply>(&env->message)) {
              if (!slot->split.scatter_values(shard, reply->values, slot->rows)) {
                progress.set_error("shard " + std::to_string(shard) + " answered a lookup with the wrong number of values");
                return;
              }
              if (--slot->pending == 0) {
                slot->rows.use_values();
                slot->ready = true;
                advance(self);
              }
            } else if (const auto* err = std::get_if<wire::error_reply>(&env->message)) {
              if (err->code == errc::unavailable) {  // the shard is restoring its rows: ask again
                self->delayed_send(self, retry_delay, lookup_atom::value, slot, shard, generation);
                return;
              }
              spdlog::error("{}: shard {} refused a lookup: {}", self->state.ctx->options.name, shard, err->message);
              progress.set_error("shard " + std::to_string(shard) + ": " + err->message);
            }
          },
          [self, slot, shard, generation, call](const caf::error&) {
            if (self->state.calls.erase(call) == 0) return;
            // The shard is slow or restarting: ask again (lookups are idempotent).
            self->delayed_send(self, retry_delay, lookup_atom::value, slot, shard, generation);
          });
}

// The slot's batch is done with (trained, or given up): the slot takes the next one.
void recycle(worker_state& st, const slot_ptr& slot) {
  slot->batch.reset();
  ++slot->generation;
  st.spare.push_back(slot);
}

// A batch of a membership that is over: the feeder handed it back to its reader, which gives it to
// another trainer; its pushes would be refused.
bool stale(const worker_state& st, const job_slot& slot) { return slot.membership != st.ctx->membership.load(); }

void push_done(worker_self self, const slot_ptr& slot) {
  auto& st = self->state;
  if (--slot->pending > 0) return;
  // Every shard applied this batch's gradients: the batch is trained, its reader may forget it.
  // Not a batch of a membership that is over (its pushes refused or not sent): another trainer's now.
  if (!stale(st, *slot))
    self->send(st.feeder, ack_atom::value, slot->batch->reader_index, slot->batch->sequence,
               slot->batch->incarnation, 0);
  --st.pushing;
  recycle(st, slot);
  advance(self);
}

void send_push(worker_self self, const slot_ptr& slot, std::uint32_t shard, push_ptr req) {
  auto& st = self->state;
  const auto link = st.shard_links[shard];
  const auto sent = std::chrono::steady_clock::now();
  const std::uint64_t call = ++st.next_call;
  st.calls[call] = {slot, shard, 0, req};
  self->request(st.ctx->gateway, caf::infinite, call_atom::value, link, std::make_shared<const wire::body>(*req),
                st.ctx->timeout)
      .then(
          [self, slot, shard, req, sent, call](const envelope_ptr& env) {
            if (self->state.calls.erase(call) == 0) return;  // sent again to the shard's new process
            self->state.ctx->progress->add_push_latency(std::chrono::steady_clock::now() - sent);
            if (const auto* err = std::get_if<wire::error_reply>(&env->message)) {
              if (err->code == errc::unavailable) {  // the shard is restoring: not applied, send again
                self->delayed_send(self, retry_delay, push_atom::value, slot, shard, req);
                return;
              }
              if (err->code == errc::fenced) {
                auto& ws = self->state;
                if (stale(ws, *slot)) {
                  // Of a membership that is over: the batch went to another trainer.
                  if (ws.fenced_logged != slot->membership)
                    spdlog::info("{}: {} (pushes of membership {} are refused from now on)", ws.ctx->options.name,
                                 err->message, slot->membership);
                  ws.fenced_logged = slot->membership;
                  push_done(self, slot);
                  return;
                }
                // Not stale here: the shard has not seen this trainer's new membership yet, or the
                // trainer has not learnt yet that it was dropped (then the batch turns stale when
                // it does). Sent again shortly; giving up would leave the batch neither acked nor
                // handed back, and its reader waiting.
                self->delayed_send(self, retry_delay, push_atom::value, slot, shard, req);
                return;
              }
              spdlog::error("{}: a shard refused a push: {}", self->state.ctx->options.name, err->message);
              self->state.ctx->progress->set_error(err->message);
            }
            push_done(self, slot);
          },
          [self, slot, shard, req, call](const caf::error&) {
            if (self->state.calls.erase(call) == 0) return;
            // No answer: the push may or may not have been applied. Resending risks applying it
            // twice, dropping it risks losing it; a lost answer is much rarer than a lost
            // request on a live connection, so resend (docs/durability.md: delivery guarantees).
            self->delayed_send(self, retry_delay, push_atom::value, slot, shard, req);
          });
}

// Sends every lookup and push awaiting shard `shard` again, over its link as it is now: the
// process they went to is gone. A push may have been applied before it died; resent, as a
// timed-out one would be (docs/durability.md: delivery guarantees).
void resend_calls(worker_self self, std::uint32_t shard) {
  auto& st = self->state;
  std::vector<worker_state::shard_call> again;
  for (auto it = st.calls.begin(); it != st.calls.end();) {
    if (it->second.shard != shard) {
      ++it;
      continue;
    }
    again.push_back(std::move(it->second));
    it = st.calls.erase(it);
  }
  for (auto& c : again) {
    if (c.push) send_push(self, c.slot, c.shard, c.push);
    else if (c.slot->generation == c.generation) send_lookup(self, c.slot, c.shard);
  }
}

void start_fetch(worker_self self, fed_batch fed) {
  auto& st = self->state;
  batch_ptr batch = std::move(fed.batch);
  if (auto check = train::check_batch(st.ctx->model->config(), batch->batch); !check.is_ok()) {
    // A reader with another schema than the job's: nothing this trainer can do with the batch.
    spdlog::error("{}: batch {} of reader {} does not fit the model: {}", st.ctx->options.name, batch->sequence,
                  batch->reader_index, check.message());
    st.ctx->progress->set_error("reader " + std::to_string(batch->reader_index) + ": " + check.message());
    return;
  }
  slot_ptr slot;
  if (!st.spare.empty()) {
    slot = st.spare.back();
    st.spare.pop_back();
  } else {
    slot = std::make_shared<job_slot>();
  }
  slot->batch = std::move(batch);
  slot->membership = fed.membership;
  slot->ready = false;
  slot->generation = ++st.generation;
  slot->rows.build(slot->batch->batch, st.ctx->buckets, st.ctx->model->config().embedding_dim);
  slot->split.build(slot->rows, st.ctx->shards);
  slot->pending = 0;
  for (std::uint32_t s = 0; s < slot->split.shards(); ++s)
    if (!slot->split.of(s).ids.empty()) ++slot->pending;
  st.fetching.push_back(slot);
  if (slot->pending == 0) {
    slot->rows.use_values();
    slot->ready = true;
    return;
  }
  for (std::uint32_t s = 0; s < slot->split.shards(); ++s)
    if (!slot->split.of(s).ids.empty()) send_lookup(self, slot, s);
}

// Foreground sync: the worker whose batch reaches the next multiple of k asks the syncer for it.
void count_batch_for_sync(worker_self self) {
  auto& ctx = *self->state.ctx;
  if (ctx.gate && ctx.gate->claim(ctx.progress->batches())) self->send(self->state.syncer, sync_atom::value);
}

void compute(worker_self self, const slot_ptr& slot) {
  auto& st = self->state;
  const auto& ctx = *st.ctx;
  const auto& b = slot->batch->batch;
  const auto start = std::chrono::steady_clock::now();
  if (st.idle_since) {
    ctx.progress->add_wait(start - *st.idle_since);
    st.idle_since.reset();
  }
  const float lr_scale = ctx.options.schedule.scale(slot->batch->examples_before *
                                                    static_cast<std::uint64_t>(std::max(1, ctx.job.readers)));
  const double loss = train::train_batch(*ctx.model, b, slot->rows, *st.scratch, lr_scale);
  if (!std::isfinite(loss))
    ctx.progress->set_error("training diverged: the loss is not finite at batch " +
                            std::to_string(ctx.progress->batches() + 1) + "; lower the learning rate");
  ctx.progress->add_compute(std::chrono::steady_clock::now() - start);
  std::uint64_t clicks = 0;
  for (float l : b.labels) clicks += metrics::is_click(l) ? 1 : 0;
  // train_batch left the predictions it trained from (before its update) in the scratch: they
  // are the batch's progressive evaluation, at no second forward pass.
  ctx.progress->add_batch(b.size(), loss * static_cast<double>(b.size()), clicks, st.scratch->ws.probs.data(),
                          b.labels.data());
  count_batch_for_sync(self);
  slot->pending = 0;
  for (std::uint32_t s = 0; s < slot->split.shards(); ++s)
    if (!slot->split.of(s).ids.empty()) ++slot->pending;
  ++st.pushing;
  if (slot->pending == 0) {
    ++slot->pending;
    push_done(self, slot);
    return;
  }
  for (std::uint32_t s = 0; s < slot->split.shards(); ++s) {
    const auto& part = slot->split.of(s);
    if (part.ids.empty()) continue;
    auto req = std::make_shared<wire::push_request>();
    req->tables = part.tables;
    req->ids = part.ids;
    req->grads = slot->split.gather_grads(s, slot->rows);
    req->lr_scale = lr_scale;
    req->precision = ctx.options.row_precision;
    req->trainer = ctx.options.incarnation;
    req->membership = slot->membership;
    req->number = ++st.ctx->pushes;  // a resend keeps it: the shard applies the push once
    send_push(self, slot, s, std::move(req));
  }
}

void maybe_finish(worker_self self) {
  auto& st = self->state;
  if (st.reported || !st.input_done || !st.incoming.empty() || !st.fetching.empty() || st.pushing > 0 ||
      st.requested > 0)
    return;
  st.reported = true;
  caf::anon_send(st.trainer, finished_atom::value);  // held untyped: spawn_worker gets a local_actor*
}

void request_batches(worker_self self) {
  auto& st = self->state;
  const int depth = 1 + st.ctx->job.lookahead;
  while (!st.input_done && static_cast<int>(st.fetching.size() + st.incoming.size()) + st.requested < depth) {
    ++st.requested;
    self->request(st.feeder, caf::infinite, next_atom::value).then([self](const fed_batch& b) {
      auto& s = self->state;
      --s.requested;
      if (!b.batch) s.input_done = true;
      else s.incoming.push_back(b);
      advance(self);
    });
  }
}

void advance(worker_self self) {
  auto& st = self->state;
  const int depth = 1 + st.ctx->job.lookahead;
  const int max_pushing = 2;  // batches whose gradients are still on the way to the shards
  for (;;) {
    while (!st.incoming.empty() && static_cast<int>(st.fetching.size()) < depth) {
      auto b = st.incoming.front();
      st.incoming.pop_front();
      start_fetch(self, std::move(b));
    }
    if (st.fetching.empty() || !st.fetching.front()->ready || st.pushing >= max_pushing) break;
    if (held_for_sync(st)) break;
    auto slot = st.fetching.front();
    st.fetching.pop_front();
    if (stale(st, *slot)) {  // handed back to its reader meanwhile: not trained here
      recycle(st, slot);
      continue;
    }
    request_batches(self);  // the next batches' lookups run while this one computes
    compute(self, slot);
  }
  request_batches(self);
  if (!st.idle_since && !st.input_done) st.idle_since = std::chrono::steady_clock::now();
  maybe_finish(self);
}

// Simulated compute: a step is a wait of --simulate-step-ms (a delayed message, so the worker
// still answers sync pauses meanwhile); no data, no lookups, no model update.
void simulated_step(worker_self self) {
  auto& st = self->state;
  auto& ctx = *st.ctx;
  if (held_for_sync(st)) return;
  if (ctx.simulated_left.fetch_sub(1) <= 0) {
    st.input_done = true;
    maybe_finish(self);
    return;
  }
  const auto step =
      std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double, std::milli>(ctx.job.simulate_step_ms));
  self->delayed_send(self, step, sim_atom::value);
}

void run(worker_self self) {
  if (self->state.ctx->job.simulate_step_ms > 0) simulated_step(self);
  else advance(self);
}

worker_actor::behavior_type worker(worker_self self, context_ptr ctx, feeder_actor feeder, syncer_actor syncer,
                                   caf::actor trainer) {
  auto& st = self->state;
  st.scratch = std::make_unique<train::worker_scratch>(ctx->model->config(), ctx->job.batch_size);
  st.ctx = std::move(ctx);
  st.feeder = std::move(feeder);
  st.syncer = std::move(syncer);
  st.trainer = std::move(trainer);
  return {
      [self](start_atom) {
        // Compute-bound workers yield to the latency-bound threads of the job (shard lookups,
        // readers, transports) when they share cores: a worker loses a little CPU, a lookup
        // answered late would cost every worker that waits for it. Only for detached workers,
        // whose thread is their own.
        if (self->state.ctx->options.detached_workers)
          setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 5);
        run(self);
      },
      [self](shards_atom, const links& l) {
        // A shard at a new endpoint (moved) never answers what its old process was asked.
        const links before = std::exchange(self->state.shard_links, l);
        for (std::uint32_t s = 0; s < l.size() && s < before.size(); ++s)
          if (before[s] != 0 && l[s] != before[s]) resend_calls(self, s);
      },
      // Shard s restarted at the same endpoint: its old process never answers either.
      [self](restarted_atom, std::uint32_t shard) { resend_calls(self, shard); },
      // A worker reading this message is by definition between two batches.
      [self](park_atom) -> parked_atom {
        self->state.parked = true;
        return parked_atom::value;
      },
      [self](resume_atom) {
        self->state.parked = false;
        run(self);
      },
      [self](sim_atom) {
        auto& state = self->state;
        if (held_for_sync(state)) {
          state.ctx->simulated_left.fetch_add(1);  // this step did not happen; it is redone after the sync
          return;
        }
        state.ctx->progress->add_batch(static_cast<std::uint64_t>(state.ctx->job.batch_size), 0.0, 0);
        count_batch_for_sync(self);
        simulated_step(self);
      },
      [self](lookup_atom, const slot_ptr& slot, std::uint32_t shard, std::uint64_t generation) {
        if (slot->generation == generation) send_lookup(self, slot, shard);
      },
      [self](push_atom, const slot_ptr& slot, std::uint32_t shard, push_ptr req) {
        // Sent again (after a refusal or no answer): not for a batch handed back meanwhile.
        if (stale(self->state, *slot)) {
          push_done(self, slot);
          return;
        }
        send_push(self, slot, shard, std::move(req));
      },
  };
}

}  // namespace

worker_actor spawn_worker(caf::local_actor* parent, context_ptr ctx, feeder_actor feeder, syncer_actor syncer) {
  auto trainer = caf::actor_cast<caf::actor>(parent);
  if (ctx->options.detached_workers)
    return parent->spawn<caf::detached + caf::linked>(worker, std::move(ctx), std::move(feeder), std::move(syncer),
                                                       std::move(trainer));
  return parent->spawn<caf::linked>(worker, std::move(ctx), std::move(feeder), std::move(syncer), std::move(trainer));
}

}  // namespace ss::actors::trainer_detail
