// The member agent's views and the coordinator's membership: registration, heartbeats, silent
// members, restarts, --peer-wait, and resuming from a snapshot.
#include <deque>

#include "actor_helpers.hpp"

using namespace ss;
using namespace ss::actors;
using namespace ss::test;

struct fake_coordinator {
  wire::cluster_view view;
  wire::job_state state = wire::job_state::running;
};
request_server_actor::behavior_type fake_coordinator_actor(request_server_actor::pointer,
                                                           std::shared_ptr<fake_coordinator> c) {
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
view_subscriber_actor::behavior_type view_collector(view_subscriber_actor::pointer,
                                                    std::shared_ptr<std::vector<wire::cluster_view>> seen) {
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

TEST_CASE("member agent: registered again with a restarted coordinator, it reports its progress at once",
          "[actors]") {
  actor_fixture f;
  node coord(f, "coordinator", "mem://coordinator"), member(f, "reader-0");
  // A coordinator that counts registrations and keeps the committed count of each heartbeat;
  // `forgot` makes it answer the next heartbeat as a restarted one would.
  struct counting {
    int registrations = 0;
    bool forgot = false;
    std::vector<std::uint64_t> committed;
  };
  auto c = std::make_shared<counting>();
  auto fake = f.sys.spawn([c](request_server_actor::pointer) -> request_server_actor::behavior_type {
    return {[c](serve_atom, const envelope_ptr& env) -> body_ptr {
      if (std::holds_alternative<wire::register_request>(env->message)) {
        ++c->registrations;
        wire::register_reply r;
        r.state = wire::job_state::running;  // heartbeats every interval, not the waiting job's poll
        return make_body(std::move(r));
      }
      c->committed.push_back(std::get<wire::heartbeat>(env->message).progress.committed_examples);
      const bool known = !std::exchange(c->forgot, false);
      return make_body(wire::heartbeat_reply{wire::job_state::running, wire::cluster_view{}, known});
    }};
  });
  caf::anon_send(coord.gateway, route_atom::value, kind_of<wire::register_request>(), fake);
  caf::anon_send(coord.gateway, route_atom::value, kind_of<wire::heartbeat>(), fake);
  f.settle();
  member_options mo;
  mo.identity = wire::register_request{wire::role::reader, "reader-0", 0, "mem://reader-0", 1};
  mo.coordinator = "mem://coordinator";
  mo.heartbeat_interval = std::chrono::seconds(1);
  mo.progress = [] {
    wire::member_progress p;
    p.has_committed = true;
    p.committed_examples = 4200;
    return p;
  };
  auto agent = f.own(spawn_member_agent(f.sys, member.gateway, mo));
  f.settle();
  f.advance(std::chrono::seconds(2));
  REQUIRE(c->registrations == 1);
  const auto beats = c->committed.size();
  REQUIRE(beats > 0);
  c->forgot = true;
  f.advance(std::chrono::seconds(1));  // the next heartbeat: unknown, so the agent registers again...
  REQUIRE(c->registrations == 2);
  // ...and reports its committed rows at once, without waiting for the next interval.
  REQUIRE(c->committed.size() == beats + 2);
  CHECK(c->committed.back() == 4200);
}

// A coordinator at mem://coordinator of a job with one shard and one reader, whose members time
// out after 1 s, and a client to talk to it.
struct one_shard_job {
  actor_fixture f;
  ss::test::temp_dir dir;
  coordinator_options co = options(dir);
  node coord{f, "coordinator", "mem://coordinator"};
  coordinator_actor coordinator = f.own(spawn_coordinator(f.sys, coord.gateway, co));
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

namespace {

// A registration of `role` as `name` (index, incarnation) that heartbeats every 100 ms, from
// process `pid` on `host`.
wire::register_request claim(wire::role role, const std::string& name, int index, std::uint64_t incarnation,
                             const std::string& host, std::uint32_t pid) {
  wire::register_request r{role, name, index, index >= 0 ? "mem://" + name : "", incarnation};
  r.heartbeat_interval_ms = 100;
  r.host = host;
  r.pid = pid;
  return r;
}

const wire::error_reply* refusal(const std::shared_ptr<call_result>& r) {
  return std::get_if<wire::error_reply>(&*r->reply);
}

}  // namespace

TEST_CASE("coordinator: a trainer started again under its name takes its place once the old process is silent",
          "[actors]") {
  one_shard_job j;
  auto first = j.ask(claim(wire::role::trainer, "trainer-a", -1, 2, "host-a", 11));
  REQUIRE(std::holds_alternative<wire::register_reply>(*first->reply));
  CHECK(std::get<wire::register_reply>(*first->reply).view.trainer_incarnations == std::vector<std::uint64_t>{2});
  auto other = j.ask(claim(wire::role::trainer, "trainer-b", -1, 4, "host-b", 12));
  const std::uint64_t other_id = std::get<wire::register_reply>(*other->reply).member_id;
  // Process 2 may be alive: the new one waits (and asks again) until it is known dead.
  auto early = j.ask(claim(wire::role::trainer, "trainer-a", -1, 5, "host-c", 13));
  REQUIRE(refusal(early) != nullptr);
  CHECK(refusal(early)->code == errc::unavailable);
  CHECK(refusal(early)->message.find("waiting to learn whether it is alive") != std::string::npos);
  // 2 is silent for its claim window (2 x 100 ms + 0.5 s), well within the member timeout (1 s).
  j.f.advance(std::chrono::milliseconds(400));
  j.ask(wire::heartbeat{other_id, {}});
  j.f.advance(std::chrono::milliseconds(400));
  auto again = j.ask(claim(wire::role::trainer, "trainer-a", -1, 5, "host-c", 13));
  REQUIRE(std::holds_alternative<wire::register_reply>(*again->reply));
  auto incarnations = std::get<wire::register_reply>(*again->reply).view.trainer_incarnations;
  std::sort(incarnations.begin(), incarnations.end());
  CHECK(incarnations == std::vector<std::uint64_t>{4, 5});  // 2 is gone without the member timeout
}

TEST_CASE("coordinator: a trainer dropped for silence comes back under a new membership, and the view fences the old",
          "[actors]") {
  one_shard_job j;
  auto first = j.ask(claim(wire::role::trainer, "trainer-a", -1, 2, "host-a", 11));
  const auto& reply = std::get<wire::register_reply>(*first->reply);
  CHECK(reply.membership == 1);
  CHECK(reply.view.trainer_memberships == std::vector<std::uint64_t>{1});
  // A coordinator that restarted moments ago: the trainer keeps the membership it held.
  auto rejoin = claim(wire::role::trainer, "trainer-b", -1, 3, "host-b", 12);
  rejoin.membership = 4;
  CHECK(std::get<wire::register_reply>(*j.ask(rejoin)->reply).membership == 4);
  // trainer-a is silent past the member timeout (1 s): dropped, and named as such in the view.
  j.f.advance(std::chrono::milliseconds(1500));
  auto hb = j.ask(wire::heartbeat{999, {}});
  const auto& view = std::get<wire::heartbeat_reply>(*hb->reply).view;
  auto named = [](const std::vector<std::uint64_t>& v, std::uint64_t x) { return std::count(v.begin(), v.end(), x); };
  CHECK(named(view.dropped_trainers, 2) == 1);  // (trainer-b, silent too, with it)
  // It comes back (the same process): a new membership, no longer named as dropped.
  auto back_request = claim(wire::role::trainer, "trainer-a", -1, 2, "host-a", 11);
  back_request.membership = 1;
  auto back = j.ask(back_request);
  REQUIRE(std::holds_alternative<wire::register_reply>(*back->reply));
  const auto& again = std::get<wire::register_reply>(*back->reply);
  CHECK(again.membership == 2);
  CHECK(named(again.view.dropped_trainers, 2) == 0);
  for (std::size_t i = 0; i < again.view.trainer_incarnations.size(); ++i)
    if (again.view.trainer_incarnations[i] == 2) CHECK(again.view.trainer_memberships[i] == 2);
  // A coordinator past half its member timeout went on without whoever was not there: trainer-c,
  // which held membership 6 under the coordinator before, gets 7.
  auto late = claim(wire::role::trainer, "trainer-c", -1, 9, "host-c", 13);
  late.membership = 6;
  CHECK(std::get<wire::register_reply>(*j.ask(late)->reply).membership == 7);
}

TEST_CASE("coordinator: a member dropped for silence is waited for until a process takes its place or endpoint",
          "[actors]") {
  one_shard_job j;
  auto members = [&j] {
    auto out = std::make_shared<std::uint64_t>(0);
    auto target = j.coordinator;
    j.f.sys.spawn([target, out](caf::event_based_actor* self) {
      self->request(target, caf::infinite, members_atom::value).then([out](std::uint64_t n) { *out = n; });
    });
    j.f.settle();
    return *out;
  };
  auto crashed = claim(wire::role::trainer, "trainer-c1-aaaa", -1, 2, "c1", 11);
  crashed.endpoint = "tcp://c1:5558";
  j.ask(crashed);
  CHECK(members() == 1);
  j.f.advance(std::chrono::milliseconds(1500));  // silent: dropped, but still waited for
  CHECK(members() == 1);
  // The container restarted: a new process, a new trainer name, the same endpoint.
  auto successor = claim(wire::role::trainer, "trainer-c1-bbbb", -1, 3, "c1", 12);
  successor.endpoint = "tcp://c1:5558";
  REQUIRE(std::holds_alternative<wire::register_reply>(*j.ask(successor)->reply));
  CHECK(members() == 1);  // the successor only: the crashed process is not waited for
}

TEST_CASE("coordinator: a trainer at the endpoint of a silent one replaces it at once, of a live one is refused",
          "[actors]") {
  one_shard_job j;
  auto at = [](std::uint64_t incarnation, const std::string& name, std::uint32_t pid) {
    auto r = claim(wire::role::trainer, name, -1, incarnation, "c1", pid);
    r.endpoint = "tcp://c1:5558";
    return r;
  };
  auto first = j.ask(at(2, "trainer-c1-aaaa", 11));
  const std::uint64_t first_id = std::get<wire::register_reply>(*first->reply).member_id;
  // A second process at the same address while the first heartbeats: refused, both named.
  auto early = j.ask(at(3, "trainer-c1-bbbb", 12));
  CHECK(refusal(early)->code == errc::unavailable);  // asked to wait: is the holder alive?
  j.f.advance(std::chrono::milliseconds(300));
  j.ask(wire::heartbeat{first_id, {}});
  auto twin = j.ask(at(3, "trainer-c1-bbbb", 12));
  REQUIRE(refusal(twin) != nullptr);
  CHECK(refusal(twin)->code == errc::already_exists);
  CHECK(refusal(twin)->message.find("trainer endpoint tcp://c1:5558 is held by a live process") != std::string::npos);
  // The holder crashed (silent for its claim window, well within the 1 s member timeout): its
  // successor at that address takes over, and the crashed one leaves the view at once.
  j.f.advance(std::chrono::milliseconds(800));
  auto successor = j.ask(at(4, "trainer-c1-cccc", 13));
  REQUIRE(std::holds_alternative<wire::register_reply>(*successor->reply));
  CHECK(std::get<wire::register_reply>(*successor->reply).view.trainer_incarnations ==
        std::vector<std::uint64_t>{4});
}

TEST_CASE("coordinator: a second live process claiming a held trainer name or index is refused, naming both",
          "[actors]") {
  one_shard_job j;
  auto holder = j.ask(claim(wire::role::trainer, "trainer", -1, 2, "host-a", 11));
  REQUIRE(std::holds_alternative<wire::register_reply>(*holder->reply));
  const std::uint64_t holder_id = std::get<wire::register_reply>(*holder->reply).member_id;
  auto shard = j.ask(claim(wire::role::shard, "shard-0", 0, 3, "host-s", 21));
  REQUIRE(std::holds_alternative<wire::register_reply>(*shard->reply));
  const std::uint64_t shard_id = std::get<wire::register_reply>(*shard->reply).member_id;
  // Another process claims each place; both holders go on heartbeating.
  auto trainer_claim = j.ask(claim(wire::role::trainer, "trainer", -1, 5, "host-b", 22));
  auto shard_claim = j.ask(claim(wire::role::shard, "shard-0", 0, 6, "host-t", 23));
  REQUIRE(refusal(trainer_claim) != nullptr);
  CHECK(refusal(trainer_claim)->code == errc::unavailable);
  REQUIRE(refusal(shard_claim) != nullptr);
  CHECK(refusal(shard_claim)->code == errc::unavailable);
  for (int beat = 0; beat < 3; ++beat) {
    j.f.advance(std::chrono::milliseconds(100));
    j.ask(wire::heartbeat{holder_id, {}});
    j.ask(wire::heartbeat{shard_id, {}});
  }
  auto trainer_refused = j.ask(claim(wire::role::trainer, "trainer", -1, 5, "host-b", 22));
  auto shard_refused = j.ask(claim(wire::role::shard, "shard-0", 0, 6, "host-t", 23));
  REQUIRE(refusal(trainer_refused) != nullptr);
  CHECK(refusal(trainer_refused)->code == errc::already_exists);
  const std::string& why = refusal(trainer_refused)->message;
  CHECK(why.find("trainer name trainer is held by a live process") != std::string::npos);
  CHECK(why.find("pid 11 on host-a") != std::string::npos);
  CHECK(why.find("pid 22 on host-b") != std::string::npos);
  REQUIRE(refusal(shard_refused) != nullptr);
  CHECK(refusal(shard_refused)->code == errc::already_exists);
  CHECK(refusal(shard_refused)->message.find("shard 0 is held by a live process") != std::string::npos);
  CHECK(refusal(shard_refused)->message.find("pid 21 on host-s, mem://shard-0") != std::string::npos);
  // The holders are still the members, and the refusals are counted.
  auto hb = j.ask(wire::heartbeat{holder_id, {}});
  const auto& view = std::get<wire::heartbeat_reply>(*hb->reply).view;
  CHECK(view.trainer_incarnations == std::vector<std::uint64_t>{2});
  CHECK(view.shard_incarnations == std::vector<std::uint64_t>{3});
  const auto status = std::get<wire::status_reply>(*j.ask(wire::status_request{})->reply).json;
  CHECK(status.find("\"registrations_refused\":2") != std::string::npos);
}

TEST_CASE("coordinator: a registration sent again by the same process is answered as the first, not as a restart",
          "[actors]") {
  one_shard_job j;
  // The shard's registration, then the others', which start the job; then the shard's again (a
  // retry of the same incarnation, its first answer lost while the coordinator was paused).
  auto first = j.register_shard();
  j.ask(wire::register_request{wire::role::reader, "reader-0", 0, "mem://reader-0", 2});
  j.ask(wire::register_request{wire::role::trainer, "trainer-a", -1, "", 3});
  auto retry = j.register_shard();
  REQUIRE(std::holds_alternative<wire::register_reply>(*retry->reply));
  const auto& again = std::get<wire::register_reply>(*retry->reply);
  CHECK(again.state == wire::job_state::running);
  CHECK(again.member_id == std::get<wire::register_reply>(*first->reply).member_id);
  CHECK_FALSE(again.job_was_running);  // it joined before the job ran: its empty storage is right
  auto trainer_retry = j.ask(wire::register_request{wire::role::trainer, "trainer-a", -1, "", 3});
  CHECK(std::get<wire::register_reply>(*trainer_retry->reply).view.trainers.size() == 1);  // not twice
  // A new process in its place, once the old one is silent for its claim window (2 x 1 s + 0.5 s),
  // is a restart: told that the job was running.
  j.f.advance(std::chrono::milliseconds(2600));
  auto restarted = j.ask(wire::register_request{wire::role::shard, "shard-0", 0, "mem://shard-0", 9});
  INFO(wire::message_name(*restarted->reply) << ": " << (refusal(restarted) ? refusal(restarted)->message : ""));
  REQUIRE(std::holds_alternative<wire::register_reply>(*restarted->reply));
  CHECK(std::get<wire::register_reply>(*restarted->reply).job_was_running);
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

// A coordinator at mem://coordinator resuming `snapshot` of job 0x42 (in a memory store), and a
// client registering members with it.
struct resuming_job {
  actor_fixture f;
  ss::test::temp_dir dir;
  node coord{f, "coordinator", "mem://coordinator"};
  node client{f, "client"};
  coordinator_actor coordinator;

  // `job` gets 13 dense and 26 categorical features; `files`: its training files in dir.
  void start(job::job_options job, std::vector<std::string> files, job::loaded_snapshot snapshot) {
    for (const auto& name : files) job.train.push_back(dir.str(name));
    job.dense_features = 13;
    job.categorical_features = 26;
    coordinator_options co;
    co.job = job;
    co.detached_evaluator = false;
    co.snapshots = std::shared_ptr<job::snapshot_store>(job::memory_snapshot_store());
    co.snapshot_interval = 0;
    snapshot.manifest.job_id = 0x42;
    snapshot.manifest.snapshot_id = 5;
    co.resume = snapshot;
    co.job_id = 0x42;
    coordinator = f.own(spawn_coordinator(f.sys, coord.gateway, co));
  }
  wire::register_reply join(wire::role role, const std::string& name, int index, std::uint64_t incarnation = 7) {
    auto r = call(f, client.gateway, "mem://coordinator",
                  wire::register_request{role, name, index, "mem://" + name, incarnation});
    REQUIRE(std::holds_alternative<wire::register_reply>(*r->reply));
    return std::get<wire::register_reply>(*r->reply);
  }
};

TEST_CASE("coordinator: on resume every shard restores the snapshot even the one whose joining starts the job", "[actors]") {
  resuming_job t;
  job::job_options job;
  job.shards = 2;
  job.readers = 1;
  job::loaded_snapshot snap;
  snap.manifest.readers.resize(1);
  snap.manifest.readers[0] = job::reader_commit{true, 0, 4096, 641, 640, 0};
  snap.manifest.shards.resize(2);
  t.start(job, {"train.tsv"}, snap);
  CHECK(t.join(wire::role::shard, "shard-0", 0).restore_snapshot == 5);
  t.join(wire::role::trainer, "trainer-a", -1);
  const auto reader = t.join(wire::role::reader, "reader-0", 0);
  CHECK(reader.resume_examples == 640);
  CHECK(reader.file_passes.empty());  // the job kept its reader count: no plan
  const auto last = t.join(wire::role::shard, "shard-1", 1);  // the job starts with this one
  CHECK(last.restore_snapshot == 5);
  auto st = call(t.f, t.client.gateway, "mem://coordinator", wire::status_request{});
  CHECK(std::get<wire::status_reply>(*st->reply).json.find("\"state\":\"running\"") != std::string::npos);
  // Once the job runs, a restarted shard (a new process, once the old one is silent for its claim
  // window) keeps its own (newer) rows.
  t.f.advance(std::chrono::milliseconds(2600));
  CHECK(t.join(wire::role::shard, "shard-1", 1, 8).restore_snapshot == 0);
}

TEST_CASE("coordinator: resumed on another reader count, each reader gets its files' part of the plan", "[actors]") {
  resuming_job t;
  job::job_options job;
  job.shards = 1;
  job.readers = 2;
  // As find_snapshot_to_resume leaves a snapshot of 3 readers: the plan, and 2 readers without commits.
  job::loaded_snapshot snap;
  snap.manifest.readers.resize(2);
  snap.manifest.read_plan.examples = 1001;
  snap.manifest.read_plan.bad_rows = 3;
  snap.manifest.read_plan.files = {data::file_progress{1, {}}, data::file_progress{0, {0, 4096, 101, 0xabcu, 9000}},
                                   data::file_progress{0, {}}, data::file_progress{1, {}}};
  snap.manifest.shards.resize(1);
  t.start(job, {"a.tsv", "b.tsv", "c.tsv", "d.tsv"}, snap);
  const auto r0 = t.join(wire::role::reader, "reader-0", 0);  // files a and c
  const auto r1 = t.join(wire::role::reader, "reader-1", 1);  // files b and d
  CHECK_FALSE(r0.has_resume_position);
  CHECK(r0.file_passes == std::vector<std::uint32_t>{1, 0});
  CHECK(r0.file_offsets == std::vector<std::uint64_t>{0, 0});
  CHECK(r1.file_passes == std::vector<std::uint32_t>{0, 1});
  CHECK(r1.file_offsets == std::vector<std::uint64_t>{4096, 0});
  CHECK(r1.file_lines == std::vector<std::uint64_t>{101, 1});
  CHECK(r1.file_crcs == std::vector<std::uint32_t>{0xabcu, 0});
  CHECK(r1.file_sizes == std::vector<std::uint64_t>{9000, 0});
  // The learning-rate schedule goes on from the examples committed before, shared by the readers.
  CHECK(r0.schedule_examples == 500);
  CHECK(r1.schedule_examples == 500);
  CHECK(r0.windows_left.empty());  // a job read in order leaves no window
  // Shards get none of it.
  const auto shard = t.join(wire::role::shard, "shard-0", 0);
  CHECK(shard.file_passes.empty());
  CHECK(shard.schedule_examples == 0);
}

TEST_CASE("coordinator: resumed on another reader count, each reader gets the shuffle windows it finishes",
          "[actors]") {
  resuming_job t;
  job::job_options job;
  job.shards = 1;
  job.readers = 2;
  job.passes.epochs = 2;
  job::loaded_snapshot snap;
  snap.manifest.readers.resize(2);
  snap.manifest.read_plan.files.resize(3);
  // Windows left by readers 0 and 2 of 3 in the first epoch, and by reader 1 in the second.
  job::window_left first;
  first.readers = 3;
  first.handed = 4;
  first.start = {0, 8192, 201, 0x0badu, 70000};
  first.progress = {data::file_progress{1, {0, 512, 9, 0x77u, 70000}}};
  job::window_left second = first;
  second.reader = 2;
  second.progress.clear();
  second.handed = 1;
  job::window_left later = first;
  later.reader = 1;
  later.epoch = 1;
  later.progress.clear();
  snap.manifest.read_plan.windows = {first, second, later};
  snap.manifest.shards.resize(1);
  t.start(job, {"a.tsv", "b.tsv", "c.tsv"}, snap);
  const auto r0 = t.join(wire::role::reader, "reader-0", 0);
  const auto r1 = t.join(wire::role::reader, "reader-1", 1);
  // Dealt in turn, each reader's in the order of their epochs.
  REQUIRE(r0.windows_left.size() == 2);
  REQUIRE(r1.windows_left.size() == 1);
  const auto& w = r0.windows_left[0];
  CHECK(w.readers == 3);
  CHECK(w.reader == 0);
  CHECK(w.epoch == 0);
  CHECK(w.handed == 4);
  CHECK(w.start.byte_offset == 8192);
  CHECK(w.start.line_number == 201);
  CHECK(w.start.previous_line_crc == 0x0badu);
  CHECK(w.start.file_size == 70000);
  CHECK(w.file_passes == std::vector<std::uint32_t>{1});
  CHECK(w.file_offsets == std::vector<std::uint64_t>{512});
  CHECK(r0.windows_left[1].reader == 1);
  CHECK(r0.windows_left[1].epoch == 1);
  CHECK(r1.windows_left[0].reader == 2);
  CHECK(r1.windows_left[0].handed == 1);
  CHECK(r1.windows_left[0].file_passes.empty());
}

TEST_CASE("coordinator: stop ends a following job's input through the view, and fails a job over fixed files",
          "[actors]") {
  // A following job (the fixture spawns its coordinator at construction: this one is by hand).
  actor_fixture f;
  ss::test::temp_dir dir;
  auto co = one_shard_job::options(dir);
  co.job.follow.enabled = true;
  node coord{f, "coordinator", "mem://coordinator"};
  auto coordinator = f.own(spawn_coordinator(f.sys, coord.gateway, co));
  node client{f, "client"};
  auto ask = [&](wire::body m) { return call(f, client.gateway, "mem://coordinator", std::move(m)); };
  auto reg = ask(wire::register_request{wire::role::shard, "shard-0", 0, "mem://shard-0", 1});
  REQUIRE(std::holds_alternative<wire::register_reply>(*reg->reply));
  const auto member = std::get<wire::register_reply>(*reg->reply).member_id;
  CHECK_FALSE(std::get<wire::register_reply>(*reg->reply).view.input_closed);
  REQUIRE(std::holds_alternative<wire::ack>(*ask(wire::stop_request{"operator"})->reply));
  auto hb = ask(wire::heartbeat{member, {}});
  CHECK(std::get<wire::heartbeat_reply>(*hb->reply).view.input_closed);
  CHECK(std::get<wire::heartbeat_reply>(*hb->reply).state == wire::job_state::waiting);  // not failed
  const auto status = std::get<wire::status_reply>(*ask(wire::status_request{})->reply).json;
  CHECK(status.find("\"follow_ended\":\"stopped: operator\"") != std::string::npos);
  // A local signal (end_input_atom) after the stop changes nothing.
  caf::anon_send(coordinator, end_input_atom::value, std::string("local: signal 15"));
  f.settle();
  CHECK(std::get<wire::status_reply>(*ask(wire::status_request{})->reply).json.find("stopped: operator") !=
        std::string::npos);

  // A job over fixed files is stopped, failed.
  one_shard_job fixed;
  REQUIRE(std::holds_alternative<wire::ack>(*fixed.ask(wire::stop_request{"operator"})->reply));
  const auto failed = std::get<wire::status_reply>(*fixed.ask(wire::status_request{})->reply).json;
  CHECK(failed.find("\"state\":\"failed\"") != std::string::npos);
  CHECK(failed.find("stopped: operator") != std::string::npos);
}

// A shard that answers take_rows_request (refusing a copy while training when told to) and keeps
// the pass of each.
struct fake_taker {
  bool refuse_copy = false;
  std::vector<wire::move_pass> passes;
};
request_server_actor::behavior_type fake_taker_actor(request_server_actor::pointer, std::shared_ptr<fake_taker> t) {
  return {[t](serve_atom, const envelope_ptr& env) -> body_ptr {
    if (std::holds_alternative<wire::drop_rows_request>(env->message)) return make_body(wire::drop_rows_reply{5, 20});
    const auto& req = std::get<wire::take_rows_request>(env->message);
    t->passes.push_back(req.pass);
    if (t->refuse_copy && req.pass == wire::move_pass::copy)
      return make_body(wire::error_reply{errc::invalid_argument, "its rows leave RAM"});
    return make_body(wire::take_rows_reply{10, 100, 0.01});
  }};
}

TEST_CASE("coordinator: a live reshard is refused with the reason, waits for its new shards, copies the rows while "
          "the job trains, holds the input until nothing is being trained, moves only the rows changed since, and "
          "rolls back when a shard never comes",
          "[actors]") {
  actor_fixture f;
  ss::test::temp_dir dir;
  coordinator_options co = one_shard_job::options(dir);
  co.job.peer_wait = 3.0;
  co.job.member_timeout = 5.0;
  std::shared_ptr<job::snapshot_store> store(job::memory_snapshot_store());
  co.snapshots = store;
  co.snapshot_interval = 0;
  co.job_id = 0x42;
  node coord(f, "coordinator", "mem://coordinator");
  auto c = f.own(spawn_coordinator(f.sys, coord.gateway, co));
  node client(f, "client");
  // The shards' servers: only their takes are answered.
  auto takes = std::make_shared<fake_taker>();
  node shard0_server(f, "shard-0", "mem://shard-0"), shard1_server(f, "shard-1", "mem://shard-1");
  for (auto* n : {&shard0_server, &shard1_server})
    caf::anon_send(n->gateway, route_atom::value, kind_of<wire::take_rows_request>(), f.sys.spawn(fake_taker_actor, takes));
  auto ask = [&](wire::body m) { return call(f, client.gateway, "mem://coordinator", std::move(m)); };
  auto reshard = [&](std::uint32_t shards) { return std::get<wire::reshard_reply>(*ask(wire::reshard_request{shards})->reply); };
  auto status = [&] { return std::get<wire::status_reply>(*ask(wire::status_request{})->reply).json; };
  // Before the job runs: refused.
  auto early = reshard(2);
  CHECK_FALSE(early.accepted);
  CHECK(early.message.find("the job is waiting") != std::string::npos);
  auto id_of = [](const std::shared_ptr<call_result>& r) { return std::get<wire::register_reply>(*r->reply).member_id; };
  const auto shard0 = id_of(ask(wire::register_request{wire::role::shard, "shard-0", 0, "mem://shard-0", 1}));
  const auto reader0 = id_of(ask(wire::register_request{wire::role::reader, "reader-0", 0, "mem://reader-0", 2}));
  const auto trainer = id_of(ask(wire::register_request{wire::role::trainer, "trainer-a", -1, "", 3}));
  REQUIRE(status().find("\"state\":\"running\"") != std::string::npos);
  // A heartbeat of each member (the reader's with its batches being trained); the view it got back.
  wire::cluster_view view;
  std::uint64_t shard1 = 0;
  auto beat = [&](std::uint32_t in_flight) {
    wire::member_progress p;
    p.view_epoch = view.epoch;
    ask(wire::heartbeat{shard0, p});
    if (shard1 != 0) ask(wire::heartbeat{shard1, p});
    ask(wire::heartbeat{trainer, p});
    p.batches_in_flight = in_flight;
    view = std::get<wire::heartbeat_reply>(*ask(wire::heartbeat{reader0, p})->reply).view;
  };
  beat(0);
  CHECK_FALSE(reshard(0).accepted);
  auto same = reshard(1);
  CHECK_FALSE(same.accepted);
  CHECK(same.message == "the job has 1 shards already");
  // Accepted: the job waits for shard 1, and a second request is refused meanwhile.
  auto grow = reshard(2);
  REQUIRE(grow.accepted);
  CHECK(grow.from == 1);
  CHECK(grow.to == 2);
  auto busy = reshard(3);
  CHECK_FALSE(busy.accepted);
  CHECK(busy.message.find("another change of the shard count is under way (resharding 1 -> 2 shards") !=
        std::string::npos);
  beat(0);
  CHECK(view.shards.size() == 2);
  CHECK(view.reshaping);  // the members heartbeat often until it ends
  CHECK_FALSE(view.hold_input);
  // Shard 1 never registers: after --peer-wait the reshard is rolled back, the job goes on with one.
  for (int i = 0; i < 8; ++i) {
    beat(0);
    f.advance(std::chrono::milliseconds(500));
  }
  beat(0);
  CHECK(view.shards.size() == 1);
  CHECK_FALSE(view.hold_input);
  CHECK_FALSE(view.reshaping);
  CHECK(status().find("\"state\":\"running\"") != std::string::npos);
  CHECK(status().find("rolled back: shard(s) 1 did not register within --peer-wait 3 s") != std::string::npos);
  CHECK(takes->passes.empty());
  // Again, with shard 1: both shards copy the rows they will own while the job trains.
  REQUIRE(reshard(2).accepted);
  beat(0);
  shard1 = id_of(ask(wire::register_request{wire::role::shard, "shard-1", 1, "mem://shard-1", 4}));
  CHECK(std::get<wire::register_reply>(*ask(wire::register_request{wire::role::shard, "shard-1", 1, "mem://shard-1", 4})
                                             ->reply)
            .job_was_running == false);  // it starts with no rows: they come by the move
  f.settle();
  CHECK(takes->passes == std::vector<wire::move_pass>{wire::move_pass::copy, wire::move_pass::copy});
  // Then the input is held, and stays held while the reader's batches are trained.
  f.advance(std::chrono::milliseconds(500));
  beat(2);
  REQUIRE(view.hold_input);
  f.advance(std::chrono::milliseconds(500));
  beat(2);
  CHECK(status().find("holding the input until nothing is being trained") != std::string::npos);
  CHECK(takes->passes.size() == 2);
  CHECK(store->read_reshard_switch().error().code() == errc::not_found);  // stored at the switch
  // Once none is, only the rows changed since their copy move; then the members switch to 2 shards,
  // and once each applied that, the input is released.
  beat(0);
  f.settle();
  CHECK(takes->passes == std::vector<wire::move_pass>{wire::move_pass::copy, wire::move_pass::copy,
                                                      wire::move_pass::changed, wire::move_pass::changed});
  beat(0);
  CHECK(view.placement_shards == 2);
  CHECK(view.hold_input);
  // The switch is stored before any member is told it: a coordinator that stops before the
  // snapshot of the new shape comes back to it (no snapshot before it here).
  auto stored = store->read_reshard_switch();
  REQUIRE(stored.is_ok());
  CHECK(stored->from == 1);
  CHECK(stored->to == 2);
  CHECK(stored->job_id == 0x42);
  CHECK(stored->base_snapshot == 0);
  beat(0);
  CHECK_FALSE(view.hold_input);
  CHECK(status().find("the snapshot of the new shape") != std::string::npos);
  (void)c;
}

// A running job of one shard, one reader and one trainer, and the servers of shards 0 and 1 (fake
// takers that also answer drops), to reshard to 2 shards: each member heartbeats with the view it
// last got (beat), shard 1 once it registered.
struct live_reshard_job {
  actor_fixture f;
  ss::test::temp_dir dir;
  coordinator_options co = one_shard_job::options(dir);
  std::shared_ptr<fake_taker> takes = std::make_shared<fake_taker>();
  std::unique_ptr<node> coord, client, shard0_server, shard1_server;
  coordinator_actor coordinator;
  std::uint64_t shard0 = 0, shard1 = 0, reader0 = 0, trainer = 0;
  wire::cluster_view view;

  explicit live_reshard_job(bool refuse_copy) {
    co.job.member_timeout = 5.0;
    takes->refuse_copy = refuse_copy;
    coord = std::make_unique<node>(f, "coordinator", "mem://coordinator");
    coordinator = f.own(spawn_coordinator(f.sys, coord->gateway, co));
    client = std::make_unique<node>(f, "client");
    shard0_server = std::make_unique<node>(f, "shard-0", "mem://shard-0");
    shard1_server = std::make_unique<node>(f, "shard-1", "mem://shard-1");
    for (auto* n : {shard0_server.get(), shard1_server.get()}) {
      auto server = f.sys.spawn(fake_taker_actor, takes);
      caf::anon_send(n->gateway, route_atom::value, kind_of<wire::take_rows_request>(), server);
      caf::anon_send(n->gateway, route_atom::value, kind_of<wire::drop_rows_request>(), server);
    }
    shard0 = id_of(ask(wire::register_request{wire::role::shard, "shard-0", 0, "mem://shard-0", 1}));
    reader0 = id_of(ask(wire::register_request{wire::role::reader, "reader-0", 0, "mem://reader-0", 2}));
    trainer = id_of(ask(wire::register_request{wire::role::trainer, "trainer-a", -1, "", 3}));
    beat();
  }
  std::shared_ptr<call_result> ask(wire::body m) { return call(f, client->gateway, "mem://coordinator", std::move(m)); }
  static std::uint64_t id_of(const std::shared_ptr<call_result>& r) {
    return std::get<wire::register_reply>(*r->reply).member_id;
  }
  std::string status() { return std::get<wire::status_reply>(*ask(wire::status_request{})->reply).json; }
  void beat() {
    wire::member_progress p;
    p.view_epoch = view.epoch;
    for (auto id : {shard0, shard1, trainer})
      if (id != 0) ask(wire::heartbeat{id, p});
    view = std::get<wire::heartbeat_reply>(*ask(wire::heartbeat{reader0, p})->reply).view;
  }
  // Asks for 2 shards, and shard 1 registers.
  void grow_to_two() {
    REQUIRE(std::get<wire::reshard_reply>(*ask(wire::reshard_request{2})->reply).accepted);
    beat();
    shard1 = id_of(ask(wire::register_request{wire::role::shard, "shard-1", 1, "mem://shard-1", 4}));
    f.settle();
  }
};

TEST_CASE("coordinator: a live reshard of a job without a snapshot directory drops the rows that moved after the "
          "switch (no snapshot commits it)",
          "[actors]") {
  live_reshard_job job(false);
  REQUIRE_FALSE(job.co.snapshots);
  job.grow_to_two();
  // The copy, the hold, the changed rows, the switch and the release, as with snapshots; then the
  // drop at once, where a snapshot would have waited for ever.
  for (int i = 0; i < 12 && job.view.reshaping; ++i) {
    job.f.advance(std::chrono::milliseconds(500));
    job.beat();
    job.f.settle();
  }
  CHECK_FALSE(job.view.reshaping);
  CHECK_FALSE(job.view.hold_input);
  CHECK(job.view.shards.size() == 2);
  CHECK(job.takes->passes.size() == 4);
  const auto json = job.status();
  CHECK(json.find("\"state\":\"running\"") != std::string::npos);
  CHECK(json.find("\"reshapes\":1") != std::string::npos);
}

TEST_CASE("coordinator: with --grow-shards a shard beyond the job's count makes the running job grow to include it; "
          "while it cannot grow the shard is told to register again, and without the flag it is refused",
          "[actors]") {
  for (const bool grow : {false, true}) {
    actor_fixture f;
    ss::test::temp_dir dir;
    coordinator_options co = one_shard_job::options(dir);
    co.grow_shards = grow;
    node coord(f, "coordinator", "mem://coordinator");
    auto c = f.own(spawn_coordinator(f.sys, coord.gateway, co));
    node client(f, "client");
    auto ask = [&](wire::body m) { return call(f, client.gateway, "mem://coordinator", std::move(m)); };
    auto status = [&] { return std::get<wire::status_reply>(*ask(wire::status_request{})->reply).json; };
    auto shard = [&](int index) {
      const std::string name = "shard-" + std::to_string(index);
      return ask(wire::register_request{wire::role::shard, name, index, "mem://" + name,
                                        static_cast<std::uint64_t>(10 + index)})
          ->reply;
    };
    // Before the job runs, it cannot grow.
    auto early = shard(1);
    REQUIRE(std::holds_alternative<wire::error_reply>(*early));
    CHECK(std::get<wire::error_reply>(*early).code == (grow ? errc::unavailable : errc::out_of_range));
    if (grow) CHECK_THAT(std::get<wire::error_reply>(*early).message, Catch::Contains("cannot grow now (it is waiting"));
    REQUIRE(std::holds_alternative<wire::register_reply>(*shard(0)));
    ask(wire::register_request{wire::role::reader, "reader-0", 0, "mem://reader-0", 2});
    ask(wire::register_request{wire::role::trainer, "trainer-a", -1, "", 3});
    REQUIRE(status().find("\"state\":\"running\"") != std::string::npos);
    auto beyond = shard(1);
    if (!grow) {
      REQUIRE(std::holds_alternative<wire::error_reply>(*beyond));
      CHECK_THAT(std::get<wire::error_reply>(*beyond).message, Catch::Contains("is outside the job's 0..0"));
      CHECK(status().find("resharding") == std::string::npos);
      continue;
    }
    // Registered, and the job grows to 2 shards; a third shard meanwhile is told to come again.
    REQUIRE(std::holds_alternative<wire::register_reply>(*beyond));
    CHECK(status().find("\"reshaping\":\"1 -> 2 shards") != std::string::npos);
    // An index no job can have is refused for good, not asked to come again.
    auto impossible = shard(5000);
    REQUIRE(std::holds_alternative<wire::error_reply>(*impossible));
    CHECK(std::get<wire::error_reply>(*impossible).code == errc::out_of_range);
    auto third = shard(2);
    REQUIRE(std::holds_alternative<wire::error_reply>(*third));
    CHECK(std::get<wire::error_reply>(*third).code == errc::unavailable);
    CHECK_THAT(std::get<wire::error_reply>(*third).message,
               Catch::Contains("beyond the job's 2 shards, and the job cannot grow now (another change of its shard "
                               "count is under way"));
    (void)c;
  }
}

TEST_CASE("coordinator: started to a stored reshard switch, it keeps the new count, holds the input until every "
          "member routes by it, then takes the snapshot of the new shape",
          "[actors]") {
  actor_fixture f;
  ss::test::temp_dir dir;
  coordinator_options co = one_shard_job::options(dir);
  co.job.shards = 2;  // as find_snapshot_to_resume leaves it: the switch's count
  co.shards_flag = 1;
  co.switched = job::reshard_switch{1, 2, 0x42, 0};
  co.job_id = 0x42;
  node coord(f, "coordinator", "mem://coordinator");
  auto c = f.own(spawn_coordinator(f.sys, coord.gateway, co));
  node client(f, "client");
  auto ask = [&](wire::body m) { return call(f, client.gateway, "mem://coordinator", std::move(m)); };
  auto status = [&] { return std::get<wire::status_reply>(*ask(wire::status_request{})->reply).json; };
  auto reg = [&](wire::role role, const std::string& name, int index, std::uint64_t incarnation) {
    auto r = ask(wire::register_request{role, name, index, index >= 0 ? "mem://" + name : "", incarnation});
    REQUIRE(std::holds_alternative<wire::register_reply>(*r->reply));
    return std::get<wire::register_reply>(*r->reply);
  };
  // The shards of both counts re-register (shard 1 is the new one: it holds the rows it took).
  const auto s0 = reg(wire::role::shard, "shard-0", 0, 1);
  CHECK(s0.view.placement_shards == 2);
  CHECK(s0.view.hold_input);
  CHECK(s0.view.reshaping);
  const auto s1 = reg(wire::role::shard, "shard-1", 1, 2);
  const auto r0 = reg(wire::role::reader, "reader-0", 0, 3);
  const auto t0 = reg(wire::role::trainer, "trainer-a", -1, 4);
  CHECK(status().find("\"state\":\"running\"") != std::string::npos);
  // A member that still routes by the old view keeps the input held.
  wire::cluster_view view = t0.view;
  auto beat = [&](std::uint64_t trainer_epoch) {
    wire::member_progress p;
    p.view_epoch = view.epoch;
    ask(wire::heartbeat{s0.member_id, p});
    ask(wire::heartbeat{s1.member_id, p});
    p.view_epoch = trainer_epoch;
    ask(wire::heartbeat{t0.member_id, p});
    p.view_epoch = view.epoch;
    view = std::get<wire::heartbeat_reply>(*ask(wire::heartbeat{r0.member_id, p})->reply).view;
  };
  beat(0);
  beat(0);
  CHECK(view.hold_input);
  CHECK(status().find("switching the members to the new count") != std::string::npos);
  beat(view.epoch);
  beat(view.epoch);
  CHECK_FALSE(view.hold_input);
  CHECK(view.placement_shards == 2);
  CHECK(status().find("the snapshot of the new shape") != std::string::npos);
  (void)c;
}

TEST_CASE("coordinator: a live reshard whose copy while training is refused moves every row while the input is held",
          "[actors]") {
  live_reshard_job job(true);
  job.grow_to_two();
  job.beat();
  REQUIRE(job.view.hold_input);
  job.beat();
  job.f.settle();
  const auto& takes = job.takes;
  // One shard's refusal ends the copy: every row moves under the hold (asked of both shards).
  REQUIRE(takes->passes.size() >= 3);
  CHECK(takes->passes[0] == wire::move_pass::copy);
  CHECK(std::count(takes->passes.begin(), takes->passes.end(), wire::move_pass::whole) == 2);
  CHECK(std::count(takes->passes.begin(), takes->passes.end(), wire::move_pass::changed) == 0);
}

namespace snapshot_race {

// A job member at mem://NAME that answers each request with what `answer` makes of it (the
// request's count from 1 with it), `delay` later.
struct fake_member {
  std::function<wire::body(const wire::body&, int)> answer;
  std::chrono::milliseconds delay{0};
  int served = 0;
  std::deque<std::pair<caf::typed_response_promise<body_ptr>, body_ptr>> due;  // answers not yet sent
};

caf::behavior fake_member_actor(caf::event_based_actor* self, std::shared_ptr<fake_member> m) {
  return {[self, m](serve_atom, const envelope_ptr& env) -> caf::result<body_ptr> {
            auto reply = make_body(m->answer(env->message, ++m->served));
            if (m->delay.count() == 0) return reply;
            auto promise = self->make_response_promise<body_ptr>();
            m->due.emplace_back(promise, reply);
            self->delayed_send(self, m->delay, caf::ok_atom::value);
            return promise;
          },
          [m](caf::ok_atom) {
            auto [promise, reply] = std::move(m->due.front());
            m->due.pop_front();
            promise.deliver(reply);
          }};
}

}  // namespace snapshot_race

TEST_CASE("coordinator: an abandoned snapshot's late answers do not count for the next attempt at its id",
          "[actors]") {
  using namespace snapshot_race;
  actor_fixture f;
  ss::test::temp_dir dir;
  coordinator_options co = one_shard_job::options(dir);
  co.job.member_timeout = 30.0;
  std::shared_ptr<job::snapshot_store> store(job::memory_snapshot_store());
  co.snapshots = store;
  co.snapshot_interval = 0;
  node coord{f, "coordinator", "mem://coordinator"};
  auto coordinator = f.own(spawn_coordinator(f.sys, coord.gateway, co));
  node client{f, "client"};
  // The shard refuses the first snapshot (it is loading its rows) and takes the second; the
  // reader answers its position 200 ms late, the trainer its replica 100 ms late: the first
  // attempt's replica arrives while the second attempt still waits for the reader.
  auto shard = std::make_shared<fake_member>();
  shard->answer = [](const wire::body& b, int n) -> wire::body {
    if (n == 1) return wire::error_reply{errc::unavailable, "shard-0 is loading its rows; retry shortly"};
    return wire::snapshot_reply{std::get<wire::snapshot_request>(b).snapshot_id, "cp", 10, 1000, 0x77, 0.1};
  };
  auto reader = std::make_shared<fake_member>();
  reader->delay = std::chrono::milliseconds(200);
  reader->answer = [](const wire::body&, int) -> wire::body {
    wire::position_reply r;
    r.has_committed = true;
    r.committed = wire::read_position{0, 4096, 641};
    r.committed_examples = 640;
    return r;
  };
  auto trainer = std::make_shared<fake_member>();
  trainer->delay = std::chrono::milliseconds(100);
  trainer->answer = [](const wire::body&, int) -> wire::body {
    wire::dense_reply r{3, {1.0f, 2.0f, 3.0f}, {}};
    r.examples = 640;
    return r;
  };
  node shard_node{f, "shard-0", "mem://shard-0"};
  node reader_node{f, "reader-0", "mem://reader-0"};
  node trainer_node{f, "trainer-a", "mem://trainer-a"};
  auto serve = [&f](node& n, std::shared_ptr<fake_member> m, std::size_t kind) {
    auto a = caf::actor_cast<request_server_actor>(f.sys.spawn(fake_member_actor, std::move(m)));
    caf::anon_send(n.gateway, route_atom::value, kind, a);
  };
  serve(shard_node, shard, kind_of<wire::snapshot_request>());
  serve(reader_node, reader, kind_of<wire::position_request>());
  serve(trainer_node, trainer, kind_of<wire::dense_request>());
  f.settle();
  auto join = [&](wire::role role, const std::string& name, int index) {
    auto r = call(f, client.gateway, "mem://coordinator", wire::register_request{role, name, index, "mem://" + name, 7});
    REQUIRE(std::holds_alternative<wire::register_reply>(*r->reply));
  };
  join(wire::role::shard, "shard-0", 0);
  join(wire::role::reader, "reader-0", 0);
  join(wire::role::trainer, "trainer-a", -1);
  const auto snapshot_now = [&] {
    return call(f, client.gateway, "mem://coordinator", wire::snapshot_now{}, std::chrono::seconds(5));
  };
  auto first = snapshot_now();
  f.advance(std::chrono::milliseconds(250));  // the reader answered; the shard refused: abandoned
  REQUIRE(first->reply.has_value());
  REQUIRE(std::holds_alternative<wire::error_reply>(*first->reply));
  CHECK(std::get<wire::error_reply>(*first->reply).message.find("loading its rows") != std::string::npos);
  auto second = snapshot_now();
  f.advance(std::chrono::milliseconds(150));  // the first attempt's replica comes in meanwhile
  CHECK_FALSE(second->reply.has_value());     // the second waits for its own cut
  f.advance(std::chrono::milliseconds(400));
  REQUIRE(second->reply.has_value());
  REQUIRE(std::holds_alternative<wire::snapshot_reply>(*second->reply));
  CHECK(std::get<wire::snapshot_reply>(*second->reply).rows == 10);
  auto stored = store->read(std::get<wire::snapshot_reply>(*second->reply).snapshot_id);
  REQUIRE(stored.is_ok());
  REQUIRE(stored->manifest.readers.size() == 1);
  CHECK(stored->manifest.readers[0].examples == 640);
  CHECK(stored->manifest.shards.at(0).rows == 10);
  CHECK(stored->dense.params == std::vector<float>{1.0f, 2.0f, 3.0f});
}
