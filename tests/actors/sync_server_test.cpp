// The sync server's rounds: EASGD exchanges, model averaging, BMUF, and rounds that never wait
// forever for a dead or slow trainer.
#include "actor_helpers.hpp"
#include "ss/core/sync/replica_mirror.hpp"

using namespace ss;
using namespace ss::actors;
using namespace ss::test;

// ---- sync servers ---------------------------------------------------------------------------

namespace {
wire::cluster_view view_with_trainers(std::size_t n) {
  wire::cluster_view v;
  for (std::size_t i = 0; i < n; ++i) v.trainers.push_back("trainer-" + std::to_string(i));
  return v;
}

// A view of live trainers with these incarnations.
wire::cluster_view view_of(const std::vector<std::uint64_t>& incarnations) {
  wire::cluster_view v = view_with_trainers(incarnations.size());
  v.trainer_incarnations = incarnations;
  return v;
}

wire::sync_request closing(std::uint64_t trainer, std::uint64_t batches, std::vector<float> params,
                           std::uint32_t generation = 0xffffffffu) {
  return wire::sync_request{trainer, 0, 0, batches, std::move(params), generation};
}

const wire::sync_reply& reply_of(const std::shared_ptr<std::optional<wire::body>>& b) {
  return std::get<wire::sync_reply>(**b);
}

// Sends a sync request and keeps the answer (which may come later: MA rounds wait).
std::shared_ptr<std::optional<wire::body>> ask_later(actor_fixture& f, const request_server_actor& target, wire::body body) {
  auto out = std::make_shared<std::optional<wire::body>>();
  auto env = std::make_shared<const wire::envelope>(wire::envelope{wire::protocol_version, 7, std::move(body)});
  f.sys.spawn([target, env, out](caf::event_based_actor* self) {
    self->request(target, caf::infinite, serve_atom::value, env).then([out](const body_ptr& b) { *out = *b; });
  });
  f.settle();
  return out;
}

std::vector<float> momentum_of(actor_fixture& f, const request_server_actor& server) {
  return std::get<wire::dense_reply>(*ask(f, server, wire::dense_request{})).momentum;
}
}  // namespace

TEST_CASE("sync server: a round of a trainer membership that is over is refused, the new one's applied",
          "[actors]") {
  actor_fixture f;
  node gw(f, "sync-0");
  auto server = f.own(spawn_sync_server(f.sys, gw.gateway, sync_options("s-easgd", 2)));
  f.settle();
  auto round = [&](std::uint64_t membership) {
    wire::sync_request r{5, 0, 0, 10, {1.0f, 2.0f}};
    r.membership = membership;
    return ask(f, server, std::move(r));
  };
  REQUIRE(std::holds_alternative<wire::sync_reply>(*round(1)));
  // Trainer 5 dropped for silence: its rounds are refused until it is back.
  wire::cluster_view view = view_of({6});
  view.trainer_memberships = {1};
  view.dropped_trainers = {5};
  caf::anon_send(server, view_atom::value, view);
  f.settle();
  auto refused = round(1);
  REQUIRE(std::holds_alternative<wire::error_reply>(*refused));
  CHECK(std::get<wire::error_reply>(*refused).code == errc::fenced);
  // Back under membership 2: the old membership stays refused, the new one syncs.
  view = view_of({5, 6});
  view.trainer_memberships = {2, 1};
  caf::anon_send(server, view_atom::value, view);
  f.settle();
  CHECK(std::holds_alternative<wire::error_reply>(*round(1)));
  CHECK(std::holds_alternative<wire::sync_reply>(*round(2)));
  auto status = std::get<wire::status_reply>(*ask(f, server, wire::status_request{})).json;
  CHECK(status.find("\"rounds_fenced\":2") != std::string::npos);
}

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

// ---- the closing round ----------------------------------------------------------------------

TEST_CASE("sync server: a closing round folds every trainer's final replica; a late one that trained nothing adds nothing",
          "[actors]") {
  actor_fixture f;
  node gw(f, "sync-0");
  auto server = f.own(spawn_sync_server(f.sys, gw.gateway, sync_options("s-ma", 2)));
  caf::anon_send(server, view_atom::value, view_of({1, 2}));
  f.settle();
  auto a = ask_later(f, server, closing(1, 5, {1.0f, 10.0f}));
  CHECK_FALSE(a->has_value());  // waits for the other trainer's final replica
  auto b = ask_later(f, server, closing(2, 7, {3.0f, 20.0f}));
  REQUIRE(a->has_value());
  REQUIRE(b->has_value());
  for (const auto* r : {&reply_of(a), &reply_of(b)}) {
    CHECK_FALSE(r->is_delta);
    CHECK(r->participants == 2);
    CHECK(r->params == std::vector<float>{2.0f, 15.0f});
  }
  // Trainer 2 restarted while the job drained: its successor trained nothing, holds an older
  // model, and takes the folded one at once (every other live trainer closed already).
  caf::anon_send(server, view_atom::value, view_of({1, 3}));
  auto late = ask_later(f, server, closing(3, 0, {0.0f, 0.0f}));
  REQUIRE(late->has_value());
  CHECK(reply_of(late).params == std::vector<float>{2.0f, 15.0f});
  // A trainer asking again (its answer was lost) is not counted twice.
  auto again = ask_later(f, server, closing(1, 5, {2.0f, 15.0f}));
  REQUIRE(again->has_value());
  CHECK(reply_of(again).params == std::vector<float>{2.0f, 15.0f});
  auto status = ask(f, server, wire::status_request{});
  CHECK(std::get<wire::status_reply>(*status).json.find("\"closing_rounds\":3") != std::string::npos);
}

TEST_CASE("sync server: regular rounds stop waiting for a trainer that closed, and a closing round is bounded",
          "[actors]") {
  actor_fixture f;
  node gw(f, "sync-0");
  auto server = f.own(spawn_sync_server(f.sys, gw.gateway, sync_options("s-ma", 1)));
  caf::anon_send(server, view_atom::value, view_of({1, 2, 3}));
  f.settle();
  auto open = ask_later(f, server, wire::sync_request{2, 0, 0, 4, {8.0f}});
  CHECK_FALSE(open->has_value());
  // Trainer 1 finished: the regular round now waits only for trainers 2 and 3.
  auto closer = ask_later(f, server, closing(1, 4, {4.0f}));
  CHECK_FALSE(open->has_value());
  auto other = ask_later(f, server, wire::sync_request{3, 0, 0, 4, {6.0f}});
  REQUIRE(open->has_value());
  CHECK(reply_of(open).participants == 2);
  CHECK(reply_of(open).params == std::vector<float>{7.0f});
  // Trainer 3 is killed before it closes: the closing round goes on without it after the round
  // timeout (500 ms); trainer 2's replica arrived in time.
  auto closer2 = ask_later(f, server, closing(2, 9, {2.0f}));
  CHECK_FALSE(closer->has_value());
  f.advance(std::chrono::milliseconds(600));
  REQUIRE(closer->has_value());
  REQUIRE(closer2->has_value());
  CHECK(reply_of(closer).params == std::vector<float>{3.0f});
  CHECK(reply_of(closer).participants == 2);
  // A trainer that leaves the view (killed, its heartbeats stopped) completes a closing round at once.
  auto s2 = f.own(spawn_sync_server(f.sys, gw.gateway, sync_options("s-ma", 1)));
  caf::anon_send(s2, view_atom::value, view_of({1, 2}));
  f.settle();
  auto c1 = ask_later(f, s2, closing(1, 9, {5.0f}));
  CHECK_FALSE(c1->has_value());
  caf::anon_send(s2, view_atom::value, view_of({1}));
  f.settle();
  REQUIRE(c1->has_value());
  CHECK(reply_of(c1).params == std::vector<float>{5.0f});
}

TEST_CASE("sync server: EASGD's closing round moves the center by alpha m towards the final replicas' mean",
          "[actors]") {
  actor_fixture f;
  node gw(f, "sync-0");
  auto opts = sync_options("s-easgd", 1);
  opts.easgd_alpha = 0.25;
  auto server = f.own(spawn_sync_server(f.sys, gw.gateway, opts));
  caf::anon_send(server, view_atom::value, view_of({1, 2}));
  f.settle();
  ask(f, server, wire::sync_request{1, 0, 0, 1, {0.0f}});  // seeds the center at 0
  auto a = ask_later(f, server, closing(1, 3, {2.0f}));
  CHECK_FALSE(a->has_value());  // a closing round waits for every trainer, EASGD's too
  auto b = ask_later(f, server, closing(2, 3, {4.0f}));
  REQUIRE(a->has_value());
  // mean 3, rate 0.25 * 2: the center moves to 1.5, and both replicas take it.
  CHECK_FALSE(reply_of(a).is_delta);
  CHECK(reply_of(a).params == std::vector<float>{1.5f});
  CHECK(reply_of(b).params == std::vector<float>{1.5f});
  CHECK(std::get<wire::dense_reply>(*ask(f, server, wire::dense_request{})).params == std::vector<float>{1.5f});
}

TEST_CASE("sync server: BMUF's closing round is a block step without the Nesterov look-ahead", "[actors]") {
  actor_fixture f;
  node gw(f, "sync-0");
  auto opts = sync_options("s-bmuf", 1);
  opts.bmuf_momentum = 0.5;
  auto server = f.own(spawn_sync_server(f.sys, gw.gateway, opts));
  caf::anon_send(server, view_atom::value, view_of({1}));
  f.settle();
  CHECK(reply_of(ask_later(f, server, wire::sync_request{1, 0, 0, 1, {1.0f}})).params[0] == 1.0f);
  // G = 2, D = 2, w_g = 3; Nesterov: the replicas take 3 + 0.5 * 2 = 4.
  CHECK(reply_of(ask_later(f, server, wire::sync_request{1, 0, 0, 2, {3.0f}})).params[0] == 4.0f);
  // Closing: G = 5 - 4 = 1, D = 0.5 * 2 + 1 = 2, w_g = 5; no look-ahead: the model is 5.
  CHECK(reply_of(ask_later(f, server, closing(1, 3, {5.0f}))).params[0] == 5.0f);
  CHECK(std::get<wire::dense_reply>(*ask(f, server, wire::dense_request{})).params == std::vector<float>{5.0f});
  // Closing again without training since: nothing moves (the momentum does not carry it on).
  CHECK(reply_of(ask_later(f, server, closing(1, 3, {5.0f}, 0xfffffffeu))).params[0] == 5.0f);
}

// ---- the outer optimizer --------------------------------------------------------------------

TEST_CASE("sync server: s-ma-nesterov steps the outer momentum once per full sweep of the trainers", "[actors]") {
  actor_fixture f;
  node gw(f, "sync-0");
  auto opts = sync_options("s-ma-nesterov", 1);
  opts.outer_momentum = 0.5;
  auto server = f.own(spawn_sync_server(f.sys, gw.gateway, opts));
  caf::anon_send(server, view_atom::value, view_of({1, 2}));
  f.settle();
  // The first round's mean (1) is the outer anchor.
  ask_later(f, server, wire::sync_request{1, 0, 0, 1, {0.0f}});
  auto first = ask_later(f, server, wire::sync_request{2, 0, 0, 1, {2.0f}});
  CHECK(reply_of(first).params == std::vector<float>{1.0f});
  // A full round, mean 3: delta 2, v = 2, w = 1 + (2 + 0.5 * 2) = 4.
  ask_later(f, server, wire::sync_request{1, 0, 0, 2, {2.0f}});
  auto second = ask_later(f, server, wire::sync_request{2, 0, 0, 2, {4.0f}});
  CHECK(reply_of(second).params == std::vector<float>{4.0f});
  CHECK(momentum_of(f, server) == std::vector<float>{2.0f});
  // A round that times out with trainer 1 alone is no full sweep: plain MA, momentum unchanged.
  auto partial = ask_later(f, server, wire::sync_request{1, 0, 0, 3, {5.0f}});
  f.advance(std::chrono::milliseconds(600));
  REQUIRE(partial->has_value());
  CHECK(reply_of(partial).params == std::vector<float>{5.0f});
  CHECK(momentum_of(f, server) == std::vector<float>{2.0f});
  // Trainer 2's round completes the sweep: mean 6, delta 6 - 4 = 2, v = 0.5 * 2 + 2 = 3,
  // w = 4 + (2 + 0.5 * 3) = 7.5.
  auto last = ask_later(f, server, wire::sync_request{2, 0, 0, 3, {6.0f}});
  f.advance(std::chrono::milliseconds(600));
  REQUIRE(last->has_value());
  CHECK(reply_of(last).params == std::vector<float>{7.5f});
  CHECK(momentum_of(f, server) == std::vector<float>{3.0f});
}

TEST_CASE("sync server: s-easgd-nesterov pushes the center once every trainer exchanged, and resumes its momentum",
          "[actors]") {
  actor_fixture f;
  node gw(f, "sync-0");
  auto opts = sync_options("s-easgd-nesterov", 1);
  opts.easgd_alpha = 0.5;
  opts.outer_momentum = 0.5;
  auto server = f.own(spawn_sync_server(f.sys, gw.gateway, opts));
  caf::anon_send(server, view_atom::value, view_of({1, 2}));
  f.settle();
  ask(f, server, wire::sync_request{1, 0, 0, 1, {0.0f}});  // seeds the center (and the anchor) at 0
  // d = 0.5 * (4 - 0) = 2: the center moves to 2; the sweep is complete: delta 2, v = 2,
  // center = 0 + (2 + 0.5 * 2) = 3. The trainer is answered with its elastic d alone.
  auto b = ask(f, server, wire::sync_request{2, 0, 0, 1, {4.0f}});
  CHECK(std::get<wire::sync_reply>(*b).params == std::vector<float>{2.0f});
  auto state = std::get<wire::dense_reply>(*ask(f, server, wire::dense_request{}));
  CHECK(state.params == std::vector<float>{3.0f});
  CHECK(state.momentum == std::vector<float>{2.0f});
  // A resumed job's sync server starts from the snapshot's center and momentum.
  auto resumed = f.own(spawn_sync_server(f.sys, gw.gateway, opts));
  caf::anon_send(resumed, view_atom::value, view_of({1}));
  f.settle();
  REQUIRE(std::holds_alternative<wire::ack>(*ask(f, resumed, wire::sync_restore{0, {3.0f}, {2.0f}})));
  CHECK(momentum_of(f, resumed) == std::vector<float>{2.0f});
  // One trainer: every exchange is a sweep. d = 0.5 * (5 - 3) = 1, center 4; delta 1,
  // v = 0.5 * 2 + 1 = 2, center = 3 + (1 + 0.5 * 2) = 5.
  ask(f, resumed, wire::sync_request{1, 0, 0, 1, {5.0f}});
  CHECK(std::get<wire::dense_reply>(*ask(f, resumed, wire::dense_request{})).params == std::vector<float>{5.0f});
}

// ---- quantized rounds -----------------------------------------------------------------------

namespace {
std::string status_of(actor_fixture& f, const request_server_actor& server) {
  return std::get<wire::status_reply>(*ask(f, server, wire::status_request{})).json;
}

// A trainer's quantized request for `replica` through its mirror (full while it holds none).
wire::sync_request quantized_request(std::uint64_t trainer, sync::mirror_sender& mirror, const std::vector<float>& replica) {
  wire::sync_request r{trainer, 0, 0, 10, {}};
  if (mirror.base() == 0) {
    mirror.encode_full(replica.data());
    r.params = replica;
  } else {
    mirror.encode(replica.data(), r.quantized);
    r.base = mirror.base();
  }
  return r;
}
}  // namespace

TEST_CASE("sync server: quantized EASGD exchanges through the mirror move the center by what the replica gives up",
          "[actors]") {
  actor_fixture f;
  node gw(f, "sync-0");
  const std::size_t n = 300;
  auto opts = sync_options("s-easgd", n);
  opts.easgd_alpha = 0.5;
  opts.quantize = true;
  auto server = f.own(spawn_sync_server(f.sys, gw.gateway, opts));
  f.settle();
  std::vector<float> a(n), b(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = 0.01f * static_cast<float>(i % 17);
    b[i] = -0.02f * static_cast<float>(i % 5);
  }
  sync::mirror_sender ma(n, 256), mb(n, 256);
  // Each trainer's first request is full; the replies are quantized and carry the next base.
  for (int round = 0; round < 4; ++round) {
    for (auto* t : {&a, &b}) {
      auto& mirror = t == &a ? ma : mb;
      const std::uint64_t trainer = t == &a ? 1 : 2;
      for (std::size_t i = 0; i < n; ++i) (*t)[i] += 0.001f * static_cast<float>((i + round) % 3);  // training
      const auto before_center = std::get<wire::dense_reply>(*ask(f, server, wire::dense_request{})).params;
      const auto answer = ask(f, server, quantized_request(trainer, mirror, *t));
      REQUIRE(std::holds_alternative<wire::sync_reply>(*answer));
      const auto& reply = std::get<wire::sync_reply>(*answer);
      CHECK(reply.params.empty());
      REQUIRE(reply.quantized.size() == n);
      const auto before = *t;
      mirror.accept(reply.sequence, reply.quantized, true, t->data());
      // Replica plus center is what it was (the first exchange seeds the center).
      const auto center = std::get<wire::dense_reply>(*ask(f, server, wire::dense_request{})).params;
      if (!before_center.empty())
        for (std::size_t i = 0; i < n; i += 37)
          CHECK((*t)[i] + center[i] == Approx(before[i] + before_center[i]).margin(1e-6));
    }
  }
  CHECK(ma.base() > 0);
  const std::string status = status_of(f, server);
  INFO(status);
  CHECK(status.find("\"quantize\":\"int8\"") != std::string::npos);
  CHECK(status.find("\"refused\":0") != std::string::npos);
  // Quantized requests are about a quarter of the full ones: 2 full requests of 1200 bytes, 6 of 300 + 8.
  CHECK(status.find("\"bytes_in\":" + std::to_string(2 * 4 * n + 6 * (n + 2 * 4))) != std::string::npos);
}

TEST_CASE("sync server: a quantized request against a mirror it does not hold, or malformed, is refused and counted",
          "[actors]") {
  actor_fixture f;
  node gw(f, "sync-0");
  const std::size_t n = 100;
  auto opts = sync_options("s-easgd", n);
  opts.quantize = true;
  auto server = f.own(spawn_sync_server(f.sys, gw.gateway, opts));
  f.settle();
  std::vector<float> replica(n, 0.5f);
  sync::mirror_sender mirror(n, 256);
  REQUIRE(std::holds_alternative<wire::sync_reply>(*ask(f, server, quantized_request(1, mirror, replica))));
  // A trainer this server holds no mirror of (it restarted since): not_found, the cue for a full request.
  {
    wire::sync_request r{9, 0, 0, 10, {}};
    sync::quantize(replica.data(), n, 256, r.quantized);
    r.base = 4;
    const auto answer = ask(f, server, r);
    REQUIRE(std::holds_alternative<wire::error_reply>(*answer));
    CHECK(std::get<wire::error_reply>(*answer).code == errc::not_found);
  }
  // A scale that overflows: refused with the reason, the center untouched.
  const auto center = std::get<wire::dense_reply>(*ask(f, server, wire::dense_request{})).params;
  wire::sync_request bad{1, 0, 0, 10, {}};
  sync::quantize(replica.data(), n, 256, bad.quantized);
  bad.quantized.scales[0] = 1e38f;
  bad.base = 1;
  const auto refused = ask(f, server, bad);
  REQUIRE(std::holds_alternative<wire::error_reply>(*refused));
  CHECK(std::get<wire::error_reply>(*refused).code == errc::out_of_range);
  CHECK(std::get<wire::error_reply>(*refused).message.find("scale") != std::string::npos);
  // Values of the wrong count, and FP32 values beside quantized ones: refused as malformed.
  wire::sync_request short_one{1, 0, 0, 10, {}};
  sync::quantize(replica.data(), n - 1, 256, short_one.quantized);
  CHECK(std::holds_alternative<wire::error_reply>(*ask(f, server, short_one)));
  wire::sync_request both{1, 0, 0, 10, replica};
  sync::quantize(replica.data(), n, 256, both.quantized);
  CHECK(std::holds_alternative<wire::error_reply>(*ask(f, server, both)));
  CHECK(std::get<wire::dense_reply>(*ask(f, server, wire::dense_request{})).params == center);
  const std::string status = status_of(f, server);
  INFO(status);
  CHECK(status.find("\"refused\":3") != std::string::npos);
  CHECK(status.find("\"mirror_misses\":1") != std::string::npos);
  // A server of a job whose rounds are not quantized refuses a quantized request.
  node gw2(f, "sync-1");
  auto plain = f.own(spawn_sync_server(f.sys, gw2.gateway, sync_options("s-easgd", n)));
  f.settle();
  wire::sync_request q{1, 0, 0, 10, {}};
  sync::quantize(replica.data(), n, 256, q.quantized);
  const auto answer = ask(f, plain, q);
  REQUIRE(std::holds_alternative<wire::error_reply>(*answer));
  CHECK(std::get<wire::error_reply>(*answer).message.find("--sync-quantize") != std::string::npos);
}

TEST_CASE("sync server: a replica with a non-finite value is refused and counted, the center untouched", "[actors]") {
  actor_fixture f;
  node gw(f, "sync-0");
  auto server = f.own(spawn_sync_server(f.sys, gw.gateway, sync_options("s-easgd", 3)));
  f.settle();
  REQUIRE(std::holds_alternative<wire::sync_reply>(*ask(f, server, wire::sync_request{1, 0, 0, 10, {1.0f, 2.0f, 3.0f}})));
  const auto center = std::get<wire::dense_reply>(*ask(f, server, wire::dense_request{})).params;
  const auto answer =
      ask(f, server, wire::sync_request{2, 0, 0, 10, {1.0f, std::numeric_limits<float>::quiet_NaN(), 3.0f}});
  REQUIRE(std::holds_alternative<wire::error_reply>(*answer));
  CHECK(std::get<wire::error_reply>(*answer).code == errc::out_of_range);
  CHECK(std::get<wire::error_reply>(*answer).message.find("non-finite value (nan at parameter 1)") != std::string::npos);
  CHECK(std::get<wire::dense_reply>(*ask(f, server, wire::dense_request{})).params == center);
  CHECK(status_of(f, server).find("\"refused\":1") != std::string::npos);
}

TEST_CASE("sync server: in a resumed job, no round starts before the snapshot's state came (or its wait ran out)",
          "[actors]") {
  actor_fixture f;
  node gw(f, "sync-0");
  auto opts = sync_options("s-easgd", 2);
  opts.easgd_alpha = 0.5;
  opts.awaits_restore = true;
  opts.restore_wait = std::chrono::milliseconds(1000);
  auto server = f.own(spawn_sync_server(f.sys, gw.gateway, opts));
  f.settle();
  // A trainer's first round comes before the coordinator's restore: refused for now, retried.
  auto early = ask(f, server, wire::sync_request{1, 0, 0, 10, {1.0f, 2.0f}});
  REQUIRE(std::holds_alternative<wire::error_reply>(*early));
  CHECK(std::get<wire::error_reply>(*early).code == errc::unavailable);
  CHECK_THAT(std::get<wire::error_reply>(*early).message, Catch::Contains("waits for the resumed snapshot's state"));
  // The restore takes: the center is the snapshot's, and the retried round syncs against it.
  REQUIRE(std::holds_alternative<wire::ack>(*ask(f, server, wire::sync_restore{0, {3.0f, 4.0f}, {}})));
  auto retried = ask(f, server, wire::sync_request{1, 0, 0, 10, {1.0f, 2.0f}});
  REQUIRE(std::holds_alternative<wire::sync_reply>(*retried));
  CHECK(std::get<wire::sync_reply>(*retried).params == std::vector<float>{-1.0f, -1.0f});  // 0.5 x (replica - center)

  // No restore at all: after the wait the slice starts from the first replica, as a fresh job.
  actor_fixture g;
  node gw2(g, "sync-0");
  auto lonely = g.own(spawn_sync_server(g.sys, gw2.gateway, opts));
  g.settle();
  REQUIRE(std::holds_alternative<wire::error_reply>(*ask(g, lonely, wire::sync_request{1, 0, 0, 10, {1.0f, 2.0f}})));
  g.advance(std::chrono::milliseconds(1100));
  auto later = ask(g, lonely, wire::sync_request{1, 0, 0, 10, {1.0f, 2.0f}});
  REQUIRE(std::holds_alternative<wire::sync_reply>(*later));
  CHECK(std::get<wire::sync_reply>(*later).params == std::vector<float>{0.0f, 0.0f});  // it seeded the center
}
