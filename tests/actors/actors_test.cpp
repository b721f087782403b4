// The actors of every service on CAF's deterministic scheduler, talking over the in-memory
// network: message flows, timeouts, hostile frames and a whole job, step by step.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>

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
#include "ss/core/embedding/sharding.hpp"
#include "ss/core/job/job_options.hpp"
#include "ss/wire/codec.hpp"
#include "support/process.hpp"

using namespace ss;
using namespace ss::actors;
using ss::test::actor_fixture;
using ss::test::memory_transport;

namespace {

// Sends `body` to `target` as a served request and returns what the actor answered.
std::optional<wire::body> ask(actor_fixture& f, const caf::actor& target, wire::body body) {
  auto out = std::make_shared<std::optional<wire::body>>();
  auto env = std::make_shared<const wire::envelope>(wire::envelope{wire::protocol_version, 7, std::move(body)});
  f.sys.spawn([target, env, out](caf::event_based_actor* self) {
    self->request(target, caf::infinite, serve_atom::value, env).then([out](const body_ptr& b) { *out = *b; });
  });
  f.settle();
  return *out;
}

// A client actor that calls a peer through `gateway` and keeps the reply (or the error).
struct call_result {
  std::optional<wire::body> reply;
  std::optional<caf::error> error;
};
std::shared_ptr<call_result> call(actor_fixture& f, const caf::actor& gateway, const std::string& endpoint,
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
caf::behavior echo(caf::event_based_actor*) {
  return {[](serve_atom, const envelope_ptr&) -> body_ptr { return make_body(wire::status_reply{"{\"hello\":1}"}); }};
}

struct node {
  std::unique_ptr<memory_transport> transport;
  std::shared_ptr<gateway_counters> counters = std::make_shared<gateway_counters>();
  caf::actor gateway;
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

}  // namespace

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
  // A gateway with no routes yet belongs to a service that is starting: callers may retry.
  auto early = call(f, client.gateway, "mem://server", wire::lookup_request{});
  REQUIRE(early->reply.has_value());
  REQUIRE(std::holds_alternative<wire::error_reply>(*early->reply));
  CHECK(std::get<wire::error_reply>(*early->reply).code == errc::unavailable);
  CHECK(std::get<wire::error_reply>(*early->reply).message.find("is starting") != std::string::npos);
  caf::anon_send(server.gateway, route_atom::value, kind_of<wire::status_request>(), f.sys.spawn(echo));
  f.settle();
  auto r = call(f, client.gateway, "mem://server", wire::lookup_request{});
  REQUIRE(r->reply.has_value());
  REQUIRE(std::holds_alternative<wire::error_reply>(*r->reply));
  CHECK(std::get<wire::error_reply>(*r->reply).code == errc::invalid_argument);
  CHECK(std::get<wire::error_reply>(*r->reply).message.find("lookup_request") != std::string::npos);
  CHECK(server.counters->requests_unrouted.load() == 2);
}

// Holds every lookup it is asked until it gets release_atom, then answers them all.
using release_atom = caf::atom_constant<caf::atom("release")>;
caf::behavior holder(caf::stateful_actor<std::vector<caf::response_promise>>* self) {
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
  caf::anon_send(server.gateway, route_atom::value, kind_of<wire::lookup_request>(), slow);
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
caf::behavior acker(caf::stateful_actor<int>* self) {
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

TEST_CASE("shard: serves lookups and pushes of its own rows and refuses others", "[actors]") {
  actor_fixture f;
  embedding::shard_store_options so;
  so.dim = 2;
  so.optimizer.learning_rate = 1.0f;
  auto store = std::make_shared<embedding::shard_store>(so);
  shard_options o;
  o.index = 1;
  o.shards = 2;
  node gw(f, "shard-1");
  auto shard = spawn_shard(f.sys, gw.gateway, store, o, std::make_shared<shard_counters>()).pool;
  f.settle();
  // Pick ids owned by shard 1 and one owned by shard 0.
  std::vector<std::uint64_t> mine;
  std::uint64_t foreign = 0;
  for (std::uint64_t id = 1; mine.size() < 3 || foreign == 0; ++id) {
    if (embedding::shard_of(0, id, 2) == 1) {
      if (mine.size() < 3) mine.push_back(id);
    } else {
      foreign = id;
    }
  }
  auto got = ask(f, shard, wire::lookup_request{true, {0, 0, 0}, mine});
  REQUIRE(got.has_value());
  REQUIRE(std::holds_alternative<wire::lookup_reply>(*got));
  const auto before = std::get<wire::lookup_reply>(*got).values;
  CHECK(before.size() == 6);
  CHECK(store->stats().rows == 3);
  auto pushed = ask(f, shard, wire::push_request{{0, 0, 0}, mine, {1, 1, 0, 0, 0, 0}});
  REQUIRE(std::holds_alternative<wire::push_reply>(*pushed));
  auto after = std::get<wire::lookup_reply>(*ask(f, shard, wire::lookup_request{true, {0, 0, 0}, mine})).values;
  CHECK(after[0] == Approx(before[0] - 1));
  CHECK(after[2] == Approx(before[2]));
  auto refused = ask(f, shard, wire::lookup_request{true, {0}, {foreign}});
  REQUIRE(std::holds_alternative<wire::error_reply>(*refused));
  CHECK(std::get<wire::error_reply>(*refused).message.find("belongs to shard 0") != std::string::npos);
  auto bad_push = ask(f, shard, wire::push_request{{0}, {mine[0]}, {1, 2, 3}});
  CHECK(std::holds_alternative<wire::error_reply>(*bad_push));
}

namespace reader_test {

struct setup {
  actor_fixture f;
  ss::test::temp_dir dir;
  std::shared_ptr<reader_counters> counters = std::make_shared<reader_counters>();
  caf::actor r;

  explicit setup(reader_options options = {}, std::uint32_t epochs = 1, std::size_t shuffle_window = 0) {
    data::generator_options g;
    g.rows = 300;
    REQUIRE(data::generate_criteo(g, dir.str("train.tsv")).is_ok());
    data::epoch_reader_options ro;
    ro.input.schema = data::input_schema::criteo();
    ro.input.paths = {dir.str("train.tsv")};
    ro.input.batch_size = 100;
    ro.epochs = epochs;
    ro.shuffle_window = shuffle_window;
    auto reader = data::epoch_reader::open(ro);
    REQUIRE(reader.is_ok());
    node gw(f, "reader-0");
    r = f.own(spawn_reader(f.sys, gw.gateway, std::make_unique<data::epoch_reader>(std::move(*reader)), options, counters));
    f.settle();
  }
  wire::batch_message pull(std::uint64_t trainer) {
    auto b = ask(f, r, wire::pull_request{1, trainer});
    REQUIRE(b.has_value());
    REQUIRE(std::holds_alternative<wire::batch_message>(*b));
    return std::get<wire::batch_message>(*b);
  }
  bool acked(std::uint64_t sequence, std::uint64_t incarnation) {
    return std::holds_alternative<wire::ack>(*ask(f, r, wire::batch_ack{0, sequence, incarnation}));
  }
};

}  // namespace reader_test

TEST_CASE("reader: numbered batches and a committed prefix with duplicate acks refused", "[actors]") {
  reader_options o;
  o.incarnation = 0x51;
  reader_test::setup t(o);
  std::vector<wire::batch_message> batches;
  for (int i = 0; i < 3; ++i) {
    batches.push_back(t.pull(7));
    CHECK(batches.back().sequence == static_cast<std::uint64_t>(i));
    CHECK(batches.back().incarnation == 0x51);
    CHECK(batches.back().batch.size() == 100);
  }
  // Everything is handed out but nothing trained: not the end yet (a batch may come back).
  auto early = ask(t.f, t.r, wire::pull_request{1, 7});
  REQUIRE(std::holds_alternative<wire::error_reply>(*early));
  CHECK(std::get<wire::error_reply>(*early).code == errc::unavailable);
  CHECK(t.counters->exhausted.load());
  CHECK_FALSE(t.counters->finished.load());
  CHECK_FALSE(t.acked(1, 0x52));  // an ack for another incarnation of the reader
  CHECK(t.acked(1, 0x51));
  CHECK_FALSE(t.acked(1, 0x51));  // duplicate
  CHECK(t.counters->examples_acked.load() == 100);
  {
    std::lock_guard<std::mutex> lock(t.counters->mu);
    CHECK_FALSE(t.counters->has_committed);  // batch 0 is not trained: nothing is committed
  }
  CHECK(t.acked(0, 0x51));
  {
    std::lock_guard<std::mutex> lock(t.counters->mu);
    CHECK(t.counters->has_committed);
    CHECK(t.counters->committed.byte_offset == batches[1].end.byte_offset);
    CHECK(t.counters->committed_examples == 200);
  }
  CHECK(t.acked(2, 0x51));
  CHECK(t.counters->examples_acked.load() == 300);
  CHECK(t.counters->finished.load());
  CHECK(std::holds_alternative<wire::end_of_data>(*ask(t.f, t.r, wire::pull_request{1, 7})));
  const auto status = std::get<wire::status_reply>(*ask(t.f, t.r, wire::status_request{})).json;
  CHECK(status.find("\"committed_offset\":" + std::to_string(batches[2].end.byte_offset)) != std::string::npos);
}

TEST_CASE("reader: epochs hand out every example once per epoch and commit positions that know the epoch",
          "[actors]") {
  reader_options o;
  o.incarnation = 0x61;
  reader_test::setup t(o, 2, 150);  // 2 epochs; windows of 200 examples (whole batches of 100)
  std::vector<wire::batch_message> batches;
  for (int i = 0; i < 6; ++i) {
    batches.push_back(t.pull(7));
    CHECK(batches.back().sequence == static_cast<std::uint64_t>(i));
    CHECK(batches.back().end.epoch == (i < 3 ? 0u : 1u));
    CHECK(t.acked(batches.back().sequence, 0x61));
    std::lock_guard<std::mutex> lock(t.counters->mu);
    CHECK(t.counters->committed_examples == 100u * static_cast<unsigned>(i + 1));
    CHECK(t.counters->committed.epoch == batches.back().end.epoch);
  }
  // Inside a window the position is the window's start and the batches handed out of it.
  CHECK(batches[0].end.window_batches == 1);
  CHECK(batches[0].end.byte_offset == 0);
  CHECK(batches[1].end.window_batches == 0);
  CHECK(batches[1].end.byte_offset > 0);
  // Epoch 2 is shuffled differently from epoch 1, over the same examples.
  auto labels = [&](int from) {
    std::vector<float> all;
    for (int i = from; i < from + 3; ++i) all.insert(all.end(), batches[i].batch.dense.begin(), batches[i].batch.dense.end());
    return all;
  };
  auto first = labels(0), second = labels(3);
  CHECK(first != second);
  std::sort(first.begin(), first.end());
  std::sort(second.begin(), second.end());
  CHECK(first == second);
  CHECK(std::holds_alternative<wire::end_of_data>(*ask(t.f, t.r, wire::pull_request{1, 7})));
  CHECK(t.counters->finished.load());
  CHECK(t.counters->bytes_done.load() == t.counters->bytes_total.load());
}

TEST_CASE("reader: batches of a trainer that left the cluster go to another trainer", "[actors]") {
  reader_options o;
  o.requeue_after = std::chrono::milliseconds(1000);
  reader_test::setup t(o);
  wire::cluster_view view;
  view.trainer_incarnations = {1, 2};
  caf::anon_send(t.r, view_atom::value, view);
  const auto first = t.pull(1);   // trainer 1 takes batch 0 and dies
  const auto second = t.pull(2);  // trainer 2 takes batch 1
  CHECK(t.acked(second.sequence, 0));
  view.trainer_incarnations = {2};
  caf::anon_send(t.r, view_atom::value, view);
  t.f.advance(std::chrono::milliseconds(500));
  CHECK(t.counters->batches_requeued.load() == 0);  // not gone long enough
  t.f.advance(std::chrono::milliseconds(1000));
  CHECK(t.counters->batches_requeued.load() == 1);
  CHECK(t.counters->examples_requeued.load() == 100);
  const auto again = t.pull(2);  // the orphan comes before new batches
  CHECK(again.sequence == first.sequence);
  CHECK(again.batch.size() == first.batch.size());
  CHECK(t.acked(again.sequence, 0));
  CHECK_FALSE(t.acked(first.sequence, 0));  // the dead trainer's late ack is a duplicate
  CHECK(t.counters->examples_acked.load() == 200);
}

TEST_CASE("reader: batches of a trainer that restarted go to the next trainer at once", "[actors]") {
  reader_options o;
  o.requeue_after = std::chrono::seconds(10);  // a trainer that only left is waited for this long
  reader_test::setup t(o);
  wire::cluster_view view;
  view.trainers = {"trainer-0", "trainer-1"};
  view.trainer_incarnations = {1, 2};
  caf::anon_send(t.r, view_atom::value, view);
  const auto held = t.pull(1);  // trainer-0 takes batch 0 and is killed
  view.trainers = {"trainer-1"};
  view.trainer_incarnations = {2};
  caf::anon_send(t.r, view_atom::value, view);
  t.f.advance(std::chrono::milliseconds(500));
  CHECK(t.counters->batches_requeued.load() == 0);  // gone, but perhaps only paused
  view.trainers = {"trainer-1", "trainer-0"};  // trainer-0 again: a new process
  view.trainer_incarnations = {2, 3};
  caf::anon_send(t.r, view_atom::value, view);
  t.f.advance(std::chrono::milliseconds(300));
  CHECK(t.counters->batches_requeued.load() == 1);
  CHECK(t.pull(3).sequence == held.sequence);
}

TEST_CASE("reader: a batch its live trainer never got goes to the next trainer once a later one is acked", "[actors]") {
  reader_options o;
  o.lost_after = std::chrono::milliseconds(2000);
  reader_test::setup t(o);
  wire::cluster_view view;
  view.trainer_incarnations = {1, 2};
  caf::anon_send(t.r, view_atom::value, view);
  // Trainer 1 gave up its pull before the answer came: batch 0 is out, but trainer 1 never got it.
  const auto lost = t.pull(1);
  t.f.advance(std::chrono::milliseconds(1000));
  const auto later = t.pull(1);  // its next pull is answered in time
  CHECK(t.acked(later.sequence, 0));
  CHECK(t.counters->batches_requeued.load() == 0);  // batch 0 may still be training: too early to say
  t.f.advance(std::chrono::milliseconds(1500));
  const auto third = t.pull(1);
  CHECK(third.sequence == 2);
  CHECK(t.acked(third.sequence, 0));  // acked 2.5 s after batch 0 was handed out: batch 0 is lost
  CHECK(t.counters->batches_requeued.load() == 1);
  const auto again = t.pull(2);
  CHECK(again.sequence == lost.sequence);
  CHECK(t.acked(again.sequence, 0));
  CHECK(std::holds_alternative<wire::end_of_data>(*ask(t.f, t.r, wire::pull_request{1, 2})));
  CHECK(t.counters->finished.load());
  CHECK(t.counters->examples_acked.load() == 300);  // each row once
}

TEST_CASE("reader: a batch held past the lease goes to the next trainer, and a late ack does not count twice", "[actors]") {
  reader_options o;
  o.lease = std::chrono::milliseconds(5000);
  reader_test::setup t(o);
  wire::cluster_view view;
  view.trainer_incarnations = {1, 2};
  caf::anon_send(t.r, view_atom::value, view);
  const auto held = t.pull(1);  // trainer 1 is alive, but never acks it (and nothing later)
  t.f.advance(std::chrono::milliseconds(4000));
  CHECK(t.counters->batches_requeued.load() == 0);
  t.f.advance(std::chrono::milliseconds(1500));
  CHECK(t.counters->batches_requeued.load() == 1);
  const auto again = t.pull(2);
  CHECK(again.sequence == held.sequence);
  CHECK(t.acked(held.sequence, 0));        // the slow first trainer's ack counts...
  CHECK_FALSE(t.acked(again.sequence, 0));  // ...and the second one's is a duplicate
  CHECK(t.counters->examples_acked.load() == 100);
}

// A coordinator stand-in: answers registrations and heartbeats with whatever view the test set.
struct fake_coordinator {
  wire::cluster_view view;
  wire::job_state state = wire::job_state::running;
};
caf::behavior fake_coordinator_actor(caf::event_based_actor*, std::shared_ptr<fake_coordinator> c) {
  return {[c](serve_atom, const envelope_ptr& env) -> body_ptr {
    if (std::holds_alternative<wire::register_request>(env->message)) {
      wire::register_reply r;
      r.member_id = 1;
      r.view = c->view;
      r.state = c->state;
      return make_body(std::move(r));
    }
    return make_body(wire::heartbeat_reply{c->state, c->view, true});
  }};
}

// Keeps every view a member agent sends it.
caf::behavior view_collector(caf::event_based_actor*, std::shared_ptr<std::vector<wire::cluster_view>> seen) {
  return {[seen](view_atom, const wire::cluster_view& v) { seen->push_back(v); }, [](state_atom, wire::job_state) {}};
}

wire::cluster_view view_of(std::uint64_t epoch, std::vector<std::string> shards) {
  wire::cluster_view v;
  v.epoch = epoch;
  v.shards = std::move(shards);
  return v;
}

TEST_CASE("member agent: a late subscriber gets the newest view; a same-epoch view of a new coordinator is news",
          "[actors]") {
  actor_fixture f;
  node coord(f, "coordinator", "mem://coordinator"), member(f, "trainer-0");
  auto c = std::make_shared<fake_coordinator>();
  c->view = view_of(1, {"mem://shard-0", ""});
  auto fake = f.sys.spawn(fake_coordinator_actor, c);
  caf::anon_send(coord.gateway, route_atom::value, kind_of<wire::register_request>(), fake);
  caf::anon_send(coord.gateway, route_atom::value, kind_of<wire::heartbeat>(), fake);
  f.settle();
  member_options mo;
  mo.identity = wire::register_request{wire::role::trainer, "trainer-0", -1, "", 1};
  mo.coordinator = "mem://coordinator";
  mo.heartbeat_interval = std::chrono::milliseconds(100);
  auto agent = f.own(spawn_member_agent(f.sys, member.gateway, mo));
  f.settle();
  // The second shard joins; a heartbeat brings the newer view before anyone subscribed.
  c->view = view_of(2, {"mem://shard-0", "mem://shard-1"});
  f.advance(std::chrono::milliseconds(100));
  auto seen = std::make_shared<std::vector<wire::cluster_view>>();
  caf::anon_send(agent, view_atom::value, f.sys.spawn(view_collector, seen));
  f.settle();
  REQUIRE(seen->size() == 1);
  CHECK(seen->back().shards == std::vector<std::string>{"mem://shard-0", "mem://shard-1"});
  // A restarted coordinator whose view happens to carry epoch 2 again, with shard-1 elsewhere.
  c->view = view_of(2, {"mem://shard-0", "mem://shard-1-new"});
  f.advance(std::chrono::milliseconds(100));
  REQUIRE(seen->size() == 2);
  CHECK(seen->back().shards.at(1) == "mem://shard-1-new");
  // An unchanged view is not sent again.
  f.advance(std::chrono::milliseconds(300));
  CHECK(seen->size() == 2);
}

// A coordinator at mem://coordinator of a job with one shard and one reader, whose members time
// out after 1 s, and a client to talk to it.
struct one_shard_job {
  actor_fixture f;
  ss::test::temp_dir dir;
  coordinator_options co = options(dir);
  node coord{f, "coordinator", "mem://coordinator"};
  caf::actor coordinator = f.own(spawn_coordinator(f.sys, coord.gateway, co));
  node client{f, "client"};

  static coordinator_options options(const ss::test::temp_dir& dir) {
    coordinator_options o;
    o.job.train = {dir.str("train.tsv")};
    o.job.shards = 1;
    o.job.readers = 1;
    o.job.member_timeout = 1.0;
    o.job.dense_features = 13;
    o.job.categorical_features = 26;
    o.detached_evaluator = false;
    return o;
  }
  std::shared_ptr<call_result> ask(wire::body m) { return call(f, client.gateway, "mem://coordinator", std::move(m)); }
  std::shared_ptr<call_result> register_shard() {
    return ask(wire::register_request{wire::role::shard, "shard-0", 0, "mem://shard-0", 1});
  }
  bool has_shard() {
    return std::get<wire::status_reply>(*ask(wire::status_request{})->reply).json.find("shard-0") != std::string::npos;
  }
};

TEST_CASE("coordinator: members register, heartbeat, and are dropped when silent", "[actors]") {
  one_shard_job j;
  auto reg = j.register_shard();
  REQUIRE(std::holds_alternative<wire::register_reply>(*reg->reply));
  const auto& reply = std::get<wire::register_reply>(*reg->reply);
  CHECK(reply.view.shards == std::vector<std::string>{"mem://shard-0"});
  CHECK(reply.state == wire::job_state::waiting);
  auto parsed = job::parse_job_config(reply.job_config);
  REQUIRE(parsed.is_ok());
  CHECK(parsed->train == j.co.job.train);
  // An index outside the job is refused.
  auto bad = j.ask(wire::register_request{wire::role::reader, "reader-5", 5, "mem://reader-5", 1});
  REQUIRE(std::holds_alternative<wire::error_reply>(*bad->reply));
  CHECK(std::get<wire::error_reply>(*bad->reply).code == errc::out_of_range);
  // A heartbeat from an unknown member is told to register again.
  auto hb = j.ask(wire::heartbeat{999, {}});
  CHECK_FALSE(std::get<wire::heartbeat_reply>(*hb->reply).known);
  // Silence past the member timeout drops the shard from the view.
  j.f.advance(std::chrono::milliseconds(1500));
  CHECK_FALSE(j.has_shard());
}

TEST_CASE("coordinator: a trainer started again under its name replaces its old process at once", "[actors]") {
  one_shard_job j;
  auto first = j.ask(wire::register_request{wire::role::trainer, "trainer-a", -1, "", 2});
  REQUIRE(std::holds_alternative<wire::register_reply>(*first->reply));
  CHECK(std::get<wire::register_reply>(*first->reply).view.trainer_incarnations == std::vector<std::uint64_t>{2});
  auto other = j.ask(wire::register_request{wire::role::trainer, "trainer-b", -1, "", 4});
  auto again = j.ask(wire::register_request{wire::role::trainer, "trainer-a", -1, "", 5});
  REQUIRE(std::holds_alternative<wire::register_reply>(*again->reply));
  auto incarnations = std::get<wire::register_reply>(*again->reply).view.trainer_incarnations;
  std::sort(incarnations.begin(), incarnations.end());
  CHECK(incarnations == std::vector<std::uint64_t>{4, 5});  // 2 is gone without a timeout
  (void)other;
}

TEST_CASE("coordinator: a coordinator that did not run for a while does not drop members for it", "[actors]") {
  one_shard_job j;
  auto reg = j.register_shard();
  REQUIRE(std::holds_alternative<wire::register_reply>(*reg->reply));
  const std::uint64_t id = std::get<wire::register_reply>(*reg->reply).member_id;
  // The clock jumps 25 s at once: the coordinator's next tick comes 25 s late, as after SIGSTOP.
  j.f.sched.advance_time(std::chrono::seconds(25));
  j.f.settle();
  CHECK(j.has_shard());
  // The member's heartbeat (waiting while the coordinator was frozen) keeps it in.
  auto hb = j.ask(wire::heartbeat{id, {}});
  CHECK(std::get<wire::heartbeat_reply>(*hb->reply).known);
  j.f.advance(std::chrono::milliseconds(600));
  CHECK(j.has_shard());
  // Silence while the coordinator runs still drops it.
  j.f.advance(std::chrono::milliseconds(1500));
  CHECK_FALSE(j.has_shard());
}

TEST_CASE("coordinator: a service that never comes back fails the job after --peer-wait, not before it ran", "[actors]") {
  actor_fixture f;
  ss::test::temp_dir dir;
  coordinator_options co = one_shard_job::options(dir);
  co.job.peer_wait = 3.0;
  std::optional<job::job_report> result;
  co.on_result = [&result](const job::job_report& r, const std::string&) { result = r; };
  node coord(f, "coordinator", "mem://coordinator");
  auto c = f.own(spawn_coordinator(f.sys, coord.gateway, co));
  node client(f, "client");
  auto ask = [&](wire::body m) { return call(f, client.gateway, "mem://coordinator", std::move(m)); };
  auto state = [&] { return std::get<wire::status_reply>(*ask(wire::status_request{})->reply).json; };
  // Before the job runs, an absent reader is waited for without a bound.
  auto shard = ask(wire::register_request{wire::role::shard, "shard-0", 0, "mem://shard-0", 1});
  const std::uint64_t shard_id = std::get<wire::register_reply>(*shard->reply).member_id;
  auto trainer = ask(wire::register_request{wire::role::trainer, "trainer-a", -1, "", 2});
  const std::uint64_t trainer_id = std::get<wire::register_reply>(*trainer->reply).member_id;
  auto keep_alive = [&](bool with_shard) {
    for (int i = 0; i < 10; ++i) {
      if (with_shard) ask(wire::heartbeat{shard_id, {}});
      ask(wire::heartbeat{trainer_id, {}});
      f.advance(std::chrono::milliseconds(500));
    }
  };
  keep_alive(true);
  CHECK(state().find("\"state\":\"waiting\"") != std::string::npos);
  CHECK_FALSE(result);
  ask(wire::register_request{wire::role::reader, "reader-0", 0, "mem://reader-0", 3});
  CHECK(state().find("\"state\":\"running\"") != std::string::npos);
  // The shard goes silent (and the reader, which never heartbeats): dropped after 1 s, waited
  // for 3 s more, then the job fails naming the first vacant slot.
  keep_alive(false);
  REQUIRE(result);
  CHECK_FALSE(result->ok);
  CHECK(result->error.find("shard 0 has been away for 3 s, longer than --peer-wait 3 s") != std::string::npos);
  CHECK(result->exit_status() == 1);
  (void)c;
}

TEST_CASE("coordinator: on resume every shard restores the snapshot even the one whose joining starts the job", "[actors]") {
  actor_fixture f;
  ss::test::temp_dir dir;
  job::job_options job;
  job.train = {dir.str("train.tsv")};
  job.shards = 2;
  job.readers = 1;
  job.dense_features = 13;
  job.categorical_features = 26;
  node coord(f, "coordinator", "mem://coordinator");
  coordinator_options co;
  co.job = job;
  co.detached_evaluator = false;
  co.snapshots = std::shared_ptr<job::snapshot_store>(job::memory_snapshot_store());
  co.snapshot_interval = 0;
  job::loaded_snapshot snap;
  snap.manifest.job_id = 0x42;
  snap.manifest.snapshot_id = 5;
  snap.manifest.readers.resize(1);
  snap.manifest.readers[0] = job::reader_commit{true, 0, 4096, 641, 640, 0};
  snap.manifest.shards.resize(2);
  co.resume = snap;
  co.job_id = 0x42;
  auto c = f.own(spawn_coordinator(f.sys, coord.gateway, co));
  node client(f, "client");
  auto join = [&](wire::role role, const std::string& name, int index) {
    auto r = call(f, client.gateway, "mem://coordinator",
                  wire::register_request{role, name, index, "mem://" + name, 7});
    REQUIRE(std::holds_alternative<wire::register_reply>(*r->reply));
    return std::get<wire::register_reply>(*r->reply);
  };
  CHECK(join(wire::role::shard, "shard-0", 0).restore_snapshot == 5);
  join(wire::role::trainer, "trainer-a", -1);
  const auto reader = join(wire::role::reader, "reader-0", 0);
  CHECK(reader.resume_examples == 640);
  const auto last = join(wire::role::shard, "shard-1", 1);  // the job starts with this one
  CHECK(last.restore_snapshot == 5);
  auto st = call(f, client.gateway, "mem://coordinator", wire::status_request{});
  CHECK(std::get<wire::status_reply>(*st->reply).json.find("\"state\":\"running\"") != std::string::npos);
  // Once the job runs, a restarted shard keeps its own (newer) rows.
  CHECK(join(wire::role::shard, "shard-1", 1).restore_snapshot == 0);
  (void)c;
}

namespace {
sync_server_options sync_options(const char* name, std::uint64_t length);
}  // namespace

namespace {

struct job_outcome {
  job::job_report result;
  std::string result_json;  // as printed
  std::uint64_t acked = 0;
  std::vector<std::uint64_t> shard_rows;
};

// A whole job, every service composed by hand over the in-memory network: a coordinator (with
// sync server 0), 2 shards, 1 reader and `trainers` trainers, stepped to the end.
job_outcome run_job(const std::string& sync_name, int trainers) {
  actor_fixture f;
  ss::test::temp_dir dir;
  data::generator_options g;
  g.rows = 2000;
  REQUIRE(data::generate_train_test(g, 300, dir.str("train.tsv"), dir.str("test.tsv")).is_ok());
  job::job_options job;
  job.train = {dir.str("train.tsv")};
  job.test = {dir.str("test.tsv")};
  job.shards = 2;
  job.readers = 1;
  job.min_trainers = trainers;
  job.batch_size = 64;
  job.heartbeat_interval = 0.1;
  job.request_timeout = 1.0;
  job.progress_interval = 0;
  job.sync = sync_name;
  job.sync_every = 3;
  job.sync_interval = 0.05;
  job.model.embedding_dim = 4;
  job.model.bottom_mlp = "8-4";
  job.model.top_mlp = "8-1";
  REQUIRE(job::resolve_feature_counts(job).is_ok());
  auto setup = job::resolve_model(job.model, 13, 26);
  REQUIRE(setup.is_ok());

  job_outcome out;
  node coord(f, "coordinator", "mem://coordinator");
  coordinator_options co;
  co.job = job;
  co.detached_evaluator = false;
  co.endpoint = "mem://coordinator";
  co.on_result = [&out](const job::job_report& r, const std::string&) {
    out.result = r;
    out.result_json = r.to_json();
  };
  auto sync_opts = sync_options(sync_name.c_str(), model::dense_layout(setup->dlrm).size());
  if (sync_name == "none") sync_opts.spec = sync::sync_spec{};
  co.local_sync = f.own(spawn_sync_server(f.sys, coord.gateway, sync_opts));
  f.own(spawn_coordinator(f.sys, coord.gateway, co));

  auto member = [&](node& n, wire::role role, int index, const std::string& endpoint,
                    std::function<wire::member_progress()> progress, std::uint64_t incarnation = 1) {
    member_options mo;
    mo.identity = wire::register_request{role, endpoint, index, endpoint, incarnation};
    mo.coordinator = "mem://coordinator";
    mo.heartbeat_interval = std::chrono::milliseconds(100);
    mo.request_timeout = std::chrono::seconds(1);
    mo.progress = std::move(progress);
    return f.own(spawn_member_agent(f.sys, n.gateway, mo));
  };

  std::vector<std::unique_ptr<node>> nodes;
  std::vector<std::shared_ptr<embedding::shard_store>> stores;
  for (int i = 0; i < 2; ++i) {
    const std::string ep = "mem://shard-" + std::to_string(i);
    nodes.push_back(std::make_unique<node>(f, ep, ep));
    embedding::shard_store_options so;
    so.dim = 4;
    so.optimizer = setup->embeddings.optimizer;
    stores.push_back(std::make_shared<embedding::shard_store>(so));
    shard_options sh;
    sh.index = static_cast<std::uint32_t>(i);
    sh.shards = 2;
    f.own(spawn_shard(f.sys, nodes.back()->gateway, stores.back(), sh, std::make_shared<shard_counters>()).pool);
    member(*nodes.back(), wire::role::shard, i, ep, [] { return wire::member_progress{}; });
  }
  nodes.push_back(std::make_unique<node>(f, "mem://reader-0", "mem://reader-0"));
  auto rc = std::make_shared<reader_counters>();
  data::epoch_reader_options ro;
  ro.input.schema = data::input_schema::criteo();
  ro.input.paths = job.train;
  ro.input.batch_size = 64;
  auto br = data::epoch_reader::open(ro);
  REQUIRE(br.is_ok());
  f.own(spawn_reader(f.sys, nodes.back()->gateway, std::make_unique<data::epoch_reader>(std::move(*br)), {}, rc));
  member(*nodes.back(), wire::role::reader, 0, "mem://reader-0", [rc] {
    wire::member_progress p;
    p.examples = rc->examples_sent.load();
    p.finished = rc->finished.load();
    return p;
  });

  for (int t = 0; t < trainers; ++t) {
    const std::string ep = "mem://trainer-" + std::to_string(t);
    nodes.push_back(std::make_unique<node>(f, ep, ep));
    auto progress = std::make_shared<trainer_progress>();
    const std::uint64_t incarnation = 0x7a1 + static_cast<std::uint64_t>(t);
    auto agent = member(
        *nodes.back(), wire::role::trainer, -1, ep, [progress] { return progress->snapshot(1000); }, incarnation);
    // The trainer needs its member id: wait for the registration.
    auto registration = std::make_shared<std::optional<wire::register_reply>>();
    f.sys.spawn([agent, registration](caf::event_based_actor* self) {
      self->request(agent, caf::infinite, await_atom::value).then([registration](const wire::register_reply& r) {
        *registration = r;
      });
    });
    REQUIRE(f.run_until([&] { return registration->has_value(); }, std::chrono::seconds(5)));
    trainer_options to;
    to.name = ep;
    to.detached_workers = false;
    to.incarnation = incarnation;
    to.coordinator = "mem://coordinator";
    auto model = std::make_shared<train::dense_model>(setup->dlrm, setup->dense, job.model.seed);
    f.own(spawn_trainer(f.sys, nodes.back()->gateway, agent, job, model, {}, to, progress));
  }

  REQUIRE(f.run_until([&] { return !out.result_json.empty(); }, std::chrono::seconds(300)));
  out.acked = rc->examples_acked.load();
  for (auto& st : stores) out.shard_rows.push_back(st->stats().rows);
  for (auto& n : nodes) n->transport->stop();
  return out;
}

}  // namespace

TEST_CASE("cluster: a whole job on the deterministic scheduler trains every example once", "[actors]") {
  const auto out = run_job("none", 1);
  INFO(out.result_json);
  CHECK(out.result.ok);
  CHECK(out.result.examples == 2000);
  CHECK(out.result.examples_read == 2000);
  CHECK(out.result.tested);
  CHECK(out.result.test.examples == 300);
  CHECK(out.result.exit_status() == 0);
  CHECK(out.acked == 2000);
  CHECK(out.shard_rows[0] > 0);
  CHECK(out.shard_rows[1] > 0);
}

TEST_CASE("cluster: two trainers with shadow EASGD sync in the background", "[actors]") {
  const auto out = run_job("s-easgd", 2);
  INFO(out.result_json);
  CHECK(out.result.ok);
  CHECK(out.result.examples == 2000);
  CHECK(out.result.trainers == 2);
  CHECK(out.result.per_trainer.size() == 2);
  CHECK(out.result.sync_rounds > 0);
  CHECK(out.result.sync_wait_seconds == 0);  // shadow: workers never stop
  CHECK(std::isfinite(out.result.test.ne));
}

TEST_CASE("cluster: two trainers with foreground model averaging every 3 batches", "[actors]") {
  const auto out = run_job("fr-ma", 2);
  INFO(out.result_json);
  CHECK(out.result.ok);
  CHECK(out.result.examples == 2000);
  CHECK(out.result.sync_gap == Approx(3.0));  // exactly every k batches
  CHECK(out.result.sync_rounds > 5);
  CHECK(out.result.sync_wait_seconds > 0);  // foreground: workers stop for every round
}

// ---- sync servers ---------------------------------------------------------------------------

namespace {
sync_server_options sync_options(const char* name, std::uint64_t length) {
  sync_server_options o;
  o.spec = *sync::parse_sync(name);
  o.offset = 0;
  o.length = length;
  o.round_timeout = std::chrono::milliseconds(500);
  return o;
}

wire::cluster_view view_with_trainers(std::size_t n) {
  wire::cluster_view v;
  for (std::size_t i = 0; i < n; ++i) v.trainers.push_back("trainer-" + std::to_string(i));
  return v;
}

// Sends a sync request and keeps the answer (which may come later: MA rounds wait).
std::shared_ptr<std::optional<wire::body>> ask_later(actor_fixture& f, const caf::actor& target, wire::body body) {
  auto out = std::make_shared<std::optional<wire::body>>();
  auto env = std::make_shared<const wire::envelope>(wire::envelope{wire::protocol_version, 7, std::move(body)});
  f.sys.spawn([target, env, out](caf::event_based_actor* self) {
    self->request(target, caf::infinite, serve_atom::value, env).then([out](const body_ptr& b) { *out = *b; });
  });
  f.settle();
  return out;
}
}  // namespace

TEST_CASE("sync server: EASGD exchanges are elastic and conserve replica plus center", "[actors]") {
  actor_fixture f;
  node gw(f, "sync-0");
  auto opts = sync_options("s-easgd", 2);
  opts.easgd_alpha = 0.5;
  auto server = f.own(spawn_sync_server(f.sys, gw.gateway, opts));
  f.settle();
  // The first replica seeds the center: its delta is zero.
  auto first = ask(f, server, wire::sync_request{1, 0, 0, 10, {1.0f, 2.0f}});
  REQUIRE(std::holds_alternative<wire::sync_reply>(*first));
  CHECK(std::get<wire::sync_reply>(*first).is_delta);
  CHECK(std::get<wire::sync_reply>(*first).params == std::vector<float>{0.0f, 0.0f});
  // A second replica at (3, 2): d = 0.5 * ((3, 2) - (1, 2)) = (1, 0); the center moves to (2, 2).
  auto second = ask(f, server, wire::sync_request{2, 0, 0, 10, {3.0f, 2.0f}});
  const auto& reply = std::get<wire::sync_reply>(*second);
  CHECK(reply.params == std::vector<float>{1.0f, 0.0f});
  CHECK(reply.distance > 0);
  // The replica subtracts d: (2, 2); replica + center = (4, 4) = before (3 + 1, 2 + 2).
  auto center = ask(f, server, wire::dense_request{});
  CHECK(std::get<wire::dense_reply>(*center).params == std::vector<float>{2.0f, 2.0f});
  // A request for another slice is refused with the reason.
  auto wrong = ask(f, server, wire::sync_request{1, 3, 0, 10, {1.0f, 2.0f}});
  REQUIRE(std::holds_alternative<wire::error_reply>(*wrong));
  CHECK(std::get<wire::error_reply>(*wrong).message.find("--sync-servers") != std::string::npos);
}

TEST_CASE("sync server: a model-averaging round waits for every live trainer", "[actors]") {
  actor_fixture f;
  node gw(f, "sync-0");
  auto server = f.own(spawn_sync_server(f.sys, gw.gateway, sync_options("s-ma", 2)));
  caf::anon_send(server, view_atom::value, view_with_trainers(2));
  f.settle();
  auto a = ask_later(f, server, wire::sync_request{1, 0, 0, 0, {1.0f, 10.0f}});
  CHECK_FALSE(a->has_value());  // waits for the other trainer
  auto b = ask_later(f, server, wire::sync_request{2, 0, 0, 0, {3.0f, 20.0f}});
  REQUIRE(a->has_value());
  REQUIRE(b->has_value());
  for (const auto& r : {std::get<wire::sync_reply>(**a), std::get<wire::sync_reply>(**b)}) {
    CHECK_FALSE(r.is_delta);
    CHECK(r.participants == 2);
    CHECK(r.round == 1);
    CHECK(r.params == std::vector<float>{2.0f, 15.0f});
  }
}

TEST_CASE("sync server: a round never waits forever for a dead or slow trainer", "[actors]") {
  actor_fixture f;
  node gw(f, "sync-0");
  auto server = f.own(spawn_sync_server(f.sys, gw.gateway, sync_options("s-ma", 1)));
  caf::anon_send(server, view_atom::value, view_with_trainers(3));
  f.settle();
  auto a = ask_later(f, server, wire::sync_request{1, 0, 0, 0, {4.0f}});
  auto b = ask_later(f, server, wire::sync_request{2, 0, 0, 0, {8.0f}});
  CHECK_FALSE(a->has_value());
  f.advance(std::chrono::milliseconds(600));  // the round timeout is 500 ms
  REQUIRE(a->has_value());
  REQUIRE(b->has_value());
  CHECK(std::get<wire::sync_reply>(**a).participants == 2);
  CHECK(std::get<wire::sync_reply>(**a).params == std::vector<float>{6.0f});
  // The slow trainer joins the next round.
  auto c = ask_later(f, server, wire::sync_request{3, 0, 0, 0, {1.0f}});
  CHECK_FALSE(c->has_value());
  // A trainer leaving the view completes the round without waiting for the timeout.
  caf::anon_send(server, view_atom::value, view_with_trainers(1));
  f.settle();
  REQUIRE(c->has_value());
  CHECK(std::get<wire::sync_reply>(**c).round == 2);
}

TEST_CASE("sync server: BMUF rounds apply block momentum and a diverged model is refused", "[actors]") {
  actor_fixture f;
  node gw(f, "sync-0");
  auto opts = sync_options("s-bmuf", 1);
  opts.bmuf_momentum = 0.5;
  opts.bmuf_nesterov = false;
  auto server = f.own(spawn_sync_server(f.sys, gw.gateway, opts));
  caf::anon_send(server, view_atom::value, view_with_trainers(1));
  f.settle();
  // The first round's mean (1) starts the global model; the second (3) is a block of G = 2.
  CHECK(std::get<wire::sync_reply>(*ask(f, server, wire::sync_request{1, 0, 0, 0, {1.0f}})).params[0] == 1.0f);
  CHECK(std::get<wire::sync_reply>(*ask(f, server, wire::sync_request{1, 0, 0, 0, {3.0f}})).params[0] == 3.0f);
  // G = 1 from the block start (3), D = 0.5 * 2 + 1 = 2, w_g = 5.
  CHECK(std::get<wire::sync_reply>(*ask(f, server, wire::sync_request{1, 0, 0, 0, {4.0f}})).params[0] == 5.0f);
  auto bad = ask(f, server, wire::sync_request{1, 0, 0, 0, {std::numeric_limits<float>::infinity()}});
  REQUIRE(std::holds_alternative<wire::error_reply>(*bad));
  CHECK(std::get<wire::error_reply>(*bad).code == errc::out_of_range);
  CHECK(std::get<wire::error_reply>(*bad).message.find("diverged") != std::string::npos);
}
