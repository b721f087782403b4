// The in-memory transport used by deterministic actor tests: explicit delivery in send order,
// replies through routes, drop/duplicate/disconnect faults, the per-link queue bound.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "support/memory_transport.hpp"
#include "text_frames.hpp"

using namespace ss::test;

namespace {

using ss::errc;
using ss::actors::peer_address;
using ss::wire::frame;

// A shard that answers "x" with "re:x" and a client that logs what comes back; every event goes
// to one log so the order of handler calls can be compared.
struct cluster {
  explicit cluster(memory_network_options o = {}) : net(o) {
    server.on_frame([this](const peer_address& from, frame f) {
      log.push_back("server<" + text(f));
      (void)server.send(from, text_frame("re:" + text(f)));
    });
    a.on_frame([this](const peer_address& from, frame f) {
      log.push_back("a<" + text(f) + "@" + std::to_string(from.link));
    });
    b.on_frame([this](const peer_address& from, frame f) {
      log.push_back("b<" + text(f) + "@" + std::to_string(from.link));
    });
    REQUIRE(server.listen("mem://shard-0").is_ok());
    auto la = a.connect("mem://shard-0");
    auto lb = b.connect("mem://shard-0");
    REQUIRE(la.is_ok());
    REQUIRE(lb.is_ok());
    link_a = *la;
    link_b = *lb;
  }
  memory_network net;
  memory_transport server{net, "server"}, a{net, "a"}, b{net, "b"};
  std::uint32_t link_a = 0, link_b = 0;
  std::vector<std::string> log;
};

std::vector<std::string> scripted_run() {
  cluster c;
  for (int i = 0; i < 3; ++i) {
    REQUIRE(c.a.send({c.link_a, {}}, text_frame("a" + std::to_string(i))).is_ok());
    REQUIRE(c.b.send({c.link_b, {}}, text_frame("b" + std::to_string(i))).is_ok());
  }
  CHECK(c.net.deliver_all() == 12);
  return c.log;
}

}  // namespace

TEST_CASE("memory transport delivers only when asked and in send order", "[transport]") {
  cluster c;
  REQUIRE(c.a.send({c.link_a, {}}, text_frame("1")).is_ok());
  REQUIRE(c.b.send({c.link_b, {}}, text_frame("2")).is_ok());
  CHECK(c.log.empty());  // nothing happens on send
  CHECK(c.net.pending() == 2);
  CHECK(c.a.stats().queue_depth == 1);

  REQUIRE(c.net.deliver_one());
  CHECK(c.log == std::vector<std::string>{"server<1"});
  CHECK(c.net.pending() == 2);  // "2" and the reply "re:1"
  CHECK(c.net.deliver_all() == 3);
  CHECK(c.log == std::vector<std::string>{"server<1", "server<2", "a<re:1@1", "b<re:2@1"});
  CHECK_FALSE(c.net.deliver_one());
  CHECK(c.a.stats().frames_out == 1);
  CHECK(c.a.stats().frames_in == 1);
  CHECK(c.server.stats().frames_in == 2);
  CHECK(c.server.stats().frames_out == 2);
  CHECK(c.net.stats().delivered == 4);
}

TEST_CASE("memory transport runs are reproducible", "[transport]") {
  auto first = scripted_run();
  CHECK(first.size() == 12);
  CHECK(first == scripted_run());
  CHECK(first.front() == "server<a0");
  CHECK(first.back() == "b<re:b2@1");
}

TEST_CASE("memory transport routes name the link they came from", "[transport]") {
  memory_network net;
  memory_transport server(net, "server"), client(net, "client");
  std::vector<peer_address> from_at_server;
  server.on_frame([&](const peer_address& from, frame) { from_at_server.push_back(from); });
  std::vector<peer_address> from_at_client;
  client.on_frame([&](const peer_address& from, frame) { from_at_client.push_back(from); });
  REQUIRE(server.listen("mem://s").is_ok());
  auto l1 = client.connect("mem://s");
  auto l2 = client.connect("mem://s");
  REQUIRE(l1.is_ok());
  REQUIRE(l2.is_ok());
  CHECK(*l1 != *l2);
  REQUIRE(client.send({*l1, {}}, text_frame("x")).is_ok());
  REQUIRE(client.send({*l2, {}}, text_frame("y")).is_ok());
  net.deliver_all();
  REQUIRE(from_at_server.size() == 2);
  CHECK(from_at_server[0].link == 0);
  CHECK(from_at_server[0].route != from_at_server[1].route);
  REQUIRE(server.send(from_at_server[1], text_frame("to l2")).is_ok());
  REQUIRE(server.send(from_at_server[0], text_frame("to l1")).is_ok());
  net.deliver_all();
  REQUIRE(from_at_client.size() == 2);
  CHECK(from_at_client[0] == peer_address{*l2, {}});
  CHECK(from_at_client[1] == peer_address{*l1, {}});

  CHECK(server.send({0, "no such route"}, text_frame("z")).code() == errc::not_found);
  CHECK(client.send({0, from_at_server[0].route}, text_frame("z")).code() == errc::not_found);
  CHECK(client.send({*l1, {}}, nullptr).code() == errc::invalid_argument);

  memory_transport other(net, "other");
  CHECK(other.listen("mem://s").error().code() == errc::unavailable);
}

TEST_CASE("memory transport drops and duplicates the next frames on request", "[transport]") {
  cluster c;
  c.net.drop_next();
  REQUIRE(c.a.send({c.link_a, {}}, text_frame("lost")).is_ok());
  REQUIRE(c.a.send({c.link_a, {}}, text_frame("kept")).is_ok());
  CHECK(c.net.deliver_all() == 3);
  CHECK(c.log == std::vector<std::string>{"server<kept", "a<re:kept@1"});
  CHECK(c.net.stats().dropped == 1);

  c.log.clear();
  c.net.duplicate_next();
  REQUIRE(c.b.send({c.link_b, {}}, text_frame("twice")).is_ok());
  REQUIRE(c.net.deliver_one());
  CHECK(c.net.pending() == 2);  // the duplicate first, then the reply
  CHECK(c.net.deliver_all() == 3);
  CHECK(c.log == std::vector<std::string>{"server<twice", "server<twice", "b<re:twice@1",
                                          "b<re:twice@1"});
  CHECK(c.net.stats().duplicated == 1);
}

TEST_CASE("memory transport disconnect drops frames to and replies from an endpoint",
          "[transport]") {
  cluster c;
  c.net.disconnect("mem://shard-0");
  REQUIRE(c.a.send({c.link_a, {}}, text_frame("1")).is_ok());  // still accepted, like ZeroMQ
  CHECK(c.net.deliver_all() == 1);
  CHECK(c.log.empty());
  CHECK(c.net.dropped_at("mem://shard-0") == 1);

  // A request delivered before the cut loses its reply.
  c.net.reconnect("mem://shard-0");
  REQUIRE(c.a.send({c.link_a, {}}, text_frame("2")).is_ok());
  REQUIRE(c.net.deliver_one());
  c.net.disconnect("mem://shard-0");
  CHECK(c.net.deliver_all() == 1);
  CHECK(c.log == std::vector<std::string>{"server<2"});
  CHECK(c.net.dropped_at("mem://shard-0") == 2);

  // Healed: a retry goes through.
  c.net.reconnect("mem://shard-0");
  REQUIRE(c.a.send({c.link_a, {}}, text_frame("3")).is_ok());
  c.net.deliver_all();
  CHECK(c.log.back() == "a<re:3@1");
  CHECK(c.net.stats().dropped == 2);
}

TEST_CASE("memory transport bounds each link's queue", "[transport]") {
  memory_network_options o;
  o.link_queue_bound = 3;
  cluster c(o);
  for (int i = 0; i < 3; ++i) REQUIRE(c.a.send({c.link_a, {}}, text_frame("x")).is_ok());
  auto st = c.a.send({c.link_a, {}}, text_frame("x"));
  CHECK(st.code() == errc::resource_exhausted);
  CHECK(c.a.stats().send_failures == 1);
  CHECK(c.a.stats().queue_high_water == 3);
  CHECK(c.b.send({c.link_b, {}}, text_frame("y")).is_ok());  // other links are not affected
  REQUIRE(c.net.deliver_one());
  CHECK(c.a.send({c.link_a, {}}, text_frame("x")).is_ok());  // room again
}

TEST_CASE("memory transport close_link and stop", "[transport]") {
  cluster c;
  REQUIRE(c.a.send({c.link_a, {}}, text_frame("in flight")).is_ok());
  c.a.close_link(c.link_a);
  CHECK(c.a.send({c.link_a, {}}, text_frame("x")).code() == errc::not_found);
  CHECK(c.net.deliver_all() == 1);  // dropped: its link is closed
  CHECK(c.log.empty());

  // A reply to a link closed after the request was delivered is dropped too.
  REQUIRE(c.b.send({c.link_b, {}}, text_frame("q")).is_ok());
  REQUIRE(c.net.deliver_one());
  c.b.close_link(c.link_b);
  CHECK(c.net.deliver_all() == 1);
  CHECK(c.log == std::vector<std::string>{"server<q"});

  auto l = c.a.connect("mem://shard-0");
  REQUIRE(l.is_ok());
  REQUIRE(c.a.send({*l, {}}, text_frame("z")).is_ok());
  c.server.stop();
  c.server.stop();
  CHECK(c.net.deliver_all() == 1);  // the listener is gone
  CHECK(c.server.send({0, "r"}, text_frame("x")).code() == errc::cancelled);
  CHECK(c.server.connect("mem://x").error().code() == errc::cancelled);
  CHECK(c.net.stats().dropped == 3);
}
