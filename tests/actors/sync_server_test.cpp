// The sync server's rounds: EASGD exchanges, model averaging, BMUF, and rounds that never wait
// forever for a dead or slow trainer.
#include "actor_helpers.hpp"

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
