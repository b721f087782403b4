// The shadowsync binary as a user runs it: real processes, real files, exit codes and the JSON
// result line.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "ss/core/io/keyed_text.hpp"
#include "ss/core/job/snapshot.hpp"
#include "cli_support.hpp"
#include "support/files.hpp"

using namespace ss::test;

namespace {
const std::string samples = SS_SAMPLE_DATA_DIR;
}  // namespace

TEST_CASE("cli: help, version and unknown commands", "[cli]") {
  expect_exit(bin + " --help", 0, "train");
  auto none = run_command(bin);
  CHECK(none.exit_code == 2);
  expect_exit(bin + " trian", 2, "did you mean 'train'");
  auto train_help = expect_exit(bin + " train --help", 0, "--batch-size");
  CHECK(train_help.out.find("SHADOWSYNC_") != std::string::npos);
}

TEST_CASE("cli: bad flags and values exit 2 with a precise message", "[cli]") {
  auto typo = expect_exit(bin + " train --bach-size 64 --train x", 2, "did you mean '--batch-size'");
  CHECK(last_json_line(typo.out).find("\"ok\":false") != std::string::npos);  // refused runs end with one too
  expect_exit(bin + " train --batch-size abc --train x", 2, "--batch-size: 'abc' is not an integer");
  expect_exit("SHADOWSYNC_THREADS=0 " + bin + " train --train x", 2, "SHADOWSYNC_THREADS");
  expect_exit(bin + " train", 2, "--train");
  auto bad_shape = run_command(bin + " train --train x --bottom-mlp 512-256-32");
  CHECK(bad_shape.exit_code != 0);
}

TEST_CASE("cli: what a deployment's start-up gets wrong is refused at start with the reason", "[cli]") {
  // Each refused before the service binds or dials anything: exit 2 and the reason.
  for (const auto& [command, needle] : std::vector<std::pair<std::string, std::string>>{
           {"shard --index 0 --listen tcp://127.0.0.1:99999", "--listen tcp://127.0.0.1:99999 has port 99999, outside 0..65535"},
           {"shard --index 0 --listen ''", "--listen \"\" is empty"},
           {"reader --index 0 --listen inproc://reader-0", "--listen inproc://reader-0 is inproc://, which only this process can reach"},
           {"trainer --listen tcp://0.0.0.0:port", "--listen tcp://0.0.0.0:port has port 'port', not a number in 0..65535"},
           {"coordinator --train x --listen udp://0.0.0.0:5555", "--listen udp://0.0.0.0:5555 is not tcp://HOST:PORT or ipc://PATH"},
           {"trainer --advertise tcp://host:0", "--advertise tcp://host:0 has port 0, which no peer can dial"},
           {"trainer --coordinator tcp://coord", "--coordinator tcp://coord has no HOST:PORT after tcp://"},
           {"trainer --coordinator inproc://coordinator", "--coordinator inproc://coordinator is inproc://"},
       }) {
    expect_exit(bin + " " + command, 2, needle);
  }
  // A misspelt variable is named with the one meant; an empty one is refused; another
  // command's variable is said to be ignored.
  expect_exit("SHADOWSYNC_COORDINATR=tcp://c:5555 " + bin + " trainer", 2,
              "unknown variable SHADOWSYNC_COORDINATR for 'shadowsync trainer' (did you mean "
              "SHADOWSYNC_COORDINATOR?)");
  expect_exit("SHADOWSYNC_LISTEN= " + bin + " shard --index 0", 2, "SHADOWSYNC_LISTEN is set but empty");
  auto elsewhere = run_command("SHADOWSYNC_MIN_TRAINERS=2 " + bin + " train --train /nonexistent/x.tsv");
  CHECK(elsewhere.out.find("SHADOWSYNC_MIN_TRAINERS is not an option of this command; ignored") != std::string::npos);
  // A variable that no command reads (misspelt beyond a near miss, or left over) is refused, by
  // every command alike.
  for (const std::string command : {"train --train /nonexistent/x.tsv", "shard --index 0", "status", "local"}) {
    expect_exit("SHADOWSYNC_NUM_WORKERS=64 " + bin + " " + command,
                2, "SHADOWSYNC_NUM_WORKERS is not an option of any shadowsync command");
  }
}

TEST_CASE("cli: an empty training set is an error, not a model with NE nan", "[cli]") {
  const auto dir = std::filesystem::temp_directory_path() / ("ss-empty-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string empty = (dir / "empty.tsv").string();
  std::ofstream(empty).close();
  auto train = run_command(bin + " train --train " + empty);
  CHECK(train.exit_code == 1);
  CHECK(last_json_line(train.out).find("the training files held no examples (0 bad rows skipped)") != std::string::npos);
  auto cluster = run_command(bin + " local --trainers 2 --train " + empty + " --dense-features 13 --categorical-features 26");
  CHECK(cluster.exit_code == 1);
  CHECK(last_json_line(cluster.out).find("\"ok\":false") != std::string::npos);
  CHECK(last_json_line(cluster.out).find("the training files held no examples") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli: bad sync flags exit 2 naming the flag", "[cli]") {
  for (const auto& [flags, needle] : std::vector<std::pair<std::string, std::string>>{
           {"--outer-momentum -0.5", "--outer-momentum must be -1 (1 - 1 / trainers) or in [0, 1), not -0.5"},
           {"--outer-momentum 1", "--outer-momentum: '1' is above the maximum"},
           {"--outer-lr 0", "--outer-lr: '0' is below the minimum"},
           {"--sync s-bmuf-nesterov", "--sync: 's-bmuf-nesterov' is not one of"}}) {
    auto r = run_command(bin + " local --train /nonexistent.tsv --log-level warn " + flags);
    INFO(flags << ": " << r.out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.find(needle) != std::string::npos);
  }
}

TEST_CASE("cli: --follow's bad combinations exit 2 naming the flag", "[cli]") {
  for (const auto& [flags, needle] : std::vector<std::pair<std::string, std::string>>{
           {"--follow --train s.tsv --epochs 2", "--follow reads its input once, as it arrives: --epochs must be 1"},
           {"--follow --train s.tsv --shuffle-buffer 100", "--shuffle-buffer must be 0"},
           {"--follow --train a.tsv,b.tsv", "--train names 2 while --readers is 1: give --readers 2"},
           {"--follow-for 10 --train s.tsv", "--follow-for needs --follow"},
           {"--follow --train s.tsv --follow-batch-wait 0", "--follow-batch-wait: '0' is below the minimum"},
           {"--follow", "--follow needs --train"}}) {
    auto r = run_command(bin + " local --log-level warn " + flags);
    INFO(flags << ": " << r.out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.find(needle) != std::string::npos);
  }
  // stop: a coordinator that does not answer is an error, exit 1.
  expect_exit(bin + " stop --coordinator tcp://127.0.0.1:1 --timeout 0.3", 1, "no answer from tcp://127.0.0.1:1");
}

TEST_CASE("cli: the model's shape from --embedding-dim alone, and a bottom MLP that misses it exits 2 naming both",
          "[cli]") {
  ss::test::temp_dir dir;
  REQUIRE(run_command(bin + " gen-data --out " + dir.str() + " --rows 2000 --test-rows 0 --seed 5").exit_code == 0);
  const std::string train = bin + " train --progress-interval 0 --train " + dir.str("train.tsv");
  expect_exit(train + " --embedding-dim 8", 0, "13-512-256-64-8 |");
  auto mismatch = expect_exit(train + " --embedding-dim 8 --bottom-mlp 64-16", 2, "--bottom-mlp 64-16 ends in 16");
  CHECK(mismatch.out.find("--embedding-dim is 8") != std::string::npos);
  CHECK(last_json_line(mismatch.out).find("\"ok\":false") != std::string::npos);
  // The cluster refuses it before anything starts, too.
  expect_exit(bin + " local --rows 1000 --test-rows 0 --log-level warn --embedding-dim 8 --bottom-mlp 64-16 "
                    "--run-dir " + dir.str("run"),
              2, "--embedding-dim is 8");
  // Categorical features only: the bottom MLP is one layer with no inputs.
  expect_exit(bin + " train --progress-interval 0 --schema avazu --embedding-dim 4 --train " + samples +
                  "/avazu/train-10k",
              0, "0-4 |");
}

TEST_CASE("cli: a CSV file read with the Criteo schema says why and what to do, once", "[cli]") {
  auto r = run_command(bin + " train --progress-interval 0 --train " + samples + "/avazu/train-10k");
  CHECK(r.exit_code == 1);
  const std::string json = last_json_line(r.out);
  CHECK(json.find("\"ok\":false") != std::string::npos);
  CHECK(json.find("splits into 24 fields at ','") != std::string::npos);
  CHECK(json.find("--schema") != std::string::npos);
  std::size_t hints = 0;
  for (auto at = r.out.find("name it with --schema"); at != std::string::npos;
       at = r.out.find("name it with --schema", at + 1))
    ++hints;
  CHECK(hints == 2);  // the error line, and the JSON line that repeats it
}

TEST_CASE("cli: a missing training file is a clear error, exit 1", "[cli]") {
  expect_exit(bin + " train --train /nonexistent/train.tsv", 1, "/nonexistent/train.tsv");
}

TEST_CASE("cli: gen-data then train learns the teacher's task end to end", "[cli]") {
  ss::test::temp_dir dir;
  auto gen = run_command(bin + " gen-data --out " + dir.str() + " --rows 30000 --test-rows 5000 --seed 3");
  REQUIRE(gen.exit_code == 0);
  const std::string teacher = last_json_line(gen.out);
  const double bayes_ne = json_number(teacher.substr(teacher.find("\"test\"")), "bayes_ne");
  REQUIRE(bayes_ne > 0.3);
  REQUIRE(bayes_ne < 0.95);

  auto train = run_command(bin + " train --train " + dir.str("train.tsv") + " --test " + dir.str("test.tsv") +
                           " --threads 2 --progress-interval 0 --sparse-optimizer rowwise-adagrad");
  INFO(train.out);
  REQUIRE(train.exit_code == 0);
  const std::string j = last_json_line(train.out);
  CHECK(json_number(j, "examples") == 30000);
  CHECK(json_number(j, "test_examples") == 5000);
  CHECK(json_number(j, "bad_rows") == 0);
  CHECK(json_number(j, "examples_per_sec") > 0);
  const double ne = json_number(j, "test_ne");
  CHECK(ne < 0.95);               // it learned something
  CHECK(ne > bayes_ne - 0.02);    // and cannot beat the Bayes-optimal predictor
  CHECK(json_number(j, "test_auc") > 0.65);
}

TEST_CASE("cli: one thread is deterministic run to run", "[cli]") {
  ss::test::temp_dir dir;
  REQUIRE(run_command(bin + " gen-data --out " + dir.str() + " --rows 5000 --test-rows 1000").exit_code == 0);
  const std::string cmd = bin + " train --train " + dir.str("train.tsv") + " --test " + dir.str("test.tsv") +
                          " --threads 1 --progress-interval 0";
  auto a = run_command(cmd), b = run_command(cmd);
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  CHECK(ss::test::json_field(last_json_line(a.out), "test_logloss") ==
        ss::test::json_field(last_json_line(b.out), "test_logloss"));
}

TEST_CASE("cli: trains on the real Criteo and Avazu samples", "[cli]") {
  const std::string criteo = samples + "/criteo/train-10k.txt";
  auto c = run_command(bin + " train --train " + criteo + " --test " + criteo + " --progress-interval 0");
  INFO(c.out);
  REQUIRE(c.exit_code == 0);
  const std::string jc = last_json_line(c.out);
  CHECK(json_number(jc, "examples") == 10000);
  CHECK(json_number(jc, "bad_rows") == 0);
  CHECK(std::isfinite(json_number(jc, "test_ne")));

  const std::string avazu = samples + "/avazu/train-10k";
  auto v = run_command(bin + " train --schema avazu --train " + avazu + " --progress-interval 0");
  INFO(v.out);
  REQUIRE(v.exit_code == 0);
  CHECK(json_number(last_json_line(v.out), "examples") == 9999);
}

TEST_CASE("cli: too many bad rows stop the run with file and line", "[cli]") {
  ss::test::temp_dir dir;
  {
    std::ofstream f(dir.str("bad.tsv"));
    for (int i = 0; i < 50; ++i) f << "1\tnot-a-row\n";
  }
  auto r = expect_exit(bin + " train --train " + dir.str("bad.tsv") + " --progress-interval 0", 1, "bad.tsv:1:");
  CHECK(r.out.find("expected 40 fields") != std::string::npos);
}

TEST_CASE("cli: a few bad rows are skipped, counted and reported", "[cli]") {
  ss::test::temp_dir dir;
  {
    std::ifstream in(samples + "/criteo/train-10k.txt");
    std::ofstream f(dir.str("mixed.tsv"));
    std::string line;
    for (int i = 0; i < 2000 && std::getline(in, line); ++i) {
      f << line << "\n";
      if (i == 100) f << "2\t1\t2\n";  // bad label and field count
      if (i == 200) f << line.substr(0, line.size() / 2) << "\n";
    }
  }
  auto r = run_command(bin + " train --train " + dir.str("mixed.tsv") + " --progress-interval 0");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const std::string j = last_json_line(r.out);
  CHECK(json_number(j, "examples") == 2000);
  CHECK(json_number(j, "bad_rows") == 2);
  CHECK(r.out.find("mixed.tsv:102:") != std::string::npos);
}

TEST_CASE("cli: outputs and test files are checked before training, not after", "[cli]") {
  ss::test::temp_dir dir;
  REQUIRE(run_command(bin + " gen-data --out " + dir.str() + " --rows 2000 --test-rows 200 --seed 5").exit_code == 0);
  const std::string train = " train --progress-interval 0 --train " + dir.str("train.tsv");
  auto no_dir = expect_exit(bin + train + " --export " + dir.str("missing/m.ssm"),
                            2, "--export " + dir.str("missing/m.ssm") + ": the directory");
  CHECK(no_dir.out.find("examples in") == std::string::npos);  // nothing trained
  // A typo must not overwrite data: only a model file is replaced.
  expect_exit(bin + train + " --export " + dir.str("test.tsv"), 2, "is not a model file");
  expect_exit(bin + train + " --test " + dir.str("nope.tsv"), 2, "--test " + dir.str("nope.tsv"));
  {
    std::ofstream(dir.str("garbage.tsv")) << "this is not\ta criteo row\n" << std::string(300, 'x') << "\n";
  }
  auto garbage = expect_exit(bin + train + " --test " + dir.str("garbage.tsv"),
                             2, "none of its first 2 rows parse with the criteo schema");
  CHECK(garbage.out.find("examples in") == std::string::npos);
}

TEST_CASE("cli: a diverged model is an error with a JSON line, never an export", "[cli]") {
  ss::test::temp_dir dir;
  REQUIRE(run_command(bin + " gen-data --out " + dir.str() + " --rows 3000 --test-rows 200 --seed 6").exit_code == 0);
  auto r = run_command(bin + " train --progress-interval 0 --train " + dir.str("train.tsv") + " --test " +
                       dir.str("test.tsv") + " --learning-rate 1e30 --export " + dir.str("m.ssm"));
  INFO(r.out);
  CHECK(r.exit_code == 1);
  const std::string j = last_json_line(r.out);
  CHECK(j.find("\"ok\":false") != std::string::npos);
  CHECK(j.find("training diverged") != std::string::npos);
  CHECK_FALSE(std::ifstream(dir.str("m.ssm")).good());
}

TEST_CASE("cli: bad directories and absurd model sizes exit 2 with a message, never a core dump", "[cli]") {
  ss::test::temp_dir dir;
  REQUIRE(run_command(bin + " gen-data --out " + dir.str() + " --rows 1000 --test-rows 100 --seed 7").exit_code == 0);
  expect_exit(bin + " train --progress-interval 0 --train " + dir.str("train.tsv") + " --top-mlp 65536-65536-65536-1",
              2, "dense parameters");
  const std::string local = bin + " local --processes --rows 1000 --log-level warn --train " + dir.str("train.tsv");
  expect_exit("TMPDIR=" + dir.str("nonexistent") + " " + local, 2, "set TMPDIR or give --run-dir");
  { std::ofstream(dir.str("afile")) << "x"; }
  expect_exit(local + " --run-dir " + dir.str("afile/run"),
              2, "--run-dir " + dir.str("afile/run") + ": cannot create the directory");
  auto export_dir = run_command(bin + " coordinator --listen tcp://127.0.0.1:0 --train " + dir.str("train.tsv") +
                                " --export-dir " + dir.str("no-exports"));
  CHECK(export_dir.exit_code == 2);
  CHECK(export_dir.out.find("--export-dir: the directory " + dir.str("no-exports") + " does not exist") !=
        std::string::npos);
  expect_exit(bin + " local --rows 1000 --log-level warn --train " + dir.str("train.tsv") +
                  " --state-dir " + dir.str("afile/state"),
              2, "--state-dir");
}

TEST_CASE("cli: local --curve-dir without --processes is refused before any data is generated", "[cli]") {
  ss::test::temp_dir dir;
  auto r = expect_exit(bin + " local --rows 1000 --log-level warn --data-dir " + dir.str("data") + " --curve-dir " +
                           dir.str("keys"),
                       2, "--curve-dir needs --processes");
  CHECK(r.out.find("\"ok\":false") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.str("data")));
  CHECK_FALSE(std::filesystem::exists(dir.str("keys")));
}

TEST_CASE("cli: a snapshot whose rows an earlier build placed by modulo is refused on resume, naming both schemes",
          "[cli]") {
  ss::test::temp_dir dir;
  REQUIRE(run_command(bin + " gen-data --out " + dir.str("d") + " --rows 3000 --test-rows 300 --seed 3").exit_code == 0);
  // A following job runs until stopped: killed once it has taken a snapshot (waited for, up to two
  // minutes: a sanitizer build starts slowly), it leaves a job to resume.
  const std::string local = bin + " local --log-level warn --progress-interval 0 --snapshot-interval 1 --follow "
                                  "--state-dir " + dir.str("state") + " --train " + dir.str("d/train.tsv");
  run_command("sh -c '" + local + " & pid=$!; i=0; while [ $i -lt 1200 ] && ! ls " + dir.str("state") +
              "/snapshots/snapshot-*/MANIFEST >/dev/null 2>&1; do sleep 0.1; i=$((i + 1)); done; kill -9 $pid; "
              "wait $pid'");
  std::vector<std::filesystem::path> manifests;
  for (const auto& e : std::filesystem::directory_iterator(dir.str("state/snapshots")))
    if (std::filesystem::exists(e.path() / "MANIFEST")) manifests.push_back(e.path() / "MANIFEST");
  REQUIRE_FALSE(manifests.empty());
  // Each manifest as a build before the placement was recorded wrote it: no placement line.
  const std::string placement_line = "placement = ranges-16384-even\n";
  for (const auto& m : manifests) {
    auto body = ss::io::without_crc_line(ss::test::read_file(m), "MANIFEST");
    REQUIRE(body.is_ok());
    const auto at = body->find(placement_line);
    REQUIRE(at != std::string::npos);
    body->erase(at, placement_line.size());
    ss::test::write_file(m, ss::io::with_crc_line(*body));
  }
  auto resumed = run_command("timeout 60 " + local + " --follow-for 2");
  CHECK(resumed.exit_code != 0);
  CHECK(resumed.exit_code != 124);  // refused, not left running
  CHECK(resumed.out.find("its rows were placed on the shards by \"modulo\" (an earlier build), this build places "
                         "them by \"ranges-16384-even\"") != std::string::npos);
}

TEST_CASE("cli: a finished job's state answers only that job; a damaged stored result is an error", "[cli]") {
  ss::test::temp_dir dir;
  REQUIRE(run_command(bin + " gen-data --out " + dir.str("a") + " --rows 3000 --test-rows 300 --seed 8").exit_code == 0);
  REQUIRE(run_command(bin + " gen-data --out " + dir.str("b") + " --rows 3000 --test-rows 300 --seed 9").exit_code == 0);
  const std::string local = bin + " local --log-level warn --progress-interval 0 --state-dir " + dir.str("state");
  auto first = run_command(local + " --train " + dir.str("a/train.tsv"));
  INFO(first.out);
  REQUIRE(first.exit_code == 0);
  expect_exit(local + " --train " + dir.str("a/train.tsv"), 0, "the job had finished before");
  auto other = run_command(local + " --train " + dir.str("b/train.tsv"));
  CHECK(other.exit_code != 0);
  CHECK(other.out.find("finished already, with another configuration") != std::string::npos);
  CHECK(other.out.find("a new job needs another --snapshot-dir or --state-dir") != std::string::npos);
  // A stored result cut short is not printed as if it were whole.
  const std::string stored = dir.str("state/snapshots/RESULT.json");
  std::string text;
  {
    std::ifstream in(stored);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  REQUIRE(text.size() > 40);
  { std::ofstream(stored, std::ios::trunc) << text.substr(0, text.size() / 2); }
  auto cut = run_command(local + " --train " + dir.str("a/train.tsv"));
  CHECK(cut.exit_code != 0);
  CHECK(cut.out.find("RESULT.json") != std::string::npos);
  CHECK(cut.out.find("its result cannot be read") != std::string::npos);
  // One whose checksum holds but whose line is not a cluster result (another version's) is refused
  // too, not reported.
  const auto whole = ss::job::decode_result(text);
  REQUIRE(whole.is_ok());
  { std::ofstream(stored, std::ios::trunc) << ss::job::encode_result({R"({"command":"train","ok":true})", whole->job_text}); }
  auto foreign = run_command(local + " --train " + dir.str("a/train.tsv"));
  CHECK(foreign.exit_code != 0);
  CHECK(foreign.out.find("the finished job's result cannot be read") != std::string::npos);
  CHECK(foreign.out.find("not a cluster result") != std::string::npos);
  CHECK(foreign.out.find("the job had finished before") == std::string::npos);
}

TEST_CASE("cli: libSVM and libFFM files train, in train and in the cluster", "[cli]") {
  ss::test::temp_dir dir;
  // Three fields: a user (clicks mostly when even), an item, and noise; libFFM field:index:value,
  // and the same rows as libSVM with the fields' indices kept apart.
  std::ofstream ffm_train(dir.str("train.ffm")), ffm_test(dir.str("test.ffm"));
  std::ofstream svm_train(dir.str("train.svm")), svm_test(dir.str("test.svm"));
  std::uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  for (int i = 0; i < 24000; ++i) {
    const auto user = next() % 400, item = next() % 50, noise = next() % 1000;
    const bool click = (next() % 100) < (user % 2 == 0 ? 80u : 15u);
    const std::string label = click ? "1" : "-1";
    auto& ffm = i < 20000 ? ffm_train : ffm_test;
    auto& svm = i < 20000 ? svm_train : svm_test;
    ffm << label << " 0:" << user << ":1 1:" << item << ":1 2:" << noise << ":1\n";
    svm << label << " " << user << ":1 " << 1000 + item << ":1 " << 2000 + noise << ":1\n";
  }
  ffm_train.close(), ffm_test.close(), svm_train.close(), svm_test.close();
  {
    std::ofstream schema(dir.str("ffm.schema"));
    schema << "format = libffm\nfields = 3\n";
  }
  const std::string quiet = " --progress-interval 0 --embedding-dim 8 --top-mlp 64-1";
  for (const std::string command : {" train", " local --trainers 1"}) {
    auto ffm = run_command(bin + command + " --schema " + dir.str("ffm.schema") + " --train " + dir.str("train.ffm") +
                           " --test " + dir.str("test.ffm") + quiet);
    INFO(ffm.out);
    REQUIRE(ffm.exit_code == 0);
    CHECK(json_number(last_json_line(ffm.out), "test_examples") == 4000);
    CHECK(json_number(last_json_line(ffm.out), "test_auc") > 0.75);  // the user's parity, learned
    auto svm = run_command(bin + command + " --schema libsvm --train " + dir.str("train.svm") + " --test " +
                           dir.str("test.svm") + quiet);
    INFO(svm.out);
    REQUIRE(svm.exit_code == 0);
    CHECK(json_number(last_json_line(svm.out), "test_auc") > 0.75);
  }
  // A libSVM file under the default schema: the error names the fix.
  expect_exit(bin + " train --train " + dir.str("train.svm") + quiet, 1, "name it with --schema libsvm");
}
