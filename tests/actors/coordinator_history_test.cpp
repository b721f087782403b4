// The coordinator's status as the dashboard reads it (per-member health and numbers) and its
// history, recorded on the actor clock.
#include "actor_helpers.hpp"
#include "ss/core/json_value.hpp"

using namespace ss;
using namespace ss::actors;
using namespace ss::test;

namespace {

// A coordinator with a history, of a job with one shard and one reader; heartbeats every 0.1 s.
struct history_job {
  actor_fixture f;
  ss::test::temp_dir dir;
  std::shared_ptr<metrics::job_history> history = std::make_shared<metrics::job_history>();
  coordinator_options co = options(dir, history);
  node coord{f, "coordinator", "mem://coordinator"};
  coordinator_actor coordinator = f.own(spawn_coordinator(f.sys, coord.gateway, co));
  node client{f, "client"};

  static coordinator_options options(const ss::test::temp_dir& dir, std::shared_ptr<metrics::job_history> h) {
    coordinator_options o;
    o.job.train = {dir.str("train.tsv")};
    o.job.shards = 1;
    o.job.readers = 1;
    o.job.member_timeout = 10.0;
    o.job.heartbeat_interval = 0.1;
    o.job.dense_features = 13;
    o.job.categorical_features = 26;
    o.detached_evaluator = false;
    o.history = std::move(h);
    o.history_interval = 1.0;
    return o;
  }
  std::shared_ptr<call_result> ask(wire::body m) { return call(f, client.gateway, "mem://coordinator", std::move(m)); }
  std::uint64_t join(wire::role role, const std::string& name, std::int32_t index, std::uint64_t incarnation) {
    auto r = ask(wire::register_request{role, name, index, "mem://" + name, incarnation});
    REQUIRE(std::holds_alternative<wire::register_reply>(*r->reply));
    return std::get<wire::register_reply>(*r->reply).member_id;
  }
  json_value status() {
    // The gateway wraps the role's status: {"service": ..., "transport": ...}.
    auto parsed = json_value::parse(std::get<wire::status_reply>(*ask(wire::status_request{})->reply).json);
    REQUIRE(parsed.is_ok());
    return (*parsed)["service"];
  }
  json_value history_doc() {
    auto parsed = json_value::parse(history->to_json());
    REQUIRE(parsed.is_ok());
    return *parsed;
  }
};

const json_value& member_named(const json_value& status, const std::string& name) {
  for (const auto& m : status["members"].items())
    if (m["name"].string() == name) return m;
  FAIL("no member " << name);
  return status;
}

}  // namespace

TEST_CASE("coordinator status: each member's health and its role's numbers", "[actors][dashboard]") {
  history_job j;
  const auto shard = j.join(wire::role::shard, "shard-0", 0, 1);
  const auto trainer = j.join(wire::role::trainer, "trainer-0", -1, 2);
  wire::member_progress tp;
  tp.examples = 640;
  tp.sync_rounds = 3;
  tp.sync_gap = 4.5;
  tp.sync_latency_p50_ms = 1.25;
  tp.sync_distance = 0.03;
  j.ask(wire::heartbeat{trainer, tp});
  wire::member_progress sp;
  sp.rows = 1234;
  sp.examples = 999;  // a shard's rows looked up
  j.ask(wire::heartbeat{shard, sp});
  auto st = j.status();
  const auto& t = member_named(st, "trainer-0");
  CHECK(t["health"].string() == "ok");
  CHECK(t["sync_gap"].number() == 4.5);
  CHECK(t["sync_latency_p50_ms"].number() == 1.25);
  CHECK(t["sync_distance"].number() == 0.03);
  CHECK(t["sync_rounds"].number() == 3);
  const auto& s = member_named(st, "shard-0");
  CHECK(s["rows"].number() == 1234);
  CHECK(s["rows_looked_up"].number() == 999);
  CHECK_FALSE(s.has("sync_gap"));
  CHECK(st["members_late"].number() == 0);
  // The job's state as numbers for Prometheus (waiting for its reader), no snapshots without a store.
  CHECK(st["job_running"].type() == json_value::kind::boolean);
  CHECK_FALSE(st["job_running"].boolean());
  CHECK_FALSE(st["job_done"].boolean());
  CHECK_FALSE(st["job_failed"].boolean());
  CHECK(st["snapshot_interval"].number() == 0);
  // Three heartbeat intervals of silence from the shard (the trainer keeps beating): late.
  for (int i = 0; i < 4; ++i) {
    j.f.advance(std::chrono::milliseconds(100));
    j.ask(wire::heartbeat{trainer, tp});
  }
  st = j.status();
  CHECK(member_named(st, "shard-0")["health"].string() == "late");
  CHECK(member_named(st, "trainer-0")["health"].string() == "ok");
  CHECK(st["members_late"].number() == 1);
  // A member that reports an error has failed.
  sp.error = "disk full";
  j.ask(wire::heartbeat{shard, sp});
  CHECK(member_named(j.status(), "shard-0")["health"].string() == "failed");
}

TEST_CASE("coordinator history: the status every history_interval of the actor clock, rates included",
          "[actors][dashboard]") {
  history_job j;
  const auto trainer = j.join(wire::role::trainer, "trainer-0", -1, 2);
  j.f.settle();
  wire::member_progress tp;
  for (int second = 1; second <= 5; ++second) {
    tp.examples = 1000u * static_cast<unsigned>(second);
    j.ask(wire::heartbeat{trainer, tp});
    for (int i = 0; i < 10; ++i) j.f.advance(std::chrono::milliseconds(100));
  }
  auto doc = j.history_doc();
  const auto& examples = doc["series"]["job/examples"].items();
  // One sample a second (the ticks come every 100 ms: the interval, not the tick, sets the pace).
  REQUIRE(examples.size() >= 5);
  REQUIRE(examples.size() <= 6);
  for (std::size_t i = 1; i < examples.size(); ++i) {
    const double dt = examples[i].items()[0].number() - examples[i - 1].items()[0].number();
    CHECK(dt == Approx(1.0).margin(0.11));
  }
  // The trainer trained 1000 examples a second, which its rate shows.
  const auto& rate = doc["series"]["trainer/trainer-0/examples_per_sec"].items();
  REQUIRE_FALSE(rate.empty());
  CHECK(rate.back().items()[1].number() == Approx(1000).epsilon(0.15));
  CHECK(doc["series"]["job/members"].items().back().items()[1].number() == 1);
}

TEST_CASE("coordinator history: each member's charted fields, by its role's table", "[actors][dashboard]") {
  history_job j;
  const auto shard = j.join(wire::role::shard, "shard-0", 0, 1);
  const auto trainer = j.join(wire::role::trainer, "trainer-0", -1, 2);
  j.f.settle();
  wire::member_progress tp, sp;
  tp.sync_gap = 4;
  tp.sync_distance = 0.5;
  sp.rows = 77;
  for (int second = 1; second <= 3; ++second) {
    tp.examples = 500u * static_cast<unsigned>(second);
    tp.sync_bytes = 3000u * static_cast<unsigned>(second);
    sp.examples = 200u * static_cast<unsigned>(second);  // a shard's rows looked up
    j.ask(wire::heartbeat{trainer, tp});
    j.ask(wire::heartbeat{shard, sp});
    for (int i = 0; i < 10; ++i) j.f.advance(std::chrono::milliseconds(100));
  }
  auto doc = j.history_doc();
  const auto& series = doc["series"];
  const auto last = [&](const char* name) {
    INFO(name);
    REQUIRE(series.has(name));
    return series[name].items().back().items()[1].number();
  };
  CHECK(last("trainer/trainer-0/sync_gap") == 4);
  CHECK(last("trainer/trainer-0/sync_distance") == 0.5);
  CHECK(last("trainer/trainer-0/sync_bytes_per_sec") == Approx(3000).epsilon(0.15));
  CHECK(last("shard/shard-0/rows") == 77);
  CHECK(last("shard/shard-0/examples_per_sec") == Approx(200).epsilon(0.15));
  // A trainer's fields are not a shard's: no series for what its table lacks.
  CHECK_FALSE(series.has("shard/shard-0/sync_gap"));
  CHECK_FALSE(series.has("trainer/trainer-0/rows"));
  CHECK_FALSE(series.has("trainer/trainer-0/examples"));  // a rate only
}
