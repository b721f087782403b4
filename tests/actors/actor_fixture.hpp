// A deterministic actor system for tests: CAF's test coordinator runs actors one message at a
// time on the test's thread, an in-memory network carries frames between services only when the
// test delivers them, and time moves only when the test advances it. No sleeps, no threads.
#pragma once

#include <caf/all.hpp>

#include <chrono>
#include <functional>

#include "support/memory_transport.hpp"

namespace ss::test {

struct test_config : caf::actor_system_config {
  test_config() {
    set("scheduler.policy", caf::atom("testing"));
    set("logger.verbosity", caf::atom("quiet"));
  }
};

struct actor_fixture {
  test_config cfg;
  caf::actor_system sys{cfg};
  caf::scheduler::test_coordinator& sched = dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  memory_network net;

  // Services' actors (gateways, agents) run until told to stop. Actors handed to own() are
  // stopped when the test ends (their timer loops would otherwise re-arm forever).
  actor_fixture() { sys.await_actors_before_shutdown(false); }
  ~actor_fixture() {
    for (auto& a : owned) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    sched.run();
  }
  caf::actor own(caf::actor a) {
    owned.push_back(a);
    return a;
  }
  // A typed actor, returned as typed; kept untyped since all it gets here is an exit message.
  template <class... Sigs>
  caf::typed_actor<Sigs...> own(caf::typed_actor<Sigs...> a) {
    owned.push_back(caf::actor_cast<caf::actor>(a));
    return a;
  }
  std::vector<caf::actor> owned;

  // Runs actors and delivers frames until nothing moves.
  void settle(std::size_t max_rounds = 100000) {
    for (std::size_t i = 0; i < max_rounds; ++i) {
      const std::size_t ran = sched.run();
      const std::size_t delivered = net.deliver_all();
      if (ran == 0 && delivered == 0) return;
    }
  }

  // Moves the clock forward in steps (firing timers at each), settling in between.
  void advance(std::chrono::milliseconds total, std::chrono::milliseconds step = std::chrono::milliseconds(50)) {
    for (auto t = std::chrono::milliseconds(0); t < total; t += step) {
      sched.advance_time(step);
      settle();
    }
  }

  // Advances time until `done()` holds or `limit` passes; returns done().
  bool run_until(const std::function<bool()>& done, std::chrono::milliseconds limit = std::chrono::seconds(600),
                 std::chrono::milliseconds step = std::chrono::milliseconds(50)) {
    settle();
    for (auto t = std::chrono::milliseconds(0); t < limit && !done(); t += step) {
      sched.advance_time(step);
      settle();
    }
    return done();
  }
};

}  // namespace ss::test
