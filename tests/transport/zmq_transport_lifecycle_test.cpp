// zmq_transport's links and life cycle: replies to gone peers, senders on several threads,
// closed links, stopping under traffic and from a handler, late peers, the connection bound.
#include "zmq_test_support.hpp"

using namespace ss::test;

TEST_CASE("zmq transport drops replies to a route whose peer is gone", "[transport]") {
  auto ctx = make_zmq_context();
  inbox seen;
  zmq_transport server(ctx, options("server"));
  echo_on(server, seen);
  const std::string ep = listening(server);
  REQUIRE(server.send({0, "nobody"}, text_frame("lost")).is_ok());
  // Counted when the poll thread drops it; its queue space is given back just after.
  REQUIRE(eventually([&] {
    return server.counters().unroutable == 1 && server.stats().queue_depth == 0;
  }));
  CHECK(server.stats().send_failures == 1);

  inbox back;
  zmq_transport client(ctx, options("client"));
  client.on_frame(back.handler());
  const std::uint32_t link = connected(client, ep);
  REQUIRE(client.send({link, {}}, text_frame("ping")).is_ok());
  REQUIRE(back.wait_for(1));
  CHECK(text(back.items().at(0).f) == "ping");
}

TEST_CASE_METHOD(client_and_server, "zmq transport sends from 4 threads at once", "[transport]") {
  const std::string ep = listening(server);
  const std::uint32_t a = connected(client, ep);
  const std::uint32_t b = connected(client, ep);

  constexpr std::uint32_t per_thread = 2500;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (std::uint32_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const std::uint32_t link = t % 2 == 0 ? a : b;
      for (std::uint32_t i = 0; i < per_thread; ++i) {
        failures += !client.send({link, {}}, seq_frame(t, i)).is_ok();
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
  REQUIRE(seen.wait_for(4 * per_thread));
  std::map<std::uint32_t, std::vector<std::uint32_t>> by_thread;
  for (const auto& x : seen.items()) by_thread[seq_of(x.f).first].push_back(seq_of(x.f).second);
  REQUIRE(by_thread.size() == 4);
  std::vector<std::uint32_t> expected(per_thread);
  for (std::uint32_t i = 0; i < per_thread; ++i) expected[i] = i;
  for (const auto& [t, seqs] : by_thread) CHECK(seqs == expected);  // each thread's order kept
  CHECK(client.stats().queue_high_water >= 1);
}

TEST_CASE_METHOD(client_and_server, "zmq transport refuses sends on closed or unknown links", "[transport]") {
  const std::uint32_t link = connected(client, listening(server, "inproc://closing"));
  REQUIRE(client.send({link, {}}, text_frame("one")).is_ok());
  REQUIRE(seen.wait_for(1));

  client.close_link(link);
  auto st = client.send({link, {}}, text_frame("two"));
  CHECK(st.code() == errc::not_found);
  CHECK(st.message() == "client: no open link " + std::to_string(link));
  client.close_link(link);  // twice is harmless
  CHECK(client.send({link + 100, {}}, text_frame("x")).code() == errc::not_found);
  CHECK(client.send({0, "someone"}, text_frame("x")).code() == errc::not_found);  // not listening
  CHECK(client.send({link, {}}, nullptr).code() == errc::invalid_argument);
  CHECK(client.stats().send_failures == 4);

  // A new link works; link ids are not reused.
  const std::uint32_t again = connected(client, "inproc://closing");
  CHECK(again != link);
  REQUIRE(client.send({again, {}}, text_frame("three")).is_ok());
  REQUIRE(seen.wait_for(2));
  CHECK(text(seen.items().at(1).f) == "three");
}

TEST_CASE("zmq transport stops cleanly while traffic flows", "[transport]") {
  auto ctx = make_zmq_context();
  std::atomic<bool> server_stopped{false};
  std::atomic<int> calls_after_stop{0};
  std::atomic<int> replies{0};
  zmq_transport server(ctx, options("server"));
  zmq_transport client(ctx, options("client"));
  server.on_frame([&](const peer_address& from, frame f) {
    if (server_stopped) ++calls_after_stop;
    (void)server.send(from, std::move(f));
  });
  const std::string ep = listening(server);
  const std::uint32_t l = connected(client, ep);
  client.on_frame([&, l](const peer_address&, frame f) {
    ++replies;
    (void)client.send({l, {}}, std::move(f));  // ping-pong forever
  });
  for (int i = 0; i < 64; ++i) REQUIRE(client.send({l, {}}, pattern_frame(1000)).is_ok());
  std::thread producer([&client, l] {
    for (;;) {
      auto st = client.send({l, {}}, pattern_frame(100));
      if (st.code() == errc::cancelled) return;
      if (!st.is_ok()) std::this_thread::yield();  // queue full
    }
  });
  struct joiner {  // a failed REQUIRE below must not leave the thread running
    zmq_transport& t;
    std::thread& th;
    ~joiner() {
      t.stop();
      if (th.joinable()) th.join();
    }
  } join_producer{client, producer};
  REQUIRE(eventually([&] { return replies > 200; }));

  std::thread concurrent_stop([&] { server.stop(); });
  server.stop();
  concurrent_stop.join();
  server_stopped = true;
  client.stop();
  client.stop();
  producer.join();
  CHECK(calls_after_stop == 0);
  CHECK(server.send({0, "x"}, text_frame("late")).code() == errc::cancelled);
  CHECK(client.send({l, {}}, text_frame("late")).code() == errc::cancelled);
  CHECK(client.connect(ep).error().code() == errc::cancelled);
  CHECK(server.listen("tcp://127.0.0.1:0").error().code() == errc::cancelled);
  CHECK(client.stats().queue_depth == 0);
}

TEST_CASE("zmq transport stop from the frame handler", "[transport]") {
  auto ctx = make_zmq_context();
  std::atomic<int> calls{0};
  zmq_transport server(ctx, options("server"));
  zmq_transport client(ctx, options("client"));
  server.on_frame([&](const peer_address&, frame) {
    ++calls;
    server.stop();  // only requests it: the loop ends after this handler
  });
  const std::uint32_t link = connected(client, listening(server, "inproc://self-stop"));
  for (int i = 0; i < 10; ++i) REQUIRE(client.send({link, {}}, text_frame("x")).is_ok());
  REQUIRE(eventually([&] { return server.send({0, "r"}, text_frame("y")).code() == errc::cancelled; }));
  server.stop();  // joins
  CHECK(calls == 1);
}

TEST_CASE("zmq transport reaches a peer that starts listening later", "[transport]") {
  auto ctx = make_zmq_context();
  std::string ep;
  SECTION("tcp") {
    const int port = free_tcp_port();
    REQUIRE(port > 0);
    ep = "tcp://127.0.0.1:" + std::to_string(port);
  }
  SECTION("inproc") {
    ep = "inproc://later";
    CHECK(ep.rfind("inproc://", 0) == 0);
  }

  zmq_transport client(ctx, options("client"));
  const std::uint32_t link = connected(client, ep);
  for (std::uint32_t i = 0; i < 3; ++i) REQUIRE(client.send({link, {}}, seq_frame(0, i)).is_ok());

  inbox seen;
  zmq_transport server(ctx, options("server"));
  server.on_frame(seen.handler());
  REQUIRE(server.listen(ep).is_ok());
  REQUIRE(seen.wait_for(3));
  auto got = seen.items();
  REQUIRE(got.size() == 3);
  for (std::uint32_t i = 0; i < 3; ++i) CHECK(seq_of(got[i].f).second == i);
}

TEST_CASE("zmq transport keeps at most max_connections open and admits the next when one closes",
          "[transport]") {
  auto ctx = make_zmq_context();
  auto bounded = options("server");
  bounded.max_connections = 2;
  std::vector<std::string> warnings;
  std::mutex warnings_mu;
  bounded.warn = [&](const std::string& w) {
    std::lock_guard<std::mutex> lock(warnings_mu);
    warnings.push_back(w);
  };
  inbox seen;
  zmq_transport server(ctx, bounded);
  echo_on(server, seen);
  const std::string ep = listening(server);

  // Each client is its own transport, so each opens its own connection.
  auto client_options = [](const std::string& name) {
    auto o = options(name);
    o.reconnect_interval = 20ms;
    return o;
  };
  inbox at_a, at_b, at_c;
  zmq_transport a(ctx, client_options("a")), b(ctx, client_options("b")), c(ctx, client_options("c"));
  a.on_frame(at_a.handler());
  b.on_frame(at_b.handler());
  c.on_frame(at_c.handler());
  const std::uint32_t la = connected(a, ep);
  const std::uint32_t lb = connected(b, ep);
  REQUIRE(a.send({la, {}}, text_frame("a")).is_ok());
  REQUIRE(b.send({lb, {}}, text_frame("b")).is_ok());
  REQUIRE(at_a.wait_for(1));
  REQUIRE(at_b.wait_for(1));
  CHECK(server.stats().connections_open == 2);

  // The third is refused at its handshake while two are open, and dials again after a pause
  // (libzmq itself never redials a refused handshake): refused again.
  const std::uint32_t lc = connected(c, ep);
  REQUIRE(c.send({lc, {}}, text_frame("c")).is_ok());
  REQUIRE(eventually([&] { return server.stats().connections_refused >= 2; }));
  CHECK(eventually([&] { return c.counters().links_refused >= 2; }));
  CHECK(at_c.size() == 0);
  CHECK(seen.size() == 2);
  {
    std::lock_guard<std::mutex> lock(warnings_mu);
    REQUIRE_FALSE(warnings.empty());
    CHECK(warnings.front().find("2 connections are open") != std::string::npos);
    CHECK(warnings.size() == 1);  // once a minute per address, not once per redial
  }
  // Those already in keep working.
  REQUIRE(a.send({la, {}}, text_frame("a2")).is_ok());
  REQUIRE(at_a.wait_for(2));

  // One leaves; the third gets in on its next redial. (Its first frame went down with the
  // refused connection: callers retry requests that time out, as this one does.)
  a.close_link(la);
  bool answered = false;
  for (int i = 0; i < 100 && !answered; ++i) {
    REQUIRE(c.send({lc, {}}, text_frame("c")).is_ok());
    answered = at_c.wait_for(1, 200ms);
  }
  REQUIRE(answered);
  CHECK(text(at_c.items().at(0).f) == "c");
  CHECK(eventually([&] { return server.stats().connections_open == 2; }));
  CHECK(server.stats().max_connections == 2);
}

TEST_CASE("zmq transport with max_connections 0 admits every connection", "[transport]") {
  auto ctx = make_zmq_context();
  auto unbounded = options("server");
  unbounded.max_connections = 0;
  inbox seen;
  zmq_transport server(ctx, unbounded);
  echo_on(server, seen);
  const std::string ep = listening(server);
  std::vector<std::unique_ptr<zmq_transport>> clients;
  std::vector<std::unique_ptr<inbox>> inboxes;
  for (int i = 0; i < 8; ++i) {
    inboxes.push_back(std::make_unique<inbox>());
    clients.push_back(std::make_unique<zmq_transport>(ctx, options("c" + std::to_string(i))));
    clients.back()->on_frame(inboxes.back()->handler());
    const std::uint32_t l = connected(*clients.back(), ep);
    REQUIRE(clients.back()->send({l, {}}, text_frame("hi")).is_ok());
  }
  for (auto& in : inboxes) CHECK(in->wait_for(1));
  CHECK(server.stats().connections_refused == 0);
  CHECK(eventually([&] { return server.stats().connections_open == 8; }));
  for (auto& c : clients) c->stop();  // before the inboxes their handlers use
}
