// The publish directory as a whole: scan (publications, debris), next_sequence after a restart,
// and prune, which never breaks the chain a server would load.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "publish_test_util.hpp"
#include "ss/core/publish/chain.hpp"
#include "ss/core/publish/publication.hpp"
#include "support/files.hpp"
#include "support/process.hpp"

using namespace ss;
using namespace ss::publish;
using ss::test::contains;
using ss::test::publish_dir_builder;
using ss::test::write_file;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::uint64_t> manifest_sequences(const directory_scan& s) {
  std::vector<std::uint64_t> out;
  for (const auto& m : s.manifests) out.push_back(m.sequence);
  return out;
}

}  // namespace

TEST_CASE("publish: scan lists manifests in order, parsed or not, and the debris", "[publish]") {
  test::temp_dir dir;
  publish_dir_builder b{dir.path()};
  b.base(1);
  b.delta(2, 1, 1);
  b.delta(3, 1, 2);
  write_file(dir.path() / "000000000004.delta.manifest", "garbage");
  write_file(dir.path() / "000000000005.delta.ssd", "a crash before its manifest");
  write_file(dir.path() / "000000000005.delta.manifest.tmp", "half");
  write_file(dir.path() / "notes.txt", "not ours");
  const directory_scan s = test::scanned(dir.path());
  CHECK(manifest_sequences(s) == std::vector<std::uint64_t>{1, 2, 3, 4});
  CHECK(s.newest_sequence() == 4);
  REQUIRE(s.manifests[3].parsed == std::nullopt);
  CHECK(contains(s.manifests[3].error.message(), "manifest 000000000004.delta.manifest has no crc32c line"));
  CHECK(s.manifests[0].kind == publication_kind::base);
  CHECK(s.manifests[2].parsed->previous == 2);
  CHECK(s.debris == std::vector<std::string>{"000000000005.delta.manifest.tmp", "000000000005.delta.ssd"});

  CHECK(scan(dir.path() / "missing").error().code() == errc::not_found);
  CHECK(scan(dir.path() / "notes.txt").error().code() == errc::invalid_argument);
}

TEST_CASE("publish: next_sequence continues after a restart and refuses another job's directory", "[publish]") {
  test::temp_dir dir;
  const fs::path pub = dir.path() / "pub";
  auto first = next_sequence(pub, "job-a");
  REQUIRE(first.is_ok());
  CHECK(fs::is_directory(pub));  // created
  CHECK(first->sequence == first_sequence);
  CHECK_FALSE(first->newest);

  publish_dir_builder b{pub};
  b.base(1);
  b.delta(2, 1, 1);
  b.delta(3, 1, 2);
  auto next = next_sequence(pub, "job-a");
  REQUIRE(next.is_ok());
  CHECK(next->sequence == 4);
  REQUIRE(next->newest);
  CHECK(next->newest->sequence == 3);
  REQUIRE(next->newest_base);
  CHECK(next->newest_base->sequence == 1);

  // A crash left a data file without its manifest: its number is not taken (the publish is redone).
  write_file(pub / "000000000004.delta.ssd", "debris");
  CHECK(next_sequence(pub, "job-a")->sequence == 4);
  // A manifest that does not parse still takes its number: sequences never repeat.
  write_file(pub / "000000000006.delta.manifest", "damaged");
  next = next_sequence(pub, "job-a");
  REQUIRE(next.is_ok());
  CHECK(next->sequence == 7);
  CHECK(next->newest->sequence == 3);  // the newest that parses

  b.job_id = "job-b";
  b.base(7);
  auto refused = next_sequence(pub, "job-a");
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refused.error().code() == errc::already_exists);
  CHECK(contains(refused.error().message(), "its newest publication (000000000007.base.manifest) belongs to job "
                                            "'job-b', not 'job-a'"));
  auto adopted = next_sequence(pub, "job-a", true);
  REQUIRE(adopted.is_ok());
  CHECK(adopted->sequence == 8);
  CHECK(adopted->newest_base->job_id == "job-b");

  // A directory that cannot be created.
  write_file(dir.path() / "file", "x");
  auto unwritable = next_sequence(dir.path() / "file" / "pub", "job-a");
  REQUIRE_FALSE(unwritable.is_ok());
  CHECK(unwritable.error().code() == errc::io_error);
  CHECK(contains(unwritable.error().message(), "cannot be created"));
}

TEST_CASE("publish: prune keeps the newest publications and always the newest base's chain", "[publish]") {
  test::temp_dir dir;
  publish_dir_builder b{dir.path()};
  b.base(1);
  b.delta(2, 1, 1);
  b.delta(3, 1, 2);
  b.base(4);
  b.delta(5, 4, 4);
  b.delta(6, 4, 5);
  const auto before = plan(test::scanned(dir.path()), {});

  SECTION("retain all") {
    auto p = prune(dir.path(), 6);
    REQUIRE(p.is_ok());
    CHECK(p->publications_removed == 0);
    CHECK(manifest_sequences(test::scanned(dir.path())) == std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6});
  }
  SECTION("retain 5: the deltas of a base that goes go with it") {
    auto p = prune(dir.path(), 5);
    REQUIRE(p.is_ok());
    CHECK(p->publications_removed == 3);
    CHECK(manifest_sequences(test::scanned(dir.path())) == std::vector<std::uint64_t>{4, 5, 6});
  }
  SECTION("retain 1: the newest base and every delta after it stay") {
    auto p = prune(dir.path(), 1);
    REQUIRE(p.is_ok());
    CHECK(p->publications_removed == 3);
    CHECK(p->bytes_freed > 0);
    // Manifests go before their data files.
    REQUIRE(p->removed.size() == 6);
    CHECK(p->removed[0] == "000000000001.base.manifest");
    CHECK(p->removed[1] == "000000000001.base.ssm");
    CHECK(names_in(dir.path()) ==
          std::vector<std::string>{"000000000004.base.manifest", "000000000004.base.ssm", "000000000005.delta.manifest",
                                   "000000000005.delta.ssd", "000000000006.delta.manifest", "000000000006.delta.ssd"});
  }
  const auto after = plan(test::scanned(dir.path()), {});
  CHECK(test::sequences(after) == test::sequences(before));
  CHECK(test::sequences(after) == std::vector<std::uint64_t>{4, 5, 6});
  CHECK(prune(dir.path(), 0).error().code() == errc::invalid_argument);
}

TEST_CASE("publish: prune deletes debris up to the newest publication, and nothing else", "[publish]") {
  test::temp_dir dir;
  publish_dir_builder b{dir.path()};
  b.base(1);
  b.delta(2, 1, 1);
  b.delta(3, 1, 2);
  write_file(dir.path() / "000000000002.base.ssm", "debris: a base whose publish crashed");
  write_file(dir.path() / "000000000003.delta.manifest.tmp", "debris");
  write_file(dir.path() / "000000000004.delta.ssd.tmp", "maybe a publish in progress");
  write_file(dir.path() / "000000000004.delta.ssd", "maybe a publish in progress");
  write_file(dir.path() / "keep-me.txt", "not ours");
  auto p = prune(dir.path(), 10);
  REQUIRE(p.is_ok());
  CHECK(p->publications_removed == 0);
  CHECK(p->debris_removed == 2);
  CHECK_FALSE(fs::exists(dir.path() / "000000000002.base.ssm"));
  CHECK_FALSE(fs::exists(dir.path() / "000000000003.delta.manifest.tmp"));
  CHECK(fs::exists(dir.path() / "000000000004.delta.ssd.tmp"));
  CHECK(fs::exists(dir.path() / "000000000004.delta.ssd"));
  CHECK(fs::exists(dir.path() / "keep-me.txt"));
  CHECK(test::sequences(plan(test::scanned(dir.path()), {})) == std::vector<std::uint64_t>{1, 2, 3});
}

TEST_CASE("publish: prune keeps the chain of an older base while the newest base's file is broken", "[publish]") {
  test::temp_dir dir;
  publish_dir_builder b{dir.path()};
  b.base(1);
  b.delta(2, 1, 1);
  const manifest broken = b.base(3);
  b.delta(4, 3, 3);
  write_file(dir.path() / broken.data_file, "cut short");
  write_file(dir.path() / "000000000005.delta.manifest", "damaged, old soon");
  auto p = prune(dir.path(), 1);
  REQUIRE(p.is_ok());
  CHECK(p->publications_removed == 0);
  const auto kept = plan(test::scanned(dir.path()), {});
  CHECK(test::sequences(kept) == std::vector<std::uint64_t>{1, 2});
  REQUIRE(kept.stopped);
  CHECK(kept.stopped->issue == chain_issue::bad_data);
  CHECK(kept.stopped->sequence == 3);

  // Once a newer base is good, the old chain and the damaged manifest go.
  b.base(6);
  p = prune(dir.path(), 1);
  REQUIRE(p.is_ok());
  CHECK(p->publications_removed == 5);
  CHECK(manifest_sequences(test::scanned(dir.path())) == std::vector<std::uint64_t>{6});
}

TEST_CASE("publish: prune never changes what a server would load (random directories)", "[publish]") {
  std::mt19937_64 rng(17);
  for (int round = 0; round < 25; ++round) {
    test::temp_dir dir;
    publish_dir_builder b{dir.path()};
    std::uint64_t base = 0, last = 0;
    const int count = 2 + static_cast<int>(rng() % 12);
    for (std::uint64_t seq = 1; seq <= static_cast<std::uint64_t>(count); ++seq) {
      if (base == 0 || rng() % 4 == 0) {
        b.base(seq);
        base = seq;
      } else {
        b.delta(seq, base, last);
      }
      last = seq;
      if (rng() % 8 == 0) write_file(dir.path() / data_file_name(seq, publication_kind::delta) += ".tmp", "debris");
    }
    const auto before = plan(test::scanned(dir.path()), {});
    const std::size_t retain = 1 + rng() % 5;
    auto p = prune(dir.path(), retain);
    REQUIRE(p.is_ok());
    const auto after_scan = test::scanned(dir.path());
    const auto after = plan(after_scan, {});
    INFO("round " << round << ", " << count << " publications, retain " << retain);
    CHECK(test::sequences(after) == test::sequences(before));
    CHECK_FALSE(after.stopped);
    CHECK(after_scan.debris.empty());
    CHECK(after_scan.manifests.size() >= std::min<std::size_t>(retain, before.deltas.size() + 1));
  }
}
