#include "ss/actors/sync_server.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "ss/actors/actors.hpp"
#include "ss/actors/gateway.hpp"
#include "ss/actors/messages.hpp"
#include "ss/actors/status_metrics.hpp"
#include "ss/core/json.hpp"
#include "ss/core/metrics/status_metrics.hpp"
#include "ss/core/io/hex.hpp"
#include "ss/core/job/membership_fence.hpp"
#include "ss/core/sync/replica_mirror.hpp"

namespace ss::actors {
namespace {

struct contributor {
  std::uint64_t trainer;
  caf::response_promise promise;
  std::uint64_t batches = 0;
  bool quantized = false;  // its reply too (the request came through its mirror)
};

// Where a trainer stands with closing rounds.
struct closed_trainer {
  std::uint32_t generation = 0;  // its latest closing round
  std::uint64_t batches = 0;     // its batch count then: it trained since only if it has more
  bool resting = false;          // no regular round since: regular rounds do not wait for it
};

// The open closing round (docs/sync.md): the trainers' final replicas, those that trained since
// their last closing round apart, as only they are folded in.
struct closing_round {
  std::uint32_t generation = 0;
  std::uint64_t instance = 0;  // guards the timer of an earlier round of the same generation
  std::vector<contributor> waiting;
  sync::replica_mean all, trained;
  std::map<std::uint64_t, closed_trainer> closed;  // by incarnation
  std::uint64_t completed = 0;
};

struct sync_server_state {
  static inline const char* name = "sync-server";
  sync_server_options options;
  std::size_t live_trainers = 1;
  std::vector<std::uint64_t> live_incarnations;  // from the view; empty when it names none
  job::membership_fence fence;  // whose rounds are refused: trainers dropped, or of an older membership
  // EASGD: the central copy. BMUF: the global model and momentum. Both start from the first
  // replica slice that arrives (every trainer starts from the same seeded model).
  std::vector<float> central;
  sync::bmuf_state bmuf;
  std::uint64_t exchanges = 0;
  // MA and BMUF: the open round.
  std::uint64_t round = 0;
  sync::replica_mean mean;
  std::vector<contributor> contributors;
  bool timer_armed = false;
  std::vector<float> last_target;
  // The outer optimizer (-nesterov): its anchor and momentum, and who synced this sweep.
  sync::outer_nesterov outer;
  sync::sweep_tracker sweep;
  closing_round closing;
  // Quantized rounds: the mirror of each trainer's replica slice, by incarnation.
  std::map<std::uint64_t, sync::mirror_receiver> mirrors;
  // Requests refused as malformed (wrong slice or size, a bad quantized vector), requests against
  // a mirror not held (the trainer then sends its full slice), and the bytes rounds moved.
  std::uint64_t refused = 0, mirror_misses = 0, rounds_fenced = 0, bytes_in = 0, bytes_out = 0;
  // A quantized EASGD exchange's delta and what the replica takes of it: kept, so that an
  // exchange allocates nothing.
  std::vector<float> delta, applied;
  // A resumed job's snapshot state has not come yet (sync_server_options::awaits_restore).
  bool awaiting_restore = false;
};

// A request as a round sees it: the replica it stands for is `replica` (length values), the
// request's own FP32 values or, in a quantized round, the replica its trainer's mirror rebuilt.
struct replica_request {
  const wire::sync_request& req;
  const float* replica;
};
using sync_server_self = sync_server_actor::stateful_pointer<sync_server_state>;

// The sync server's status, declared once: its JSON key, type and help on /metrics, and how it is
// read from the server's state.
const metrics::status_table<sync_server_state>& sync_server_fields() {
  using v = const sync_server_state&;
  using t = metrics::metric_type;
  static const metrics::status_table<sync_server_state> table = {
      {"role", t::status_only, "The service's role.", [](v) { return "sync"; }},
      {"name", t::status_only, "The sync server's name.", [](v st) { return st.options.name; }},
      {"sync", t::status_only, "The sync algorithm and its settings.",
       [](v st) { return sync::to_string(st.options.spec); }},
      {"slice", t::gauge, "Slice of the dense parameters served.", [](v st) { return st.options.slice; }},
      {"parameters", t::gauge, "Dense parameters in the slice.", [](v st) { return st.options.length; }},
      {"exchanges", t::counter, "Sync requests answered.", [](v st) { return st.exchanges; }},
      {"rounds", t::counter, "Sync rounds closed.", [](v st) { return st.round; }},
      {"closing_rounds", t::status_only, "Closing rounds (at the end of a scored epoch) completed.",
       [](v st) { return st.closing.completed; }},
      {"quantize", t::status_only, "How sync requests are quantized (int8 or none).",
       [](v st) { return st.options.quantize ? "int8" : "none"; }},
      {"bytes_in", t::counter, "Bytes of sync requests received (sync server).", [](v st) { return st.bytes_in; }},
      {"bytes_out", t::counter, "Bytes of sync replies sent (sync server).", [](v st) { return st.bytes_out; }},
      {"refused", t::counter, "Requests refused.", [](v st) { return st.refused; }},
      {"mirror_misses", t::counter, "Quantized sync requests against a mirror not held (sync server).",
       [](v st) { return st.mirror_misses; }},
      {"rounds_fenced", t::counter,
       "Sync requests refused: sent under a trainer membership that is over (sync server).",
       [](v st) { return st.rounds_fenced; }},
      {"live_trainers", t::gauge, "Trainers taking part in rounds.",
       [](v st) { return static_cast<std::uint64_t>(st.live_trainers); }},
  };
  return table;
}

body_ptr refuse(errc code, const std::string& message) { return make_body(wire::error_reply{code, message}); }

bool is_live(const sync_server_state& st, std::uint64_t trainer) {
  return st.live_incarnations.empty() ||
         std::find(st.live_incarnations.begin(), st.live_incarnations.end(), trainer) != st.live_incarnations.end();
}

// Live trainers that closed the current closing round and have not trained since: neither a
// regular round nor the closing round waits for them.
std::size_t resting_trainers(const sync_server_state& st) {
  std::size_t n = 0;
  for (const auto& [trainer, c] : st.closing.closed)
    if (c.resting && c.generation == st.closing.generation && is_live(st, trainer)) ++n;
  return n;
}

// How many replicas a regular MA or BMUF round waits for: the live trainers that still train.
std::size_t expected_contributors(const sync_server_state& st) {
  const std::size_t away = resting_trainers(st) + st.closing.waiting.size();
  return st.live_trainers > away ? st.live_trainers - away : 1;
}

sync::outer_options outer_options_of(const sync_server_state& st) {
  const auto trainers = std::max<std::size_t>(1, st.live_trainers);
  sync::outer_options o;
  o.momentum = static_cast<float>(st.options.outer_momentum >= 0 ? st.options.outer_momentum
                                                                 : sync::default_outer_momentum(st.options.spec.algo, trainers));
  o.lr = static_cast<float>(st.options.outer_lr);
  return o;
}

sync::bmuf_options bmuf_options_of(const sync_server_state& st) {
  const auto trainers = std::max<std::size_t>(1, st.live_trainers);
  sync::bmuf_options o;
  o.momentum = static_cast<float>(st.options.bmuf_momentum >= 0 ? st.options.bmuf_momentum
                                                                : sync::default_bmuf_momentum(trainers));
  o.block_lr = static_cast<float>(st.options.bmuf_block_lr);
  o.nesterov = st.options.bmuf_nesterov;
  return o;
}

float easgd_alpha_of(const sync_server_state& st) {
  const auto trainers = std::max<std::size_t>(1, st.live_trainers);
  return static_cast<float>(st.options.easgd_alpha > 0 ? st.options.easgd_alpha : sync::default_easgd_alpha(trainers));
}

// The outer optimizer after the inner algorithm moved `model` (the center, MA's target): the
// first move sets its anchor; a completed sweep of the live trainers takes the outer step.
void outer_step(sync_server_state& st, float* model, bool sweep_complete, bool lookahead) {
  if (!st.options.spec.outer_nesterov) return;
  if (!st.outer.initialized()) return st.outer.init(model, st.options.length);
  if (sweep_complete) st.outer.sweep_done(model, outer_options_of(st), lookahead);
}

bool sweep_complete(sync_server_state& st) { return st.sweep.complete(st.live_incarnations, st.live_trainers); }

// The error every participant of a round gets when its result is not finite; "" if it is.
std::string divergence(const sync_server_state& st, const std::vector<float>& target, const char* what) {
  for (float v : target)
    if (!std::isfinite(v))
      return st.options.name + ": the dense model diverged (a non-finite value after " + what + " " +
             std::to_string(st.round) + " of " + sync::to_string(st.options.spec) +
             "); lower --learning-rate, --bmuf-momentum, --bmuf-block-lr or --outer-momentum";
  return {};
}

// The answer that takes a trainer's slice to `target`: the target itself or, in a quantized
// round, target less the replica its request rebuilt (a trainer whose mirror is gone gets the
// full target; its next request is then full too).
body_ptr target_reply(sync_server_state& st, std::uint64_t trainer, bool quantized, std::uint32_t participants,
                      const std::vector<float>& target) {
  wire::sync_reply reply{st.round, false, participants, 0.0, {}};
  if (auto it = st.mirrors.find(trainer); quantized && it != st.mirrors.end()) {
    reply.distance = sync::relative_distance(it->second.replica().data(), target.data(), target.size());
    it->second.encode_target(target.data(), st.options.quantization_block, reply.quantized);
    reply.sequence = it->second.sequence();
    st.bytes_out += reply.quantized.bytes();
    return make_body(std::move(reply));
  }
  reply.params = target;
  st.bytes_out += target.size() * sizeof(float);
  return make_body(std::move(reply));
}

void close_round(sync_server_self self) {
  auto& st = self->state;
  if (st.contributors.empty()) return;
  const std::size_t n = st.options.length;
  std::vector<float> target(n);
  st.mean.mean(target.data());
  if (st.options.spec.algo == sync::algorithm::bmuf) {
    if (!st.bmuf.initialized()) {
      st.bmuf.init(target.data(), n);  // the first round's mean is the starting global model
    } else {
      std::vector<float> mean_copy = target;
      st.bmuf.step(mean_copy.data(), bmuf_options_of(st), target.data());
    }
  } else {
    for (const auto& c : st.contributors) st.sweep.saw(c.trainer);
    outer_step(st, target.data(), sweep_complete(st), true);
  }
  ++st.round;
  const auto participants = static_cast<std::uint32_t>(st.contributors.size());
  if (const std::string why = divergence(st, target, "round"); !why.empty()) {
    spdlog::error("{}", why);
    for (auto& c : st.contributors) c.promise.deliver(refuse(errc::out_of_range, why));
  } else {
    for (auto& c : st.contributors) c.promise.deliver(target_reply(st, c.trainer, c.quantized, participants, target));
    st.last_target = std::move(target);
  }
  st.contributors.clear();
  st.mean.reset(n);
  st.timer_armed = false;
}

// A regular MA or BMUF round closes once every trainer that still trains has sent its slice.
void close_round_if_complete(sync_server_self self) {
  auto& st = self->state;
  if (!st.contributors.empty() && st.contributors.size() >= expected_contributors(st)) close_round(self);
}

caf::result<body_ptr> serve_easgd(sync_server_self self, const replica_request& in) {
  auto& st = self->state;
  const auto& o = st.options;
  const auto& req = in.req;
  if (st.central.empty()) st.central.assign(in.replica, in.replica + o.length);  // the first replica seeds the center
  const double distance = sync::relative_distance(in.replica, st.central.data(), o.length);
  wire::sync_reply reply{++st.exchanges, true, 1, distance, {}};
  if (o.quantize) {
    // The center moves by the delta as the replica receives it: it gains what the replica gives up.
    auto& mirror = st.mirrors.at(req.trainer);
    st.delta.resize(o.length);
    st.applied.resize(o.length);
    sync::easgd_delta(in.replica, st.central.data(), easgd_alpha_of(st), st.delta.data(), o.length);
    mirror.encode_delta(st.delta.data(), o.quantization_block, reply.quantized, st.applied.data());
    sync::add(st.central.data(), st.applied.data(), o.length);
    reply.sequence = mirror.sequence();
    st.bytes_out += reply.quantized.bytes();
  } else {
    reply.params.resize(o.length);
    sync::easgd_step(in.replica, st.central.data(), easgd_alpha_of(st), reply.params.data(), o.length);
    st.bytes_out += reply.params.size() * sizeof(float);
  }
  st.sweep.saw(req.trainer);
  outer_step(st, st.central.data(), sweep_complete(st), true);
  return make_body(std::move(reply));
}

caf::result<body_ptr> join_round(sync_server_self self, const replica_request& in) {
  auto& st = self->state;
  const auto& req = in.req;
  for (auto it = st.contributors.begin(); it != st.contributors.end(); ++it) {
    if (it->trainer == req.trainer) {
      // The trainer gave up on this round (timeout) and sent again: its earlier request is void.
      it->promise.deliver(refuse(errc::cancelled, "superseded by a newer request of the same trainer"));
      st.contributors.erase(it);
      break;
    }
  }
  if (st.mean.size() != st.options.length) st.mean.reset(st.options.length);
  st.mean.add(in.replica);
  auto p = self->make_response_promise<body_ptr>();
  st.contributors.push_back({req.trainer, p, req.batches, st.options.quantize});
  if (st.contributors.size() >= expected_contributors(st)) {
    close_round(self);
  } else if (!st.timer_armed) {
    st.timer_armed = true;
    self->delayed_send(self, st.options.round_timeout, expire_atom::value, st.round);
  }
  return p;
}

// ---- the closing round ----

// The slice's model as it is: the center, BMUF's global model, MA's latest target; `fallback`
// before the first sync.
std::vector<float> held_model(const sync_server_state& st, const float* fallback) {
  const auto& held = st.options.spec.algo == sync::algorithm::bmuf ? st.bmuf.global()
                     : st.options.spec.algo == sync::algorithm::ma ? st.last_target
                                                                   : st.central;
  return held.size() == st.options.length ? held : std::vector<float>(fallback, fallback + st.options.length);
}

// Folds the closing round's replicas into the slice by one synchronous round of the algorithm
// and returns the model every participant takes. Only replicas that trained since their last
// closing round count (a restarted trainer that trained nothing holds the central model, not
// progress); when none did, the slice stays as it is.
std::vector<float> fold_closing(sync_server_state& st) {
  auto& c = st.closing;
  const std::size_t n = st.options.length;
  const bool trained = c.trained.count() > 0;
  std::vector<float> mean(n);
  (trained ? c.trained : c.all).mean(mean.data());
  switch (st.options.spec.algo) {
    case sync::algorithm::easgd:
      if (st.central.empty()) st.central = mean;
      else if (trained) sync::easgd_fold(mean.data(), c.trained.count(), easgd_alpha_of(st), st.central.data(), n);
      if (trained) outer_step(st, st.central.data(), true, false);
      return st.central;
    case sync::algorithm::bmuf:
      if (!st.bmuf.initialized()) {
        st.bmuf.init(mean.data(), n);
      } else if (trained) {
        auto o = bmuf_options_of(st);
        o.nesterov = false;  // the model is taken where it is
        std::vector<float> target(n);
        st.bmuf.step(mean.data(), o, target.data());
      }
      return st.bmuf.global();
    default:
      if (trained || st.last_target.empty()) {
        st.last_target = mean;
        if (trained) outer_step(st, st.last_target.data(), true, false);
      }
      return st.last_target;
  }
}

void finish_closing(sync_server_self self) {
  auto& st = self->state;
  auto& c = st.closing;
  if (c.waiting.empty()) return;
  const std::vector<float> target = fold_closing(st);
  const auto participants = static_cast<std::uint32_t>(c.waiting.size());
  const std::string why = divergence(st, target, "closing round");
  if (!why.empty()) spdlog::error("{}", why);
  for (auto& w : c.waiting) {
    c.closed[w.trainer] = {c.generation, w.batches, true};
    w.promise.deliver(why.empty() ? target_reply(st, w.trainer, w.quantized, participants, target)
                                  : refuse(errc::out_of_range, why));
  }
  spdlog::info("{}: closing round {} folded {} of {} trainers' final replicas", st.options.name,
               c.generation == std::numeric_limits<std::uint32_t>::max() ? std::string("at the end")
                                                                         : std::to_string(c.generation),
               c.trained.count(), participants);
  ++c.completed;
  ++c.instance;
  c.waiting.clear();
  c.all.reset(st.options.length);
  c.trained.reset(st.options.length);
  close_round_if_complete(self);  // it no longer waits for the trainers that closed
}

void finish_closing_if_complete(sync_server_self self) {
  auto& st = self->state;
  if (!st.closing.waiting.empty() && st.closing.waiting.size() + resting_trainers(st) >= st.live_trainers)
    finish_closing(self);
}

caf::result<body_ptr> join_closing(sync_server_self self, const replica_request& in) {
  auto& st = self->state;
  auto& c = st.closing;
  const auto& req = in.req;
  if (req.closing < c.generation)  // late for a closing round long over: take the model as it is
    return target_reply(st, req.trainer, st.options.quantize, 0, held_model(st, in.replica));
  if (req.closing > c.generation) {
    finish_closing(self);  // (an unfinished older one, should one be open)
    c.generation = req.closing;
  }
  auto prior = c.closed.find(req.trainer);
  const bool trained = prior == c.closed.end() ? req.batches > 0 : req.batches > prior->second.batches;
  auto same = std::find_if(c.waiting.begin(), c.waiting.end(), [&](const contributor& w) { return w.trainer == req.trainer; });
  if (same != c.waiting.end()) {  // a retry: the replica is in already
    same->promise.deliver(refuse(errc::cancelled, "superseded by a newer request of the same trainer"));
    c.waiting.erase(same);
  } else {
    if (c.all.size() != st.options.length) c.all.reset(st.options.length);
    if (c.trained.size() != st.options.length) c.trained.reset(st.options.length);
    c.all.add(in.replica);
    if (trained) c.trained.add(in.replica);
  }
  auto p = self->make_response_promise<body_ptr>();
  c.waiting.push_back({req.trainer, p, req.batches, st.options.quantize});
  if (c.waiting.size() == 1) self->delayed_send(self, st.options.round_timeout, close_expire_atom::value, c.instance);
  finish_closing_if_complete(self);
  close_round_if_complete(self);  // a regular round need not wait for this trainer any more
  return p;
}

// Quantized rounds: the replica a request stands for, rebuilt through its trainer's mirror (a
// full request starts the mirror anew); it stays in the mirror until the next request.
result<const float*> rebuild_replica(sync_server_state& st, const wire::sync_request& req) {
  auto& mirror = st.mirrors.try_emplace(req.trainer, st.options.length).first->second;
  if (req.quantized.values.empty()) mirror.decode_full(req.params.data());
  else SS_RETURN_IF_ERROR(mirror.decode(req.base, req.quantized));
  return mirror.replica().data();
}

// Why a request cannot be served as sent (another slice, the wrong count of values, FP32 and
// quantized values at once, quantized values in a job that does not quantize, a non-finite
// value); ok if it can.
status check_request(const sync_server_options& o, const wire::sync_request& in) {
  const bool quantized = !in.quantized.values.empty();
  const std::size_t values = quantized ? in.quantized.values.size() : in.params.size();
  if (in.slice != o.slice || in.offset != o.offset || values != o.length || (quantized && !in.params.empty()))
    return status(errc::invalid_argument,
                  o.name + " holds slice " + std::to_string(o.slice) + " = parameters [" + std::to_string(o.offset) +
                      ", " + std::to_string(o.offset + o.length) + "); the request is for slice " +
                      std::to_string(in.slice) + " at " + std::to_string(in.offset) + " with " +
                      std::to_string(values) + (quantized ? " quantized" : "") + " values" +
                      (quantized && !in.params.empty() ? " and FP32 ones" : "") +
                      " (do trainers and servers agree on --sync-servers?)");
  if (quantized && !o.quantize)
    return status(errc::invalid_argument,
                  o.name + ": a quantized sync request, but this job's rounds are not quantized (--sync-quantize none)");
  const auto bad = std::find_if(in.params.begin(), in.params.end(), [](float v) { return !std::isfinite(v); });
  if (bad != in.params.end())  // folded in, it would spread to every trainer through the center or the mean
    return status(errc::out_of_range,
                  o.name + ": trainer " + std::to_string(in.trainer) + "'s replica has a non-finite value (" +
                      std::to_string(*bad) + " at parameter " +
                      std::to_string(o.offset + static_cast<std::uint64_t>(bad - in.params.begin())) +
                      "); the model diverged: lower --learning-rate");
  return status::ok();
}

caf::result<body_ptr> serve_sync(sync_server_self self, const wire::sync_request& in) {
  auto& st = self->state;
  const auto& o = st.options;
  if (o.spec.algo == sync::algorithm::none)
    return refuse(errc::invalid_argument, o.name + ": the job does not synchronize (--sync none)");
  if (const status s = check_request(o, in); !s.is_ok()) {
    ++st.refused;
    return refuse(s.code(), s.message());
  }
  if (st.awaiting_restore)
    return refuse(errc::unavailable, o.name + " waits for the resumed snapshot's state from the coordinator");
  // A trainer dropped from the job (or back under a newer membership) syncs nothing of its old one.
  if (st.fence.fenced(in.trainer, in.membership)) {
    ++st.rounds_fenced;
    return refuse(errc::fenced, o.name + ": a round of trainer " + io::hex(in.trainer, 16) + " under membership " +
                                    std::to_string(in.membership) + ", which is over: not applied");
  }
  const bool quantized = !in.quantized.values.empty();
  st.bytes_in += quantized ? in.quantized.bytes() : in.params.size() * sizeof(float);
  const float* replica = in.params.data();
  if (o.quantize) {
    auto rebuilt = rebuild_replica(st, in);
    if (!rebuilt.is_ok()) {
      const status why = rebuilt.error();
      ++(why.code() == errc::not_found ? st.mirror_misses : st.refused);
      return refuse(why.code(), o.name + ": " + why.message());
    }
    replica = *rebuilt;
  }
  const replica_request req{in, replica};
  if (in.closing > 0) return join_closing(self, req);
  if (auto it = st.closing.closed.find(in.trainer); it != st.closing.closed.end()) it->second.resting = false;
  if (o.spec.algo == sync::algorithm::easgd) return serve_easgd(self, req);
  return join_round(self, req);
}

// A resumed job: start from the snapshot's state instead of the first replica.
body_ptr serve_restore(sync_server_self self, const wire::sync_restore& r) {
  auto& st = self->state;
  const auto& o = st.options;
  if (r.slice != o.slice || r.params.size() != o.length)
    return refuse(errc::invalid_argument, o.name + " holds slice " + std::to_string(o.slice) + " of " +
                                              std::to_string(o.length) + " parameters; the restore is for slice " +
                                              std::to_string(r.slice) + " with " + std::to_string(r.params.size()));
  st.awaiting_restore = false;
  if (st.exchanges > 0 || st.round > 0) {
    // Trainers synced already: their state is newer than the snapshot's.
    return make_body(wire::ack{});
  }
  const float* momentum = r.momentum.size() == r.params.size() ? r.momentum.data() : nullptr;
  if (o.spec.algo == sync::algorithm::bmuf)
    st.bmuf.restore(r.params.data(), momentum, o.length);
  else if (o.spec.algo == sync::algorithm::easgd)
    st.central = r.params;
  else if (o.spec.algo == sync::algorithm::ma)
    st.last_target = r.params;
  if (o.spec.outer_nesterov) st.outer.restore(r.params.data(), momentum, o.length);
  spdlog::info("{}: resumed from the snapshot's sync state ({} parameters{})", o.name, o.length,
               r.momentum.empty() ? "" : " and their momentum");
  return make_body(wire::ack{});
}

sync_server_actor::behavior_type sync_server(sync_server_self self, sync_server_options options) {
  self->state.options = std::move(options);
  self->state.mean.reset(self->state.options.length);
  if (self->state.options.awaits_restore) {
    self->state.awaiting_restore = true;
    self->delayed_send(self, self->state.options.restore_wait, restore_expire_atom::value);
  }
  return {
      [self](serve_atom, const envelope_ptr& env) -> caf::result<body_ptr> {
        auto& st = self->state;
        if (const auto* req = std::get_if<wire::sync_request>(&env->message)) return serve_sync(self, *req);
        if (std::holds_alternative<wire::dense_request>(env->message)) {
          // The slice's state: the central copy (EASGD), the global model and its momentum (BMUF),
          // the latest round's mean (MA); with -nesterov the outer momentum. Empty before the
          // first sync.
          const bool bmuf = st.options.spec.algo == sync::algorithm::bmuf;
          const auto& slice = bmuf ? st.bmuf.global()
                              : st.options.spec.algo == sync::algorithm::ma ? st.last_target
                                                                            : st.central;
          const auto& momentum = bmuf ? st.bmuf.momentum() : st.outer.momentum();
          return make_body(wire::dense_reply{st.exchanges + st.round, slice,
                                             momentum.size() == slice.size() ? momentum : std::vector<float>{}});
        }
        if (const auto* restore = std::get_if<wire::sync_restore>(&env->message)) return serve_restore(self, *restore);
        if (std::holds_alternative<wire::status_request>(env->message))
          return make_body(wire::status_reply{metrics::to_json(sync_server_fields(), st)});
        return refuse(errc::invalid_argument, std::string("a sync server does not serve ") + wire::message_name(env->message));
      },
      [self](expire_atom, std::uint64_t round) {
        auto& st = self->state;
        if (round != st.round || st.contributors.empty()) return;
        spdlog::warn("{}: round {} closes with {} of {} trainers after {} ms", st.options.name, round + 1,
                     st.contributors.size(), st.live_trainers, st.options.round_timeout.count());
        close_round(self);
      },
      [self](close_expire_atom, std::uint64_t instance) {
        auto& st = self->state;
        if (instance != st.closing.instance || st.closing.waiting.empty()) return;
        spdlog::warn("{}: closing round closes with {} of {} trainers after {} ms", st.options.name,
                     st.closing.waiting.size(), st.live_trainers, st.options.round_timeout.count());
        finish_closing(self);
      },
      [self](view_atom, const wire::cluster_view& view) {
        auto& st = self->state;
        st.live_trainers = std::max<std::size_t>(1, view.trainers.size());
        st.live_incarnations.clear();
        if (view.trainer_incarnations.size() == view.trainers.size()) st.live_incarnations = view.trainer_incarnations;
        st.fence.follow(view.trainer_incarnations, view.trainer_memberships, view.dropped_trainers);
        // The mirrors of trainers that left (a trainer that comes back sends its full slice).
        if (!st.live_incarnations.empty())
          for (auto it = st.mirrors.begin(); it != st.mirrors.end();)
            it = is_live(st, it->first) ? std::next(it) : st.mirrors.erase(it);
        // A trainer left: the open rounds may now be complete.
        finish_closing_if_complete(self);
        close_round_if_complete(self);
      },
      [](state_atom, wire::job_state) {},
      [self](restore_expire_atom) {
        auto& st = self->state;
        if (!st.awaiting_restore) return;
        st.awaiting_restore = false;
        spdlog::warn("{}: the resumed snapshot's state did not come within {} ms; the slice starts from the first "
                     "replica that syncs",
                     st.options.name, st.options.restore_wait.count());
      },
      [self](central_atom) -> std::vector<float> {
        auto& st = self->state;
        if (st.options.spec.algo == sync::algorithm::bmuf) return st.bmuf.global();
        if (st.options.spec.algo == sync::algorithm::easgd) return st.central;
        return st.last_target;
      },
  };
}

}  // namespace

metrics::field_list sync_server_field_list() { return metrics::describe(sync_server_fields()); }

sync_server_actor spawn_sync_server(caf::actor_system& sys, const gateway_actor& gateway,
                                    const sync_server_options& options) {
  auto a = sys.spawn(sync_server, options);
  // A sync server only stops with its service; anything else is a bug worth a loud line.
  a->attach_functor([name = options.name](const caf::error& reason) {
    if (reason && reason != caf::exit_reason::user_shutdown && reason != caf::exit_reason::kill)
      spdlog::error("{}: stopped unexpectedly: {}", name, caf::to_string(reason));
  });
  const request_server_actor server{a};
  caf::anon_send(gateway, route_atom::value, kind_of<wire::sync_request>(), server);
  caf::anon_send(gateway, route_atom::value, kind_of<wire::sync_restore>(), server);
  return a;
}

}  // namespace ss::actors
