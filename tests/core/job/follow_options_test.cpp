// --follow's rules: the combinations refused with the flag named, the example limit split over the
// readers, and a followed position kept by a snapshot's manifest.
#include <catch2/catch.hpp>

#include "ss/core/job/job_options.hpp"
#include "ss/core/job/snapshot.hpp"

using namespace ss::job;

namespace {
std::string refusal(const job_options& j) {
  const auto st = check_job(j);
  return st.is_ok() ? std::string() : st.message();
}
}  // namespace

TEST_CASE("follow options: bad combinations are refused with the flag named", "[core][job]") {
  job_options j;
  j.train = {"stream.tsv"};
  j.follow.enabled = true;
  CHECK(refusal(j).empty());
  j.passes.epochs = 2;
  CHECK(refusal(j) == "--follow reads its input once, as it arrives: --epochs must be 1, not 2");
  j.passes.epochs = 1;
  j.passes.shuffle_buffer = 1000;
  CHECK(refusal(j).find("--shuffle-buffer must be 0") != std::string::npos);
  j.passes.shuffle_buffer = -1;
  j.train = {"a.tsv", "b.tsv"};
  CHECK(refusal(j) == "--follow: each reader follows one input, and --train names 2 while --readers is 1: give "
                      "--readers 2");
  j.readers = 2;
  CHECK(refusal(j).empty());
  j.follow.limit_examples = 1;
  CHECK(refusal(j).find("--follow-limit-examples 1 is less than one example per reader") != std::string::npos);
  j.follow.limit_examples = 0;
  j.simulate_step_ms = 5;
  CHECK(refusal(j).find("--simulate-step-ms") != std::string::npos);
  // The --follow-* settings need --follow.
  job_options fixed;
  fixed.train = {"a.tsv"};
  fixed.follow.for_seconds = 60;
  CHECK(refusal(fixed) == "--follow-for needs --follow");
  fixed.follow.for_seconds = 0;
  fixed.follow.pattern = "*.tsv";
  CHECK(refusal(fixed) == "--follow-pattern needs --follow");
  fixed.follow.pattern = "*";
  fixed.follow.limit_examples = 10;
  CHECK(refusal(fixed) == "--follow-limit-examples needs --follow");
}

TEST_CASE("follow options: the example limit is split over the readers, the first ones taking the rest",
          "[core][job]") {
  job_options j;
  j.readers = 3;
  CHECK(follow_limit_of_reader(j, 0) == 0);  // no limit
  j.follow.limit_examples = 10;
  CHECK(follow_limit_of_reader(j, 0) == 4);
  CHECK(follow_limit_of_reader(j, 1) == 3);
  CHECK(follow_limit_of_reader(j, 2) == 3);
  // A job followed and one over fixed files are not the same job.
  job_options saved;
  saved.train = {"s.tsv"};
  auto now = saved;
  now.follow.enabled = true;
  const auto conflicts = resume_conflicts(saved, now);
  REQUIRE(conflicts.size() == 1);
  CHECK(conflicts[0] == "--follow: the snapshot has false, this run true");
}

TEST_CASE("a snapshot keeps a followed position: the file's name, escaped, and its identity", "[core][job]") {
  snapshot_manifest m;
  m.job_id = 9;
  m.snapshot_id = 2;
  reader_commit followed{true, 0, 4096, 101, 100, 1, 0x9abcdef0u, 0, 0, 0};
  followed.file_name = "part 7%\n.tsv";
  followed.device = 2049;
  followed.inode = 1ULL << 40;
  reader_commit between{true, 0, 0, 1, 100, 1, 0, 0, 0, 0};
  between.file_name = "part-8.tsv";  // inode 0: between files
  m.readers = {followed, between, {}};
  const std::string text = format_manifest(m);
  CHECK(text.find("part%207%25%0A.tsv") != std::string::npos);
  auto back = parse_manifest(text);
  REQUIRE(back.is_ok());
  REQUIRE(back->readers.size() == 3);
  CHECK(back->readers[0].file_name == "part 7%\n.tsv");
  CHECK(back->readers[0].device == 2049);
  CHECK(back->readers[0].inode == 1ULL << 40);
  CHECK(back->readers[0].byte_offset == 4096);
  CHECK(back->readers[1].file_name == "part-8.tsv");
  CHECK(back->readers[1].inode == 0);
  CHECK(back->readers[2].file_name.empty());
  // A damaged escape is refused, naming the line.
  std::string bad = text;
  const auto at = bad.find("%0A");
  bad.replace(at, 3, "%G0");
  CHECK_FALSE(parse_manifest(bad).is_ok());  // (its checksum fails first; the escape is checked too)
}
