#include "ss/actors/gateway.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <unordered_map>

#include "ss/actors/messages.hpp"
#include "ss/actors/status_metrics.hpp"
#include "ss/core/clock.hpp"
#include "ss/core/json.hpp"
#include "ss/core/log_limiter.hpp"
#include "ss/core/metrics/status_metrics.hpp"

namespace ss::actors {
namespace {

struct pending_call {
  caf::response_promise promise;
};

struct gateway_state {
  static inline const char* name = "gateway";
  transport* link_transport = nullptr;
  gateway_options options;
  std::shared_ptr<gateway_counters> counters;
  std::unordered_map<std::size_t, request_server_actor> routes;
  // Until (open_atom), when its service has routed every kind it serves (several actors route
  // theirs one after another), a request nobody serves is answered "starting" (unavailable: the
  // caller retries); after, "does not serve" (invalid_argument: it never will).
  bool opened = false;
  std::unordered_map<std::string, std::uint32_t> links;  // endpoint -> link
  std::unordered_map<std::uint64_t, pending_call> pending;
  std::uint64_t next_request_id = 1;
  // Refused control requests are logged at most once a minute per sender and message.
  log_limiter refusal_log{60'000'000'000};
  steady_clock_source clock;
};

using gateway_self = gateway_actor::stateful_pointer<gateway_state>;

void send_frame(gateway_self self, const peer_address& to, const wire::envelope& e) {
  auto st = self->state.link_transport->send(to, wire::encode(e));
  if (!st.is_ok()) {
    self->state.counters->send_failures.fetch_add(1, std::memory_order_relaxed);
    spdlog::debug("{}: cannot send {}: {}", self->state.options.name, wire::message_name(e.message), st.message());
  }
}

void reply(gateway_self self, const peer_address& to, std::uint64_t request_id, wire::body b) {
  if (request_id == 0) return;  // a one-way message wants no answer
  wire::envelope e;
  e.request_id = request_id;
  e.message = std::move(b);
  send_frame(self, to, e);
}

std::string stats_json(gateway_self self);

// Control requests only from a sender allowed to control the job; each one logged with its sender.
bool authorized(gateway_self self, const peer_address& from, const envelope_ptr& env) {
  auto& st = self->state;
  if (class_of(env->message) != request_class::control) return true;
  const status verdict = authorize(st.options.authority, from.sender, env->message);
  if (verdict.is_ok()) {
    st.counters->control_served.fetch_add(1, std::memory_order_relaxed);
    // An export asks for every page of rows, a publisher every interval: those go to the debug
    // log, the rest to info.
    const bool routine = std::holds_alternative<wire::dump_request>(env->message) ||
                         std::holds_alternative<wire::publish_rows_request>(env->message);
    const auto level = routine ? spdlog::level::debug : spdlog::level::info;
    spdlog::log(level, "{}: serving {} from {}", st.options.name, wire::message_name(env->message), from.sender.describe());
    return true;
  }
  st.counters->control_refused.fetch_add(1, std::memory_order_relaxed);
  std::uint64_t held_back = 0;
  if (st.refusal_log.admit(from.sender.describe() + "/" + wire::message_name(env->message), st.clock.now_ns(),
                           &held_back)) {
    spdlog::warn("{}: {}{}", st.options.name, verdict.message(),
                 held_back > 0 ? " (" + std::to_string(held_back) + " more since the last report)" : std::string());
  }
  reply(self, from, env->request_id, wire::error_reply{errc::permission_denied, st.options.name + ": " + verdict.message()});
  return false;
}

void serve(gateway_self self, const peer_address& from, const envelope_ptr& env) {
  if (!authorized(self, from, env)) return;
  auto it = self->state.routes.find(env->message.index());
  if (it == self->state.routes.end()) {
    self->state.counters->requests_unrouted.fetch_add(1, std::memory_order_relaxed);
    const bool starting = !self->state.opened;
    reply(self, from, env->request_id,
          starting ? wire::error_reply{errc::unavailable, std::string(self->state.options.name) +
                                                              " is starting and serves nothing yet"}
                   : wire::error_reply{errc::invalid_argument, std::string(self->state.options.name) +
                                                                   " does not serve " + wire::message_name(env->message)});
    return;
  }
  auto& counters = *self->state.counters;
  if (env->request_id == 0) {
    counters.requests_served.fetch_add(1, std::memory_order_relaxed);
    self->send(it->second, serve_atom::value, env);
    return;
  }
  const std::uint32_t bound = self->state.options.max_requests_in_flight;
  const bool status = std::holds_alternative<wire::status_request>(env->message);
  // Status is never shed: an operator must be able to see an overload.
  if (bound != 0 && !status && counters.requests_in_flight.load(std::memory_order_relaxed) >= bound) {
    counters.requests_shed.fetch_add(1, std::memory_order_relaxed);
    reply(self, from, env->request_id,
          wire::error_reply{errc::unavailable, self->state.options.name + " is overloaded: " + std::to_string(bound) +
                                                   " requests in flight (--max-inflight-requests); ask again"});
    return;
  }
  counters.requests_served.fetch_add(1, std::memory_order_relaxed);
  counters.requests_in_flight.fetch_add(1, std::memory_order_relaxed);
  const std::uint64_t id = env->request_id;
  self->request(it->second, caf::infinite, serve_atom::value, env)
      .then([self, from, id, status](const body_ptr& b) {
              self->state.counters->requests_in_flight.fetch_sub(1, std::memory_order_relaxed);
              // A status answer also carries this service's transport counters.
              const auto* s = std::get_if<wire::status_reply>(b.get());
              if (status && s != nullptr) {
                reply(self, from, id,
                      wire::status_reply{json_object().add_raw("service", s->json.empty() ? "{}" : s->json)
                                             .add_raw("transport", stats_json(self))
                                             .str()});
                return;
              }
              reply(self, from, id, *b);
            },
            [self, from, id](const caf::error& err) {
              self->state.counters->requests_in_flight.fetch_sub(1, std::memory_order_relaxed);
              // A handler that is gone: the service is stopping, and the caller may ask its successor.
              if (err == caf::sec::request_receiver_down)
                return reply(self, from, id, wire::error_reply{errc::unavailable, self->state.options.name + " is stopping"});
              reply(self, from, id, wire::error_reply{errc::internal, self->system().render(err)});
            });
}

gateway_actor::behavior_type gateway(gateway_self self, transport* t, gateway_options options,
                                     std::shared_ptr<gateway_counters> counters) {
  self->state.link_transport = t;
  self->state.options = std::move(options);
  self->state.counters = std::move(counters);
  return {
      [self](route_atom, std::size_t kind, const request_server_actor& handler) { self->state.routes[kind] = handler; },
      [self](open_atom) { self->state.opened = true; },
      [self](link_atom, const std::string& endpoint) -> caf::result<std::uint32_t> {
        auto& links = self->state.links;
        if (auto it = links.find(endpoint); it != links.end()) return it->second;
        auto link = self->state.link_transport->connect(endpoint);
        if (!link.is_ok())
          return caf::make_error(caf::sec::cannot_connect_to_node, link.error().message());
        links.emplace(endpoint, *link);
        return *link;
      },
      [self](call_atom, std::uint32_t link, const body_ptr& b, caf::timespan timeout) -> caf::result<envelope_ptr> {
        auto promise = self->make_response_promise<envelope_ptr>();
        const std::uint64_t id = self->state.next_request_id++;
        wire::envelope e;
        e.request_id = id;
        e.message = *b;
        self->state.counters->calls.fetch_add(1, std::memory_order_relaxed);
        auto st = self->state.link_transport->send(peer_address{link, {}}, wire::encode(e));
        if (!st.is_ok()) {
          self->state.counters->send_failures.fetch_add(1, std::memory_order_relaxed);
          promise.deliver(caf::make_error(caf::sec::request_receiver_down, st.message()));
          return promise;
        }
        self->state.pending.emplace(id, pending_call{promise});
        self->delayed_send(self, timeout, expire_atom::value, id);
        return promise;
      },
      [self](tell_atom, std::uint32_t link, const body_ptr& b) {
        wire::envelope e;
        e.message = *b;
        send_frame(self, peer_address{link, {}}, e);
      },
      [self](expire_atom, std::uint64_t id) {
        auto it = self->state.pending.find(id);
        if (it == self->state.pending.end()) return;
        self->state.counters->call_timeouts.fetch_add(1, std::memory_order_relaxed);
        it->second.promise.deliver(caf::make_error(caf::sec::request_timeout));
        self->state.pending.erase(it);
      },
      [self](inbound_atom, const peer_address& from, const envelope_ptr& env) {
        if (from.link != 0) {
          // On an outbound link every frame answers one of our calls.
          auto it = self->state.pending.find(env->request_id);
          if (it == self->state.pending.end()) {
            self->state.counters->late_replies.fetch_add(1, std::memory_order_relaxed);
            return;
          }
          it->second.promise.deliver(env);
          self->state.pending.erase(it);
          return;
        }
        serve(self, from, env);
      },
      // What a handler answered to a one-way message (CAF returns handler results to the
      // sender even for plain sends): nobody waits for it.
      [](const body_ptr&) {},
      [self](stats_atom) -> std::string { return stats_json(self); },
  };
}

// The transport section of every service's status, declared once: the JSON key, the type and
// help on /metrics (shadowsync_transport_<name>), and how each value is read.
struct gateway_view {
  const gateway_counters& c;
  const transport_stats& ts;
  const gateway_options& options;
  std::size_t pending_calls;
};

const metrics::status_table<gateway_view>& gateway_fields() {
  using v = const gateway_view&;
  using t = metrics::metric_type;
  static const metrics::status_table<gateway_view> table = metrics::concat<gateway_view>({
      metrics::counter_fields<gateway_counters, gateway_view>([](v g) -> const gateway_counters& { return g.c; }),
      {
        {"max_requests_in_flight", t::gauge, "The in-flight bound.", [](v g) { return g.options.max_requests_in_flight; }},
        {"send_failures", t::counter, "Frames that could not be sent.",
         [](v g) { return g.c.send_failures.load() + g.ts.send_failures; }},
        {"frames_in", t::counter, "Frames received.", [](v g) { return g.ts.frames_in; }},
        {"frames_out", t::counter, "Frames sent.", [](v g) { return g.ts.frames_out; }},
        {"bytes_in", t::counter, "Bytes received.", [](v g) { return g.ts.bytes_in; }},
        {"bytes_out", t::counter, "Bytes sent.", [](v g) { return g.ts.bytes_out; }},
        {"transport_rejected", t::counter, "Frames the transport refused (queue bounds).",
         [](v g) { return g.ts.frames_rejected; }},
        {"queue_depth", t::gauge, "Frames queued for sending.", [](v g) { return g.ts.queue_depth; }},
        {"queue_high_water", t::gauge, "Most frames queued at once.", [](v g) { return g.ts.queue_high_water; }},
        {"auth_refused", t::counter, "Connections refused by CURVE authentication.", [](v g) { return g.ts.auth_refused; }},
        {"handshakes_failed", t::counter, "Connections that failed their handshake.",
         [](v g) { return g.ts.handshakes_failed; }},
        {"connections_open", t::gauge, "Connections open.", [](v g) { return g.ts.connections_open; }},
        {"connections_refused", t::counter, "Connections refused at the connection bound.",
         [](v g) { return g.ts.connections_refused; }},
        {"max_connections", t::gauge, "The connection bound.", [](v g) { return g.ts.max_connections; }},
        {"links_refused", t::counter, "Links to peers refused.", [](v g) { return g.ts.links_refused; }},
        {"max_frame_bytes", t::gauge, "The largest frame accepted.",
         [](v g) { return static_cast<std::uint64_t>(g.options.limits.max_frame_bytes); }},
        {"pending_calls", t::gauge, "Requests to peers awaiting a reply.",
         [](v g) { return static_cast<std::uint64_t>(g.pending_calls); }},

      },
  });
  return table;
}

std::string stats_json(gateway_self self) {
  const auto ts = self->state.link_transport->stats();
  return metrics::to_json(gateway_fields(),
                          gateway_view{*self->state.counters, ts, self->state.options, self->state.pending.size()});
}

}  // namespace

metrics::field_list gateway_field_list() { return metrics::describe(gateway_fields()); }

gateway_actor spawn_gateway(caf::actor_system& sys, transport& t, const gateway_options& options,
                            std::shared_ptr<gateway_counters> counters) {
  auto gw = sys.spawn(gateway, &t, options, counters);
  const auto limits = options.limits;
  const std::string name = options.name;
  // Runs on the transport's thread: decode (hostile input stops here), then hand over.
  // Refusal lines: at most one a minute per sender (a flood of garbage must not flood the log).
  auto refusal_log = std::make_shared<log_limiter>(60'000'000'000);
  t.on_frame([gw, limits, counters, &t, name, refusal_log, clock = steady_clock_source()](const peer_address& from,
                                                                                       wire::frame f) {
    auto env = wire::decode(*f, limits);
    if (env.is_ok()) {
      counters->frames_decoded.fetch_add(1, std::memory_order_relaxed);
      caf::anon_send(gw, inbound_atom::value, from, std::make_shared<const wire::envelope>(std::move(*env)));
      return;
    }
    const auto& err = env.error();
    if (err.code() == errc::version_mismatch) {
      counters->version_mismatches.fetch_add(1, std::memory_order_relaxed);
    } else {
      counters->frames_refused.fetch_add(1, std::memory_order_relaxed);
    }
    const std::string sender = from.link != 0 ? "link " + std::to_string(from.link) : from.sender.describe();
    std::uint64_t held_back = 0;
    if (refusal_log->admit(sender, clock.now_ns(), &held_back)) {
      spdlog::warn("{}: refused a frame of {} bytes from {}: {}{}", name, f->size(), sender, err.message(),
                   held_back > 0 ? " (and " + std::to_string(held_back) + " more refused frames from there since the "
                                                                           "last report)"
                                 : std::string());
    }
    // Answer a request we can identify, so the peer learns why instead of timing out.
    auto header = wire::peek_header(*f, limits);
    if (from.link == 0 && header.is_ok() && header->request_id != 0) {
      wire::envelope e;
      e.request_id = header->request_id;
      e.message = wire::error_reply{err.code(), name + ": " + err.message()};
      (void)t.send(from, wire::encode(e));
    }
  });
  return gw;
}

}  // namespace ss::actors
