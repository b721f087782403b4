// The syncer (the shadow): keeps the replica in sync with the sync servers, one slice of the
// dense vector per server. In shadow mode every slice has a round loop of its own (at least
// --sync-interval apart, the slices' loops staggered across the interval) while the workers
// train: a round snapshots that slice of the replica, sends it to its server and applies the
// answer, so a slow or paused sync server holds back its own slice only. Foreground mode syncs
// every slice at once when a worker reaches the next multiple of --sync-every, with every worker
// parked meanwhile (messages: syncer_actor in parts.hpp). Once the workers are idle (the
// input is exhausted, or a scored epoch ended) the trainer asks for a closing round: every slice
// is sent with `closing` set, and the sync servers fold every trainer's final replica into the
// model (docs/sync.md). It is bounded by a deadline; past it the trainer goes on without it.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>

#include "ss/actors/sync_server.hpp"
#include "ss/core/sync/replica_mirror.hpp"
#include "parts.hpp"

namespace ss::actors::trainer_detail {
namespace {

// One slice of the dense vector and the round it is in.
struct slice_round {
  std::uint64_t offset = 0, length = 0;
  std::uint32_t link = 0;  // to its sync server (0: not known yet)
  std::uint64_t round = 0;  // answers to an earlier round are void
  // The call whose answer counts (answers to earlier ones, e.g. to a sync server that restarted
  // since, are ignored).
  std::uint64_t live_call = 0;
  bool waiting = false;  // a round of this slice is in flight
  bool closing_sent = false;  // its closing round is the one in flight (or done)
  std::uint64_t timer = 0;  // the shadow loop's pending start of its next round (older ones are void)
  std::chrono::steady_clock::time_point started;
  std::uint64_t batches_at_last_sync = 0;
  double distance = 0;
  // Quantized rounds (--sync-quantize int8): the mirror this slice's requests are relative to.
  std::optional<sync::mirror_sender> mirror;
};

struct syncer_state {
  static inline const char* name = "syncer";
  context_ptr ctx;
  std::vector<worker_actor> workers;
  std::vector<slice_round> slices;
  std::vector<float> snapshot;  // each slice's part: its replica as its round began
  bool running = false;  // shadow loops on
  std::uint32_t peers = 0;  // trainers in the view, this one included (0: no view yet)
  bool stopping = false;
  // A round of every slice at once (foreground, or a closing round); when the workers parked.
  bool all_slices = false;
  std::chrono::steady_clock::time_point paused_at;
  std::uint64_t calls = 0;
  // The closing round: its generation while one is asked for (0: none), whether it is the round
  // in flight, who waits for it, and its deadline's id.
  std::uint32_t closing = 0;
  bool closing_in_flight = false;
  bool resume_after_closing = false;  // an epoch's closing round: the shadow loops go on
  caf::typed_response_promise<bool> closing_promise;
  std::uint64_t closing_id = 0;
};
using syncer_self = syncer_actor::stateful_pointer<syncer_state>;

bool any_waiting(const syncer_state& st) {
  return std::any_of(st.slices.begin(), st.slices.end(), [](const slice_round& s) { return s.waiting; });
}

void slice_done(syncer_self self, std::uint32_t k);
void send_slice(syncer_self self, std::uint32_t k, int attempt);

// Applies slice k's answer to the live replica; false if the answer is not one (retry).
bool apply_answer(syncer_self self, std::uint32_t k, const wire::sync_reply* reply) {
  auto& st = self->state;
  auto& s = st.slices[k];
  if (reply == nullptr) return false;
  float* live = st.ctx->model->params() + s.offset;
  if (s.mirror && !reply->quantized.values.empty()) {
    if (!sync::check(reply->quantized, s.length).is_ok()) return false;
    st.ctx->progress->add_sync_bytes(reply->quantized.bytes());
    s.mirror->accept(reply->sequence, reply->quantized, reply->is_delta, live);
    s.distance = reply->distance;
    return true;
  }
  if (reply->params.size() != s.length) return false;
  st.ctx->progress->add_sync_bytes(reply->params.size() * sizeof(float));
  if (s.mirror) s.mirror->reset();  // a full answer (the server lost this trainer's mirror): a full request next
  if (reply->is_delta) {
    sync::subtract(live, reply->params.data(), s.length);  // EASGD: w_i -= d
    s.distance = reply->distance;
  } else {
    const float* snap = st.snapshot.data() + s.offset;
    s.distance = sync::relative_distance(snap, reply->params.data(), s.length);
    sync::apply_target(live, snap, reply->params.data(), s.length);  // w_i += target - snapshot
  }
  return true;
}

void on_answer(syncer_self self, std::uint32_t k, std::uint64_t call, int attempt, const envelope_ptr& env) {
  auto& st = self->state;
  const auto* err = std::get_if<wire::error_reply>(&env->message);
  if (err != nullptr && err->code == errc::not_found && st.slices[k].mirror) {
    // The server holds no mirror of this replica (it restarted, or our last answer was lost).
    spdlog::info("{}: sync server {} answered {}; sending the full slice", st.ctx->options.name, k, err->message);
    st.slices[k].mirror->reset();
    return send_slice(self, k, attempt + 1);
  }
  if (err != nullptr && (err->code == errc::invalid_argument || err->code == errc::out_of_range)) {
    // A misconfigured slice or a diverged model: nothing a retry can mend, and no more rounds.
    spdlog::error("{}: sync server {} refused the sync: {}", st.ctx->options.name, k, err->message);
    st.ctx->progress->set_error("sync server " + std::to_string(k) + ": " + err->message);
    st.slices[k].waiting = false;
    st.stopping = true;
    st.running = false;
    return;
  }
  const auto* reply = std::get_if<wire::sync_reply>(&env->message);
  if (!apply_answer(self, k, reply)) {
    const std::string why = reply != nullptr ? std::string("a reply of the wrong size")
                            : err != nullptr ? std::string(wire::message_name(env->message)) + ": " + err->message
                                             : std::string(wire::message_name(env->message));
    if (attempt % 20 == 0)  // a restarting sync server answers errors for a while
      spdlog::warn("{}: sync server {} answered {}; retrying", st.ctx->options.name, k, why);
    self->delayed_send(self, retry_delay, slice_atom::value, k, call, attempt + 1);
    return;
  }
  st.slices[k].waiting = false;
  slice_done(self, k);
}

void send_slice(syncer_self self, std::uint32_t k, int attempt) {
  auto& st = self->state;
  auto& s = st.slices[k];
  const std::uint64_t call = ++st.calls;
  const std::uint64_t round = s.round;
  s.live_call = call;
  if (s.link == 0) {  // the sync server's endpoint is not known yet
    self->delayed_send(self, retry_delay, slice_atom::value, k, call, attempt);
    return;
  }
  wire::sync_request req;
  req.trainer = st.ctx->options.incarnation;
  req.membership = st.ctx->membership.load();  // refused (fenced) while it is over; a retry sends the new one
  req.slice = k;
  req.offset = s.offset;
  req.batches = st.ctx->progress->batches();
  const float* snapshot = st.snapshot.data() + s.offset;
  if (s.mirror && s.mirror->base() != 0) {
    s.mirror->encode(snapshot, req.quantized);
    req.base = s.mirror->base();
    st.ctx->progress->add_sync_bytes(req.quantized.bytes());
  } else {
    if (s.mirror) s.mirror->encode_full(snapshot);
    req.params.assign(snapshot, snapshot + s.length);
    st.ctx->progress->add_sync_bytes(req.params.size() * sizeof(float));
  }
  req.closing = st.closing_in_flight && s.closing_sent ? st.closing : 0;
  // A round may wait for every trainer (MA, BMUF, any closing round): allow it the round timeout on top.
  const bool waits_for_all = st.ctx->sync.algo != sync::algorithm::easgd || req.closing > 0;
  const auto timeout =
      st.ctx->timeout + (waits_for_all ? std::chrono::duration_cast<caf::timespan>(
                                             std::chrono::duration<double>(st.ctx->job.sync_round_timeout))
                                       : caf::timespan{0});
  self->request(st.ctx->gateway, caf::infinite, call_atom::value, s.link, make_body(std::move(req)), timeout)
      .then(
          [self, k, round, call, attempt](const envelope_ptr& env) {
            const auto& slice = self->state.slices[k];
            if (round == slice.round && call == slice.live_call) on_answer(self, k, call, attempt, env);
          },
          [self, k, round, call, attempt](const caf::error&) {
            const auto& slice = self->state.slices[k];
            if (round != slice.round || call != slice.live_call) return;
            self->delayed_send(self, retry_delay, slice_atom::value, k, call, attempt + 1);
          });
}

// A round of slice k: its part of the replica as it is now, sent to its server.
void start_slice(syncer_self self, std::uint32_t k) {
  auto& st = self->state;
  auto& s = st.slices[k];
  if (s.waiting) return;
  s.waiting = true;
  ++s.round;
  s.started = std::chrono::steady_clock::now();
  const float* params = st.ctx->model->params();
  std::copy(params + s.offset, params + s.offset + s.length, st.snapshot.begin() + static_cast<std::ptrdiff_t>(s.offset));
  send_slice(self, k, 0);
}

void start_all_slices(syncer_self self) {
  auto& st = self->state;
  st.all_slices = true;
  for (std::uint32_t k = 0; k < st.slices.size(); ++k) start_slice(self, k);
}

// Slice k's next shadow round, at least the interval after its last one began.
void schedule_slice(syncer_self self, std::uint32_t k, caf::timespan delay) {
  auto& s = self->state.slices[k];
  if (delay <= caf::timespan{0}) return start_slice(self, k);
  self->delayed_send(self, delay, round_atom::value, k, ++s.timer);
}

caf::timespan interval_of(const syncer_state& st) {
  return std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(st.ctx->job.sync_interval));
}

// The shadow loops begin, slice k a k/n share of the interval after slice 0, so that the
// servers' rounds (and the replica copies) spread over the interval instead of coming at once.
void start_loops(syncer_self self) {
  auto& st = self->state;
  st.running = true;
  const auto n = static_cast<std::int64_t>(st.slices.size());
  for (std::uint32_t k = 0; k < st.slices.size(); ++k)
    if (!st.slices[k].waiting) schedule_slice(self, k, interval_of(st) * static_cast<std::int64_t>(k) / n);
}

void start_closing(syncer_self self);
void end_closing(syncer_self self, bool folded);

void record_round(syncer_self self, std::uint32_t k) {
  auto& st = self->state;
  auto& s = st.slices[k];
  const std::uint64_t batches = st.ctx->progress->batches();
  st.ctx->progress->add_sync_round(k, std::chrono::steady_clock::now() - s.started, batches - s.batches_at_last_sync,
                                   s.distance);
  s.batches_at_last_sync = batches;
}

// Every slice of a foreground round answered.
void all_slices_done(syncer_self self) {
  auto& st = self->state;
  st.all_slices = false;
  const auto now = std::chrono::steady_clock::now();
  for (std::uint32_t k = 0; k < st.slices.size(); ++k) record_round(self, k);
  if (st.ctx->gate && st.closing == 0) {
    // Foreground: resume the workers; their stop counts as foreground sync cost.
    st.ctx->progress->add_sync_wait((now - st.paused_at) * static_cast<int>(st.workers.size()));
    st.ctx->gate->open();
    for (auto& w : st.workers) self->send(w, resume_atom::value);
    return;
  }
  if (st.closing != 0) start_closing(self);  // asked for while this round was in flight
}

void slice_done(syncer_self self, std::uint32_t k) {
  auto& st = self->state;
  auto& s = st.slices[k];
  if (st.closing_in_flight) {
    // The closing round is not part of the sync cadence: the sync gap and latency leave it out.
    // A shadow round still in flight as it began is, and the slice's closing round follows it.
    if (!s.closing_sent) {
      record_round(self, k);
      s.closing_sent = true;
      return start_slice(self, k);
    }
    const bool all_closed = std::all_of(st.slices.begin(), st.slices.end(),
                                        [](const slice_round& r) { return r.closing_sent && !r.waiting; });
    if (all_closed) end_closing(self, true);
    return;
  }
  if (st.all_slices) {
    if (!any_waiting(st)) all_slices_done(self);
    return;
  }
  // A shadow round of slice k.
  record_round(self, k);
  if (!st.running || st.stopping) return;
  schedule_slice(self, k, interval_of(st) - (std::chrono::steady_clock::now() - s.started));
}

// The closing round: one more round of every slice of the idle replica, with `closing` set; a
// slice whose shadow round is in flight sends it once that one is over.
void start_closing(syncer_self self) {
  auto& st = self->state;
  if (st.ctx->gate) {  // a foreground round was in flight: its workers go on (they are idle)
    st.ctx->gate->open();
    for (auto& w : st.workers) self->send(w, resume_atom::value);
  }
  st.closing_in_flight = true;
  st.all_slices = true;
  for (std::uint32_t k = 0; k < st.slices.size(); ++k) {
    auto& s = st.slices[k];
    s.closing_sent = !s.waiting;
    if (s.closing_sent) start_slice(self, k);
  }
}

void end_closing(syncer_self self, bool folded) {
  auto& st = self->state;
  for (auto& s : st.slices) {
    if (!folded && s.waiting) ++s.round;  // answers still on their way are void
    s.waiting = false;
    s.closing_sent = false;
  }
  st.all_slices = false;
  if (st.closing == final_closing) st.stopping = true;  // the job's end: no more rounds
  st.closing = 0;
  st.closing_in_flight = false;
  st.closing_promise.deliver(folded);
  if (st.resume_after_closing && !st.stopping) start_loops(self);
}

// The trainer asks for closing round g: after a foreground round in flight, if any. Its deadline is two
// round trips with the round timeout each: a closing round waits at most one round timeout for
// the other trainers, and a restarted sync server gets the request again.
caf::typed_response_promise<bool> ask_closing(syncer_self self, std::uint32_t generation) {
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
  if (!st.all_slices) start_closing(self);
  return promise;
}

// Foreground: park every worker, then sync.
void park_workers(syncer_self self) {
  auto& st = self->state;
  st.paused_at = std::chrono::steady_clock::now();
  auto remaining = std::make_shared<std::size_t>(st.workers.size());
  if (*remaining == 0) return start_all_slices(self);
  for (auto& w : st.workers)
    self->request(w, caf::infinite, park_atom::value).then([self, remaining](parked_atom) {
      if (--*remaining == 0) start_all_slices(self);
    });
}

syncer_actor::behavior_type syncer(syncer_self self, context_ptr ctx) {
  auto& st = self->state;
  st.ctx = std::move(ctx);
  const std::uint32_t n = st.ctx->slices;
  for (std::uint32_t k = 0; k < n; ++k) {
    slice_round s;
    std::tie(s.offset, s.length) = slice_bounds(st.ctx->model->size(), k, n);
    if (st.ctx->job.sync_quantize == "int8") s.mirror.emplace(s.length, sync::default_quantization_block);
    st.slices.push_back(std::move(s));
  }
  st.snapshot.assign(st.ctx->model->size(), 0.0f);
  st.ctx->progress->set_sync_slices(n);
  return {
      [self](workers_atom, const std::vector<worker_actor>& workers) { self->state.workers = workers; },
      [self](slink_atom, std::uint32_t k, std::uint32_t link, bool restarted) {
        auto& sy = self->state;
        if (k >= sy.slices.size()) return;
        auto& s = sy.slices[k];
        s.link = link;
        // The call a restarted server held will never be answered: send the round to it again.
        if (!restarted || !s.waiting) return;
        spdlog::info("{}: sync server {} restarted; sending round {} to it again", sy.ctx->options.name, k, s.round);
        send_slice(self, k, 0);
      },
      [self](start_atom) {
        auto& sy = self->state;
        // (the loops do not start once a closing round was asked for)
        if (sy.ctx->sync.when != sync::mode::shadow || sy.stopping || sy.closing != 0 || sy.running) return;
        start_loops(self);
      },
      [self](peers_atom, std::uint32_t trainers) {
        auto& sy = self->state;
        const bool was_alone = sy.peers < 2, alone = trainers < 2;
        sy.peers = trainers;
        if (sy.ctx->sync.alone || sy.ctx->sync.when != sync::mode::shadow || was_alone == alone) return;
        spdlog::info(alone ? "{}: the only trainer in the view: sync rounds pause until another one joins (--sync auto)"
                           : "{}: {} trainers in the view: sync rounds resume",
                     sy.ctx->options.name, trainers);
      },
      [self](round_atom, std::uint32_t k, std::uint64_t timer) {
        auto& sy = self->state;
        if (k >= sy.slices.size() || timer != sy.slices[k].timer) return;  // superseded
        if (!sy.running || sy.stopping || sy.closing != 0 || sy.all_slices) return;
        // --sync auto with no other trainer in the view: nothing to average with, and EASGD with
        // one replica only drags it back towards its own past. The loop ticks on without a round.
        if (!sy.ctx->sync.alone && sy.peers < 2) return schedule_slice(self, k, interval_of(sy));
        start_slice(self, k);
      },
      [self](sync_atom) { park_workers(self); },
      [self](slice_atom, std::uint32_t k, std::uint64_t call, int attempt) {
        auto& sy = self->state;
        if (k < sy.slices.size() && sy.slices[k].waiting && call == sy.slices[k].live_call) send_slice(self, k, attempt);
      },
      [self](close_atom, std::uint32_t generation) { return ask_closing(self, generation); },
      [self](deadline_atom, std::uint64_t id) {
        auto& sy = self->state;
        if (id != sy.closing_id || sy.closing == 0) return;
        spdlog::warn("{}: the closing round did not complete in time; the replica goes on without it",
                     sy.ctx->options.name);
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
