// A reader that follows its input (--follow): full batches at once, partial ones after the batch
// wait, "waiting for input" in between, committed positions that name the file, the end of the
// input when the view closes it or at the reader's limit, and a restarted reader resuming at the
// committed position with every row handed out once.
#include <fstream>

#include "actor_helpers.hpp"

using namespace ss;
using namespace ss::actors;
using namespace ss::test;

namespace follow_test {

// The rows of a generated Criteo file, to append to a followed file in pieces.
struct stream {
  ss::test::temp_dir dir;
  std::vector<std::string> rows;
  std::string path = dir.str("stream.tsv");

  explicit stream(std::uint64_t n) {
    data::generator_options g;
    g.rows = n;
    REQUIRE(data::generate_criteo(g, dir.str("all.tsv")).is_ok());
    std::ifstream in(dir.str("all.tsv"));
    for (std::string line; std::getline(in, line);) rows.push_back(line);
    REQUIRE(rows.size() == n);
    std::ofstream(path, std::ios::trunc).flush();
  }
  void append(std::size_t from, std::size_t to) {
    std::ofstream out(path, std::ios::app);
    for (std::size_t i = from; i < to; ++i) out << rows[i] << "\n";
  }
  std::unique_ptr<data::follow_batch_reader> follower(std::size_t batch = 100) const {
    data::follow_batch_options o;
    o.schema = data::input_schema::criteo();
    o.source.path = path;
    o.batch_size = batch;
    auto r = data::follow_batch_reader::open(o);
    REQUIRE(r.is_ok());
    return std::make_unique<data::follow_batch_reader>(std::move(*r));
  }
};

struct reader_under_test {
  actor_fixture& f;
  std::shared_ptr<reader_counters> counters = std::make_shared<reader_counters>();
  reader_actor r;
  reader_under_test(actor_fixture& fixture, std::unique_ptr<data::follow_batch_reader> input, reader_options o,
                    const std::string& name = "reader-0")
      : f(fixture) {
    node gw(f, name);
    r = f.own(spawn_reader(f.sys, gw.gateway, std::move(input), o, counters));
    f.settle();
  }
  wire::body pull() { return *ask(f, r, wire::pull_request{1, 7, 0, {}}); }
  wire::batch_message batch() {
    auto b = pull();
    REQUIRE(std::holds_alternative<wire::batch_message>(b));
    return std::get<wire::batch_message>(b);
  }
  std::string waiting() {
    auto b = pull();
    REQUIRE(std::holds_alternative<wire::error_reply>(b));
    CHECK(std::get<wire::error_reply>(b).code == errc::unavailable);
    return std::get<wire::error_reply>(b).message;
  }
  bool acked(std::uint64_t sequence, std::uint64_t incarnation) {
    return std::holds_alternative<wire::ack>(*ask(f, r, wire::batch_ack{0, sequence, incarnation, 7}));
  }
  wire::read_position committed() {
    std::lock_guard<std::mutex> lock(counters->mu);
    return counters->committed;
  }
  std::uint64_t committed_examples() {
    std::lock_guard<std::mutex> lock(counters->mu);
    return counters->committed_examples;
  }
};

}  // namespace follow_test

TEST_CASE("reader following: full batches at once, partial ones after the batch wait, waiting in between",
          "[actors]") {
  actor_fixture f;
  follow_test::stream s(300);
  s.append(0, 150);
  reader_options o;
  o.incarnation = 0x71;
  o.follow_batch_wait = std::chrono::milliseconds(200);
  follow_test::reader_under_test t(f, s.follower(), o);
  auto first = t.batch();
  CHECK(first.batch.size() == 100);
  CHECK(first.end.file_name == "stream.tsv");
  CHECK(first.end.inode != 0);
  CHECK(first.end.line_number == 101);
  // 50 rows there: a partial batch waits for more, then goes.
  CHECK(t.waiting().find("waiting for input (following " + s.path + ", 50 new example(s) so far)") !=
        std::string::npos);
  CHECK(t.counters->follow_waits.load() == 1);
  f.advance(std::chrono::milliseconds(200));
  auto second = t.batch();
  CHECK(second.batch.size() == 50);
  CHECK(second.examples_before == 100);
  // Nothing there: waiting, not the end, however long.
  t.waiting();
  f.advance(std::chrono::milliseconds(1000));
  t.waiting();
  CHECK_FALSE(t.counters->exhausted.load());
  // New rows: handed out after the wait; the tick sees the bytes behind before.
  s.append(150, 180);
  f.advance(std::chrono::milliseconds(300));
  CHECK(t.counters->follow_bytes_behind.load() > 0);
  t.waiting();
  f.advance(std::chrono::milliseconds(200));
  auto third = t.batch();
  CHECK(third.batch.size() == 30);
  CHECK(t.acked(0, 0x71));
  CHECK(t.acked(2, 0x71));
  CHECK(t.committed().line_number == 101);  // batch 1 is not trained: the commit stops at batch 0
  CHECK(t.acked(1, 0x71));
  CHECK(t.committed_examples() == 180);
  CHECK(t.committed().line_number == 181);
  CHECK(t.committed().file_name == "stream.tsv");
  f.advance(std::chrono::milliseconds(300));
  CHECK(t.counters->follow_bytes_behind.load() == 0);
  CHECK(t.counters->follow_lines.load() == 180);
  CHECK(t.counters->rows_read.load() == 180);
  const auto status = std::get<wire::status_reply>(*ask(f, t.r, wire::status_request{})).json;
  CHECK(status.find("\"committed_file_name\":\"stream.tsv\"") != std::string::npos);
  CHECK(status.find("\"following\":true") != std::string::npos);
}

TEST_CASE("reader following: the view closes the input; what is handed out is trained, then the end", "[actors]") {
  actor_fixture f;
  follow_test::stream s(300);
  s.append(0, 120);
  reader_options o;
  o.incarnation = 0x72;
  follow_test::reader_under_test t(f, s.follower(), o);
  auto first = t.batch();
  CHECK(first.batch.size() == 100);
  t.waiting();  // 20 pending, not waited yet
  wire::cluster_view view;
  view.trainers = {"t"};
  view.trainer_incarnations = {7};
  view.input_closed = true;
  caf::anon_send(t.r, view_atom::value, view);
  f.settle();
  CHECK(t.counters->exhausted.load());
  // Batch 0 is out, not trained: the trainer asks again, and the end comes once it is acked.
  CHECK(t.waiting().find("every batch is handed out") != std::string::npos);
  CHECK(t.acked(0, 0x72));
  CHECK(std::holds_alternative<wire::end_of_data>(t.pull()));
  CHECK(t.counters->finished.load());
  CHECK(t.committed_examples() == 100);  // the 20 rows read since are not committed: a later job reads them
}

TEST_CASE("reader following: the reader's share of the example limit ends its input exactly there", "[actors]") {
  actor_fixture f;
  follow_test::stream s(300);
  s.append(0, 300);
  reader_options o;
  o.incarnation = 0x73;
  o.follow_limit = 130;
  follow_test::reader_under_test t(f, s.follower(), o);
  CHECK(t.batch().batch.size() == 100);
  auto last = t.batch();  // the 30 left of the limit make a full batch: no wait
  CHECK(last.batch.size() == 30);
  CHECK(last.end.line_number == 131);
  CHECK(t.acked(0, 0x73));
  CHECK(t.acked(1, 0x73));
  CHECK(std::holds_alternative<wire::end_of_data>(t.pull()));
  CHECK(t.committed_examples() == 130);
}

TEST_CASE("reader following: a restarted reader resumes at the committed position, every row handed out once",
          "[actors]") {
  actor_fixture f;
  follow_test::stream s(300);
  s.append(0, 250);
  wire::read_position committed;
  std::uint64_t committed_examples = 0;
  {
    reader_options o;
    o.incarnation = 0x74;
    follow_test::reader_under_test t(f, s.follower(), o);
    for (int i = 0; i < 2; ++i) t.batch();
    CHECK(t.acked(0, 0x74));  // batch 1 dies with its reader, untrained
    committed = t.committed();
    committed_examples = t.committed_examples();
    CHECK(committed_examples == 100);
  }
  s.append(250, 300);
  auto input = s.follower();
  REQUIRE(input->seek(data::follow_position{committed.file_name, committed.device, committed.inode,
                                            committed.byte_offset, committed.line_number, committed.previous_line_crc})
              .is_ok());
  reader_options o;
  o.incarnation = 0x75;
  o.resume_examples = committed_examples;
  follow_test::reader_under_test t(f, std::move(input), o, "reader-0-again");
  std::uint64_t examples = 0;
  for (int i = 0; i < 2; ++i) {
    auto b = t.batch();
    CHECK(b.examples_before == committed_examples + examples);
    examples += b.batch.size();
    CHECK(t.acked(b.sequence, 0x75));
  }
  CHECK(examples == 200);
  CHECK(t.committed_examples() == 300);
  t.waiting();
}
