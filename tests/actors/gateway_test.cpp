// The gateway on CAF's deterministic scheduler over the in-memory network: routing, replies,
// shedding, authority, timeouts and hostile frames.
#include "actor_helpers.hpp"

using namespace ss;
using namespace ss::actors;
using namespace ss::test;

TEST_CASE("gateway: a call reaches the routed actor and its reply comes back", "[actors]") {
  actor_fixture f;
  node server(f, "server", "mem://server"), client(f, "client");
  caf::anon_send(server.gateway, route_atom::value, kind_of<wire::status_request>(), f.sys.spawn(echo));
  f.settle();
  auto r = call(f, client.gateway, "mem://server", wire::status_request{});
  REQUIRE(r->reply.has_value());
  REQUIRE(std::holds_alternative<wire::status_reply>(*r->reply));
  // The gateway adds its own counters to a status answer.
  const auto json = std::get<wire::status_reply>(*r->reply).json;
  CHECK(json.find("\"service\":{\"hello\":1}") != std::string::npos);
  CHECK(json.find("\"requests_served\":1") != std::string::npos);
  CHECK(server.counters->requests_served.load() == 1);
  CHECK(client.counters->calls.load() == 1);
}

TEST_CASE("gateway: a request nobody serves gets an error reply naming the message", "[actors]") {
  actor_fixture f;
  node server(f, "server", "mem://server"), client(f, "client");
  // A gateway whose service has not opened it yet belongs to a service that is starting: callers
  // may retry.
  auto early = call(f, client.gateway, "mem://server", wire::lookup_request{});
  REQUIRE(early->reply.has_value());
  REQUIRE(std::holds_alternative<wire::error_reply>(*early->reply));
  CHECK(std::get<wire::error_reply>(*early->reply).code == errc::unavailable);
  CHECK(std::get<wire::error_reply>(*early->reply).message.find("is starting") != std::string::npos);
  caf::anon_send(server.gateway, route_atom::value, kind_of<wire::status_request>(), f.sys.spawn(echo));
  caf::anon_send(server.gateway, open_atom::value);
  f.settle();
  auto r = call(f, client.gateway, "mem://server", wire::lookup_request{});
  REQUIRE(r->reply.has_value());
  REQUIRE(std::holds_alternative<wire::error_reply>(*r->reply));
  CHECK(std::get<wire::error_reply>(*r->reply).code == errc::invalid_argument);
  CHECK(std::get<wire::error_reply>(*r->reply).message.find("lookup_request") != std::string::npos);
  CHECK(server.counters->requests_unrouted.load() == 2);
}

TEST_CASE("gateway: between a service's first route and its opening, a request nobody serves is 'starting'",
          "[actors]") {
  // The coordinator's service: its sync slice routes first, the coordinator after. A member that
  // registers in between must be told to retry, not that registration is not served.
  actor_fixture f;
  node server(f, "coordinator", "mem://server"), client(f, "client");
  caf::anon_send(server.gateway, route_atom::value, kind_of<wire::status_request>(), f.sys.spawn(echo));
  f.settle();
  auto between = call(f, client.gateway, "mem://server", wire::register_request{});
  REQUIRE(between->reply.has_value());
  REQUIRE(std::holds_alternative<wire::error_reply>(*between->reply));
  CHECK(std::get<wire::error_reply>(*between->reply).code == errc::unavailable);
  CHECK(std::get<wire::error_reply>(*between->reply).message == "coordinator is starting and serves nothing yet");
  caf::anon_send(server.gateway, open_atom::value);
  f.settle();
  auto after = call(f, client.gateway, "mem://server", wire::register_request{});
  REQUIRE(after->reply.has_value());
  REQUIRE(std::holds_alternative<wire::error_reply>(*after->reply));
  CHECK(std::get<wire::error_reply>(*after->reply).code == errc::invalid_argument);
  CHECK(std::get<wire::error_reply>(*after->reply).message == "coordinator does not serve register_request");
  auto served = call(f, client.gateway, "mem://server", wire::status_request{});
  REQUIRE(served->reply.has_value());
  CHECK(std::holds_alternative<wire::status_reply>(*served->reply));
}

// Holds every lookup it is asked until it gets release_atom, then answers them all.
using release_atom = caf::atom_constant<caf::atom("release")>;
using holder_actor = request_server_actor::extend<caf::reacts_to<release_atom>>;
holder_actor::behavior_type holder(holder_actor::stateful_pointer<std::vector<caf::response_promise>> self) {
  return {
      [self](serve_atom, const envelope_ptr&) -> caf::result<body_ptr> {
        self->state.push_back(self->make_response_promise<body_ptr>());
        return self->state.back();
      },
      [self](release_atom) {
        for (auto& p : self->state) p.deliver(make_body(wire::lookup_reply{}));
        self->state.clear();
      },
  };
}

TEST_CASE("gateway: requests beyond max_requests_in_flight are shed as unavailable, status never", "[actors]") {
  actor_fixture f;
  node server(f, "server", "mem://server", 2);
  auto slow = f.sys.spawn(holder);
  caf::anon_send(server.gateway, route_atom::value, kind_of<wire::lookup_request>(), request_server_actor{slow});
  caf::anon_send(server.gateway, route_atom::value, kind_of<wire::status_request>(), f.sys.spawn(echo));
  f.settle();
  memory_transport raw(f.net, "raw");
  std::map<std::uint64_t, wire::body> answers;
  raw.on_frame([&answers](const peer_address&, wire::frame fr) {
    auto e = wire::decode(*fr);
    if (e.is_ok()) answers.emplace(e->request_id, e->message);
  });
  auto link = raw.connect("mem://server");
  REQUIRE(link.is_ok());
  auto send = [&](std::uint64_t id, wire::body b) {
    wire::envelope e;
    e.request_id = id;
    e.message = std::move(b);
    REQUIRE(raw.send(peer_address{*link, {}}, wire::encode(e)).is_ok());
    f.settle();
  };
  send(1, wire::lookup_request{});
  send(2, wire::lookup_request{});
  CHECK(answers.empty());  // both held
  CHECK(server.counters->requests_in_flight.load() == 2);
  send(3, wire::lookup_request{});
  REQUIRE(answers.count(3) == 1);
  REQUIRE(std::holds_alternative<wire::error_reply>(answers[3]));
  CHECK(std::get<wire::error_reply>(answers[3]).code == errc::unavailable);
  CHECK(std::get<wire::error_reply>(answers[3]).message.find("overloaded") != std::string::npos);
  CHECK(server.counters->requests_shed.load() == 1);
  // An operator still sees the service, and what it shed.
  send(4, wire::status_request{});
  REQUIRE(answers.count(4) == 1);
  REQUIRE(std::holds_alternative<wire::status_reply>(answers[4]));
  const auto json = std::get<wire::status_reply>(answers[4]).json;
  CHECK(json.find("\"requests_shed\":1") != std::string::npos);
  CHECK(json.find("\"max_requests_in_flight\":2") != std::string::npos);
  // Once the held ones are answered, the next is served.
  caf::anon_send(slow, release_atom::value);
  f.settle();
  CHECK(answers.count(1) == 1);
  CHECK(answers.count(2) == 1);
  CHECK(server.counters->requests_in_flight.load() == 0);
  send(5, wire::lookup_request{});
  caf::anon_send(slow, release_atom::value);
  f.settle();
  REQUIRE(answers.count(5) == 1);
  CHECK(std::holds_alternative<wire::lookup_reply>(answers[5]));
  raw.stop();
}

// Answers every request it is routed with an ack, and counts them.
request_server_actor::behavior_type acker(request_server_actor::stateful_pointer<int> self) {
  return {[self](serve_atom, const envelope_ptr&) -> body_ptr {
    ++self->state;
    return make_body(wire::ack{});
  }};
}

namespace {
// Sends `b` from `client` and returns the error code of the answer (errc::ok for an ack).
errc answer_code(actor_fixture& f, node& client, wire::body b) {
  auto r = call(f, client.gateway, "mem://server", std::move(b));
  REQUIRE(r->reply.has_value());
  if (const auto* e = std::get_if<wire::error_reply>(&*r->reply)) return e->code;
  return errc::ok;
}
}  // namespace

TEST_CASE("gateway: control requests only from a sender allowed to control the job", "[actors]") {
  actor_fixture f;
  SECTION("plain: from this host, or from anywhere with allow_remote_control") {
    node server(f, "server", "mem://server");
    node local(f, "local"), remote(f, "remote");
    f.net.set_identity("remote", peer_identity{peer_role::unauthenticated, "", "10.0.0.7", false});
    auto a = f.sys.spawn(acker);
    for (std::size_t k : {kind_of<wire::stop_request>(), kind_of<wire::snapshot_request>(),
                          kind_of<wire::heartbeat>(), kind_of<wire::status_request>()})
      caf::anon_send(server.gateway, route_atom::value, k, a);
    f.settle();
    CHECK(answer_code(f, local, wire::stop_request{"operator"}) == errc::ok);
    CHECK(answer_code(f, remote, wire::stop_request{"a stray frame"}) == errc::permission_denied);
    CHECK(answer_code(f, remote, wire::snapshot_request{}) == errc::permission_denied);
    // Members' own traffic and status are not control.
    CHECK(answer_code(f, remote, wire::heartbeat{}) == errc::ok);
    CHECK(answer_code(f, remote, wire::status_request{}) == errc::ok);
    CHECK(server.counters->control_refused.load() == 2);
    CHECK(server.counters->control_served.load() == 1);
    auto r = call(f, remote.gateway, "mem://server", wire::export_request{"/tmp/x"});
    REQUIRE(r->reply.has_value());
    const auto& refusal = std::get<wire::error_reply>(*r->reply);
    CHECK(refusal.message.find("export_request from an unauthenticated client at 10.0.0.7 refused") != std::string::npos);
    CHECK(refusal.message.find("--allow-remote-control") != std::string::npos);

    node open_server(f, "open", "mem://open", 4096, authority_policy{false, true});
    caf::anon_send(open_server.gateway, route_atom::value, kind_of<wire::stop_request>(), a);
    f.settle();
    auto served = call(f, remote.gateway, "mem://open", wire::stop_request{"allowed"});
    REQUIRE(served->reply.has_value());
    CHECK(std::holds_alternative<wire::ack>(*served->reply));
  }
  SECTION("CURVE: keys with role coordinator or admin only") {
    node server(f, "server", "mem://server", 4096, authority_policy{true, true});
    node reader(f, "reader-0"), admin(f, "ops"), coord(f, "coordinator");
    f.net.set_identity("reader-0", peer_identity{peer_role::member, "reader-0", "127.0.0.1", true});
    f.net.set_identity("ops", peer_identity{peer_role::admin, "ops", "10.0.0.9", false});
    f.net.set_identity("coordinator", peer_identity{peer_role::coordinator, "coordinator", "10.0.0.2", false});
    auto a = f.sys.spawn(acker);
    for (std::size_t k : {kind_of<wire::stop_request>(), kind_of<wire::dump_request>(), kind_of<wire::heartbeat>()})
      caf::anon_send(server.gateway, route_atom::value, k, a);
    f.settle();
    // A member key on this very host is still only a member: allow_remote_control does not widen CURVE.
    CHECK(answer_code(f, reader, wire::stop_request{"mutated status request"}) == errc::permission_denied);
    CHECK(answer_code(f, reader, wire::dump_request{}) == errc::permission_denied);
    CHECK(answer_code(f, reader, wire::heartbeat{}) == errc::ok);
    CHECK(answer_code(f, admin, wire::stop_request{"maintenance"}) == errc::ok);
    CHECK(answer_code(f, coord, wire::dump_request{}) == errc::ok);
    // A page of the rows that move to a shard: asked by the shard that takes them, a member.
    CHECK(answer_code(f, reader, wire::dump_request{0, 0, 64, 3, 2, true}) == errc::ok);
    CHECK(server.counters->control_refused.load() == 2);
    CHECK(server.counters->control_served.load() == 2);
  }
}

TEST_CASE("gateway: a call to a peer that never answers times out", "[actors]") {
  actor_fixture f;
  node client(f, "client");
  auto r = call(f, client.gateway, "mem://nobody", wire::status_request{}, std::chrono::milliseconds(200));
  CHECK_FALSE(r->error.has_value());
  f.advance(std::chrono::milliseconds(300));
  REQUIRE(r->error.has_value());
  CHECK(*r->error == caf::sec::request_timeout);
  CHECK(client.counters->call_timeouts.load() == 1);
}

TEST_CASE("gateway: garbage and other-version frames are refused, counted and answered", "[actors]") {
  actor_fixture f;
  node server(f, "server", "mem://server");
  caf::anon_send(server.gateway, route_atom::value, kind_of<wire::status_request>(), f.sys.spawn(echo));
  f.settle();
  memory_transport raw(f.net, "raw");
  std::vector<wire::envelope> answers;
  raw.on_frame([&answers](const peer_address&, wire::frame fr) {
    auto e = wire::decode(*fr);
    if (e.is_ok()) answers.push_back(*e);
  });
  auto link = raw.connect("mem://server");
  REQUIRE(link.is_ok());
  // Garbage: no Cap'n Proto message at all.
  const char junk[32] = "\xff\xff\xff\xff this is not a message";
  REQUIRE(raw.send(peer_address{*link, {}}, wire::make_frame(junk, 32)).is_ok());
  // A request from a future protocol version.
  wire::envelope future;
  future.version = wire::protocol_version + 1;
  future.request_id = 42;
  future.message = wire::status_request{};
  REQUIRE(raw.send(peer_address{*link, {}}, wire::encode(future)).is_ok());
  // And a good one, which must still be served.
  wire::envelope good;
  good.request_id = 43;
  good.message = wire::status_request{};
  REQUIRE(raw.send(peer_address{*link, {}}, wire::encode(good)).is_ok());
  f.settle();
  CHECK(server.counters->frames_refused.load() == 1);
  CHECK(server.counters->version_mismatches.load() == 1);
  REQUIRE(answers.size() == 2);
  const auto& refusal = answers[0].request_id == 42 ? answers[0] : answers[1];
  const auto& served = answers[0].request_id == 43 ? answers[0] : answers[1];
  REQUIRE(std::holds_alternative<wire::error_reply>(refusal.message));
  CHECK(std::get<wire::error_reply>(refusal.message).code == errc::version_mismatch);
  CHECK(std::get<wire::error_reply>(refusal.message).message.find("protocol") != std::string::npos);
  CHECK(std::holds_alternative<wire::status_reply>(served.message));
  raw.stop();
}
