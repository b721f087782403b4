// The coordinator's progressive evaluation: the trainers' windows (sent with their heartbeats)
// merged into the job's, each trainer's part counted once whether it heartbeats again, leaves,
// is dropped and comes back; departed parts expiring by examples and by time; a window that does
// not add up left out and counted, its heartbeat taken.
#include "actor_helpers.hpp"
#include "ss/core/json_value.hpp"
#include "ss/core/metrics/accumulator.hpp"
#include "ss/core/metrics/progressive.hpp"
#include "ss/core/random.hpp"
#include "ss/wire/progressive.hpp"

using namespace ss;
using namespace ss::actors;
using namespace ss::test;

namespace {

// Scored examples, with predictions that mean something (an AUC near 0.75).
struct scored {
  std::vector<float> predictions, labels;
  void draw(std::size_t n, std::uint64_t seed) {
    ss::rng r(seed);
    for (std::size_t i = 0; i < n; ++i) {
      const double z = -1.0 + 1.2 * r.normal();
      predictions.push_back(static_cast<float>(1 / (1 + std::exp(-z))));
      labels.push_back(r.bernoulli(1 / (1 + std::exp(-(z + 0.8 * r.normal())))) ? 1.0f : 0.0f);
    }
  }
};

// A trainer as the coordinator sees it: its window and its totals, sent as a heartbeat.
struct fake_trainer {
  metrics::progressive_window window;
  scored all;  // every example it scored, in order
  double clock = 0;  // its own clock's seconds; a test moves it as far as the coordinator's
  explicit fake_trainer(metrics::window_spec spec) : window(spec) {}
  void score(const scored& s, std::size_t from, std::size_t to) {
    window.add(clock, s.predictions.data() + from, s.labels.data() + from, to - from);
    all.predictions.insert(all.predictions.end(), s.predictions.begin() + from, s.predictions.begin() + to);
    all.labels.insert(all.labels.end(), s.labels.begin() + from, s.labels.begin() + to);
  }
  wire::heartbeat beat(std::uint64_t member) {
    wire::heartbeat hb{member, {}};
    auto& p = hb.progress;
    p.examples = all.predictions.size();
    for (float y : all.labels) p.clicks += y >= 0.5f ? 1 : 0;
    p.progressive = wire::to_wire(window.slices(clock), clock);
    return hb;
  }
};

// A coordinator of a job with one shard and one reader (never started: the status is all that
// is asked), whose members time out after 2 s; the window: 4000 examples in 4 slices, or seconds.
struct progressive_job {
  actor_fixture f;
  ss::test::temp_dir dir;
  coordinator_options co;
  std::unique_ptr<node> coord, client;
  coordinator_actor coordinator;

  explicit progressive_job(std::uint64_t window_examples, double window_seconds = 0) {
    co.job.train = {dir.str("train.tsv")};
    co.job.shards = 1;
    co.job.readers = 1;
    co.job.member_timeout = 2.0;
    co.job.dense_features = 13;
    co.job.categorical_features = 26;
    co.job.progressive.window = window_examples;
    co.job.progressive.window_seconds = window_seconds;
    co.detached_evaluator = false;
    coord = std::make_unique<node>(f, "coordinator", "mem://coordinator");
    client = std::make_unique<node>(f, "client");
    coordinator = f.own(spawn_coordinator(f.sys, coord->gateway, co));
  }
  metrics::window_spec spec() const { return job::window_spec_of(co.job.progressive); }
  std::shared_ptr<call_result> ask(wire::body m) { return call(f, client->gateway, "mem://coordinator", std::move(m)); }
  std::uint64_t join(const std::string& name, std::uint64_t incarnation) {
    auto r = ask(wire::register_request{wire::role::trainer, name, -1, "mem://" + name, incarnation});
    REQUIRE(std::holds_alternative<wire::register_reply>(*r->reply));
    return std::get<wire::register_reply>(*r->reply).member_id;
  }
  void beat(fake_trainer& t, std::uint64_t member) {
    auto r = ask(t.beat(member));
    REQUIRE(std::holds_alternative<wire::heartbeat_reply>(*r->reply));
  }
  json_value status() {
    auto parsed = json_value::parse(std::get<wire::status_reply>(*ask(wire::status_request{})->reply).json);
    REQUIRE(parsed.is_ok());
    return (*parsed)["service"];
  }
};

// The metrics of exactly these examples, NE against their own click rate.
metrics::summary exact(const std::vector<const scored*>& parts) {
  metrics::accumulator acc;
  for (const auto* s : parts) acc.add(s->predictions.data(), s->labels.data(), s->predictions.size());
  const auto base = acc.compute(0.5);
  return acc.compute(base.click_rate);
}

}  // namespace

TEST_CASE("coordinator progressive: two trainers' windows merge into the job's, each counted once", "[actors]") {
  progressive_job j(0);  // no limit: the job's window holds every example the trainers hold
  fake_trainer a(j.spec()), b(j.spec());
  scored data;
  data.draw(6000, 1);
  a.score(data, 0, 2500);
  b.score(data, 2500, 6000);
  const auto id_a = j.join("trainer-a", 2), id_b = j.join("trainer-b", 4);
  j.beat(a, id_a);
  j.beat(b, id_b);
  const auto want = exact({&a.all, &b.all});
  auto st = j.status();
  CHECK(st["progressive_examples"].number() == 6000);
  CHECK(st["progressive_enough"].boolean());
  CHECK(st["progressive_ne"].number() == Approx(want.ne).epsilon(1e-9));
  CHECK(st["progressive_calibration"].number() == Approx(want.calibration).epsilon(1e-9));
  CHECK(std::abs(st["progressive_auc"].number() - want.auc) <= st["progressive_auc_error_bound"].number());
  CHECK(st["progressive_auc_error_bound"].number() < 0.01);

  // The same windows again (the next heartbeats): replaced, not added.
  j.beat(a, id_a);
  j.beat(b, id_b);
  CHECK(j.status()["progressive_examples"].number() == 6000);

  // a leaves: its part stays in the job's window (nothing newer pushes it out).
  auto left = j.ask(wire::leave{id_a, "done"});
  REQUIRE(std::holds_alternative<wire::ack>(*left->reply));
  st = j.status();
  CHECK(st["progressive_examples"].number() == 6000);
  CHECK(st["progressive_ne"].number() == Approx(want.ne).epsilon(1e-9));
}

TEST_CASE("coordinator progressive: a departed trainer's part expires once newer examples fill the window",
          "[actors]") {
  progressive_job j(4000);
  fake_trainer a(j.spec()), b(j.spec());
  scored data;
  data.draw(12000, 2);
  // Time moves alike for the trainers and the coordinator (each clock with its own origin).
  b.clock = 1000;
  auto tick = [&] {
    j.f.advance(std::chrono::milliseconds(300));
    a.clock += 0.3;
    b.clock += 0.3;
  };
  a.score(data, 0, 3000);
  const auto id_a = j.join("trainer-a", 2), id_b = j.join("trainer-b", 4);
  j.beat(a, id_a);
  j.ask(wire::leave{id_a, "done"});
  tick();
  b.score(data, 3000, 5000);
  j.beat(b, id_b);
  // b's 2000 and a's newest 2000 (whole slices of 1000): the newest 4000 of the job.
  CHECK(j.status()["progressive_examples"].number() == 4000);
  for (std::size_t at = 5000; at < 9000; at += 1000) {
    tick();
    b.score(data, at, at + 1000);
    j.beat(b, id_b);
  }
  // b alone fills the window now: a's part is out, and b's is its newest 4000.
  scored newest;
  newest.predictions.assign(data.predictions.begin() + 5000, data.predictions.begin() + 9000);
  newest.labels.assign(data.labels.begin() + 5000, data.labels.begin() + 9000);
  auto st = j.status();
  CHECK(st["progressive_examples"].number() == 4000);
  const auto want = exact({&newest});
  CHECK(st["progressive_calibration"].number() * want.click_rate ==
        Approx(want.mean_prediction).epsilon(1e-9));  // the same examples: their mean prediction
}

TEST_CASE("coordinator progressive: a trainer dropped for silence and back again is counted once", "[actors]") {
  progressive_job j(0);
  fake_trainer a(j.spec());
  scored data;
  data.draw(3000, 3);
  a.score(data, 0, 3000);
  const auto id_a = j.join("trainer-a", 2);
  j.beat(a, id_a);
  // Silent past the member timeout: dropped, its part kept.
  j.f.advance(std::chrono::milliseconds(2500));
  CHECK(j.status()["progressive_examples"].number() == 3000);
  // The same process comes back and heartbeats its window, which holds the same examples.
  const auto again = j.join("trainer-a", 2);
  j.beat(a, again);
  CHECK(j.status()["progressive_examples"].number() == 3000);
  // A new process under the name (a restart) starts an empty window; the old part stays.
  j.f.advance(std::chrono::milliseconds(2500));
  fake_trainer restarted(j.spec());
  restarted.score(data, 0, 500);
  const auto id_new = j.join("trainer-a", 7);
  j.beat(restarted, id_new);
  CHECK(j.status()["progressive_examples"].number() == 3500);
}

TEST_CASE("coordinator progressive: a time window lets a departed trainer's part go with time", "[actors]") {
  progressive_job j(0, 5.0);  // the last 5 s
  fake_trainer a(j.spec());
  scored data;
  data.draw(2000, 4);
  a.score(data, 0, 2000);
  const auto id_a = j.join("trainer-a", 2);
  j.beat(a, id_a);
  CHECK(j.status()["progressive_examples"].number() == 2000);
  j.ask(wire::leave{id_a, "done"});
  j.f.advance(std::chrono::seconds(3));
  CHECK(j.status()["progressive_examples"].number() == 2000);
  j.f.advance(std::chrono::seconds(3));
  auto st = j.status();
  CHECK(st["progressive_examples"].number() == 0);
  CHECK_FALSE(st["progressive_enough"].boolean());
  CHECK(st["progressive_ne"].is_null());  // too few: no number rather than noise
}

TEST_CASE("coordinator progressive: a window that does not add up is left out and counted, the heartbeat taken",
          "[actors]") {
  progressive_job j(0);
  const auto id = j.join("trainer-a", 2);
  fake_trainer a(j.spec());
  scored data;
  data.draw(3000, 5);
  a.score(data, 0, 3000);
  auto hb = a.beat(id);
  ++hb.progress.progressive.bucket_clicks[0];  // one click more in the buckets than the slice counts
  hb.progress.examples = 3000;
  auto r = j.ask(hb);
  REQUIRE(std::holds_alternative<wire::heartbeat_reply>(*r->reply));  // the member lives on
  auto st = j.status();
  CHECK(st["progressive_windows_refused"].number() == 1);
  CHECK(st["progressive_examples"].number() == 0);  // nothing of the window was taken
  CHECK(st["examples"].number() == 3000);           // the rest of the heartbeat was
  // A bucket out of range, and lists of different lengths: each counted too.
  hb = a.beat(id);
  hb.progress.progressive.buckets.back() = metrics::progressive_buckets;
  j.ask(hb);
  hb = a.beat(id);
  hb.progress.progressive.end_ages.push_back(0);
  j.ask(hb);
  CHECK(j.status()["progressive_windows_refused"].number() == 3);
  // The next good window is taken.
  j.beat(a, id);
  CHECK(j.status()["progressive_examples"].number() == 3000);
}

TEST_CASE("coordinator progressive: the window check names what does not add up", "[actors]") {
  metrics::progressive_window w;
  scored data;
  data.draw(50, 6);
  w.add(1, data.predictions.data(), data.labels.data(), 50);
  const auto good = wire::to_wire(w.slices(2), 2);
  REQUIRE(wire::check_progressive(good).is_ok());
  auto why = [](wire::progressive_window bad) { return wire::check_progressive(bad).message(); };
  auto bad = good;
  ++bad.bucket_clicks[0];
  CHECK(why(bad).find("progressive window: slice 0: its buckets hold") != std::string::npos);
  bad = good;
  bad.buckets.back() = metrics::progressive_buckets;
  CHECK(why(bad).find("bucket 1024 is outside 0..1023") != std::string::npos);
  bad = good;
  bad.end_ages.push_back(0);
  CHECK(why(bad).find("1 slices but a per-slice list of 2") != std::string::npos);
  bad = good;
  std::swap(bad.buckets[0], bad.buckets[1]);
  CHECK(why(bad).find("not in ascending order") != std::string::npos);
  bad = good;
  bad.end_ages[0] = bad.start_ages[0] + 1;
  CHECK(why(bad).find("are not a span of time") != std::string::npos);
  bad = good;
  bad.clicks[0] = bad.examples[0] + 1;
  CHECK(why(bad).find("clicks of") != std::string::npos);
  bad = good;
  bad.bucket_counts[0] += 1;
  CHECK(why(bad).find("past the") != std::string::npos);
  // And what passes comes back as it went: the same sums, the same histograms.
  auto back = wire::from_wire(good, 10);
  REQUIRE(back.is_ok());
  REQUIRE(back->size() == 1);
  CHECK((*back)[0].examples == 50);
  CHECK((*back)[0].end_seconds == 9);  // an age of 1 before a heartbeat received at 10
  CHECK((*back)[0].click_counts == w.slices(2).front().click_counts);
}
