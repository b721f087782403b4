// The syncer (the shadow): one round snapshots the replica, sends each slice to its sync server
// and applies the answers. Shadow mode loops rounds (at least --sync-interval apart) while the
// workers train; foreground mode runs one when a worker reaches the next multiple of
// --sync-every, with every worker parked meanwhile. Both take the same path through a round
// (messages: syncer_actor in trainer_parts.hpp). Once the workers are idle (the input is
// exhausted, or a scored epoch ended) the trainer asks for a closing round: the replica is sent
// with `closing` set, and the sync servers fold every trainer's final replica into the model
// (docs/sync.md). It is bounded by a deadline; past it the trainer goes on without it.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "ss/actors/sync_server.hpp"
#include "trainer_parts.hpp"

namespace ss::actors::trainer_detail {
namespace {

struct syncer_state {
  static inline const char* name = "syncer";
  context_ptr ctx;
  std::vector<worker_actor> workers;
  links slice_links;  // per sync server
  std::vector<float> snapshot;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> slices;  // offset, length per server
  bool in_round = false;
  bool running = false;  // shadow loop on
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
  // The closing round: its generation while one is asked for (0: none), whether it is the round
  // in flight, who waits for it, and its deadline's id.
  std::uint32_t closing = 0;
  bool closing_in_flight = false;
  bool resume_after_closing = false;  // an epoch's closing round: the shadow loop goes on
  caf::typed_response_promise<bool> closing_promise;
  std::uint64_t closing_id = 0;
};
using self_ptr = syncer_actor::stateful_pointer<syncer_state>;

void round_done(self_ptr self);

// Applies slice k's answer to the live replica; false if the answer is not one (retry).
bool apply_answer(self_ptr self, std::uint32_t k, const wire::sync_reply* reply) {
  auto& s = self->state;
  const auto [off, len] = s.slices[k];
  if (reply == nullptr || reply->params.size() != len) return false;
  float* live = s.ctx->model->params() + off;
  if (reply->is_delta) {
    sync::subtract(live, reply->params.data(), len);  // EASGD: w_i -= d
    s.distance = std::max(s.distance, reply->distance);
  } else {
    const float* snap = s.snapshot.data() + off;
    s.distance = std::max(s.distance, sync::relative_distance(snap, reply->params.data(), len));
    sync::apply_target(live, snap, reply->params.data(), len);  // w_i += target - snapshot
  }
  return true;
}

void on_answer(self_ptr self, std::uint32_t k, std::uint64_t call, int attempt, const envelope_ptr& env) {
  auto& s = self->state;
  const auto* err = std::get_if<wire::error_reply>(&env->message);
  if (err != nullptr && (err->code == errc::invalid_argument || err->code == errc::out_of_range)) {
    // A misconfigured slice or a diverged model: nothing a retry can mend.
    spdlog::error("{}: sync server {} refused the sync: {}", s.ctx->options.name, k, err->message);
    s.ctx->progress->set_error("sync server " + std::to_string(k) + ": " + err->message);
    s.in_round = false;
    return;
  }
  const auto* reply = std::get_if<wire::sync_reply>(&env->message);
  if (!apply_answer(self, k, reply)) {
    const std::string why = reply != nullptr ? std::string("a reply of the wrong size")
                            : err != nullptr ? std::string(wire::message_name(env->message)) + ": " + err->message
                                             : std::string(wire::message_name(env->message));
    if (attempt % 20 == 0)  // a restarting sync server answers errors for a while
      spdlog::warn("{}: sync server {} answered {}; retrying", s.ctx->options.name, k, why);
    self->delayed_send(self, retry_delay, slice_atom::value, k, call, attempt + 1);
    return;
  }
  s.waiting[k] = false;
  if (std::find(s.waiting.begin(), s.waiting.end(), true) == s.waiting.end()) round_done(self);
}

void send_slice(self_ptr self, std::uint32_t k, int attempt) {
  auto& st = self->state;
  const std::uint64_t call = ++st.calls;
  const std::uint64_t round = st.round_id;
  st.live_call[k] = call;
  const auto link = st.slice_links[k];
  if (link == 0) {  // the sync server's endpoint is not known yet
    self->delayed_send(self, retry_delay, slice_atom::value, k, call, attempt);
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
  req.closing = st.closing_in_flight ? st.closing : 0;
  // A round may wait for every trainer (MA, BMUF, any closing round): allow it the round timeout on top.
  const bool waits_for_all = st.ctx->sync.algo != sync::algorithm::easgd || req.closing > 0;
  const auto timeout =
      st.ctx->timeout + (waits_for_all ? std::chrono::duration_cast<caf::timespan>(
                                             std::chrono::duration<double>(st.ctx->job.sync_round_timeout))
                                       : caf::timespan{0});
  self->request(st.ctx->gateway, caf::infinite, call_atom::value, link, make_body(std::move(req)), timeout)
      .then(
          [self, k, round, call, attempt](const envelope_ptr& env) {
            if (round == self->state.round_id && call == self->state.live_call[k]) on_answer(self, k, call, attempt, env);
          },
          [self, k, round, call, attempt](const caf::error&) {
            if (round != self->state.round_id || call != self->state.live_call[k]) return;
            self->delayed_send(self, retry_delay, slice_atom::value, k, call, attempt + 1);
          });
}

void start_round(self_ptr self) {
  auto& st = self->state;
  if (st.in_round) return;
  st.in_round = true;
  ++st.round_id;
  st.round_start = std::chrono::steady_clock::now();
  st.distance = 0;
  const float* params = st.ctx->model->params();
  st.snapshot.assign(params, params + st.ctx->model->size());
  st.waiting.assign(st.slices.size(), true);
  for (std::uint32_t k = 0; k < st.slices.size(); ++k) send_slice(self, k, 0);
}

void start_closing(self_ptr self);
void end_closing(self_ptr self, bool folded);

void round_done(self_ptr self) {
  auto& st = self->state;
  st.in_round = false;
  // The closing round is not part of the sync cadence: the sync gap and latency leave it out.
  if (st.closing_in_flight) return end_closing(self, true);
  const auto now = std::chrono::steady_clock::now();
  const std::uint64_t batches = st.ctx->progress->batches();
  st.ctx->progress->add_sync_round(now - st.round_start, batches - st.batches_at_last_sync, st.distance);
  st.batches_at_last_sync = batches;
  if (st.ctx->gate && st.closing == 0) {
    // Foreground: resume the workers; their stop counts as foreground sync cost.
    st.ctx->progress->add_sync_wait((now - st.paused_at) * static_cast<int>(st.workers.size()));
    st.ctx->gate->open();
    for (auto& w : st.workers) self->send(w, resume_atom::value);
    return;
  }
  if (st.closing != 0) return start_closing(self);  // asked for while this round was in flight
  if (!st.running || st.stopping) return;
  const auto interval = std::chrono::duration<double>(st.ctx->job.sync_interval);
  const auto elapsed = now - st.round_start;
  if (elapsed >= interval) start_round(self);
  else self->delayed_send(self, std::chrono::duration_cast<caf::timespan>(interval - elapsed), round_atom::value);
}

// The closing round: one more round of the idle replica, with `closing` set.
void start_closing(self_ptr self) {
  auto& st = self->state;
  if (st.ctx->gate) {  // a foreground round was in flight: its workers go on (they are idle)
    st.ctx->gate->open();
    for (auto& w : st.workers) self->send(w, resume_atom::value);
  }
  st.closing_in_flight = true;
  start_round(self);
}

void end_closing(self_ptr self, bool folded) {
  auto& st = self->state;
  if (!folded) {
    ++st.round_id;  // answers still on their way are void
    st.in_round = false;
  }
  if (st.closing == final_closing) st.stopping = true;  // the job's end: no more rounds
  st.closing = 0;
  st.closing_in_flight = false;
  st.closing_promise.deliver(folded);
  if (st.resume_after_closing && !st.stopping) {
    st.running = true;
    start_round(self);
  }
}

// The trainer asks for closing round g: after the round in flight, if any. Its deadline is two
// round trips with the round timeout each: a closing round waits at most one round timeout for
// the other trainers, and a restarted sync server gets the request again.
caf::typed_response_promise<bool> ask_closing(self_ptr self, std::uint32_t generation) {
  auto& st = self->state;
  auto promise = self->make_response_promise<bool>();
  if (st.ctx->sync.algo == sync::algorithm::none || st.stopping || st.closing != 0) {
    promise.deliver(st.ctx->sync.algo == sync::algorithm::none);
    return promise;
  }
  st.closing = generation;
  st.closing_promise = promise;
  st.resume_after_closing = st.running && generation != final_closing;
  st.running = false;
  const auto round_timeout = std::chrono::duration<double>(st.ctx->job.sync_round_timeout);
  const auto deadline = 2 * (st.ctx->timeout + std::chrono::duration_cast<caf::timespan>(round_timeout));
  self->delayed_send(self, deadline, deadline_atom::value, ++st.closing_id);
  if (!st.in_round) start_closing(self);
  return promise;
}

// Foreground: park every worker, then sync.
void park_workers(self_ptr self) {
  auto& s = self->state;
  s.paused_at = std::chrono::steady_clock::now();
  auto remaining = std::make_shared<std::size_t>(s.workers.size());
  if (*remaining == 0) return start_round(self);
  for (auto& w : s.workers)
    self->request(w, caf::infinite, park_atom::value).then([self, remaining](parked_atom) {
      if (--*remaining == 0) start_round(self);
    });
}

syncer_actor::behavior_type syncer(self_ptr self, context_ptr ctx) {
  auto& st = self->state;
  st.ctx = std::move(ctx);
  const std::uint32_t slices = st.ctx->slices;
  for (std::uint32_t k = 0; k < slices; ++k) st.slices.push_back(slice_bounds(st.ctx->model->size(), k, slices));
  st.slice_links.assign(slices, 0);
  st.live_call.assign(slices, 0);
  st.waiting.assign(slices, false);
  return {
      [self](workers_atom, const std::vector<worker_actor>& workers) { self->state.workers = workers; },
      [self](slink_atom, std::uint32_t k, std::uint32_t link, bool restarted) {
        auto& s = self->state;
        if (k >= s.slice_links.size()) return;
        s.slice_links[k] = link;
        // The call a restarted server held will never be answered: send the round to it again.
        if (!restarted || !s.in_round || !s.waiting[k]) return;
        spdlog::info("{}: sync server {} restarted; sending round {} to it again", s.ctx->options.name, k, s.round_id);
        send_slice(self, k, 0);
      },
      [self](round_atom) {
        auto& s = self->state;
        // (a round timer set before a closing round was asked for does not start one)
        if (s.ctx->sync.when != sync::mode::shadow || s.stopping || s.closing != 0) return;
        s.running = true;
        start_round(self);
      },
      [self](sync_atom) { park_workers(self); },
      [self](slice_atom, std::uint32_t k, std::uint64_t call, int attempt) {
        auto& s = self->state;
        if (s.in_round && call == s.live_call[k]) send_slice(self, k, attempt);
      },
      [self](close_atom, std::uint32_t generation) { return ask_closing(self, generation); },
      [self](deadline_atom, std::uint64_t id) {
        auto& s = self->state;
        if (id != s.closing_id || s.closing == 0) return;
        spdlog::warn("{}: the closing round did not complete in time; the replica goes on without it",
                     s.ctx->options.name);
        end_closing(self, false);
      },
      [self](stop_atom) {
        self->state.stopping = true;
        self->state.running = false;
      },
  };
}

}  // namespace

syncer_actor spawn_syncer(caf::local_actor* parent, context_ptr ctx) {
  return parent->spawn<caf::linked>(syncer, std::move(ctx));
}

}  // namespace ss::actors::trainer_detail
