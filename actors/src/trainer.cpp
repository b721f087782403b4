#include "ss/actors/trainer.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmath>
#include <optional>

#include "ss/actors/gateway.hpp"
#include "ss/actors/messages.hpp"
#include "ss/core/embedding/sharding.hpp"
#include "ss/core/json.hpp"
#include "ss/core/metrics/metrics.hpp"
#include "ss/core/sync/sync_algorithms.hpp"
#include "ss/core/train/train_step.hpp"
#include "ss/actors/sync_server.hpp"

namespace ss::actors::trainer_detail {
// One batch on its way through a worker: rows looked up, computed, gradients pushed.
struct job_slot {
  batch_ptr batch;
  embedding::batch_rows rows;
  embedding::shard_split split;
  int pending = 0;  // lookups or pushes outstanding
  bool ready = false;
  std::uint64_t generation = 0;  // guards replies to a recycled slot
};
using slot_ptr = std::shared_ptr<job_slot>;
}  // namespace ss::actors::trainer_detail

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(ss::actors::trainer_detail::slot_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<ss::wire::push_request>)

namespace ss::actors {

// ---- progress ------------------------------------------------------------------------------

namespace {
void record(std::uint64_t* hist, std::chrono::nanoseconds d) {
  const auto us = static_cast<std::uint64_t>(std::max<std::int64_t>(1, d.count() / 1000));
  int b = 63 - __builtin_clzll(us);
  hist[std::min(b, 31)]++;
}
// The upper edge of the bucket holding quantile q, in milliseconds.
double quantile_ms(const std::uint64_t* hist, double q) {
  std::uint64_t total = 0;
  for (int b = 0; b < 32; ++b) total += hist[b];
  if (total == 0) return 0;
  std::uint64_t seen = 0;
  for (int b = 0; b < 32; ++b) {
    seen += hist[b];
    if (static_cast<double>(seen) >= q * static_cast<double>(total)) return static_cast<double>(2ULL << b) / 1000.0;
  }
  return 0;
}
}  // namespace


void trainer_progress::add_batch(std::uint64_t examples, double loss_sum, std::uint64_t clicks) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (batches_ == 0) first_batch_ = now;
  last_batch_ = now;
  examples_ += examples;
  loss_sum_ += loss_sum;
  clicks_ += clicks;
  ++batches_;
  recent_.push_back({examples, loss_sum, clicks});
  if (recent_.size() > 4096) recent_.pop_front();
}

wire::member_progress trainer_progress::snapshot(std::uint64_t window_examples) const {
  std::lock_guard<std::mutex> lock(mu_);
  wire::member_progress p;
  p.examples = examples_;
  p.batches = batches_;
  p.loss_sum = loss_sum_;
  p.clicks = clicks_;
  for (auto it = recent_.rbegin(); it != recent_.rend() && p.window_examples < window_examples; ++it) {
    p.window_examples += it->examples;
    p.window_loss_sum += it->loss_sum;
    p.window_clicks += it->clicks;
  }
  p.finished = finished_.load();
  p.error = error_;
  p.sync_rounds = sync_rounds_;
  p.sync_gap = sync_rounds_ > 0 ? static_cast<double>(sync_gap_sum_) / static_cast<double>(sync_rounds_) : 0.0;
  p.sync_latency_p50_ms = quantile_ms(sync_hist_, 0.5);
  p.sync_latency_p99_ms = quantile_ms(sync_hist_, 0.99);
  p.sync_distance = sync_distance_;
  p.sync_wait_seconds = static_cast<double>(sync_wait_ns_) * 1e-9;
  p.active_seconds = batches_ > 0 ? std::chrono::duration<double>(last_batch_ - first_batch_).count() : 0.0;
  return p;
}


void trainer_progress::add_compute(std::chrono::nanoseconds d) {
  std::lock_guard<std::mutex> lock(mu_);
  compute_ns_ += d.count();
}
void trainer_progress::add_wait(std::chrono::nanoseconds d) {
  std::lock_guard<std::mutex> lock(mu_);
  wait_ns_ += d.count();
}
void trainer_progress::add_lookup_latency(std::chrono::nanoseconds d) {
  std::lock_guard<std::mutex> lock(mu_);
  record(lookup_hist_, d);
}
void trainer_progress::add_push_latency(std::chrono::nanoseconds d) {
  std::lock_guard<std::mutex> lock(mu_);
  record(push_hist_, d);
}

void trainer_progress::add_sync_round(std::chrono::nanoseconds latency, std::uint64_t gap, double distance) {
  std::lock_guard<std::mutex> lock(mu_);
  record(sync_hist_, latency);
  ++sync_rounds_;
  sync_gap_sum_ += gap;
  sync_distance_ = distance;
}

void trainer_progress::add_sync_wait(std::chrono::nanoseconds worker_time) {
  std::lock_guard<std::mutex> lock(mu_);
  sync_wait_ns_ += worker_time.count();
}

std::uint64_t trainer_progress::batches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return batches_;
}

trainer_progress::timing trainer_progress::timings() const {
  std::lock_guard<std::mutex> lock(mu_);
  timing t;
  t.compute_seconds = static_cast<double>(compute_ns_) * 1e-9;
  t.wait_seconds = static_cast<double>(wait_ns_) * 1e-9;
  for (int b = 0; b < buckets; ++b) {
    t.lookups += lookup_hist_[b];
    t.pushes += push_hist_[b];
  }
  t.lookup_p50_ms = quantile_ms(lookup_hist_, 0.5);
  t.lookup_p99_ms = quantile_ms(lookup_hist_, 0.99);
  t.push_p50_ms = quantile_ms(push_hist_, 0.5);
  t.push_p99_ms = quantile_ms(push_hist_, 0.99);
  return t;
}

void trainer_progress::set_error(std::string e) {
  std::lock_guard<std::mutex> lock(mu_);
  if (error_.empty()) error_ = std::move(e);
}

std::string trainer_progress::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

namespace {

// What the trainer's actors share: set up once, then read concurrently.
struct trainer_context {
  caf::actor gateway;
  job::job_options job;
  std::shared_ptr<train::dense_model> model;
  std::vector<std::uint64_t> buckets;
  trainer_options options;
  std::shared_ptr<trainer_progress> progress;
  caf::timespan timeout;
  // Link to each shard (0 while its endpoint is unknown); written by the trainer actor.
  std::vector<std::atomic<std::uint32_t>> shard_links;
  // Synchronization of the dense replica.
  sync::sync_spec sync;
  std::vector<std::atomic<std::uint32_t>> sync_links;  // per sync server (slice)
  caf::actor syncer;
  std::atomic<bool> paused{false};               // foreground: workers stop at the next batch
  std::atomic<std::int64_t> simulated_left{0};   // simulated mode: steps the trainer has left
  std::atomic<std::uint64_t> next_sync_at{0};    // foreground: batch count of the next sync
  trainer_context(std::size_t shards, std::size_t slices) : shard_links(shards), sync_links(slices) {
    for (auto& l : shard_links) l.store(0);
    for (auto& l : sync_links) l.store(0);
  }
};
using context_ptr = std::shared_ptr<trainer_context>;

constexpr auto retry_delay = std::chrono::milliseconds(200);

// ---- feeder --------------------------------------------------------------------------------

struct reader_slot {
  std::string endpoint;
  std::uint64_t incarnation = 0;  // of the reader process the view names
  // Bumped when that process is gone: answers to pulls sent before are not waited for.
  std::uint64_t generation = 0;
  std::uint32_t link = 0;
  int outstanding = 0;
  bool ended = false;  // answered end_of_data (asked again while the job is running: it may restart)
  bool retry_scheduled = false;
  bool poll_due = false;  // an ended reader's next poll may go out
};

struct feeder_state {
  static inline const char* name = "feeder";
  context_ptr ctx;
  std::vector<reader_slot> readers;
  std::deque<batch_ptr> ready;
  std::deque<caf::response_promise> waiting;
  int credits = 2;  // total pulls outstanding plus batches ready, per reader
  std::uint64_t acks_pending = 0;
  // The coordinator has seen every reader finish. Until then an ended reader is asked again now
  // and then: a reader that restarts replays from its last committed position.
  bool draining = false;
};
using feeder_actor = caf::stateful_actor<feeder_state>;

bool all_readers_ended(const feeder_state& st) {
  if (!st.draining || static_cast<int>(st.readers.size()) < st.ctx->job.readers) return false;
  for (const auto& r : st.readers)
    if (!r.ended || r.outstanding > 0) return false;
  return true;
}

void hand_out(feeder_actor* self) {
  auto& st = self->state;
  while (!st.waiting.empty() && !st.ready.empty()) {
    st.waiting.front().deliver(st.ready.front());
    st.waiting.pop_front();
    st.ready.pop_front();
  }
  if (st.ready.empty() && all_readers_ended(st)) {
    for (auto& p : st.waiting) p.deliver(batch_ptr{});  // no more input
    st.waiting.clear();
  }
}

void pull(feeder_actor* self, std::uint32_t r);

void schedule_retry(feeder_actor* self, std::uint32_t r) {
  auto& slot = self->state.readers[r];
  if (slot.retry_scheduled) return;
  slot.retry_scheduled = true;
  self->delayed_send(self, retry_delay, tick_atom::value, r);
}

void pull(feeder_actor* self, std::uint32_t r) {
  auto& st = self->state;
  auto& slot = st.readers[r];
  if (slot.link == 0) return;
  int in_use = slot.outstanding;
  for (const auto& b : st.ready)
    if (b->reader_index == r) ++in_use;
  int limit = st.credits;
  if (slot.ended) {
    // An ended reader is asked again, one pull at a time at the retry pace, until the job has
    // seen every reader finish: if it restarted, it replays from its committed position.
    if (st.draining || slot.outstanding > 0) return;
    if (!slot.poll_due) {
      schedule_retry(self, r);
      return;
    }
    slot.poll_due = false;
    limit = in_use + 1;
  }
  while (in_use < limit) {
    ++slot.outstanding;
    ++in_use;
    self->request(st.ctx->gateway, caf::infinite, call_atom::value, slot.link,
                  make_body(wire::pull_request{1, st.ctx->options.incarnation}), st.ctx->timeout)
        .then(
            [self, r, generation = slot.generation](const envelope_ptr& env) {
              auto& s = self->state;
              auto& sl = s.readers[r];
              if (sl.generation != generation) return;  // a pull to a reader process that is gone
              --sl.outstanding;
              if (const auto* b = std::get_if<wire::batch_message>(&env->message)) {
                sl.ended = false;
                s.ready.push_back(std::make_shared<const wire::batch_message>(*b));
                hand_out(self);
                pull(self, r);
              } else if (std::holds_alternative<wire::end_of_data>(env->message)) {
                sl.ended = true;
                hand_out(self);
                pull(self, r);
              } else if (const auto* err = std::get_if<wire::error_reply>(&env->message)) {
                // unavailable: every batch is out and some may come back; ask again shortly.
                if (err->code != errc::unavailable)
                  spdlog::warn("{}: reader {} refused a pull: {}", s.ctx->options.name, r, err->message);
                schedule_retry(self, r);
              }
            },
            [self, r, generation = slot.generation](const caf::error&) {
              if (self->state.readers[r].generation != generation) return;
              --self->state.readers[r].outstanding;
              // The last pull outstanding (to a reader that died) may be what kept the input open.
              hand_out(self);
              schedule_retry(self, r);
            });
  }
}

void send_ack(feeder_actor* self, std::uint32_t r, std::uint64_t sequence, std::uint64_t incarnation, int attempt) {
  auto& st = self->state;
  const auto link = st.readers[r].link;
  ++st.acks_pending;
  self->request(st.ctx->gateway, caf::infinite, call_atom::value, link,
                make_body(wire::batch_ack{r, sequence, incarnation}), st.ctx->timeout)
      .then(
          [self](const envelope_ptr&) { --self->state.acks_pending; },
          [self, r, sequence, incarnation, attempt](const caf::error&) {
            // An ack lost on the way would leave the reader waiting until it hands the batch to
            // another trainer: resend it (a restarted reader refuses it; it replays the batch).
            --self->state.acks_pending;
            if (attempt < 1000) {
              self->delayed_send(self, retry_delay, done_atom::value, r, sequence, incarnation, attempt + 1);
            }
          });
}

caf::behavior feeder(feeder_actor* self, context_ptr ctx) {
  self->state.ctx = ctx;
  self->state.credits = std::max(1, ctx->job.pull_credits * std::max(1, ctx->options.workers));
  return {
      [self](view_atom, const wire::cluster_view& view) {
        auto& st = self->state;
        if (st.readers.size() < view.readers.size()) st.readers.resize(view.readers.size());
        for (std::uint32_t r = 0; r < view.readers.size(); ++r) {
          const auto& endpoint = view.readers[r];
          const std::uint64_t incarnation = r < view.reader_incarnations.size() ? view.reader_incarnations[r] : 0;
          auto& slot = st.readers[r];
          if (endpoint.empty() || (endpoint == slot.endpoint && incarnation == slot.incarnation)) continue;
          if (!slot.endpoint.empty()) {
            // A new reader process: the pulls the one before holds are never answered. Not
            // waiting out their timeout, the trainer asks the new one at once.
            ++slot.generation;
            slot.outstanding = 0;
          }
          slot.endpoint = endpoint;
          slot.incarnation = incarnation;
          slot.ended = false;  // a new reader process
          self->request(st.ctx->gateway, caf::infinite, link_atom::value, endpoint)
              .then([self, r](std::uint32_t link) {
                self->state.readers[r].link = link;
                pull(self, r);
              });
        }
      },
      [self](tick_atom, std::uint32_t r) {
        self->state.readers[r].retry_scheduled = false;
        self->state.readers[r].poll_due = true;
        pull(self, r);
      },
      [self](next_atom) -> caf::result<batch_ptr> {
        auto& st = self->state;
        auto p = self->make_response_promise<batch_ptr>();
        st.waiting.push_back(p);
        hand_out(self);
        for (std::uint32_t r = 0; r < st.readers.size(); ++r) pull(self, r);
        return p;
      },
      [self](done_atom, std::uint32_t r, std::uint64_t sequence, std::uint64_t incarnation, int attempt) {
        send_ack(self, r, sequence, incarnation, attempt);
      },
      [self](state_atom, wire::job_state state) {
        auto& st = self->state;
        if (state != wire::job_state::draining && state != wire::job_state::done) return;
        st.draining = true;
        hand_out(self);
      },
  };
}

// ---- worker --------------------------------------------------------------------------------

using trainer_detail::job_slot;
using trainer_detail::slot_ptr;
using push_ptr = std::shared_ptr<wire::push_request>;

struct worker_state {
  static inline const char* name = "worker";
  context_ptr ctx;
  caf::actor feeder;
  caf::actor trainer;
  std::unique_ptr<train::worker_scratch> scratch;
  std::deque<batch_ptr> incoming;
  std::deque<slot_ptr> fetching;
  std::vector<slot_ptr> spare;
  int requested = 0;
  int pushing = 0;  // batches whose pushes are outstanding
  bool input_done = false;
  bool reported = false;
  std::uint64_t generation = 0;
  // Set when the worker ran out of work to compute; the gap until the next compute is waiting.
  std::optional<std::chrono::steady_clock::time_point> idle_since;
  bool parked = false;                 // stopped for a foreground sync
};
using worker_actor = caf::stateful_actor<worker_state>;

void advance(worker_actor* self);

void send_lookup(worker_actor* self, const slot_ptr& slot, std::uint32_t shard) {
  auto& st = self->state;
  const auto link = st.ctx->shard_links[shard].load();
  const auto generation = slot->generation;
  if (link == 0) {  // the shard's endpoint is not known yet
    self->delayed_send(self, retry_delay, tick_atom::value, slot, shard, generation, true);
    return;
  }
  const auto& part = slot->split.of(shard);
  wire::lookup_request req{true, part.tables, part.ids};
  const auto sent = std::chrono::steady_clock::now();
  self->request(st.ctx->gateway, caf::infinite, call_atom::value, link, make_body(std::move(req)), st.ctx->timeout)
      .then(
          [self, slot, shard, generation, sent](const envelope_ptr& env) {
            self->state.ctx->progress->add_lookup_latency(std::chrono::steady_clock::now() - sent);
            if (slot->generation != generation) return;
            if (const auto* reply = std::get_if<wire::lookup_reply>(&env->message)) {
              if (!slot->split.scatter_values(shard, reply->values, slot->rows)) {
                self->state.ctx->progress->set_error("shard " + std::to_string(shard) +
                                                     " answered a lookup with the wrong number of values");
                return;
              }
              if (--slot->pending == 0) {
                slot->rows.use_values();
                slot->ready = true;
                advance(self);
              }
            } else if (const auto* err = std::get_if<wire::error_reply>(&env->message)) {
              if (err->code == errc::unavailable) {  // the shard is restoring its rows: ask again
                self->delayed_send(self, retry_delay, tick_atom::value, slot, shard, generation, true);
                return;
              }
              spdlog::error("{}: shard {} refused a lookup: {}", self->state.ctx->options.name, shard, err->message);
              self->state.ctx->progress->set_error("shard " + std::to_string(shard) + ": " + err->message);
            }
          },
          [self, slot, shard, generation](const caf::error&) {
            // The shard is slow or restarting: ask again (lookups are idempotent).
            self->delayed_send(self, retry_delay, tick_atom::value, slot, shard, generation, true);
          });
}

void send_push(worker_actor* self, const slot_ptr& slot, std::uint32_t shard, push_ptr req);

void push_done(worker_actor* self, const slot_ptr& slot) {
  auto& st = self->state;
  if (--slot->pending > 0) return;
  // Every shard applied this batch's gradients: the batch is trained, tell its reader.
  self->send(st.feeder, done_atom::value, slot->batch->reader_index, slot->batch->sequence,
             slot->batch->incarnation, 0);
  --st.pushing;
  slot->batch.reset();
  ++slot->generation;
  st.spare.push_back(slot);
  advance(self);
}

void send_push(worker_actor* self, const slot_ptr& slot, std::uint32_t shard, push_ptr req) {
  auto& st = self->state;
  const auto link = st.ctx->shard_links[shard].load();
  const auto sent = std::chrono::steady_clock::now();
  self->request(st.ctx->gateway, caf::infinite, call_atom::value, link, std::make_shared<const wire::body>(*req),
                st.ctx->timeout)
      .then(
          [self, slot, shard, req, sent](const envelope_ptr& env) {
            self->state.ctx->progress->add_push_latency(std::chrono::steady_clock::now() - sent);
            if (const auto* err = std::get_if<wire::error_reply>(&env->message)) {
              if (err->code == errc::unavailable) {  // the shard is restoring: not applied, send again
                self->delayed_send(self, retry_delay, stop_atom::value, slot, shard, req);
                return;
              }
              spdlog::error("{}: a shard refused a push: {}", self->state.ctx->options.name, err->message);
              self->state.ctx->progress->set_error(err->message);
            }
            push_done(self, slot);
          },
          [self, slot, shard, req](const caf::error&) {
            // No answer: the push may or may not have been applied. Resending risks applying it
            // twice, dropping it risks losing it; a lost answer is much rarer than a lost
            // request on a live connection, so resend (see README: delivery guarantees).
            self->delayed_send(self, retry_delay, stop_atom::value, slot, shard, req);
          });
}

void note_batch_done(worker_actor* self);

void start_fetch(worker_actor* self, batch_ptr batch) {
  auto& st = self->state;
  slot_ptr slot;
  if (!st.spare.empty()) {
    slot = st.spare.back();
    st.spare.pop_back();
  } else {
    slot = std::make_shared<job_slot>();
  }
  if (auto check = train::check_batch(st.ctx->model->config(), batch->batch); !check.is_ok()) {
    // A reader with another schema than the job's: nothing this trainer can do with the batch.
    spdlog::error("{}: batch {} of reader {} does not fit the model: {}", st.ctx->options.name, batch->sequence,
                  batch->reader_index, check.message());
    st.ctx->progress->set_error("reader " + std::to_string(batch->reader_index) + ": " + check.message());
    return;
  }
  slot->batch = std::move(batch);
  slot->ready = false;
  slot->generation = ++st.generation;
  slot->rows.build(slot->batch->batch, st.ctx->buckets, st.ctx->model->config().embedding_dim);
  slot->split.build(slot->rows, static_cast<std::uint32_t>(st.ctx->shard_links.size()));
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

void compute(worker_actor* self, const slot_ptr& slot) {
  auto& st = self->state;
  const auto& b = slot->batch->batch;
  const auto start = std::chrono::steady_clock::now();
  // (A batch is counted towards the foreground sync schedule once it is trained, below.)
  if (st.idle_since) {
    st.ctx->progress->add_wait(start - *st.idle_since);
    st.idle_since.reset();
  }
  const auto& ctx = *st.ctx;
  const float lr_scale = ctx.options.schedule.scale(slot->batch->examples_before *
                                                    static_cast<std::uint64_t>(std::max(1, ctx.job.readers)));
  const double loss = train::train_batch(*ctx.model, b, slot->rows, *st.scratch, lr_scale);
  if (!std::isfinite(loss))
    st.ctx->progress->set_error("training diverged: the loss is not finite at batch " +
                                std::to_string(st.ctx->progress->batches() + 1) + "; lower the learning rate");
  st.ctx->progress->add_compute(std::chrono::steady_clock::now() - start);
  std::uint64_t clicks = 0;
  for (float l : b.labels) clicks += metrics::is_click(l) ? 1 : 0;
  st.ctx->progress->add_batch(b.size(), loss * static_cast<double>(b.size()), clicks);
  note_batch_done(self);
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
    send_push(self, slot, s, std::move(req));
  }
}

// Foreground sync: once the trainer's batch count reaches the next multiple of k, the worker that
// got there asks the syncer for a sync (exactly one worker wins the compare-exchange).
void note_batch_done(worker_actor* self) {
  auto& ctx = *self->state.ctx;
  if (ctx.sync.when != sync::mode::foreground) return;
  const std::uint64_t done = ctx.progress->batches();
  std::uint64_t due = ctx.next_sync_at.load();
  while (done >= due) {
    if (ctx.next_sync_at.compare_exchange_weak(due, due + static_cast<std::uint64_t>(ctx.job.sync_every))) {
      ctx.paused.store(true);
      self->send(ctx.syncer, sync_atom::value);
      return;
    }
  }
}

void maybe_finish(worker_actor* self) {
  auto& st = self->state;
  if (st.reported || !st.input_done || !st.incoming.empty() || !st.fetching.empty() || st.pushing > 0 ||
      st.requested > 0)
    return;
  st.reported = true;
  self->send(st.trainer, done_atom::value);
}

void request_batches(worker_actor* self) {
  auto& st = self->state;
  const int depth = 1 + st.ctx->job.lookahead;
  while (!st.input_done && static_cast<int>(st.fetching.size() + st.incoming.size()) + st.requested < depth) {
    ++st.requested;
    self->request(st.feeder, caf::infinite, next_atom::value).then([self](const batch_ptr& b) {
      auto& s = self->state;
      --s.requested;
      if (!b) {
        s.input_done = true;
      } else {
        s.incoming.push_back(b);
      }
      advance(self);
    });
  }
}

void advance(worker_actor* self) {
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
    if (st.parked || st.ctx->paused.load()) break;  // a foreground sync holds the workers
    auto slot = st.fetching.front();
    st.fetching.pop_front();
    // Ask for the next batches (their lookups run while this one computes).
    request_batches(self);
    compute(self, slot);
  }
  request_batches(self);
  if (!st.idle_since && !st.input_done) st.idle_since = std::chrono::steady_clock::now();
  maybe_finish(self);
}

// SIMULATED compute: a step is a wait of --simulate-step-ms (a delayed message, so the worker
// still answers sync pauses meanwhile); no data, no lookups, no model update.
void simulated_step(worker_actor* self) {
  auto& st = self->state;
  auto& ctx = *st.ctx;
  if (st.parked || ctx.paused.load()) return;
  if (ctx.simulated_left.fetch_sub(1) <= 0) {
    st.input_done = true;
    maybe_finish(self);
    return;
  }
  const auto step = std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double, std::milli>(ctx.job.simulate_step_ms));
  self->delayed_send(self, step, sim_atom::value);
}

caf::behavior worker(worker_actor* self, context_ptr ctx, caf::actor feeder, caf::actor trainer) {
  self->state.ctx = ctx;
  self->state.feeder = std::move(feeder);
  self->state.trainer = std::move(trainer);
  self->state.scratch = std::make_unique<train::worker_scratch>(ctx->model->config(), ctx->job.batch_size);
  return {
      [self](start_atom) {
        // Compute-bound workers yield to the latency-bound threads of the job (shard lookups,
        // readers, transports) when they share cores: a worker loses a little CPU, a lookup
        // answered late would cost every worker that waits for it. Only for detached workers,
        // whose thread is their own.
        if (self->state.ctx->options.detached_workers)
          setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 5);
        if (self->state.ctx->job.simulate_step_ms > 0) simulated_step(self);
        else advance(self);
      },
      [self](sim_atom) {
        auto& st = self->state;
        if (st.parked || st.ctx->paused.load()) {
          st.ctx->simulated_left.fetch_add(1);  // this step did not happen; it is redone after the sync
          return;
        }
        st.ctx->progress->add_batch(static_cast<std::uint64_t>(st.ctx->job.batch_size), 0.0, 0);
        note_batch_done(self);
        simulated_step(self);
      },
      // The syncer stops the workers for a foreground sync; a worker answering this message is
      // by definition between two batches.
      [self](park_atom) -> caf::result<parked_atom> {
        self->state.parked = true;
        return parked_atom::value;
      },
      [self](sync_atom) {  // resume after the sync
        auto& st = self->state;
        st.parked = false;
        if (st.ctx->job.simulate_step_ms > 0) simulated_step(self);
        else advance(self);
      },
      [self](tick_atom, const slot_ptr& slot, std::uint32_t shard, std::uint64_t generation, bool) {
        if (slot->generation == generation) send_lookup(self, slot, shard);
      },
      [self](stop_atom, const slot_ptr& slot, std::uint32_t shard, push_ptr req) {
        send_push(self, slot, shard, std::move(req));
      },
  };
}

// ---- syncer (the shadow) -------------------------------------------------------------------

// One round: snapshot the replica, send each slice to its sync server, apply the answers.
// Shadow mode loops rounds (at least --sync-interval apart) while the workers train; foreground
// mode runs one when a worker reaches the next multiple of --sync-every, with every worker
// parked meanwhile. Both take the same path through round().
struct syncer_state {
  static inline const char* name = "syncer";
  context_ptr ctx;
  std::vector<caf::actor> workers;
  std::vector<float> snapshot;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> slices;  // offset, length per server
  bool in_round = false;
  bool running = false;    // shadow loop on
  bool stopping = false;
  std::uint64_t batches_at_last_sync = 0;
  double distance = 0;
  std::chrono::steady_clock::time_point round_start, paused_at;
  std::uint64_t round_id = 0;
  // Per slice: the call whose answer counts (answers to earlier ones, e.g. to a sync server that
  // restarted since, are ignored) and whether the round still waits for it (done when none does).
  std::vector<std::uint64_t> live_call;
  std::vector<bool> waiting;
  std::uint64_t calls = 0;
};
using syncer_actor = caf::stateful_actor<syncer_state>;

void round_done(syncer_actor* self);

void send_slice(syncer_actor* self, std::uint32_t k, std::uint64_t round, int attempt) {
  auto& st = self->state;
  const std::uint64_t call = ++st.calls;
  st.live_call[k] = call;
  const auto link = st.ctx->sync_links[k].load();
  if (link == 0) {  // the sync server's endpoint is not known yet
    self->delayed_send(self, retry_delay, tick_atom::value, k, call, attempt);
    return;
  }
  const auto [offset, length] = st.slices[k];
  wire::sync_request req;
  req.trainer = st.ctx->options.incarnation;
  req.slice = k;
  req.offset = offset;
  req.batches = st.ctx->progress->batches();
  req.params.assign(st.snapshot.begin() + static_cast<std::ptrdiff_t>(offset),
                    st.snapshot.begin() + static_cast<std::ptrdiff_t>(offset + length));
  // A round may wait for every trainer (MA, BMUF): allow it the round timeout on top.
  const bool waits_for_all = st.ctx->sync.algo != sync::algorithm::easgd;
  const auto timeout = st.ctx->timeout + (waits_for_all ? std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(
                                                              st.ctx->job.sync_round_timeout))
                                                        : caf::timespan{0});
  self->request(st.ctx->gateway, caf::infinite, call_atom::value, link, make_body(std::move(req)), timeout)
      .then(
          [self, k, round, call, attempt](const envelope_ptr& env) {
            auto& s = self->state;
            if (round != s.round_id || call != s.live_call[k]) return;
            const auto* reply = std::get_if<wire::sync_reply>(&env->message);
            const auto [off, len] = s.slices[k];
            const auto* err = std::get_if<wire::error_reply>(&env->message);
            if (err != nullptr && (err->code == errc::invalid_argument || err->code == errc::out_of_range)) {
              // A misconfigured slice or a diverged model: nothing a retry can mend.
              spdlog::error("{}: sync server {} refused the sync: {}", s.ctx->options.name, k, err->message);
              s.ctx->progress->set_error("sync server " + std::to_string(k) + ": " + err->message);
              s.in_round = false;
              return;
            }
            if (reply == nullptr || reply->params.size() != len) {
              const std::string why = reply == nullptr ? std::string(wire::message_name(env->message)) +
                                                             (std::holds_alternative<wire::error_reply>(env->message)
                                                                  ? ": " + std::get<wire::error_reply>(env->message).message
                                                                  : std::string())
                                                       : "a reply of the wrong size";
              if (attempt % 20 == 0)  // a restarting sync server answers errors for a while
                spdlog::warn("{}: sync server {} answered {}; retrying", s.ctx->options.name, k, why);
              self->delayed_send(self, retry_delay, tick_atom::value, k, call, attempt + 1);
              return;
            }
            s.waiting[k] = false;
            float* live = s.ctx->model->params() + off;
            if (reply->is_delta) {
              sync::subtract(live, reply->params.data(), len);  // EASGD: w_i -= d
              s.distance = std::max(s.distance, reply->distance);
            } else {
              const float* snap = s.snapshot.data() + off;
              s.distance = std::max(s.distance, sync::relative_distance(snap, reply->params.data(), len));
              sync::apply_target(live, snap, reply->params.data(), len);  // w_i += target - snapshot
            }
            if (std::find(s.waiting.begin(), s.waiting.end(), true) == s.waiting.end()) round_done(self);
          },
          [self, k, round, call, attempt](const caf::error&) {
            if (round != self->state.round_id || call != self->state.live_call[k]) return;
            self->delayed_send(self, retry_delay, tick_atom::value, k, call, attempt + 1);
          });
}

void start_round(syncer_actor* self) {
  auto& st = self->state;
  if (st.in_round) return;
  st.in_round = true;
  ++st.round_id;
  st.round_start = std::chrono::steady_clock::now();
  st.distance = 0;
  const float* params = st.ctx->model->params();
  st.snapshot.assign(params, params + st.ctx->model->size());
  st.waiting.assign(st.slices.size(), true);
  for (std::uint32_t k = 0; k < st.slices.size(); ++k) send_slice(self, k, st.round_id, 0);
}

void round_done(syncer_actor* self) {
  auto& st = self->state;
  st.in_round = false;
  const auto now = std::chrono::steady_clock::now();
  const std::uint64_t batches = st.ctx->progress->batches();
  st.ctx->progress->add_sync_round(now - st.round_start, batches - st.batches_at_last_sync, st.distance);
  st.batches_at_last_sync = batches;
  if (st.ctx->sync.when == sync::mode::foreground) {
    // Resume the workers; their stop counts as foreground sync cost.
    st.ctx->progress->add_sync_wait((now - st.paused_at) * static_cast<int>(st.workers.size()));
    st.ctx->paused.store(false);
    for (auto& w : st.workers) self->send(w, sync_atom::value);
    return;
  }
  if (!st.running || st.stopping) return;
  const auto interval = std::chrono::duration<double>(st.ctx->job.sync_interval);
  const auto elapsed = now - st.round_start;
  if (elapsed >= interval) {
    start_round(self);
  } else {
    self->delayed_send(self, std::chrono::duration_cast<caf::timespan>(interval - elapsed), start_atom::value);
  }
}

caf::behavior syncer(syncer_actor* self, context_ptr ctx) {
  auto& st = self->state;
  st.ctx = ctx;
  const auto slices = static_cast<std::uint32_t>(ctx->sync_links.size());
  for (std::uint32_t k = 0; k < slices; ++k) st.slices.push_back(slice_bounds(ctx->model->size(), k, slices));
  st.live_call.assign(slices, 0);
  st.waiting.assign(slices, false);
  return {
      // The workers to park for foreground syncs.
      [self](view_atom, const std::vector<caf::actor>& workers) { self->state.workers = workers; },
      // Shadow: start (or continue) the loop.
      [self](start_atom) {
        auto& s = self->state;
        if (s.ctx->sync.when != sync::mode::shadow || s.stopping) return;
        s.running = true;
        start_round(self);
      },
      // Foreground: a worker reached the next multiple of k. Park every worker, then sync.
      [self](sync_atom) {
        auto& s = self->state;
        s.paused_at = std::chrono::steady_clock::now();
        auto remaining = std::make_shared<std::size_t>(s.workers.size());
        if (*remaining == 0) return start_round(self);
        for (auto& w : s.workers) {
          self->request(w, caf::infinite, park_atom::value).then([self, remaining](parked_atom) {
            if (--*remaining == 0) start_round(self);
          });
        }
      },
      // A retry of slice k's call (a stale one, after a renew sent it again, is dropped).
      [self](tick_atom, std::uint32_t k, std::uint64_t call, int attempt) {
        auto& s = self->state;
        if (s.in_round && call == s.live_call[k]) send_slice(self, k, s.round_id, attempt);
      },
      // Slice k's sync server restarted (or moved): the call it holds will never be answered.
      [self](renew_atom, std::uint32_t k) {
        auto& s = self->state;
        if (!s.in_round || k >= s.waiting.size() || !s.waiting[k]) return;
        spdlog::info("{}: sync server {} restarted; sending round {} to it again", s.ctx->options.name, k,
                     s.round_id);
        send_slice(self, k, s.round_id, 0);
      },
      [self](stop_atom) {
        self->state.stopping = true;
        self->state.running = false;
      },
  };
}

// ---- trainer -------------------------------------------------------------------------------

struct trainer_state {
  static inline const char* name = "trainer";
  context_ptr ctx;
  caf::actor member;
  caf::actor feeder;
  std::vector<caf::actor> workers;
  std::vector<std::string> shard_endpoints;
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
using trainer_actor = caf::stateful_actor<trainer_state>;

void report_replica(trainer_actor* self) {
  auto& st = self->state;
  self->send(st.ctx->syncer, stop_atom::value);
  auto report = std::make_shared<wire::dense_report>();
  report->trainer = st.ctx->options.incarnation;
  report->examples = st.ctx->progress->snapshot(0).examples;
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
              const auto p = ctx.progress->snapshot(0);
              spdlog::info("{}: {} sync rounds ({}), sync gap {:.1f} batches, round p50 {:.2f} ms p99 {:.2f} ms, "
                           "replica distance {:.4f}, workers stopped {:.1f} worker-seconds for syncs",
                           ctx.options.name, p.sync_rounds, sync::to_string(ctx.sync), p.sync_gap,
                           p.sync_latency_p50_ms, p.sync_latency_p99_ms, p.sync_distance, p.sync_wait_seconds);
            }
          },
          [self](const caf::error&) { self->delayed_send(self, retry_delay, done_atom::value, true); });
}

void start_workers(trainer_actor* self) {
  auto& st = self->state;
  if (st.started || !st.model_ready || !st.job_running) return;
  st.started = true;
  // Linked: when the trainer goes, its feeder and workers go with it.
  st.feeder = self->spawn<caf::linked>(feeder, st.ctx);
  if (st.have_view) self->send(st.feeder, view_atom::value, st.last_view);
  self->send(st.feeder, state_atom::value, st.job_state);
  for (int w = 0; w < std::max(1, st.ctx->options.workers); ++w) {
    caf::actor a = st.ctx->options.detached_workers
                       ? self->spawn<caf::detached + caf::linked>(worker, st.ctx, st.feeder, caf::actor{self})
                       : self->spawn<caf::linked>(worker, st.ctx, st.feeder, caf::actor{self});
    st.workers.push_back(a);
    self->send(a, start_atom::value);
  }
  self->send(st.ctx->syncer, view_atom::value, st.workers);
  if (st.ctx->sync.when == sync::mode::shadow) self->send(st.ctx->syncer, start_atom::value);
  spdlog::info("{}: training with {} worker{}{}{}", st.ctx->options.name, st.workers.size(),
               st.workers.size() == 1 ? "" : "s", st.ctx->sync.algo == sync::algorithm::none ? "" : ", sync ",
               st.ctx->sync.algo == sync::algorithm::none ? "" : sync::to_string(st.ctx->sync));
}

void fetch_central_model(trainer_actor* self) {
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
            s.model_ready = true;
            start_workers(self);
          },
          [self](const caf::error&) { self->delayed_send(self, retry_delay, start_atom::value); });
}

caf::behavior trainer(trainer_actor* self, context_ptr ctx, caf::actor gateway, caf::actor member) {
  self->state.ctx = ctx;
  self->state.member = member;
  ctx->syncer = self->spawn<caf::linked>(syncer, ctx);
  ctx->next_sync_at.store(static_cast<std::uint64_t>(ctx->job.sync_every));
  ctx->simulated_left.store(static_cast<std::int64_t>(ctx->job.simulate_steps));
  self->send(member, view_atom::value, caf::actor{self});
  self->request(gateway, caf::infinite, link_atom::value, ctx->options.coordinator).then([self](std::uint32_t link) {
    self->state.coordinator_link = link;
    fetch_central_model(self);
  });
  return {
      [self](start_atom) { fetch_central_model(self); },
      [self](view_atom, const wire::cluster_view& view) {
        auto& st = self->state;
        st.last_view = view;
        st.have_view = true;
        if (st.shard_endpoints.size() < view.shards.size()) st.shard_endpoints.resize(view.shards.size());
        for (std::uint32_t s = 0; s < view.shards.size() && s < st.ctx->shard_links.size(); ++s) {
          if (view.shards[s].empty() || view.shards[s] == st.shard_endpoints[s]) continue;
          st.shard_endpoints[s] = view.shards[s];
          self->request(st.ctx->gateway, caf::infinite, link_atom::value, view.shards[s])
              .then([self, s](std::uint32_t link) { self->state.ctx->shard_links[s].store(link); });
        }
        if (st.feeder) self->send(st.feeder, view_atom::value, view);
        if (st.sync_endpoints.size() < view.syncs.size()) {
          st.sync_endpoints.resize(view.syncs.size());
          st.sync_incarnations.resize(view.syncs.size());
        }
        for (std::uint32_t k = 0; k < view.syncs.size() && k < st.ctx->sync_links.size(); ++k) {
          const std::uint64_t incarnation = k < view.sync_incarnations.size() ? view.sync_incarnations[k] : 0;
          if (view.syncs[k].empty() ||
              (view.syncs[k] == st.sync_endpoints[k] && incarnation == st.sync_incarnations[k]))
            continue;
          const bool restarted = !st.sync_endpoints[k].empty();
          st.sync_endpoints[k] = view.syncs[k];
          st.sync_incarnations[k] = incarnation;
          self->request(st.ctx->gateway, caf::infinite, link_atom::value, view.syncs[k])
              .then([self, k, restarted](std::uint32_t link) {
                self->state.ctx->sync_links[k].store(link);
                if (restarted) self->send(self->state.ctx->syncer, renew_atom::value, k);
              });
        }
      },
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
      [self](done_atom) {
        auto& st = self->state;
        if (++st.workers_done == static_cast<int>(st.workers.size())) report_replica(self);
      },
      [self](done_atom, bool) { report_replica(self); },
      [self](serve_atom, const envelope_ptr& env) -> body_ptr {
        auto& st = self->state;
        if (std::holds_alternative<wire::dense_request>(env->message)) {
          // The replica: the coordinator snapshots it (no central copy without sync) and builds
          // the final model from it.
          const float* p = st.ctx->model->params();
          return make_body(wire::dense_reply{st.ctx->progress->batches(), std::vector<float>(p, p + st.ctx->model->size()), {}});
        }
        if (!std::holds_alternative<wire::status_request>(env->message))
          return make_body(wire::error_reply{errc::invalid_argument, std::string("a trainer does not serve ") +
                                                                         wire::message_name(env->message)});
        const auto p = st.ctx->progress->snapshot(st.ctx->job.window);
        const auto t = st.ctx->progress->timings();
        return make_body(wire::status_reply{json_object()
                                                .add("compute_seconds", t.compute_seconds)
                                                .add("wait_seconds", t.wait_seconds)
                                                .add("lookup_p50_ms", t.lookup_p50_ms)
                                                .add("lookup_p99_ms", t.lookup_p99_ms)
                                                .add("push_p50_ms", t.push_p50_ms)
                                                .add("push_p99_ms", t.push_p99_ms)
                                                .add("role", "trainer")
                                                .add("name", st.ctx->options.name)
                                                .add("workers", static_cast<std::uint64_t>(st.workers.size()))
                                                .add("examples", p.examples)
                                                .add("batches", p.batches)
                                                .add("train_logloss", p.examples ? p.loss_sum / p.examples : 0.0)
                                                .add("sync", sync::to_string(st.ctx->sync))
                                                .add("sync_rounds", p.sync_rounds)
                                                .add("sync_gap", p.sync_gap)
                                                .add("sync_latency_p50_ms", p.sync_latency_p50_ms)
                                                .add("sync_latency_p99_ms", p.sync_latency_p99_ms)
                                                .add("sync_distance", p.sync_distance)
                                                .add("sync_wait_seconds", p.sync_wait_seconds)
                                                .add("finished", p.finished)
                                                .add("error", st.ctx->progress->error())
                                                .str()});
      },
  };
}

}  // namespace

caf::actor spawn_trainer(caf::actor_system& sys, const caf::actor& gateway, const caf::actor& member_agent,
                         const job::job_options& job, std::shared_ptr<train::dense_model> model,
                         std::vector<std::uint64_t> buckets, const trainer_options& options,
                         std::shared_ptr<trainer_progress> progress) {
  auto ctx = std::make_shared<trainer_context>(static_cast<std::size_t>(job.shards),
                                               static_cast<std::size_t>(job.sync_servers));
  if (auto spec = sync::parse_sync(job.sync); spec.is_ok()) ctx->sync = *spec;
  ctx->gateway = gateway;
  ctx->job = job;
  ctx->model = std::move(model);
  ctx->buckets = std::move(buckets);
  ctx->options = options;
  ctx->progress = std::move(progress);
  ctx->timeout = std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(job.request_timeout));
  auto a = sys.spawn(trainer, ctx, gateway, member_agent);
  caf::anon_send(gateway, route_atom::value, kind_of<wire::status_request>(), a);
  caf::anon_send(gateway, route_atom::value, kind_of<wire::dense_request>(), a);
  return a;
}

}  // namespace ss::actors
