#include "ss/actors/member.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <vector>

#include "ss/actors/actors.hpp"
#include "ss/actors/messages.hpp"

namespace ss::actors {
namespace {

struct member_state {
  static inline const char* name = "member";
  member_options options;
  gateway_actor gateway;
  std::uint32_t link = 0;
  bool registered = false;
  bool registering = false;
  std::uint64_t registrations = 0;  // accepted ones: more than one after a coordinator forgot us
  std::uint64_t member_id = 0;
  wire::register_reply registration;
  std::vector<caf::response_promise> awaiting;
  std::vector<view_subscriber_actor> subscribers;
  bool view_known = false;
  wire::cluster_view view;  // the newest view seen (registration or heartbeat): what a new subscriber gets
  wire::job_state state = wire::job_state::waiting;
  bool state_known = false;
  std::uint64_t failed_heartbeats = 0;
};

using member_self = member_agent_actor::stateful_pointer<member_state>;

// By content, not by epoch alone: a restarted coordinator numbers its views afresh, so a new
// view can carry the epoch of the old coordinator's last one.
bool same_view(const wire::cluster_view& a, const wire::cluster_view& b) {
  return a.epoch == b.epoch && a.shards == b.shards && a.readers == b.readers && a.trainers == b.trainers &&
         a.syncs == b.syncs && a.trainer_incarnations == b.trainer_incarnations &&
         a.shard_incarnations == b.shard_incarnations && a.sync_incarnations == b.sync_incarnations &&
         a.coordinator == b.coordinator && a.trainer_memberships == b.trainer_memberships &&
         a.dropped_trainers == b.dropped_trainers && a.hold_input == b.hold_input &&
         a.placement_shards == b.placement_shards && a.reshaping == b.reshaping;
}

void publish(member_self self, const wire::cluster_view& view, wire::job_state state) {
  auto& st = self->state;
  if (!st.view_known || !same_view(view, st.view)) {
    st.view_known = true;
    st.view = view;
    for (auto& s : st.subscribers) self->send(s, view_atom::value, view);
  }
  if (!st.state_known || state != st.state) {
    st.state = state;
    st.state_known = true;
    for (auto& s : st.subscribers) self->send(s, state_atom::value, state);
  }
}

void heartbeat_once(member_self self);

caf::error refusal(const wire::error_reply& err) {
  return caf::make_error(caf::sec::runtime_error, static_cast<std::int32_t>(err.code), err.message);
}

void try_register(member_self self) {
  auto& st = self->state;
  if (st.registering) return;
  st.registering = true;
  self->request(st.gateway, caf::infinite, call_atom::value, st.link, make_body(st.options.identity),
                caf::timespan{st.options.request_timeout})
      .then(
          [self](const envelope_ptr& env) {
            auto& s = self->state;
            s.registering = false;
            const auto* err = std::get_if<wire::error_reply>(&env->message);
            if (err != nullptr && (err->code == errc::unavailable || err->code == errc::timeout)) {
              // A coordinator that is starting (or resuming): retried on the next tick.
              if (s.failed_heartbeats++ % 10 == 0)
                spdlog::warn("{}: the coordinator is not ready: {}", s.options.identity.name, err->message);
              return;
            }
            if (err != nullptr) {
              spdlog::error("{}: the coordinator refused registration: {}", s.options.identity.name, err->message);
              // A refusal is final for this configuration (version, index out of range, a name a
              // live process holds, ...): whoever waits learns why, and the service ends.
              auto why = refusal(*err);
              for (auto& p : s.awaiting) p.deliver(why);
              s.awaiting.clear();
              self->quit(why);
              return;
            }
            const auto* reply = std::get_if<wire::register_reply>(&env->message);
            if (reply == nullptr) {
              spdlog::warn("{}: unexpected answer to register: {}", s.options.identity.name,
                           wire::message_name(env->message));
              return;
            }
            const bool first = s.registrations++ == 0;
            s.registered = true;
            s.member_id = reply->member_id;
            // A trainer asks for this membership when it registers again (a coordinator restart).
            s.options.identity.membership = reply->membership;
            s.registration = *reply;
            spdlog::info("{}: registered with the coordinator as member {}{}", s.options.identity.name,
                         reply->member_id, first ? "" : " (again)");
            for (auto& p : s.awaiting) p.deliver(*reply);
            s.awaiting.clear();
            publish(self, reply->view, reply->state);
            // A restarted coordinator knows only its snapshot's progress (a reader's committed
            // position, a trainer's counts): report ours now, not a heartbeat interval later.
            if (!first && s.options.progress) heartbeat_once(self);
          },
          [self](const caf::error&) {
            auto& s = self->state;
            s.registering = false;  // retried on the next tick
            if (s.failed_heartbeats++ % 10 == 0)
              spdlog::warn("{}: waiting for the coordinator at {} to accept the registration",
                           s.options.identity.name, s.options.coordinator);
          });
}

void heartbeat_once(member_self self) {
  auto& st = self->state;
  wire::heartbeat hb;
  hb.member_id = st.member_id;
  if (st.options.progress) hb.progress = st.options.progress();
  self->request(st.gateway, caf::infinite, call_atom::value, st.link, make_body(std::move(hb)),
                caf::timespan{st.options.request_timeout})
      .then(
          [self](const envelope_ptr& env) {
            auto& s = self->state;
            const auto* reply = std::get_if<wire::heartbeat_reply>(&env->message);
            if (reply == nullptr) return;
            if (s.failed_heartbeats > 0)
              spdlog::info("{}: the coordinator answers again", s.options.identity.name);
            s.failed_heartbeats = 0;
            if (!reply->known) {
              spdlog::warn("{}: the coordinator does not know this member (it restarted?): registering again",
                           s.options.identity.name);
              s.registered = false;
              try_register(self);
              return;
            }
            publish(self, reply->view, reply->state);
          },
          [self](const caf::error&) {
            auto& s = self->state;
            if (s.failed_heartbeats++ == 0)
              spdlog::warn("{}: no answer from the coordinator at {}; still trying", s.options.identity.name,
                           s.options.coordinator);
          });
}

member_agent_actor::behavior_type member_agent(member_self self, gateway_actor gateway, member_options options) {
  self->state.options = std::move(options);
  self->state.gateway = std::move(gateway);
  self->request(self->state.gateway, caf::infinite, link_atom::value, self->state.options.coordinator)
      .then(
          [self](std::uint32_t link) {
            self->state.link = link;
            try_register(self);
            self->send(self, tick_atom::value);
          },
          [self](const caf::error& err) {
            spdlog::error("{}: cannot reach the coordinator at {}: {}", self->state.options.identity.name,
                          self->state.options.coordinator, self->system().render(err));
            self->quit(err);
          });
  return {
      [self](await_atom) -> caf::result<wire::register_reply> {
        if (self->state.registered) return self->state.registration;
        auto p = self->make_response_promise<wire::register_reply>();
        self->state.awaiting.push_back(p);
        return p;
      },
      [self](view_atom, const view_subscriber_actor& subscriber) {
        self->state.subscribers.push_back(subscriber);
        if (self->state.registered) {
          // The newest view, not the registration's: members that joined since must be in it.
          self->send(subscriber, view_atom::value, self->state.view);
          self->send(subscriber, state_atom::value, self->state.state);
        }
      },
      [self](tick_atom) {
        auto& st = self->state;
        if (st.registered) heartbeat_once(self);
        else try_register(self);
        // While the job waits for its members, poll faster so everyone starts within a beat of
        // each other (the coordinator cannot push the start); and while a live reshard waits for
        // every member to apply each of its views, so that the input is held for milliseconds more
        // than the rows take to move, not for heartbeats.
        const bool waiting = !st.state_known || st.state == wire::job_state::waiting || st.view.reshaping;
        const auto fast = std::chrono::milliseconds(50);
        self->delayed_send(self, waiting ? std::min(fast, st.options.heartbeat_interval) : st.options.heartbeat_interval,
                           tick_atom::value);
      },
      [self](stop_atom, const std::string& reason) {
        auto& st = self->state;
        if (st.registered) {
          // anon_send: CAF 0.17 lets a typed actor send() only to typed ones; a tell's sender is unused.
          caf::anon_send(st.gateway, tell_atom::value, st.link, make_body(wire::leave{st.member_id, reason}));
        }
        self->quit();
      },
  };
}

}  // namespace

member_agent_actor spawn_member_agent(caf::actor_system& sys, gateway_actor gateway, member_options options) {
  return sys.spawn(member_agent, std::move(gateway), std::move(options));
}

std::optional<status> registration_refusal(const caf::error& err) {
  if (err != caf::sec::runtime_error || !err.context().match_elements<std::int32_t, std::string>())
    return std::nullopt;
  return status(static_cast<errc>(err.context().get_as<std::int32_t>(0)), err.context().get_as<std::string>(1));
}

}  // namespace ss::actors
