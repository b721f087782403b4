// What the actor test units share: the headers of every actor, and helpers: a served request
// answered by an actor, a call through a gateway, an echo service, a node (a transport and its
// gateway) on the in-memory network, and a sync server's options.
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "actor_fixture.hpp"
#include "ss/actors/coordinator.hpp"
#include "ss/actors/gateway.hpp"
#include "ss/actors/member.hpp"
#include "ss/actors/messages.hpp"
#include "ss/actors/reader.hpp"
#include "ss/actors/shard.hpp"
#include "ss/actors/sync_server.hpp"
#include "ss/actors/trainer.hpp"
#include "ss/core/data/generator.hpp"
#include "ss/core/embedding/memory_rows.hpp"
#include "ss/core/embedding/sharding.hpp"
#include "ss/core/job/job_options.hpp"
#include "ss/wire/codec.hpp"
#include "support/process.hpp"

namespace ss::test {

using namespace ss::actors;

// Sends `body` to `target` as a served request and returns what the actor answered. `target`: a
// caf::actor, or a typed handle that accepts serve_atom (checked when the test compiles). A
// detached target (its own thread, outside the test scheduler) answers in real time: give it
// `wait`, within which the scheduler is settled until the answer is in.
template <class Handle>
std::optional<wire::body> ask(actor_fixture& f, const Handle& target, wire::body body,
                              std::chrono::milliseconds wait = std::chrono::milliseconds(0)) {
  auto out = std::make_shared<std::optional<wire::body>>();
  auto env = std::make_shared<const wire::envelope>(wire::envelope{wire::protocol_version, 7, std::move(body)});
  f.sys.spawn([target, env, out](caf::event_based_actor* self) {
    self->request(target, caf::infinite, serve_atom::value, env).then([out](const body_ptr& b) { *out = *b; });
  });
  f.settle();
  const auto until = std::chrono::steady_clock::now() + wait;
  while (!out->has_value() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    f.settle();
  }
  return *out;
}

// A client actor that calls a peer through `gateway` and keeps the reply (or the error).
struct call_result {
  std::optional<wire::body> reply;
  std::optional<caf::error> error;
};
inline std::shared_ptr<call_result> call(actor_fixture& f, const gateway_actor& gateway, const std::string& endpoint,
                                  wire::body body, std::chrono::milliseconds timeout = std::chrono::seconds(1)) {
  auto out = std::make_shared<call_result>();
  auto b = make_body(std::move(body));
  f.sys.spawn([gateway, endpoint, b, out, timeout](caf::event_based_actor* self) {
    self->request(gateway, caf::infinite, link_atom::value, endpoint).then([self, gateway, b, out, timeout](std::uint32_t link) {
      self->request(gateway, caf::infinite, call_atom::value, link, b, caf::timespan{timeout})
          .then([out](const envelope_ptr& env) { out->reply = env->message; },
                [out](const caf::error& e) { out->error = e; });
    });
  });
  f.settle();
  return out;
}

// A service that answers status requests with a fixed text.
inline request_server_actor::behavior_type echo(request_server_actor::pointer) {
  return {[](serve_atom, const envelope_ptr&) -> body_ptr { return make_body(wire::status_reply{"{\"hello\":1}"}); }};
}

struct node {
  std::unique_ptr<memory_transport> transport;
  std::shared_ptr<gateway_counters> counters = std::make_shared<gateway_counters>();
  gateway_actor gateway;
  node(actor_fixture& f, const std::string& name, const std::string& listen = "", std::uint32_t max_in_flight = 4096,
       authority_policy authority = {}) {
    transport = std::make_unique<memory_transport>(f.net, name);
    gateway_options o;
    o.name = name;
    o.max_requests_in_flight = max_in_flight;
    o.authority = authority;
    gateway = spawn_gateway(f.sys, *transport, o, counters);
    if (!listen.empty()) REQUIRE(transport->listen(listen).is_ok());
  }
  ~node() {
    transport->stop();
    caf::anon_send_exit(gateway, caf::exit_reason::user_shutdown);
  }
};

// A sync server's options for `length` dense parameters, the algorithm named by `name`.
inline sync_server_options sync_options(const char* name, std::uint64_t length) {
  sync_server_options o;
  o.spec = *sync::parse_sync(name);
  o.offset = 0;
  o.length = length;
  o.round_timeout = std::chrono::milliseconds(500);
  return o;
}

}  // namespace ss::test
