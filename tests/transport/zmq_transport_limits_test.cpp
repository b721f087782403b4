// zmq_transport against bad and excess input: oversized and malformed frames, a full queue, a
// peer that does not read.
#include "zmq_test_support.hpp"

using namespace ss::test;

namespace {

// A server that refuses frames over 1 MiB, and the inbox of those it takes (before the server:
// its handler uses it until stop).
struct small_frame_server {
  static constexpr std::size_t max_frame_bytes = 1 << 20;
  std::shared_ptr<zmq::context_t> ctx = make_zmq_context();
  inbox seen;
  zmq_transport server{ctx, server_options()};

  small_frame_server() { server.on_frame(seen.handler()); }
  static zmq_transport_options server_options() {
    auto o = options("server");
    o.max_frame_bytes = max_frame_bytes;
    return o;
  }
};

}  // namespace

TEST_CASE_METHOD(small_frame_server, "zmq transport refuses an oversized frame over tcp and keeps serving",
                 "[transport]") {
  zmq_transport big_sender(ctx, options("big"));  // its own limit is the default 64 MiB
  zmq_transport bystander(ctx, options("bystander"));
  const std::string ep = listening(server);
  const std::uint32_t big_link = connected(big_sender, ep);
  const std::uint32_t other_link = connected(bystander, ep);

  // Both peers connected and heard first.
  REQUIRE(big_sender.send({big_link, {}}, text_frame("hello")).is_ok());
  REQUIRE(bystander.send({other_link, {}}, text_frame("hello")).is_ok());
  REQUIRE(seen.wait_for(2));

  // libzmq reads the size header, refuses the message and drops that connection.
  REQUIRE(big_sender.send({big_link, {}}, pattern_frame(2 << 20)).is_ok());
  REQUIRE(eventually([&] { return server.counters().peers_disconnected >= 1; }));

  // The bystander is unaffected; the offender reconnects and its later frames arrive.
  REQUIRE(bystander.send({other_link, {}}, text_frame("still here")).is_ok());
  bool after = false;
  for (int i = 0; i < 200 && !after; ++i) {
    REQUIRE(big_sender.send({big_link, {}}, text_frame("after")).is_ok());
    after = eventually(
        [&] {
          for (const auto& x : seen.items()) {
            if (text(x.f) == "after") return true;
          }
          return false;
        },
        50ms);
  }
  CHECK(after);
  // The bystander's frame comes over its own connection: it may arrive after the offender's.
  CHECK(eventually([&] {
    for (const auto& x : seen.items())
      if (text(x.f) == "still here") return true;
    return false;
  }));
  for (const auto& x : seen.items()) CHECK(x.f->size() <= max_frame_bytes);
  CHECK(eventually([&] { return server.counters().peers_accepted >= 3; }));  // one came twice

  // The sender refuses frames over its own limit before queueing them.
  auto limited = options("limited");
  limited.max_frame_bytes = 1000;
  zmq_transport strict(ctx, limited);
  const std::uint32_t l = connected(strict, ep);
  auto st = strict.send({l, {}}, pattern_frame(1001));
  CHECK(st.code() == errc::out_of_range);
  CHECK(strict.stats().send_failures == 1);
  CHECK(strict.send({l, {}}, pattern_frame(1000)).is_ok());
}

TEST_CASE_METHOD(small_frame_server, "zmq transport refuses an oversized frame over inproc and counts it",
                 "[transport]") {
  zmq_transport client(ctx, options("client"));
  const std::uint32_t link = connected(client, listening(server, "inproc://small"));
  REQUIRE(client.send({link, {}}, pattern_frame((1 << 20) + 1)).is_ok());
  REQUIRE(client.send({link, {}}, pattern_frame(1 << 20)).is_ok());
  REQUIRE(client.send({link, {}}, text_frame("next")).is_ok());
  REQUIRE(seen.wait_for(2));
  auto got = seen.items();
  REQUIRE(got.size() == 2);
  CHECK(has_pattern(got[0].f, 1 << 20));
  CHECK(text(got[1].f) == "next");
  CHECK(server.stats().frames_rejected == 1);
  CHECK(server.stats().frames_in == 2);
}

TEST_CASE("zmq transport rejects malformed multipart messages from raw sockets", "[transport]") {
  auto ctx = make_zmq_context();
  inbox seen;
  zmq_transport server(ctx, options("server"));
  server.on_frame(seen.handler());
  const std::string ep = listening(server);

  SECTION("at the listening socket") {
    zmq::socket_t raw(*ctx, zmq::socket_type::dealer);
    raw.set(zmq::sockopt::linger, 0);
    raw.set(zmq::sockopt::rcvtimeo, 10000);
    raw.connect(ep);
    std::string a = "a", b = "b", c = "c";
    REQUIRE(raw.send(zmq::buffer(a), zmq::send_flags::sndmore));
    REQUIRE(raw.send(zmq::buffer(b), zmq::send_flags::sndmore));
    REQUIRE(raw.send(zmq::buffer(c), zmq::send_flags::none));   // 3 parts
    REQUIRE(raw.send(zmq::message_t(), zmq::send_flags::none));  // empty payload
    std::string ok = "ok";
    REQUIRE(raw.send(zmq::buffer(ok), zmq::send_flags::none));
    REQUIRE(seen.wait_for(1));
    CHECK(seen.size() == 1);
    CHECK(text(seen.items().at(0).f) == "ok");
    CHECK(server.stats().frames_rejected == 2);
    CHECK(server.stats().frames_in == 1);

    // The raw peer gets a reply on its route: the server is fine.
    REQUIRE(server.send(seen.items().at(0).from, text_frame("fine")).is_ok());
    zmq::message_t reply;
    REQUIRE(raw.recv(reply));
    CHECK(reply.to_string() == "fine");
  }

  SECTION("at an outbound link") {
    zmq::socket_t raw(*ctx, zmq::socket_type::router);
    raw.set(zmq::sockopt::linger, 0);
    raw.set(zmq::sockopt::rcvtimeo, 10000);
    raw.bind("inproc://raw-router");
    inbox at_client;
    zmq_transport client(ctx, options("client"));
    client.on_frame(at_client.handler());
    const std::uint32_t link = connected(client, "inproc://raw-router");
    REQUIRE(client.send({link, {}}, text_frame("hi")).is_ok());
    zmq::message_t id, payload;
    REQUIRE(raw.recv(id));
    REQUIRE(raw.recv(payload));
    CHECK(payload.to_string() == "hi");
    CHECK(id.to_string().rfind("client#", 0) == 0);

    auto send_parts = [&](std::vector<std::string> parts) {
      REQUIRE(raw.send(zmq::buffer(id.to_string()), zmq::send_flags::sndmore));
      for (std::size_t i = 0; i < parts.size(); ++i) {
        auto more = i + 1 < parts.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
        REQUIRE(raw.send(zmq::buffer(parts[i]), more));
      }
    };
    send_parts({"x", "y"});  // 2 parts
    send_parts({""});        // empty
    send_parts({"good"});
    REQUIRE(at_client.wait_for(1));
    CHECK(at_client.size() == 1);
    CHECK(text(at_client.items().at(0).f) == "good");
    CHECK(at_client.items().at(0).from.link == link);
    CHECK(client.stats().frames_rejected == 2);
  }
}

TEST_CASE("zmq transport returns resource_exhausted when its queue is full", "[transport]") {
  auto ctx = make_zmq_context();
  auto o = options("client");
  o.send_high_water_mark = 1;
  const std::string ep = "inproc://listens-later";

  SECTION("frame bound") {
    o.max_queued_frames = 4;
    zmq_transport client(ctx, o);
    const std::uint32_t link = connected(client, ep);  // nobody listens there yet
    int accepted = 0;
    ss::status last;
    for (int i = 0; i < 1000; ++i) {
      last = client.send({link, {}}, seq_frame(0, static_cast<std::uint32_t>(i)));
      if (!last.is_ok()) break;
      ++accepted;
    }
    CHECK(last.code() == errc::resource_exhausted);
    CHECK(accepted >= 4);
    CHECK(accepted <= 4 + 2);  // the queue plus what libzmq's pipe (HWM 1) took
    auto s = client.stats();
    CHECK(s.send_failures == 1);
    CHECK(s.queue_depth <= 4);
    CHECK(s.queue_high_water == 4);

    // Once a peer appears the queue drains and every accepted frame arrives, in order.
    inbox seen;
    zmq_transport server(ctx, options("server"));
    server.on_frame(seen.handler());
    REQUIRE(server.listen(ep).is_ok());
    REQUIRE(seen.wait_for(static_cast<std::size_t>(accepted)));
    auto got = seen.items();
    REQUIRE(got.size() == static_cast<std::size_t>(accepted));
    for (int i = 0; i < accepted; ++i) CHECK(seq_of(got[static_cast<std::size_t>(i)].f).second == static_cast<std::uint32_t>(i));
    REQUIRE(eventually([&] { return client.stats().queue_depth == 0; }));
    CHECK(client.send({link, {}}, text_frame("room again")).is_ok());
  }

  SECTION("byte bound") {
    o.max_queued_bytes = 1000;
    zmq_transport client(ctx, o);
    const std::uint32_t link = connected(client, ep);
    int accepted = 0;
    ss::status last;
    for (int i = 0; i < 1000; ++i) {
      last = client.send({link, {}}, pattern_frame(400));
      if (!last.is_ok()) break;
      ++accepted;
    }
    CHECK(last.code() == errc::resource_exhausted);
    CHECK(accepted >= 2);
    CHECK(accepted <= 2 + 2);
    CHECK(client.stats().send_failures == 1);
  }
}

TEST_CASE("zmq transport keeps frames queued while the peer does not read", "[transport]") {
  auto ctx = make_zmq_context();
  constexpr int n = 100;

  SECTION("outbound link") {
    auto o = options("client");
    o.send_high_water_mark = 2;
    zmq_transport client(ctx, o);
    zmq::socket_t raw(*ctx, zmq::socket_type::router);
    raw.set(zmq::sockopt::linger, 0);
    raw.set(zmq::sockopt::rcvhwm, 2);
    raw.set(zmq::sockopt::rcvtimeo, 10000);
    raw.bind("inproc://slow-reader");
    const std::uint32_t link = connected(client, "inproc://slow-reader");
    for (int i = 0; i < n; ++i) {
      REQUIRE(client.send({link, {}}, seq_frame(0, static_cast<std::uint32_t>(i))).is_ok());
    }
    // libzmq's pipe holds a few; the rest wait in the transport's queue, none lost.
    REQUIRE(eventually([&] { return client.stats().queue_depth <= n - 2; }));
    CHECK(client.stats().queue_depth >= n - 8);
    for (int i = 0; i < n; ++i) {
      zmq::message_t id, payload;
      REQUIRE(raw.recv(id));
      REQUIRE(raw.recv(payload));
      REQUIRE(payload.size() == 8);
      std::uint32_t v[2];
      std::memcpy(v, payload.data(), 8);
      REQUIRE(v[1] == static_cast<std::uint32_t>(i));
    }
    REQUIRE(eventually([&] { return client.stats().queue_depth == 0; }));
  }

  SECTION("replies on the listening socket") {
    auto o = options("server");
    o.send_high_water_mark = 2;
    std::atomic<int> refused{0};
    zmq_transport server(ctx, o);
    server.on_frame([&](const peer_address& from, frame) {
      for (int i = 0; i < n; ++i) {
        refused += !server.send(from, seq_frame(0, static_cast<std::uint32_t>(i))).is_ok();
      }
    });
    REQUIRE(server.listen("inproc://replies").is_ok());
    zmq::socket_t raw(*ctx, zmq::socket_type::dealer);
    raw.set(zmq::sockopt::linger, 0);
    raw.set(zmq::sockopt::rcvhwm, 2);
    raw.set(zmq::sockopt::rcvtimeo, 10000);
    raw.connect("inproc://replies");
    std::string go = "go";
    REQUIRE(raw.send(zmq::buffer(go), zmq::send_flags::none));
    REQUIRE(eventually([&] { return server.stats().frames_in == 1; }));
    CHECK(refused == 0);
    REQUIRE(eventually([&] { return server.stats().queue_depth <= n - 2; }));
    // Frames wait in our queue, not refused or dropped. How many libzmq's pipe takes before it
    // pushes back varies with timing (65 of 100 stayed queued under ASan, 92+ in plain builds).
    CHECK(server.stats().queue_depth > 0);
    for (int i = 0; i < n; ++i) {
      zmq::message_t payload;
      REQUIRE(raw.recv(payload));
      std::uint32_t v[2];
      std::memcpy(v, payload.data(), 8);
      REQUIRE(v[1] == static_cast<std::uint32_t>(i));
    }
    REQUIRE(eventually([&] { return server.stats().queue_depth == 0; }));
    CHECK(server.stats().frames_out == n);
  }
}
