// A shard's ownership of its rows, and a reader's batches: numbering, commits, epochs, and the
// batches of trainers that left, restarted, or held them too long.
#include "actor_helpers.hpp"
#include "ss/core/embedding/forwarding_rows.hpp"

using namespace ss;
using namespace ss::actors;
using namespace ss::test;

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
    if (embedding::placement(2).shard_of(0, id) == 1) {
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
  // A prefetch hint to a shard that keeps every row in RAM: declined, so the trainer sends no more.
  auto hint = ask(f, shard, wire::warm_request{{0, 0}, {mine[0], mine[1]}});
  REQUIRE(std::holds_alternative<wire::warm_reply>(*hint));
  CHECK_FALSE(std::get<wire::warm_reply>(*hint).tiered);
  CHECK(std::get<wire::warm_reply>(*hint).rows == 0);
}

TEST_CASE("shard: a resent push is applied once, a push under a membership that is over is refused", "[actors]") {
  actor_fixture f;
  embedding::shard_store_options so;
  so.dim = 1;
  so.optimizer.learning_rate = 1.0f;
  auto store = std::make_shared<embedding::shard_store>(so);
  node gw(f, "shard-0");
  auto counters = std::make_shared<shard_counters>();
  auto shard = spawn_shard(f.sys, gw.gateway, store, shard_options{}, counters).pool;
  f.settle();
  auto value = [&] { return std::get<wire::lookup_reply>(*ask(f, shard, wire::lookup_request{true, {0}, {5}})).values[0]; };
  const float start = value();
  // Trainer 0x77 (membership 1) pushes numbers 1 and 2; number 1 comes again (its answer was lost).
  auto push = [&](std::uint64_t trainer, std::uint64_t membership, std::uint64_t number) {
    wire::push_request p{{0}, {5}, {1.0f}};
    p.trainer = trainer;
    p.membership = membership;
    p.number = number;
    return ask(f, shard, std::move(p));
  };
  REQUIRE(std::holds_alternative<wire::push_reply>(*push(0x77, 1, 1)));
  REQUIRE(std::holds_alternative<wire::push_reply>(*push(0x77, 1, 2)));
  auto again = push(0x77, 1, 1);
  REQUIRE(std::holds_alternative<wire::push_reply>(*again));
  CHECK(std::get<wire::push_reply>(*again).duplicate);
  CHECK(value() == Approx(start - 2));
  CHECK(counters->pushes_duplicate == 1);
  // The view: 0x77 dropped for silence. What it still sends is refused, and nothing is applied.
  wire::cluster_view view;
  view.dropped_trainers = {0x77};
  caf::anon_send(shard, view_atom::value, view);
  f.settle();
  auto late = push(0x77, 1, 3);
  REQUIRE(std::holds_alternative<wire::error_reply>(*late));
  CHECK(std::get<wire::error_reply>(*late).code == errc::fenced);
  CHECK(std::get<wire::error_reply>(*late).message.find("dropped from the job") != std::string::npos);
  // Back under membership 2: its old membership's pushes stay refused, the new one's apply.
  view.dropped_trainers.clear();
  view.trainers = {"t"};
  view.trainer_incarnations = {0x77};
  view.trainer_memberships = {2};
  caf::anon_send(shard, view_atom::value, view);
  f.settle();
  auto old = push(0x77, 1, 4);
  REQUIRE(std::holds_alternative<wire::error_reply>(*old));
  CHECK(std::get<wire::error_reply>(*old).message.find("holds membership 2 now") != std::string::npos);
  REQUIRE(std::holds_alternative<wire::push_reply>(*push(0x77, 2, 5)));
  CHECK(counters->pushes_fenced == 2);
  // Unnamed pushes (tools, older trainers) are neither fenced nor numbered.
  REQUIRE(std::holds_alternative<wire::push_reply>(*ask(f, shard, wire::push_request{{0}, {5}, {1.0f}})));
  REQUIRE(std::holds_alternative<wire::push_reply>(*ask(f, shard, wire::push_request{{0}, {5}, {1.0f}})));
  CHECK(value() == Approx(start - 5));
}

namespace reader_test {

struct setup {
  actor_fixture f;
  ss::test::temp_dir dir;
  std::shared_ptr<reader_counters> counters = std::make_shared<reader_counters>();
  reader_actor r;

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
  // Trainer `trainer`'s pull number `number`, naming the pulls it gave up on.
  wire::batch_message pull(std::uint64_t trainer, std::uint64_t number = 0, std::vector<std::uint64_t> abandoned = {}) {
    auto b = ask(f, r, wire::pull_request{1, trainer, number, std::move(abandoned)});
    REQUIRE(b.has_value());
    REQUIRE(std::holds_alternative<wire::batch_message>(*b));
    return std::get<wire::batch_message>(*b);
  }
  // An ack of batch `sequence` (of reader incarnation `incarnation`), from trainer `trainer` (0: not said).
  bool acked(std::uint64_t sequence, std::uint64_t incarnation, std::uint64_t trainer = 0) {
    return std::holds_alternative<wire::ack>(*ask(f, r, wire::batch_ack{0, sequence, incarnation, trainer}));
  }
  // What a snapshot's start asks: the committed position now.
  wire::position_reply position() {
    auto b = ask(f, r, wire::position_request{});
    REQUIRE(b.has_value());
    REQUIRE(std::holds_alternative<wire::position_reply>(*b));
    return std::get<wire::position_reply>(*b);
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
  CHECK_FALSE(t.position().has_committed);
  CHECK(t.acked(0, 0x51));
  {
    std::lock_guard<std::mutex> lock(t.counters->mu);
    CHECK(t.counters->has_committed);
    CHECK(t.counters->committed.byte_offset == batches[1].end.byte_offset);
    CHECK(t.counters->committed_examples == 200);
  }
  // Asked at once (no heartbeat between): the position after batch 1, with its examples.
  const auto now = t.position();
  CHECK(now.has_committed);
  CHECK(now.committed.byte_offset == batches[1].end.byte_offset);
  CHECK(now.committed.line_number == batches[1].end.line_number);
  CHECK(now.committed_examples == 200);
  CHECK(now.committed_bad_rows == 0);
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
  view.coordinator = 0xc1;
  view.trainer_incarnations = {1, 2};
  caf::anon_send(t.r, view_atom::value, view);
  const auto first = t.pull(1);   // trainer 1 takes batch 0 and dies
  const auto second = t.pull(2);  // trainer 2 takes batch 1
  CHECK(t.acked(second.sequence, 0, 2));
  // A coordinator heard for less than requeue_after may not have heard from trainer 1 yet.
  view.trainer_incarnations = {2};
  caf::anon_send(t.r, view_atom::value, view);
  t.f.advance(std::chrono::milliseconds(500));
  CHECK(t.counters->batches_requeued.load() == 0);
  t.f.advance(std::chrono::milliseconds(1000));
  CHECK(t.counters->batches_requeued.load() == 1);
  CHECK(t.counters->examples_requeued.load() == 100);
  const auto again = t.pull(2);  // the orphan comes before new batches
  CHECK(again.sequence == first.sequence);
  CHECK(again.batch.size() == first.batch.size());
  CHECK_FALSE(t.acked(first.sequence, 0, 1));  // it is trainer 2's now: the dead trainer's late ack is refused
  CHECK(t.acked(again.sequence, 0, 2));
  CHECK_FALSE(t.acked(first.sequence, 0));  // and any second ack is a duplicate
  CHECK(t.counters->examples_acked.load() == 200);
  // A settled coordinator dropped trainer 2 after --member-timeout already: its batch goes at once.
  view.trainer_incarnations = {1, 2};
  caf::anon_send(t.r, view_atom::value, view);
  const auto third = t.pull(2);
  view.trainer_incarnations = {1};
  caf::anon_send(t.r, view_atom::value, view);
  t.f.advance(std::chrono::milliseconds(300));
  CHECK(t.counters->batches_requeued.load() == 2);
  CHECK(t.pull(1).sequence == third.sequence);
}

TEST_CASE("reader: the batches of pulls a trainer gave up on go to the next pull at once", "[actors]") {
  reader_test::setup t;  // the lease (120 s) and lost_after (20 s) are far off
  wire::cluster_view view;
  view.trainer_incarnations = {1, 2};
  caf::anon_send(t.r, view_atom::value, view);
  // The reader was paused: it answers trainer 1's pulls 1 and 2 after trainer 1 gave them up.
  const auto lost_a = t.pull(1, 1);
  const auto lost_b = t.pull(1, 2);
  // Trainer 2's pull names none; trainer 1's next names both (and one it never sent).
  CHECK(t.pull(2, 1).sequence == 2);
  CHECK(t.counters->batches_requeued.load() == 0);
  const auto again_a = t.pull(1, 3, {1, 2, 99});
  CHECK(t.counters->batches_requeued.load() == 2);
  CHECK(again_a.sequence == lost_a.sequence);  // requeued batches come first
  CHECK(t.pull(2, 2).sequence == lost_b.sequence);
  // Named again (the trainer had no answer to its pull 3 yet): nothing twice.
  CHECK_FALSE(t.acked(lost_b.sequence, 0, 1));  // trainer 2 holds it now
  CHECK(std::holds_alternative<wire::error_reply>(*ask(t.f, t.r, wire::pull_request{1, 1, 4, {1, 2}})));
  CHECK(t.counters->batches_requeued.load() == 2);
  for (std::uint64_t seq = 0; seq < 3; ++seq) CHECK(t.acked(seq, 0));
  CHECK(t.counters->examples_acked.load() == 300);  // each row once
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

namespace {

// A peer that answers every request with the page in `page` (a shard that sends what it should not).
request_server_actor::behavior_type fixed_page(request_server_actor::pointer, std::shared_ptr<wire::dump_reply> page) {
  return {[page](serve_atom, const envelope_ptr&) -> body_ptr { return make_body(*page); }};
}
// A source that never answers a page (a shard killed, or paused): the promises are kept unanswered.
request_server_actor::behavior_type silent_source(request_server_actor::pointer self,
                                                  std::shared_ptr<std::vector<caf::response_promise>> held) {
  return {[self, held](serve_atom, const envelope_ptr&) -> caf::result<body_ptr> {
    held->push_back(self->make_response_promise());
    return caf::delegated<body_ptr>();
  }};
}
// What the restore tests share: stores of 2-float rows (a new one each call), storage for them, and
// the options of shard 0 of 2.
struct restore_setup {
  embedding::shard_store_options so = [] {
    embedding::shard_store_options o;
    o.dim = 2;
    return o;
  }();
  std::shared_ptr<embedding::shard_store> store() const { return std::make_shared<embedding::shard_store>(so); }
  embedding::memory_rows storage{store()->row_floats()};
  shard_options zero = [] {
    shard_options o;
    o.name = "shard-0";
    o.shards = 2;
    return o;
  }();
};
}  // namespace

TEST_CASE("shard: storage that holds another shard's rows of the job is refused, with both named", "[actors]") {
  restore_setup setup;
  auto store = [&setup] { return setup.store(); };
  auto& storage = setup.storage;
  const shard_options& zero = setup.zero;
  shard_options one = zero;
  one.name = "shard-1";
  one.index = 1;
  shard_counters c;
  const std::uint64_t job = 7;
  // The job starts: shard 0 claims the storage, writes a row and checkpoints it (snapshot 1).
  REQUIRE(restore_rows(*store(), storage, job, 0, 0, false, zero, c).is_ok());
  const std::uint32_t table = 0;
  const std::uint64_t id = 3;
  const std::vector<float> row(storage.row_floats(), 0.5f);
  REQUIRE(storage.write(&table, &id, row.data(), 1).is_ok());
  REQUIRE(storage.checkpoint(1).is_ok());
  // Shard 1 started on shard 0's data directory, restarting into the running job, or resuming.
  for (const std::uint64_t snapshot : {0ULL, 1ULL}) {
    auto wrong = restore_rows(*store(), storage, job, snapshot, 0, snapshot == 0, one, c);
    REQUIRE_FALSE(wrong.is_ok());
    CHECK(wrong.error().code() == errc::not_found);
    CHECK_THAT(wrong.error().message(), Catch::Contains("holds the rows of shard 0 of 2 of this job") &&
                                            Catch::Contains("not of shard 1 of 2"));
  }
  // Its own shard restarts on it, or resumes from it, and gets the row.
  for (const std::uint64_t snapshot : {0ULL, 1ULL}) {
    auto own = store();
    REQUIRE(restore_rows(*own, storage, job, snapshot, 0, snapshot == 0, zero, c).is_ok());
    CHECK(own->stats().rows == 1);
  }
}

TEST_CASE("shard: storage of this job claimed by a build that placed rows by modulo is refused", "[actors]") {
  restore_setup setup;
  auto store = [&setup] { return setup.store(); };
  auto& storage = setup.storage;
  const shard_options& zero = setup.zero;
  shard_counters c;
  const std::uint64_t job = 7;
  // What a build before the placement was recorded left: the job and the shard, no scheme.
  REQUIRE(storage.set_meta("job_id", "0000000000000007").is_ok());
  REQUIRE(storage.set_meta("shard", "0 of 2").is_ok());
  const std::uint32_t table = 0;
  const std::uint64_t id = 3;
  const std::vector<float> row(storage.row_floats(), 0.5f);
  REQUIRE(storage.write(&table, &id, row.data(), 1).is_ok());
  REQUIRE(storage.checkpoint(1).is_ok());
  // A restart into the running job, and a resume from the checkpoint: both refused, naming both schemes.
  auto restart = restore_rows(*store(), storage, job, 0, 0, true, zero, c);
  REQUIRE_FALSE(restart.is_ok());
  CHECK(restart.error().code() == errc::version_mismatch);
  CHECK_THAT(restart.error().message(), Catch::Contains("placed on the shards by \"modulo\"") &&
                                            Catch::Contains(embedding::placement_scheme));
  auto resume = restore_rows(*store(), storage, job, 1, 0, false, zero, c);
  REQUIRE_FALSE(resume.is_ok());
  CHECK(resume.error().code() == errc::version_mismatch);
  CHECK_THAT(resume.error().message(), Catch::Contains("placed on the shards by \"modulo\""));
  // A new job on the same storage clears it and claims it with this build's scheme.
  auto fresh = restore_rows(*store(), storage, 8, 0, 0, false, zero, c);
  REQUIRE(fresh.is_ok());
  CHECK(*storage.get_meta("placement") == embedding::placement_scheme);
}

namespace {

// Storage whose checkpoint `bad` fails its check as RocksDB's does while it loads (restore_loading
// checks and loads in one pass): `handed` goes to load, then the same rows to unload, and the
// check fails.
class failing_check_rows final : public embedding::forwarding_rows {
 public:
  failing_check_rows(std::uint32_t row_floats, std::uint64_t bad, std::vector<std::uint64_t> handed)
      : forwarding_rows(std::make_unique<embedding::memory_rows>(row_floats)), bad_(bad), handed_(std::move(handed)) {}
  status restore_loading(std::uint64_t id, const embedding::row_visitor& load,
                         const embedding::row_visitor& unload) override {
    if (id != bad_) return forwarding_rows::restore_loading(id, load, unload);
    const std::vector<float> row(row_floats(), 0.25f);
    for (std::uint64_t r : handed_) load(0, r, row.data());
    for (std::uint64_t r : handed_) unload(0, r, row.data());
    return status(errc::corrupt, "checkpoint " + std::to_string(id) + " is corrupt: its content hash differs");
  }

 private:
  std::uint64_t bad_;
  std::vector<std::uint64_t> handed_;
};

}  // namespace

TEST_CASE("shard: a checkpoint that fails its check while it loads leaves none of its rows; the older one serves",
          "[actors]") {
  const bool tiered = GENERATE(false, true);
  CAPTURE(tiered);
  embedding::shard_store_options so;
  so.dim = 2;
  const std::uint32_t rf = embedding::shard_row_floats(so);
  // Checkpoint 2 holds rows 1-6, of which 4-6 are not in checkpoint 1.
  auto storage = std::make_shared<failing_check_rows>(rf, 2, std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6});
  if (tiered) {
    so.max_rows_in_memory = 2;
    so.cold = storage;
  }
  auto store = [&so] { return std::make_shared<embedding::shard_store>(so); };
  shard_options o;
  o.name = "shard-0";
  shard_counters c;
  const std::uint64_t job = 7;
  REQUIRE(restore_rows(*store(), *storage, job, 0, 0, false, o, c).is_ok());
  const std::vector<std::uint32_t> tables(3, 0);
  const std::vector<float> rows(3 * rf, 0.5f);
  const std::vector<std::uint64_t> first{1, 2, 3}, second{4, 5, 6};
  REQUIRE(storage->write(tables.data(), first.data(), rows.data(), 3).is_ok());
  REQUIRE(storage->checkpoint(1).is_ok());
  REQUIRE(storage->write(tables.data(), second.data(), rows.data(), 3).is_ok());
  REQUIRE(storage->checkpoint(2).is_ok());

  auto resumed = store();
  auto loaded = restore_rows(*resumed, *storage, job, 2, 0, false, o, c);
  REQUIRE(loaded.is_ok());
  CHECK(*loaded == "rows of checkpoint 1 (checkpoint 2 was missing or corrupt): 3 rows");
  CHECK(c.rows_restored.load() == 3);
  const auto stats = resumed->stats();
  CHECK(stats.rows_held == 3);  // both tiers: checkpoint 1's rows, none of checkpoint 2's
  CHECK(stats.rows == (tiered ? 2u : 3u));
  std::vector<float> values(2, 0.0f);
  std::uint8_t present = 0;
  for (std::uint64_t id : second) {
    REQUIRE(resumed->read_published(0, &id, 1, values.data(), &present).is_ok());
    CHECK(present == 0);
  }
}

TEST_CASE("shard: a row TTL's examples clock goes on from the stored one after a restart or a resume", "[actors]") {
  embedding::shard_store_options so;
  so.dim = 2;
  so.ttl.ticks = 1000;
  auto store = [&so] { return std::make_shared<embedding::shard_store>(so); };
  embedding::memory_rows storage(store()->row_floats());
  shard_options o;
  o.name = "shard-0";
  shard_counters c;
  const std::uint64_t job = 7;
  REQUIRE(restore_rows(*store(), storage, job, 0, 0, false, o, c).is_ok());
  REQUIRE(storage.set_meta("ttl_clock", "123456").is_ok());
  REQUIRE(storage.checkpoint(1).is_ok());
  for (const std::uint64_t snapshot : {0ULL, 1ULL}) {
    auto restarted = store();
    REQUIRE(restore_rows(*restarted, storage, job, snapshot, 0, snapshot == 0, o, c).is_ok());
    CHECK(restarted->clock() == 123456);
  }
  // Live rows whose clock is not a number are unusable: the newest checkpoint replaces them.
  REQUIRE(storage.set_meta("ttl_clock", "12x").is_ok());
  auto restarted = store();
  auto replaced = restore_rows(*restarted, storage, job, 0, 0, true, o, c);
  REQUIRE(replaced.is_ok());
  CHECK_THAT(*replaced, Catch::Contains("checkpoint 1"));
  CHECK(restarted->clock() == 123456);
}

TEST_CASE("shard: publishes the rows changed since the last publication, a base first", "[actors]") {
  actor_fixture f;
  embedding::shard_store_options so;
  so.dim = 2;
  so.optimizer.learning_rate = 1.0f;
  auto store = std::make_shared<embedding::shard_store>(so);
  node gw(f, "shard-0");
  auto counters = std::make_shared<shard_counters>();
  auto shard = spawn_shard(f.sys, gw.gateway, store, shard_options{}, counters).pool;
  f.settle();
  auto page = [&](std::uint64_t sequence, std::uint64_t last_written, bool base, std::uint64_t position,
                  std::uint32_t max_rows) {
    auto got = ask(f, shard, wire::publish_rows_request{sequence, last_written, base, position, max_rows});
    REQUIRE(got.has_value());
    REQUIRE(std::holds_alternative<wire::publish_rows_reply>(*got));
    return std::get<wire::publish_rows_reply>(*got);
  };
  REQUIRE(std::holds_alternative<wire::push_reply>(*ask(f, shard, wire::push_request{{0, 1}, {5, 6}, {1, 1, 1, 1}})));
  // A shard process that saw no base cannot say what changed.
  CHECK(page(1, 0, false, 0, 10).needs_base);
  CHECK_FALSE(page(1, 0, true, 0, 0).needs_base);
  CHECK(page(2, 1, false, 0, 10).staged == 0);
  REQUIRE(std::holds_alternative<wire::push_reply>(*ask(f, shard, wire::push_request{{1, 0, 0}, {6, 7, 9}, {2, 2, 2, 2, 2, 2}})));
  // Two pages of two and one row, sorted by table then id, with their values as they stand.
  auto first = page(3, 2, false, 0, 2);
  CHECK(first.staged == 3);
  CHECK(first.tables == std::vector<std::uint32_t>{0, 0});
  CHECK(first.ids == std::vector<std::uint64_t>{7, 9});
  auto second = page(3, 2, false, first.next_position, 2);
  CHECK(second.tables == std::vector<std::uint32_t>{1});
  CHECK(second.ids == std::vector<std::uint64_t>{6});
  CHECK(second.next_position == 3);
  auto now = std::get<wire::lookup_reply>(*ask(f, shard, wire::lookup_request{false, {1}, {6}})).values;
  CHECK(second.values == now);
  CHECK(counters->rows_published.load() == 3);
  // A page of a publication that is not the one staged is refused.
  auto stale = ask(f, shard, wire::publish_rows_request{9, 3, false, 1, 10});
  REQUIRE(std::holds_alternative<wire::error_reply>(*stale));
}

// A shard over a store of `so`: with `tiered`, a memory budget over in-memory storage, and its
// persister (which serves the pages then) owned by the fixture.
struct paged_shard {
  std::shared_ptr<embedding::shard_store> store;
  node gw;
  shard_actors actors;
  paged_shard(actor_fixture& f, const embedding::shard_store_options& so, bool tiered)
      : store(std::make_shared<embedding::shard_store>(so)), gw(f, "shard-0") {
    shard_options o;
    o.name = "shard-0";
    if (tiered) o.storage = std::make_shared<embedding::memory_rows>(store->row_floats());
    actors = spawn_shard(f.sys, gw.gateway, store, o, std::make_shared<shard_counters>());
    if (tiered) f.own(caf::actor_cast<caf::actor>(actors.persister));
    f.settle();
  }
};

// What shard 0 of a placement over 3 shards holds, whole, by pages of every row (`page_of` asks
// the shard for one).
template <class PageOf>
std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<float>> shard_zero_rows(PageOf& page_of,
                                                                                       std::uint32_t floats) {
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<float>> rows;
  wire::dump_request whole{0, 0, 64, 3, 0, true};
  for (bool done = false; !done;) {
    auto got = page_of(whole);
    REQUIRE(got.has_value());
    REQUIRE(std::holds_alternative<wire::dump_reply>(*got));
    const auto& page = std::get<wire::dump_reply>(*got);
    for (std::size_t i = 0; i < page.ids.size(); ++i)
      rows[{page.tables[i], page.ids[i]}].assign(page.values.begin() + static_cast<std::ptrdiff_t>(i * floats),
                                                 page.values.begin() + static_cast<std::ptrdiff_t>((i + 1) * floats));
    done = page.done;
    whole.table = page.next_table;
    whole.position = page.next_position;
  }
  return rows;
}

TEST_CASE("shard: pages of the rows a placement gives to each shard hold every row once, whole, from RAM or storage",
          "[actors]") {
  for (const bool tiered : {false, true}) {
    INFO((tiered ? "a memory budget: pages from storage" : "every row in RAM"));
    actor_fixture f;
    embedding::shard_store_options so;
    so.dim = 2;
    so.optimizer.kind = optim::sparse_kind::rowwise_adagrad;  // a row carries optimizer state
    if (tiered) so.max_rows_in_memory = 50;
    paged_shard under(f, so, tiered);
    const auto& store = under.store;
    const auto& actors = under.actors;
    auto shard = actors.pool;
    // With a budget, pages come from storage: the persister's (detached), which flushes first.
    auto page_of = [&](const wire::dump_request& r) {
      return tiered ? ask(f, actors.persister, r, std::chrono::seconds(20)) : ask(f, shard, r);
    };
    // 600 rows in 3 tables, each pushed so that its values and state differ from a new row's.
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<float>> rows;
    for (std::uint64_t id = 0; id < 200; ++id) {
      const std::vector<std::uint32_t> tables = {0, 1, 2};
      const std::vector<std::uint64_t> ids = {id, id * 7 + 1, id * 13 + 5};
      REQUIRE(std::holds_alternative<wire::lookup_reply>(*ask(f, shard, wire::lookup_request{true, tables, ids})));
      const std::vector<float> grads = {0.5f, -1.0f, 0.25f, 0.125f, -2.0f, 1.0f};
      REQUIRE(std::holds_alternative<wire::push_reply>(*ask(f, shard, wire::push_request{tables, ids, grads})));
    }
    // What the shard holds, whole, by the export's own page (every row, no placement).
    const std::uint32_t floats = store->row_floats();
    const embedding::placement three(3);
    std::map<std::pair<std::uint32_t, std::uint64_t>, int> seen;
    for (std::uint32_t to = 0; to < 3; ++to) {
      wire::dump_request next{0, 0, 64, 3, to, true};
      int pages = 0;
      for (bool done = false; !done; ++pages) {
        REQUIRE(pages < 100);
        auto got = page_of(next);
        REQUIRE(got.has_value());
        REQUIRE(std::holds_alternative<wire::dump_reply>(*got));
        const auto& page = std::get<wire::dump_reply>(*got);
        CHECK(page.row_floats == floats);
        CHECK(page.crc32c == wire::dump_page_crc(page));
        CHECK(page.ids.size() <= 64);
        for (std::size_t i = 0; i < page.ids.size(); ++i) {
          CHECK(three.shard_of(page.tables[i], page.ids[i]) == to);
          ++seen[{page.tables[i], page.ids[i]}];
          rows[{page.tables[i], page.ids[i]}].assign(page.values.begin() + static_cast<std::ptrdiff_t>(i * floats),
                                                     page.values.begin() + static_cast<std::ptrdiff_t>((i + 1) * floats));
        }
        done = page.done;
        next.table = page.next_table;
        next.position = page.next_position;
      }
    }
    CHECK(seen.size() == 600);
    for (const auto& [key, n] : seen) CHECK(n == 1);
    // Each row whole: its values as a lookup reads them, then its Adagrad accumulator, positive.
    for (const auto& [key, row] : rows) {
      auto now = ask(f, shard, wire::lookup_request{false, {key.first}, {key.second}});
      REQUIRE(std::holds_alternative<wire::lookup_reply>(*now));
      CHECK(std::vector<float>(row.begin(), row.begin() + 2) == std::get<wire::lookup_reply>(*now).values);
      CHECK(row[2] > 0.0f);
    }
    // A placement no job can have is refused, naming it.
    auto bad = page_of(wire::dump_request{0, 0, 64, embedding::max_shards + 1, 0, true});
    REQUIRE(bad.has_value());
    REQUIRE(std::holds_alternative<wire::error_reply>(*bad));
    CHECK_THAT(std::get<wire::error_reply>(*bad).message, Catch::Contains("placement over 1025 shards"));
    // A live reshard's copy while the job trains, then the rows changed since under the hold: from
    // RAM, or with a memory budget from storage (as the last flush left it) and then the rows
    // marked in RAM and those that left RAM marked. Together: every row of the placement's shard 0
    // as it stands at the hold, though rows changed, were made and were evicted in between.
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<float>> taken;
    auto take_pass = [&](wire::move_pass pass) {
      wire::dump_request next{0, 0, 16, 3, 0, true, pass};
      for (bool done = false; !done;) {
        auto got = page_of(next);
        REQUIRE(got.has_value());
        REQUIRE(std::holds_alternative<wire::dump_reply>(*got));
        const auto& page = std::get<wire::dump_reply>(*got);
        CHECK(page.crc32c == wire::dump_page_crc(page));
        for (std::size_t i = 0; i < page.ids.size(); ++i) {
          REQUIRE(three.shard_of(page.tables[i], page.ids[i]) == 0);
          taken[{page.tables[i], page.ids[i]}].assign(
              page.values.begin() + static_cast<std::ptrdiff_t>(i * floats),
              page.values.begin() + static_cast<std::ptrdiff_t>((i + 1) * floats));
        }
        done = page.done;
        next.table = page.next_table;
        next.position = page.next_position;
        // Training goes on between the copy's pages: changes, new rows, evictions.
        if (pass == wire::move_pass::copy && !done) {
          const std::vector<std::uint32_t> tables = {0, 1};
          const std::vector<std::uint64_t> ids = {next.position % 211, 1000 + next.position % 97};
          REQUIRE(std::holds_alternative<wire::lookup_reply>(*ask(f, shard, wire::lookup_request{true, tables, ids})));
          REQUIRE(std::holds_alternative<wire::push_reply>(
              *ask(f, shard, wire::push_request{tables, ids, {0.5f, 0.5f, -0.5f, -0.5f}})));
        }
      }
    };
    take_pass(wire::move_pass::copy);
    for (std::uint64_t id = 0; id < 120; ++id) {  // more changes after the copy, and rows made
      const std::vector<std::uint32_t> tables = {0, 2};
      const std::vector<std::uint64_t> ids = {id * 3, 5000 + id};
      REQUIRE(std::holds_alternative<wire::lookup_reply>(*ask(f, shard, wire::lookup_request{true, tables, ids})));
      REQUIRE(std::holds_alternative<wire::push_reply>(
          *ask(f, shard, wire::push_request{tables, ids, {0.25f, 0.25f, 0.75f, 0.75f}})));
    }
    take_pass(wire::move_pass::changed);
    const auto now = shard_zero_rows(page_of, floats);
    CHECK(now.size() > 200);
    CHECK(taken == now);
    auto unplaced = page_of(wire::dump_request{0, 0, 64, 0, 0, true, wire::move_pass::copy});
    REQUIRE(unplaced.has_value());
    REQUIRE(std::holds_alternative<wire::error_reply>(*unplaced));
    CHECK_THAT(std::get<wire::error_reply>(*unplaced).message, Catch::Contains("needs a placement and whole rows"));
  }
}

TEST_CASE("shard: a live reshard from a shard whose rows leave for good sends the rows given up since their copy as gone",
          "[actors]") {
  for (const bool tiered : {false, true}) {
    INFO((tiered ? "a memory budget: the copy from storage" : "every row in RAM"));
    actor_fixture f;
    embedding::shard_store_options so;
    so.dim = 2;
    so.optimizer.kind = optim::sparse_kind::rowwise_adagrad;  // a row carries optimizer state
    so.max_rows_per_table = 120;  // a full table gives rows up for good
    std::shared_ptr<embedding::memory_rows> storage;
    if (tiered) {
      so.max_rows_in_memory = 60;
      // The test scheduler runs no timers, so no flush comes under pressure: a batch at twice the
      // budget would wait out its limit for nothing. The snapshots below flush.
      so.ceiling_wait = std::chrono::milliseconds(0);
      so.persisted = true;
      storage = std::make_shared<embedding::memory_rows>(embedding::shard_row_floats(so));
      so.cold = storage;
    }
    auto store = std::make_shared<embedding::shard_store>(so);
    REQUIRE(store->tiered() == tiered);
    node gw(f, "shard-0");
    shard_options o;
    o.name = "shard-0";
    o.storage = storage;
    const auto actors = spawn_shard(f.sys, gw.gateway, store, o, std::make_shared<shard_counters>());
    if (tiered) f.own(caf::actor_cast<caf::actor>(actors.persister));
    f.settle();
    const auto shard = actors.pool;
    const auto wait = std::chrono::seconds(20);
    auto page_of = [&](const wire::dump_request& r) {
      return tiered ? ask(f, actors.persister, r, wait) : ask(f, shard, r);
    };
    // Training: n new rows in each of tables 0 and 1, pushed. Past 120 rows a table gives rows up
    // for good: at once in RAM; with a budget at the next flush (asked for here by a snapshot).
    std::uint64_t next_id = 0, snapshots = 0;
    auto train = [&](int n) {
      for (int k = 0; k < n; ++k, ++next_id) {
        const std::vector<std::uint32_t> tables = {0, 1};
        const std::vector<std::uint64_t> ids = {next_id, 5000 + next_id};
        REQUIRE(std::holds_alternative<wire::lookup_reply>(*ask(f, shard, wire::lookup_request{true, tables, ids})));
        REQUIRE(std::holds_alternative<wire::push_reply>(
            *ask(f, shard, wire::push_request{tables, ids, {0.5f, -0.5f, 0.25f, 1.0f}})));
      }
      if (tiered) {
        auto flushed = ask(f, actors.persister, wire::snapshot_request{++snapshots}, wait);
        REQUIRE(flushed.has_value());
        REQUIRE(std::holds_alternative<wire::snapshot_reply>(*flushed));
      }
    };
    train(110);
    const embedding::placement three(3);
    const std::uint32_t floats = store->row_floats();
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<float>> taken;
    std::size_t gone = 0, pages = 0;
    auto take_pass = [&](wire::move_pass pass) {
      wire::dump_request next{0, 0, 16, 3, 0, true, pass};
      for (bool done = false; !done; ++pages) {
        REQUIRE(pages < 1000);
        auto got = page_of(next);
        REQUIRE(got.has_value());
        REQUIRE(std::holds_alternative<wire::dump_reply>(*got));
        const auto& page = std::get<wire::dump_reply>(*got);
        CHECK(page.crc32c == wire::dump_page_crc(page));
        CHECK(page.ids.size() + page.gone_ids.size() <= 16);
        for (std::size_t i = 0; i < page.ids.size(); ++i) {
          REQUIRE(three.shard_of(page.tables[i], page.ids[i]) == 0);
          taken[{page.tables[i], page.ids[i]}].assign(
              page.values.begin() + static_cast<std::ptrdiff_t>(i * floats),
              page.values.begin() + static_cast<std::ptrdiff_t>((i + 1) * floats));
        }
        if (pass == wire::move_pass::copy) CHECK(page.gone_ids.empty());  // only under the hold
        for (std::size_t i = 0; i < page.gone_ids.size(); ++i) {
          REQUIRE(three.shard_of(page.gone_tables[i], page.gone_ids[i]) == 0);
          taken.erase({page.gone_tables[i], page.gone_ids[i]});
          ++gone;
        }
        done = page.done;
        next.table = page.next_table;
        next.position = page.next_position;
        if (pass == wire::move_pass::copy && !done) train(6);  // rows made, changed and given up
      }
    };
    take_pass(wire::move_pass::copy);
    train(40);
    take_pass(wire::move_pass::changed);
    INFO(gone << " rows given up since their copy");
    CHECK(gone > 0);
    const auto now = shard_zero_rows(page_of, floats);
    CHECK(now.size() > 40);
    CHECK(store->stats().table_evictions > 100);
    CHECK(taken == now);
  }
}

TEST_CASE("shard: an export's pages hold 16-bit rows' values decoded, as lookups read them, from RAM or storage",
          "[actors]") {
  for (const bool tiered : {false, true}) {
    for (const auto precision : {embedding::row_precision::bf16, embedding::row_precision::fp16}) {
      INFO((tiered ? "a memory budget: pages from storage" : "every row in RAM") << ", " << embedding::to_string(precision));
      actor_fixture f;
      embedding::shard_store_options so;
      so.dim = 3;  // odd: a half-used slot
      so.precision = precision;
      so.optimizer.kind = optim::sparse_kind::rowwise_adagrad;
      if (tiered) so.max_rows_in_memory = 20;
      paged_shard under(f, so, tiered);
      const auto& actors = under.actors;
      const std::vector<std::uint32_t> tables(100, 1);
      std::vector<std::uint64_t> ids(100);
      for (std::uint64_t i = 0; i < 100; ++i) ids[i] = i * 31 + 7;
      REQUIRE(std::holds_alternative<wire::lookup_reply>(*ask(f, actors.pool, wire::lookup_request{true, tables, ids})));
      std::vector<float> grads(300);
      for (std::size_t i = 0; i < grads.size(); ++i) grads[i] = 0.01f * static_cast<float>(i % 7) - 0.03f;
      REQUIRE(std::holds_alternative<wire::push_reply>(*ask(f, actors.pool, wire::push_request{tables, ids, grads})));
      auto looked = ask(f, actors.pool, wire::lookup_request{false, tables, ids});
      REQUIRE(std::holds_alternative<wire::lookup_reply>(*looked));
      const auto& values = std::get<wire::lookup_reply>(*looked).values;
      std::map<std::uint64_t, std::vector<float>> exported;
      wire::dump_request next{0, 0, 64};
      for (int pages = 0; pages < 100; ++pages) {
        auto got = tiered ? ask(f, actors.persister, next, std::chrono::seconds(20)) : ask(f, actors.pool, next);
        REQUIRE(got.has_value());
        REQUIRE(std::holds_alternative<wire::dump_reply>(*got));
        const auto& page = std::get<wire::dump_reply>(*got);
        CHECK(page.row_floats == 3);
        for (std::size_t i = 0; i < page.ids.size(); ++i)
          exported[page.ids[i]].assign(page.values.begin() + static_cast<std::ptrdiff_t>(3 * i),
                                       page.values.begin() + static_cast<std::ptrdiff_t>(3 * i + 3));
        if (page.done) break;
        next.table = page.next_table;
        next.position = page.next_position;
      }
      REQUIRE(exported.size() == 100);
      for (std::size_t i = 0; i < ids.size(); ++i)
        CHECK(exported[ids[i]] == std::vector<float>(values.begin() + static_cast<std::ptrdiff_t>(3 * i),
                                                     values.begin() + static_cast<std::ptrdiff_t>(3 * i + 3)));
    }
  }
}

TEST_CASE("shard: a row a full table dropped since the last publication goes out as a tombstone", "[actors]") {
  actor_fixture f;
  embedding::shard_store_options so;
  so.dim = 2;
  so.max_rows_per_table = 2;  // a third row takes the place of one of the first two, for good
  auto store = std::make_shared<embedding::shard_store>(so);
  node gw(f, "shard-0");
  auto counters = std::make_shared<shard_counters>();
  auto shard = spawn_shard(f.sys, gw.gateway, store, shard_options{}, counters).pool;
  f.settle();
  REQUIRE(std::holds_alternative<wire::push_reply>(*ask(f, shard, wire::push_request{{0, 0}, {1, 2}, {1, 1, 1, 1}})));
  REQUIRE(std::holds_alternative<wire::publish_rows_reply>(*ask(f, shard, wire::publish_rows_request{1, 0, true, 0, 0})));
  REQUIRE(std::holds_alternative<wire::push_reply>(*ask(f, shard, wire::push_request{{0}, {3}, {1, 1}})));
  auto got = ask(f, shard, wire::publish_rows_request{2, 1, false, 0, 10});
  REQUIRE(std::holds_alternative<wire::publish_rows_reply>(*got));
  const auto& page = std::get<wire::publish_rows_reply>(*got);
  CHECK(page.staged == 2);
  CHECK(page.ids == std::vector<std::uint64_t>{3});
  CHECK(page.values.size() == 2);
  REQUIRE(page.gone_ids.size() == 1);
  CHECK((page.gone_ids[0] == 1 || page.gone_ids[0] == 2));
  CHECK(page.gone_tables == std::vector<std::uint32_t>{0});
  CHECK(store->existing_table(0)->held_rows() == 2);
  CHECK(counters->tombstones_published.load() == 1);
}

TEST_CASE("shard: a job resumed on another shard count restores under the snapshot's; a shard it lacked starts empty",
          "[actors]") {
  restore_setup setup;
  auto store = [&setup] { return setup.store(); };
  auto& storage = setup.storage;
  shard_options one = setup.zero;  // shard 1 of 2 when the snapshot was taken
  one.name = "shard-1";
  one.index = 1;
  shard_counters c;
  const std::uint64_t job = 7;
  REQUIRE(restore_rows(*store(), storage, job, 0, 0, false, one, c).is_ok());
  const std::uint32_t table = 0;
  const std::uint64_t id = 3;
  const std::vector<float> row(storage.row_floats(), 0.5f);
  REQUIRE(storage.write(&table, &id, row.data(), 1).is_ok());
  REQUIRE(storage.checkpoint(1).is_ok());
  // Resumed on 3 shards: it restores "1 of 2", and keeps that claim until its rows have moved.
  shard_options grown = one;
  grown.shards = 3;
  auto resumed = store();
  REQUIRE(restore_rows(*resumed, storage, job, 1, 2, false, grown, c).is_ok());
  CHECK(resumed->stats().rows == 1);
  CHECK(*storage.get_meta("shard") == "1 of 2");
  // Restarted after it took rows and claimed "1 of 3" (the move not committed): the checkpoint again.
  REQUIRE(storage.set_meta("shard", "1 of 3").is_ok());
  auto again = store();
  REQUIRE(restore_rows(*again, storage, job, 1, 2, false, grown, c).is_ok());
  CHECK(again->stats().rows == 1);
  // Without the change of count, a claim for another count is another shard's storage.
  REQUIRE(storage.set_meta("shard", "1 of 3").is_ok());
  auto refused = restore_rows(*store(), storage, job, 1, 0, false, one, c);
  REQUIRE_FALSE(refused.is_ok());
  CHECK_THAT(refused.error().message(), Catch::Contains("holds the rows of shard 1 of 3"));
  // Shard 2, which the snapshot of 2 shards lacks: this job's rows in its storage (an earlier
  // attempt) are cleared and it starts empty; another job's are refused.
  embedding::memory_rows fresh(storage.row_floats());
  REQUIRE(fresh.set_meta("job_id", "0000000000000007").is_ok());
  REQUIRE(fresh.write(&table, &id, row.data(), 1).is_ok());
  shard_options two = grown;
  two.name = "shard-2";
  two.index = 2;
  auto started = store();
  auto empty = restore_rows(*started, fresh, job, 1, 2, false, two, c);
  REQUIRE(empty.is_ok());
  CHECK_THAT(*empty, Catch::Contains("its rows move in from them before training"));
  CHECK(started->stats().rows == 0);
  CHECK(fresh.rows() == 0);
  CHECK(*fresh.get_meta("shard") == "2 of 3");
  REQUIRE(fresh.set_meta("job_id", "0000000000000009").is_ok());
  auto foreign = restore_rows(*store(), fresh, job, 1, 2, false, two, c);
  REQUIRE_FALSE(foreign.is_ok());
  CHECK_THAT(foreign.error().message(), Catch::Contains("holds rows of job 0000000000000009"));
}

namespace {

embedding::shard_store_options moving_store_options() {
  embedding::shard_store_options so;
  so.dim = 2;
  so.optimizer.kind = optim::sparse_kind::rowwise_adagrad;  // a row carries optimizer state
  return so;
}

// A shard as the job runs it: its endpoint on the memory network, storage, every actor.
struct shard_under_test {
  std::unique_ptr<node> n;
  std::shared_ptr<embedding::shard_store> store;
  std::shared_ptr<embedding::memory_rows> storage;
  std::shared_ptr<shard_counters> counters = std::make_shared<shard_counters>();
  shard_actors actors;
};

// Shard `index` of `shards` at mem://shard-<index>; with `storage` given, on it (a restart).
std::unique_ptr<shard_under_test> start_moving_shard(actor_fixture& f, const embedding::shard_store_options& so,
                                                     std::uint32_t index, std::uint32_t shards, bool with_storage,
                                                     std::shared_ptr<embedding::memory_rows> storage = nullptr) {
  auto s = std::make_unique<shard_under_test>();
  const std::string ep = "mem://shard-" + std::to_string(index);
  s->n = std::make_unique<node>(f, ep, ep);
  s->store = std::make_shared<embedding::shard_store>(so);
  shard_options o;
  o.name = "shard-" + std::to_string(index);
  o.index = index;
  o.shards = shards;
  o.move_page_rows = 50;  // several pages
  if (with_storage)
    o.storage = s->storage = storage ? storage : std::make_shared<embedding::memory_rows>(s->store->row_floats());
  s->actors = spawn_shard(f.sys, s->n->gateway, s->store, o, s->counters);
  f.own(s->actors.pool);
  f.own(s->actors.mover);
  if (with_storage) f.own(caf::actor_cast<caf::actor>(s->actors.persister));
  caf::anon_send(s->n->gateway, open_atom::value);
  return s;
}

}  // namespace

TEST_CASE("shard: the rows a new shard count gives a shard move to it whole, and the shards then drop what they gave away",
          "[actors]") {
  actor_fixture f;
  const auto so = moving_store_options();
  auto start = [&](std::uint32_t index, bool with_storage) { return start_moving_shard(f, so, index, 2, with_storage); };
  // The job had one shard: shard 0 restored 600 rows of 3 tables (RAM and storage), each with
  // values and state of its own. On 2 shards, shard 1 starts empty.
  auto zero = start(0, true);
  auto one = start(1, true);
  f.settle();
  const std::uint32_t floats = zero->store->row_floats();
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<float>> rows;
  for (std::uint64_t i = 0; i < 200; ++i) {
    for (std::uint32_t t = 0; t < 3; ++t) {
      const std::uint64_t id = i * 31 + t;
      std::vector<float> row(floats);
      for (std::uint32_t k = 0; k < floats; ++k) row[k] = static_cast<float>(id % 97) * 0.01f + static_cast<float>(k);
      REQUIRE(zero->store->put(t, id, row.data()).is_ok());
      REQUIRE(zero->storage->write(&t, &id, row.data(), 1).is_ok());
      rows[{t, id}] = row;
    }
  }
  const embedding::placement two(2);
  std::size_t owned_by_one = 0;
  for (const auto& [key, row] : rows) owned_by_one += two.shard_of(key.first, key.second) == 1 ? 1 : 0;
  REQUIRE(owned_by_one > 200);
  REQUIRE(owned_by_one < 400);

  const auto wait = std::chrono::seconds(20);
  auto took = ask(f, one->actors.mover, wire::take_rows_request{{"mem://shard-0"}, 2}, wait);
  REQUIRE(took.has_value());
  REQUIRE(std::holds_alternative<wire::take_rows_reply>(*took));
  CHECK(std::get<wire::take_rows_reply>(*took).rows == owned_by_one);
  CHECK(one->counters->rows_taken.load() == owned_by_one);
  CHECK(one->storage->rows() == owned_by_one);
  CHECK(*one->storage->get_meta("shard") == "1 of 2");
  // Taken again (the move asked again): the same rows, nothing doubled.
  auto again = ask(f, one->actors.mover, wire::take_rows_request{{"mem://shard-0"}, 2}, wait);
  REQUIRE(again.has_value());
  REQUIRE(std::holds_alternative<wire::take_rows_reply>(*again));
  CHECK(one->storage->rows() == owned_by_one);
  CHECK(one->store->stats().rows == owned_by_one);

  auto dropped_zero = ask(f, zero->actors.persister, wire::drop_rows_request{2}, wait);
  auto dropped_one = ask(f, one->actors.persister, wire::drop_rows_request{2}, wait);
  REQUIRE(dropped_zero.has_value());
  REQUIRE(dropped_one.has_value());
  REQUIRE(std::holds_alternative<wire::drop_rows_reply>(*dropped_zero));
  REQUIRE(std::holds_alternative<wire::drop_rows_reply>(*dropped_one));
  CHECK(std::get<wire::drop_rows_reply>(*dropped_zero).dropped == owned_by_one);
  CHECK(std::get<wire::drop_rows_reply>(*dropped_zero).kept == rows.size() - owned_by_one);
  CHECK(std::get<wire::drop_rows_reply>(*dropped_one).dropped == 0);
  CHECK(std::get<wire::drop_rows_reply>(*dropped_one).kept == owned_by_one);
  CHECK(zero->counters->rows_given_away.load() == owned_by_one);
  CHECK(zero->storage->rows() == rows.size() - owned_by_one);
  CHECK(zero->store->stats().rows == rows.size() - owned_by_one);
  CHECK(*zero->storage->get_meta("shard") == "0 of 2");
  // Every row once, on its owner, whole: its values and optimizer state as they were.
  for (const auto& [key, row] : rows) {
    auto& owner = two.shard_of(key.first, key.second) == 0 ? *zero : *one;
    auto& other = two.shard_of(key.first, key.second) == 0 ? *one : *zero;
    std::vector<float> stored(floats);
    std::uint8_t present = 0;
    REQUIRE(owner.storage->read(&key.first, &key.second, 1, stored.data(), &present).is_ok());
    CHECK(present == 1);
    CHECK(stored == row);
    REQUIRE(other.storage->read(&key.first, &key.second, 1, stored.data(), &present).is_ok());
    CHECK(present == 0);
  }

  // Refused, with the reason: a placement without this shard, a shard without storage.
  auto beyond = ask(f, one->actors.mover, wire::take_rows_request{{"mem://shard-0"}, 1}, wait);
  REQUIRE(beyond.has_value());
  REQUIRE(std::holds_alternative<wire::error_reply>(*beyond));
  CHECK_THAT(std::get<wire::error_reply>(*beyond).message, Catch::Contains("which has no shard 1"));
  auto memory_only = start(2, false);
  f.settle();
  auto refused = ask(f, memory_only->actors.mover, wire::take_rows_request{{"mem://shard-0"}, 3}, wait);
  REQUIRE(refused.has_value());
  REQUIRE(std::holds_alternative<wire::error_reply>(*refused));
  CHECK_THAT(std::get<wire::error_reply>(*refused).message, Catch::Contains("it has no storage"));

  // A source that sends what it should not: a row the new count gives to another shard, rows of
  // another width (another model). The take fails, naming it, and stores none of it.
  node fake(f, "mem://fake", "mem://fake");
  auto sent = std::make_shared<wire::dump_reply>();
  auto source = f.own(caf::actor_cast<caf::actor>(f.sys.spawn(fixed_page, sent)));
  caf::anon_send(fake.gateway, route_atom::value, kind_of<wire::dump_request>(),
                 caf::actor_cast<request_server_actor>(source));
  caf::anon_send(fake.gateway, open_atom::value);
  f.settle();
  auto send_row = [&](std::uint32_t owner, std::uint32_t width) {
    std::uint64_t id = 1000;
    while (two.shard_of(0, id) != owner) ++id;
    *sent = wire::dump_reply{{0}, {id}, std::vector<float>(width, 0.5f), 0, 0, true, width, 0};
    sent->crc32c = wire::dump_page_crc(*sent);
    auto got = ask(f, one->actors.mover, wire::take_rows_request{{"mem://fake"}, 2}, wait);
    REQUIRE(got.has_value());
    REQUIRE(std::holds_alternative<wire::error_reply>(*got));
    return std::get<wire::error_reply>(*got).message;
  };
  CHECK_THAT(send_row(0, floats), Catch::Contains("which the placement over 2 shards gives to shard 0"));
  CHECK_THAT(send_row(1, floats + 1), Catch::Contains(std::to_string(floats + 1) + " floats wide"));
  CHECK(one->storage->rows() == owned_by_one);
  // A live reshard's page under the hold may say rows are gone (given up for good at the source
  // after their copy): deleted here, RAM and storage. One the new count gives to another shard is
  // refused, like a row.
  auto owned_id = [&](std::uint32_t owner, std::uint64_t from) {
    while (two.shard_of(0, from) != owner || rows.count({0, from}) == 0) ++from;
    return from;
  };
  const std::uint64_t gone_id = owned_id(1, 0);
  *sent = wire::dump_reply{{}, {}, {}, 0, 0, true, floats, 0, {0}, {gone_id}};
  sent->crc32c = wire::dump_page_crc(*sent);
  auto deleted = ask(f, one->actors.mover, wire::take_rows_request{{"mem://fake"}, 2}, wait);
  REQUIRE(deleted.has_value());
  REQUIRE(std::holds_alternative<wire::take_rows_reply>(*deleted));
  CHECK(one->counters->tombstones_taken.load() == 1);
  CHECK(one->storage->rows() == owned_by_one - 1);
  CHECK(one->store->existing_table(0)->find(gone_id) == nullptr);
  *sent = wire::dump_reply{{}, {}, {}, 0, 0, true, floats, 0, {0}, {owned_id(0, 0)}};
  sent->crc32c = wire::dump_page_crc(*sent);
  auto foreign_gone = ask(f, one->actors.mover, wire::take_rows_request{{"mem://fake"}, 2}, wait);
  REQUIRE(foreign_gone.has_value());
  REQUIRE(std::holds_alternative<wire::error_reply>(*foreign_gone));
  CHECK_THAT(std::get<wire::error_reply>(*foreign_gone).message, Catch::Contains("sent as gone row"));
  CHECK(one->storage->rows() == owned_by_one - 1);

  // A take that waits on a source that never answers (it died) is replaced by the take the
  // coordinator asks when it starts the stage over, at once: the first is answered that it was.
  node dead(f, "mem://dead", "mem://dead");
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  auto silent = f.own(caf::actor_cast<caf::actor>(f.sys.spawn(silent_source, held)));
  caf::anon_send(dead.gateway, route_atom::value, kind_of<wire::dump_request>(),
                 caf::actor_cast<request_server_actor>(silent));
  caf::anon_send(dead.gateway, open_atom::value);
  f.settle();
  auto first = std::make_shared<std::optional<wire::body>>();
  auto stuck = std::make_shared<const wire::envelope>(
      wire::envelope{wire::protocol_version, 7, wire::take_rows_request{{"mem://dead"}, 2}});
  f.sys.spawn([mover = one->actors.mover, stuck, first](caf::event_based_actor* self) {
    self->request(mover, caf::infinite, serve_atom::value, stuck).then([first](const body_ptr& b) { *first = *b; });
  });
  // The take records itself with the persister (a thread of its own) before it asks the first page.
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
       held->empty() && std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    f.settle();
  }
  REQUIRE(held->size() == 1);  // the first page is asked, and waited for
  CHECK_FALSE(first->has_value());
  auto replaced = ask(f, one->actors.mover, wire::take_rows_request{{"mem://shard-0"}, 2}, wait);
  REQUIRE(replaced.has_value());
  CHECK(std::holds_alternative<wire::take_rows_reply>(*replaced));
  REQUIRE(first->has_value());
  REQUIRE(std::holds_alternative<wire::error_reply>(**first));
  CHECK_THAT(std::get<wire::error_reply>(**first).message, Catch::Contains("the coordinator asked again (every row)"));
}

TEST_CASE("shard: rows taken for a reshard that did not happen are dropped at the first view without one, "
          "also after a restart", "[actors]") {
  actor_fixture f;
  const auto so = moving_store_options();
  // A job of 2 shards asked to shrink to 1: shard 0 takes shard 1's rows (the move under the hold,
  // which claims its storage for 1 shard; a copy while training, paced by timers, would record the
  // take the same way).
  auto zero = start_moving_shard(f, so, 0, 2, true);
  auto one = start_moving_shard(f, so, 1, 2, true);
  f.settle();
  const std::uint32_t floats = zero->store->row_floats();
  const embedding::placement two(2);
  std::size_t own = 0, theirs = 0;
  for (std::uint64_t id = 0; id < 400; ++id) {
    const std::uint32_t t = static_cast<std::uint32_t>(id % 3);
    auto& owner = two.shard_of(t, id) == 0 ? *zero : *one;
    (two.shard_of(t, id) == 0 ? own : theirs) += 1;
    std::vector<float> row(floats, static_cast<float>(id));
    REQUIRE(owner.store->put(t, id, row.data()).is_ok());
    REQUIRE(owner.storage->write(&t, &id, row.data(), 1).is_ok());
  }
  REQUIRE(own > 100);
  REQUIRE(theirs > 100);
  const auto wait = std::chrono::seconds(20);
  auto took = ask(f, zero->actors.mover, wire::take_rows_request{{"mem://shard-1"}, 1}, wait);
  REQUIRE(took.has_value());
  REQUIRE(std::holds_alternative<wire::take_rows_reply>(*took));
  REQUIRE(zero->storage->rows() == own + theirs);
  CHECK(*zero->storage->get_meta("taking") == "1");
  CHECK(*zero->storage->get_meta("shard") == "0 of 1");

  // Waits until `shard`'s persister has handled what was sent to it before (a request it refuses
  // is answered in order).
  auto drain = [&](shard_under_test& shard) { (void)ask(f, shard.actors.persister, wire::status_request{}, wait); };
  wire::cluster_view view;
  view.epoch = 5;
  view.reshaping = true;  // the reshard goes on: the rows stay
  caf::anon_send(zero->actors.persister, view_atom::value, view);
  drain(*zero);
  CHECK(zero->storage->rows() == own + theirs);
  CHECK(zero->counters->rows_untaken.load() == 0);

  // The reshard ended without its switch: the job's count is still 2, and what came goes.
  view.epoch = 6;
  view.reshaping = false;
  caf::anon_send(zero->actors.persister, view_atom::value, view);
  drain(*zero);
  CHECK(zero->counters->rows_untaken.load() == theirs);
  CHECK(zero->storage->rows() == own);
  CHECK(zero->store->stats().rows == own);
  CHECK(*zero->storage->get_meta("taking") == "");
  CHECK(*zero->storage->get_meta("shard") == "0 of 2");
  CHECK(one->storage->rows() == theirs);  // the owner keeps them
  for (std::uint64_t id = 0; id < 400; ++id) {
    const std::uint32_t t = static_cast<std::uint32_t>(id % 3);
    std::vector<float> got(floats);
    std::uint8_t present = 0;
    REQUIRE(zero->storage->read(&t, &id, 1, got.data(), &present).is_ok());
    CHECK(present == (two.shard_of(t, id) == 0 ? 1 : 0));
  }
  // A later view changes nothing: settled.
  view.epoch = 7;
  caf::anon_send(zero->actors.persister, view_atom::value, view);
  drain(*zero);
  CHECK(zero->counters->rows_untaken.load() == theirs);

  // Taken again, and the shard restarts before any view says the reshard is off (its storage
  // remembers the take): its successor drops them at its first view.
  auto again = ask(f, zero->actors.mover, wire::take_rows_request{{"mem://shard-1"}, 1}, wait);
  REQUIRE(again.has_value());
  REQUIRE(std::holds_alternative<wire::take_rows_reply>(*again));
  REQUIRE(zero->storage->rows() == own + theirs);
  const auto storage = zero->storage;
  zero.reset();
  auto successor = start_moving_shard(f, so, 0, 2, true, storage);
  f.settle();
  caf::anon_send(successor->actors.persister, view_atom::value, view);
  drain(*successor);
  CHECK(successor->counters->rows_untaken.load() == theirs);
  CHECK(storage->rows() == own);
}
