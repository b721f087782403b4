// Chain planning: the newest usable base and the unbroken deltas after it, each reason a chain
// stops (gap, another job, another model, a corrupt or truncated data file, a manifest that does
// not parse, a delta that does not link), and what a follower does next.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "publish_test_util.hpp"
#include "ss/core/publish/chain.hpp"
#include "support/files.hpp"
#include "support/process.hpp"

using namespace ss;
using namespace ss::publish;
using ss::test::contains;
using ss::test::publish_dir_builder;
using ss::test::read_file;
using ss::test::scanned;
using ss::test::sequences;
using ss::test::write_file;
namespace fs = std::filesystem;
using seqs = std::vector<std::uint64_t>;

namespace {

// Flips one byte in the middle of a file (same size: only its CRC can tell).
void flip_middle(const fs::path& file) {
  std::string bytes = read_file(file);
  REQUIRE(bytes.size() > 2);
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x10);
  write_file(file, bytes);
}

}  // namespace

TEST_CASE("chain: an empty directory has no base", "[publish]") {
  test::temp_dir dir;
  const chain_plan p = plan(scanned(dir.path()), {});
  CHECK_FALSE(p.base);
  REQUIRE(p.stopped);
  CHECK(p.stopped->issue == chain_issue::no_base);
  CHECK(contains(p.stopped->message, "has no usable base"));
  CHECK(p.last_sequence() == 0);
  CHECK(std::string(to_string(chain_issue::no_base)) == "no_base");
}

TEST_CASE("chain: the newest base and every delta after it", "[publish]") {
  test::temp_dir dir;
  publish_dir_builder b{dir.path()};
  b.base(1);
  b.delta(2, 1, 1);
  b.base(3);
  b.delta(4, 3, 3);
  b.delta(5, 3, 4);
  write_file(dir.path() / "000000000006.delta.ssd", "debris: ignored");
  const chain_plan p = plan(scanned(dir.path()), {});
  CHECK(sequences(p) == seqs{3, 4, 5});
  CHECK_FALSE(p.stopped);
  CHECK(p.passed_over.empty());
  CHECK(p.newest_sequence == 5);
  CHECK(p.behind() == 0);
  CHECK(p.deltas[1].previous == 4);
}

TEST_CASE("chain: each reason a chain stops is typed, named and located", "[publish]") {
  test::temp_dir dir;
  publish_dir_builder b{dir.path()};
  b.base(1);
  b.delta(2, 1, 1);
  chain_issue want = chain_issue::gap;
  std::string message;

  SECTION("a gap") {
    b.delta(4, 1, 3);
    want = chain_issue::gap;
    message = "publication 000000000003 is missing (newer ones exist, up to 000000000005)";
  }
  SECTION("a delta of another job") {
    b.job_id = "job-b";
    b.delta(3, 1, 2);
    want = chain_issue::other_job;
    message = "000000000003.delta.manifest: a publication of job 'job-b', not of job 'job-a'";
  }
  SECTION("a delta of another shape") {
    b.shape.dim = 8;
    b.delta(3, 1, 2);
    want = chain_issue::other_model;
    message = "a model of 3 tables of dim 8, 10 dense parameters, not of 3 tables of dim 4, 10 dense parameters";
  }
  SECTION("a delta of another configuration") {
    b.config_digest = 99;
    b.delta(3, 1, 2);
    want = chain_issue::other_model;
    message = "a model of another configuration (config digest 0000000000000063, not 000000001234abcd)";
  }
  SECTION("a corrupt delta file") {
    flip_middle(dir.path() / b.delta(3, 1, 2).data_file);
    want = chain_issue::bad_data;
    message = "its data file 000000000003.delta.ssd fails its CRC32C";
  }
  SECTION("a truncated delta file") {
    const manifest m = b.delta(3, 1, 2);
    const std::string bytes = read_file(dir.path() / m.data_file);
    write_file(dir.path() / m.data_file, bytes.substr(0, bytes.size() - 5));
    want = chain_issue::bad_data;
    message = "has " + std::to_string(bytes.size() - 5) + " bytes, the manifest says " + std::to_string(bytes.size());
  }
  SECTION("a missing delta file") {
    fs::remove(dir.path() / b.delta(3, 1, 2).data_file);
    want = chain_issue::bad_data;
    message = "its data file 000000000003.delta.ssd cannot be read";
  }
  SECTION("a manifest that does not parse") {
    write_file(dir.path() / "000000000003.delta.manifest", "sequence = 3\n");
    REQUIRE(fs::file_size(dir.path() / "000000000003.delta.manifest") == 13);
    want = chain_issue::bad_manifest;
    message = "manifest 000000000003.delta.manifest has no crc32c line";
  }
  SECTION("a delta that follows another publication") {
    b.delta(3, 1, 1);
    want = chain_issue::broken_link;
    message = "builds on base 000000000001 after 000000000001, the chain stands at base 000000000001 after 000000000002";
  }
  b.delta(5, 1, 4);  // something newer, so that the chain stops short of it
  const chain_plan p = plan(scanned(dir.path()), {});
  CHECK(sequences(p) == seqs{1, 2});
  REQUIRE(p.stopped);
  CHECK(p.stopped->issue == want);
  CHECK(p.stopped->sequence == 3);
  INFO(p.stopped->message);
  CHECK(contains(p.stopped->message, message));
  CHECK(p.newest_sequence == 5);
  CHECK(p.behind() == 3);
}

TEST_CASE("chain: a newer base that cannot be used is passed over for an older one", "[publish]") {
  test::temp_dir dir;
  publish_dir_builder b{dir.path()};
  b.base(1);
  b.delta(2, 1, 1);
  flip_middle(dir.path() / b.base(3).data_file);
  b.delta(4, 3, 3);
  chain_plan p = plan(scanned(dir.path()), {});
  CHECK(sequences(p) == seqs{1, 2});
  REQUIRE(p.passed_over.size() == 1);
  CHECK(p.passed_over[0].issue == chain_issue::bad_data);
  CHECK(p.passed_over[0].sequence == 3);
  REQUIRE(p.stopped);
  CHECK(p.stopped->sequence == 3);
  CHECK(p.behind() == 2);

  // Checking only a base's size takes it (its reader verifies every section on load).
  chain_expectations size_only;
  size_only.check_base_crc = false;
  p = plan(scanned(dir.path()), size_only);
  CHECK(sequences(p) == seqs{3, 4});

  // A base of another job is passed over when the caller names its job.
  b.job_id = "job-b";
  b.base(5);
  chain_expectations job_a;
  job_a.job_id = "job-a";
  job_a.check_base_crc = false;
  p = plan(scanned(dir.path()), job_a);
  CHECK(sequences(p) == seqs{3, 4});
  REQUIRE(p.passed_over.size() == 1);
  CHECK(p.passed_over[0].issue == chain_issue::other_job);
  REQUIRE(p.stopped);
  CHECK(p.stopped->issue == chain_issue::other_job);
  // Without a job named, the newest base wins whoever wrote it.
  CHECK(sequences(plan(scanned(dir.path()), {})) == seqs{5});
  // Nor is a base of another model taken when the caller names the shape.
  chain_expectations other_shape;
  other_shape.shape = model_shape{1, 1, 1};
  p = plan(scanned(dir.path()), other_shape);
  CHECK_FALSE(p.base);
  CHECK(p.passed_over.size() == 3);
  CHECK(p.stopped->issue == chain_issue::no_base);
}

TEST_CASE("chain: a follower applies what is new, switches to a newer base, and stalls with the reason",
          "[publish]") {
  test::temp_dir dir;
  publish_dir_builder b{dir.path()};
  const manifest base = b.base(1);
  b.delta(2, 1, 1);
  follower_position at{base, 2};

  follow_step step = follow(scanned(dir.path()), {}, at);
  CHECK(step.what == follow_step::action::up_to_date);
  CHECK(step.behind == 0);

  b.delta(3, 1, 2);
  b.delta(4, 1, 3);
  step = follow(scanned(dir.path()), {}, at);
  REQUIRE(step.what == follow_step::action::apply_deltas);
  REQUIRE(step.deltas.size() == 2);
  CHECK(step.deltas[0].sequence == 3);
  CHECK(step.deltas[1].sequence == 4);
  CHECK_FALSE(step.stopped);
  at.last_sequence = 4;

  SECTION("a gap stalls it, and says how far behind it is") {
    b.delta(6, 1, 5);
    b.delta(7, 1, 6);
    step = follow(scanned(dir.path()), {}, at);
    CHECK(step.what == follow_step::action::stalled);
    REQUIRE(step.stopped);
    CHECK(step.stopped->issue == chain_issue::gap);
    CHECK(step.stopped->sequence == 5);
    CHECK(step.behind == 3);
  }
  SECTION("a corrupt delta: the ones before it are applied") {
    b.delta(5, 1, 4);
    flip_middle(dir.path() / b.delta(6, 1, 5).data_file);
    b.delta(7, 1, 6);
    step = follow(scanned(dir.path()), {}, at);
    REQUIRE(step.what == follow_step::action::apply_deltas);
    CHECK(step.deltas.size() == 1);
    REQUIRE(step.stopped);
    CHECK(step.stopped->issue == chain_issue::bad_data);
    CHECK(step.behind == 2);
  }
  SECTION("a delta of another model stalls it even when the caller left the shape open") {
    b.shape.tables = 4;
    b.delta(5, 1, 4);
    step = follow(scanned(dir.path()), {}, at);
    CHECK(step.what == follow_step::action::stalled);
    CHECK(step.stopped->issue == chain_issue::other_model);
  }
  SECTION("a newer base: load it and its deltas") {
    b.delta(5, 1, 4);
    b.base(6);
    b.delta(7, 6, 6);
    step = follow(scanned(dir.path()), {}, at);
    REQUIRE(step.what == follow_step::action::load_base);
    CHECK(sequences(step.plan) == seqs{6, 7});
    CHECK(step.behind == 0);
  }
  SECTION("a newer base that is corrupt: the deltas up to it, then stalled there") {
    b.delta(5, 1, 4);
    flip_middle(dir.path() / b.base(6).data_file);
    b.delta(7, 6, 6);
    step = follow(scanned(dir.path()), {}, at);
    REQUIRE(step.what == follow_step::action::apply_deltas);
    CHECK(step.deltas.size() == 1);
    CHECK(step.deltas[0].sequence == 5);
    REQUIRE(step.passed_over.size() == 1);
    CHECK(step.passed_over[0].sequence == 6);
    REQUIRE(step.stopped);
    CHECK(step.stopped->sequence == 6);
    CHECK(step.behind == 2);
  }
  SECTION("its base and deltas pruned under it: the newest base") {
    b.base(5);
    b.delta(6, 5, 5);
    REQUIRE(prune(dir.path(), 1).is_ok());
    step = follow(scanned(dir.path()), {}, at);
    REQUIRE(step.what == follow_step::action::load_base);
    CHECK(sequences(step.plan) == seqs{5, 6});
  }
}
