#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "ss/core/job/preflight.hpp"
#include "ss/core/model_file/model_file.hpp"

namespace fs = std::filesystem;
using ss::errc;

namespace {
struct scratch {
  fs::path root;
  scratch() {
    char tmpl[] = "/tmp/ss-preflight.XXXXXX";
    root = ::mkdtemp(tmpl);
  }
  ~scratch() { fs::remove_all(root); }
  std::string at(const std::string& p) const { return (root / p).string(); }
  void write(const std::string& p, const std::string& text) const { std::ofstream(root / p) << text; }
};
}  // namespace

TEST_CASE("check_output_path: a writable directory, not a directory, never over a non-model file", "[unit]") {
  scratch s;
  CHECK(ss::job::check_output_path("", "--export").is_ok());
  CHECK(ss::job::check_output_path(s.at("m.ssm"), "--export").is_ok());
  auto missing = ss::job::check_output_path(s.at("no/m.ssm"), "--export");
  CHECK(missing.code() == errc::not_found);
  CHECK(missing.message().find("the directory " + s.at("no") + " does not exist") != std::string::npos);
  fs::create_directory(s.root / "d");
  CHECK(ss::job::check_output_path(s.at("d"), "--export").code() == errc::invalid_argument);
  s.write("train.tsv", "0\t1\n");
  auto data = ss::job::check_output_path(s.at("train.tsv"), "--export");
  CHECK(data.message().find("is not a model file") != std::string::npos);
  s.write("old.ssm", std::string(ss::model::model_magic, 8) + "rest");
  CHECK(ss::job::check_output_path(s.at("old.ssm"), "--export").is_ok());
  // No probe file is left behind.
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(s.root)) entries += e.path().filename().string().rfind(".shadowsync", 0) == 0;
  CHECK(entries == 0);
  if (::geteuid() != 0) {  // root writes anywhere
    fs::create_directory(s.root / "ro");
    fs::permissions(s.root / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    CHECK(ss::job::check_output_path(s.at("ro/m.ssm"), "--export").code() == errc::io_error);
  }
}

TEST_CASE("check_input_files: missing, empty and wrong-format files are named before training", "[unit]") {
  scratch s;
  ss::job::input_options in;
  s.write("good.tsv", "1\t1\t2\t3\t4\t5\t6\t7\t8\t9\t10\t11\t12\t13" + std::string(26 * 0, ' ') +
                          [] {
                            std::string c;
                            for (int i = 0; i < 26; ++i) c += "\t68fd1e64";
                            return c;
                          }() +
                          "\n");
  CHECK(ss::job::check_input_files(in, {s.at("good.tsv")}, "--test").is_ok());
  auto missing = ss::job::check_input_files(in, {s.at("good.tsv"), s.at("gone.tsv")}, "--test");
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.message().find("--test " + s.at("gone.tsv")) != std::string::npos);
  s.write("empty.tsv", "");
  auto empty = ss::job::check_input_files(in, {s.at("empty.tsv")}, "--test");
  CHECK(empty.message().find("the file has no rows") != std::string::npos);
  s.write("garbage.tsv", "a,b,c\n1,2,3\n");
  auto garbage = ss::job::check_input_files(in, {s.at("garbage.tsv")}, "--test");
  CHECK(garbage.code() == errc::parse_error);
  CHECK(garbage.message().find("none of its first 2 rows parse with the criteo schema") != std::string::npos);
  CHECK(garbage.message().find("garbage.tsv:1") != std::string::npos);
}

TEST_CASE("resolve_export_request: only under the export directory, never in the job's state", "[unit]") {
  scratch s;
  fs::create_directories(s.root / "exports");
  fs::create_directories(s.root / "exports/state/snapshots");
  const std::string base = s.at("exports");
  const std::vector<std::string> state{s.at("exports/state")};
  auto rel = ss::job::resolve_export_request("m.ssm", base, state);
  REQUIRE(rel.is_ok());
  CHECK(*rel == s.at("exports/m.ssm"));
  CHECK(ss::job::resolve_export_request(s.at("exports/sub/../m2.ssm"), base, state).is_ok());
  auto escape = ss::job::resolve_export_request("../outside.ssm", base, state);
  CHECK(escape.error().code() == errc::permission_denied);
  CHECK(escape.error().message().find("only under the coordinator's --export-dir") != std::string::npos);
  CHECK(ss::job::resolve_export_request("/etc/passwd", base, state).error().code() == errc::permission_denied);
  fs::create_directory_symlink(s.root, s.root / "exports/link");
  CHECK(ss::job::resolve_export_request("link/escaped.ssm", base, state).error().code() == errc::permission_denied);
  auto in_state = ss::job::resolve_export_request("state/snapshots/MANIFEST", base, state);
  CHECK(in_state.error().message().find("lies in the job's state") != std::string::npos);
  s.write("exports/notes.txt", "keep me");
  CHECK(ss::job::resolve_export_request("notes.txt", base, state).error().message().find("is not a model file") !=
        std::string::npos);
  CHECK(ss::job::resolve_export_request("m.ssm", "", state).error().code() == errc::permission_denied);
}
