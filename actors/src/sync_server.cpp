#include "ss/actors/sync_server.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <cmath>
#include <vector>

#include "ss/actors/gateway.hpp"
#include "ss/actors/messages.hpp"
#include "ss/core/json.hpp"

namespace ss::actors {
namespace {

struct contributor {
  std::uint64_t trainer;
  caf::response_promise promise;
};

struct sync_server_state {
  static inline const char* name = "sync-server";
  sync_server_options options;
  std::size_t live_trainers = 1;
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
};
using sync_server_actor = caf::stateful_actor<sync_server_state>;

body_ptr refuse(errc code, const std::string& message) { return make_body(wire::error_reply{code, message}); }

void close_round(sync_server_actor* self) {
  auto& st = self->state;
  if (st.contributors.empty()) return;
  const std::size_t n = st.options.length;
  std::vector<float> target(n);
  st.mean.mean(target.data());
  if (st.options.spec.algo == sync::algorithm::bmuf) {
    if (!st.bmuf.initialized()) {
      st.bmuf.init(target.data(), n);  // the first round's mean is the starting global model
    } else {
      const auto trainers = std::max<std::size_t>(1, st.live_trainers);
      sync::bmuf_options o;
      o.momentum = static_cast<float>(st.options.bmuf_momentum >= 0 ? st.options.bmuf_momentum
                                                                    : sync::default_bmuf_momentum(trainers));
      o.block_lr = static_cast<float>(st.options.bmuf_block_lr);
      o.nesterov = st.options.bmuf_nesterov;
      std::vector<float> mean_copy = target;
      st.bmuf.step(mean_copy.data(), o, target.data());
    }
  }
  ++st.round;
  const auto participants = static_cast<std::uint32_t>(st.contributors.size());
  for (float v : target) {
    if (!std::isfinite(v)) {
      const std::string why = st.options.name + ": the dense model diverged (a non-finite value after round " +
                              std::to_string(st.round) + " of " + sync::to_string(st.options.spec) +
                              "); lower --learning-rate, --bmuf-momentum or --bmuf-block-lr";
      spdlog::error("{}", why);
      for (auto& c : st.contributors) c.promise.deliver(refuse(errc::out_of_range, why));
      st.contributors.clear();
      st.mean.reset(n);
      st.timer_armed = false;
      return;
    }
  }
  for (auto& c : st.contributors) c.promise.deliver(make_body(wire::sync_reply{st.round, false, participants, 0.0, target}));
  st.last_target = std::move(target);
  st.contributors.clear();
  st.mean.reset(n);
  st.timer_armed = false;
}

caf::result<body_ptr> serve_sync(sync_server_actor* self, const wire::sync_request& req) {
  auto& st = self->state;
  const auto& o = st.options;
  if (req.slice != o.slice || req.offset != o.offset || req.params.size() != o.length)
    return refuse(errc::invalid_argument,
                  o.name + " holds slice " + std::to_string(o.slice) + " = parameters [" + std::to_string(o.offset) +
                      ", " + std::to_string(o.offset + o.length) + "); the request is for slice " +
                      std::to_string(req.slice) + " at " + std::to_string(req.offset) + " with " +
                      std::to_string(req.params.size()) + " values (do trainers and servers agree on --sync-servers?)");
  if (o.spec.algo == sync::algorithm::easgd) {
    if (st.central.empty()) st.central = req.params;  // the first replica seeds the center
    const double distance = sync::relative_distance(req.params.data(), st.central.data(), o.length);
    const auto trainers = std::max<std::size_t>(1, st.live_trainers);
    const float alpha = static_cast<float>(o.easgd_alpha > 0 ? o.easgd_alpha : sync::default_easgd_alpha(trainers));
    wire::sync_reply reply{++st.exchanges, true, 1, distance, std::vector<float>(o.length)};
    sync::easgd_step(req.params.data(), st.central.data(), alpha, reply.params.data(), o.length);
    return make_body(std::move(reply));
  }
  if (o.spec.algo == sync::algorithm::ma || o.spec.algo == sync::algorithm::bmuf) {
    for (auto it = st.contributors.begin(); it != st.contributors.end(); ++it) {
      if (it->trainer == req.trainer) {
        // The trainer gave up on this round (timeout) and sent again: its earlier request is void.
        it->promise.deliver(refuse(errc::cancelled, "superseded by a newer request of the same trainer"));
        st.contributors.erase(it);
        break;
      }
    }
    if (st.mean.size() != o.length) st.mean.reset(o.length);
    st.mean.add(req.params.data());
    auto p = self->make_response_promise<body_ptr>();
    st.contributors.push_back({req.trainer, p});
    if (st.contributors.size() >= std::max<std::size_t>(1, st.live_trainers)) {
      close_round(self);
    } else if (!st.timer_armed) {
      st.timer_armed = true;
      self->delayed_send(self, o.round_timeout, expire_atom::value, st.round);
    }
    return p;
  }
  return refuse(errc::invalid_argument, o.name + ": the job does not synchronize (--sync none)");
}

// A resumed job: start from the snapshot's state instead of the first replica.
body_ptr serve_restore(sync_server_actor* self, const wire::sync_restore& r) {
  auto& st = self->state;
  const auto& o = st.options;
  if (r.slice != o.slice || r.params.size() != o.length)
    return refuse(errc::invalid_argument, o.name + " holds slice " + std::to_string(o.slice) + " of " +
                                              std::to_string(o.length) + " parameters; the restore is for slice " +
                                              std::to_string(r.slice) + " with " + std::to_string(r.params.size()));
  if (st.exchanges > 0 || st.round > 0) {
    // Trainers synced already: their state is newer than the snapshot's.
    return make_body(wire::ack{});
  }
  if (o.spec.algo == sync::algorithm::bmuf)
    st.bmuf.restore(r.params.data(), r.momentum.size() == r.params.size() ? r.momentum.data() : nullptr, o.length);
  else if (o.spec.algo == sync::algorithm::easgd)
    st.central = r.params;
  else if (o.spec.algo == sync::algorithm::ma)
    st.last_target = r.params;
  spdlog::info("{}: resumed from the snapshot's sync state ({} parameters{})", o.name, o.length,
               r.momentum.empty() ? "" : " and their momentum");
  return make_body(wire::ack{});
}

caf::behavior sync_server(sync_server_actor* self, sync_server_options options) {
  self->state.options = std::move(options);
  self->state.mean.reset(self->state.options.length);
  return {
      [self](serve_atom, const envelope_ptr& env) -> caf::result<body_ptr> {
        auto& st = self->state;
        if (const auto* req = std::get_if<wire::sync_request>(&env->message)) return serve_sync(self, *req);
        if (std::holds_alternative<wire::dense_request>(env->message)) {
          // The slice's state: the central copy (EASGD), the global model and its momentum (BMUF),
          // the latest round's mean (MA). Empty before the first sync.
          const bool bmuf = st.options.spec.algo == sync::algorithm::bmuf;
          const auto& slice = bmuf ? st.bmuf.global()
                              : st.options.spec.algo == sync::algorithm::ma ? st.last_target
                                                                            : st.central;
          return make_body(wire::dense_reply{st.exchanges + st.round, slice,
                                             bmuf ? st.bmuf.momentum() : std::vector<float>{}});
        }
        if (const auto* restore = std::get_if<wire::sync_restore>(&env->message)) return serve_restore(self, *restore);
        if (std::holds_alternative<wire::status_request>(env->message))
          return make_body(wire::status_reply{json_object()
                                                  .add("role", "sync")
                                                  .add("name", st.options.name)
                                                  .add("sync", sync::to_string(st.options.spec))
                                                  .add("slice", st.options.slice)
                                                  .add("parameters", st.options.length)
                                                  .add("exchanges", st.exchanges)
                                                  .add("rounds", st.round)
                                                  .add("live_trainers", static_cast<std::uint64_t>(st.live_trainers))
                                                  .str()});
        return refuse(errc::invalid_argument, std::string("a sync server does not serve ") + wire::message_name(env->message));
      },
      [self](expire_atom, std::uint64_t round) {
        auto& st = self->state;
        if (round != st.round || st.contributors.empty()) return;
        spdlog::warn("{}: round {} closes with {} of {} trainers after {} ms", st.options.name, round + 1,
                     st.contributors.size(), st.live_trainers, st.options.round_timeout.count());
        close_round(self);
      },
      [self](view_atom, const wire::cluster_view& view) {
        auto& st = self->state;
        st.live_trainers = std::max<std::size_t>(1, view.trainers.size());
        // A trainer left: the open round may now be complete.
        if (!st.contributors.empty() && st.contributors.size() >= st.live_trainers) close_round(self);
      },
      [](state_atom, wire::job_state) {},
      [self](central_atom) -> std::vector<float> {
        auto& st = self->state;
        if (st.options.spec.algo == sync::algorithm::bmuf) return st.bmuf.global();
        if (st.options.spec.algo == sync::algorithm::easgd) return st.central;
        return st.last_target;
      },
  };
}

}  // namespace

caf::actor spawn_sync_server(caf::actor_system& sys, const caf::actor& gateway, const sync_server_options& options) {
  auto a = sys.spawn(sync_server, options);
  // A sync server only stops with its service; anything else is a bug worth a loud line.
  a->attach_functor([name = options.name](const caf::error& reason) {
    if (reason && reason != caf::exit_reason::user_shutdown && reason != caf::exit_reason::kill)
      spdlog::error("{}: stopped unexpectedly: {}", name, caf::to_string(reason));
  });
  caf::anon_send(gateway, route_atom::value, kind_of<wire::sync_request>(), a);
  caf::anon_send(gateway, route_atom::value, kind_of<wire::sync_restore>(), a);
  return a;
}

}  // namespace ss::actors
