// The cluster as users run it: real service processes on loopback tcp, real ZeroMQ sockets,
// generated data. Checks that training converges, every example is trained exactly once, hostile
// frames are refused without harm, and everything shuts down cleanly.
#include <catch2/catch.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "ss/transport/zmq_transport.hpp"
#include "ss/wire/codec.hpp"
#include "support/process.hpp"

using ss::test::json_number;
using ss::test::last_json_line;
using ss::test::run_command;

namespace {

const std::string bin = SS_SHADOWSYNC_BIN;

// Generated train/test data shared by the tests of this file (made once).
const std::string& data_dir() {
  static ss::test::temp_dir dir;
  static bool made = false;
  if (!made) {
    auto r = run_command(bin + " gen-data --out " + dir.str() + " --rows 40000 --test-rows 4000 --files 2");
    REQUIRE(r.exit_code == 0);
    made = true;
  }
  static const std::string path = dir.str();
  return path;
}

std::string train_files() {
  return data_dir() + "/train-00000-of-00002.tsv," + data_dir() + "/train-00001-of-00002.tsv";
}

int free_port() {
  auto ctx = ss::transport::make_zmq_context();
  ss::transport::zmq_transport probe(ctx);
  auto ep = probe.listen("tcp://127.0.0.1:0");
  REQUIRE(ep.is_ok());
  probe.stop();
  return std::atoi(ep->substr(ep->rfind(':') + 1).c_str());
}

// A background child process running `command` (stdout to a file), killed if still alive.
struct child {
  pid_t pid = -1;
  std::string out_path;
  child(const std::string& command, const std::string& out) : out_path(out) {
    pid = fork();
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c", ("exec " + command + " >" + out + " 2>&1").c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  // Exit status, or -1 if it did not exit within `limit`.
  int wait(std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int st = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      const pid_t r = waitpid(pid, &st, WNOHANG);
      if (r == pid) {
        pid = -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }
  std::string output() const {
    std::ifstream f(out_path);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
  ~child() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
};

// Sends one envelope to `endpoint` and returns the decoded answer (or nothing within 5 s).
std::optional<ss::wire::envelope> ask(const std::string& endpoint, const ss::wire::frame& f) {
  auto ctx = ss::transport::make_zmq_context();
  ss::transport::zmq_transport t(ctx);
  std::promise<ss::wire::envelope> answer;
  std::atomic<bool> got{false};
  t.on_frame([&](const ss::actors::peer_address&, ss::wire::frame in) {
    auto e = ss::wire::decode(*in);
    if (e.is_ok() && !got.exchange(true)) answer.set_value(*e);
  });
  auto link = t.connect(endpoint);
  REQUIRE(link.is_ok());
  REQUIRE(t.send(ss::actors::peer_address{*link, {}}, f).is_ok());
  auto fut = answer.get_future();
  std::optional<ss::wire::envelope> out;
  if (fut.wait_for(std::chrono::seconds(5)) == std::future_status::ready) out = fut.get();
  t.stop();
  return out;
}

}  // namespace

TEST_CASE("cluster: local --processes trains every example exactly once and exits cleanly", "[integration]") {
  auto r = run_command(bin + " local --processes --trainers 2 --shards 2 --readers 2 --train " + train_files() +
                       " --test " + data_dir() + "/test.tsv --progress-interval 0 --heartbeat-interval 0.2");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const auto j = last_json_line(r.out);
  CHECK(json_number(j, "examples") == 40000);
  CHECK(json_number(j, "examples_read") == 40000);
  CHECK(json_number(j, "trainers") == 2);
  CHECK(json_number(j, "test_examples") == 4000);
  CHECK(json_number(j, "bad_rows") == 0);
  CHECK(std::isfinite(json_number(j, "test_ne")));
  CHECK(json_number(j, "test_auc") > 0.6);  // it learned
  // Every member left by itself once the job ended: none was started again (the supervisor read
  // the job's state as done) and none had to be terminated.
  CHECK(r.out.find("starting it again") == std::string::npos);
  CHECK(r.out.find("did not exit") == std::string::npos);
  CHECK(r.out.find("the job is done; exiting") != std::string::npos);
}

TEST_CASE("cluster: local --processes hands each role its settings in one file, and a flag beats an inherited variable",
          "[integration]") {
  const auto run_dir = std::filesystem::temp_directory_path() / ("ss-settings-" + std::to_string(::getpid()));
  std::filesystem::remove_all(run_dir);
  // The variable is the supervisor's; its children must not read it over the flag it lost to.
  auto r = run_command("SHADOWSYNC_BATCH_SIZE=64 " + bin + " local --processes --trainers 1 --train " + train_files() +
                       " --progress-interval 0 --heartbeat-interval 0.2 --batch-size 256 --memory-budget-mb 16 "
                       "--flush-interval 2 --prefetch --snapshot-retain 2 --run-dir " + run_dir.string());
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(json_number(last_json_line(r.out), "batch_size") == 256);
  CHECK(json_number(last_json_line(r.out), "examples") == 40000);
  std::ifstream in(run_dir / "cluster.ini");
  std::stringstream text;
  text << in.rdbuf();
  INFO(text.str());
  const std::string ini = text.str();
  const auto coordinator = ini.find("[coordinator]"), shard = ini.find("[shard]"), trainer = ini.find("[trainer]");
  REQUIRE(coordinator != std::string::npos);
  REQUIRE(shard != std::string::npos);
  REQUIRE(trainer != std::string::npos);
  const auto in_section = [&](std::size_t from, std::size_t to, const std::string& line) {
    const auto at = ini.find(line, from);
    return at != std::string::npos && at < to;
  };
  CHECK(in_section(coordinator, shard, "batch-size = 256\n"));
  CHECK(in_section(coordinator, shard, "snapshot-retain = 2\n"));
  CHECK(in_section(shard, trainer, "memory-budget-mb = 16\n"));
  CHECK(in_section(shard, trainer, "flush-interval = 2\n"));
  CHECK(in_section(trainer, ini.size(), "prefetch = true\n"));
  std::filesystem::remove_all(run_dir);
}

TEST_CASE("cluster: in one process, one trainer matches shadowsync train", "[integration]") {
  const std::string common = " --train " + train_files() + " --test " + data_dir() +
                             "/test.tsv --progress-interval 0 --sparse-optimizer rowwise-adagrad";
  auto single = run_command(bin + " train --threads 1" + common);
  auto cluster = run_command(bin + " local --trainers 1 --shards 1 --readers 1 --threads 1 --lookahead 0 "
                                   "--heartbeat-interval 0.2" + common);
  INFO(single.out);
  INFO(cluster.out);
  REQUIRE(single.exit_code == 0);
  REQUIRE(cluster.exit_code == 0);
  const double ne_single = json_number(last_json_line(single.out), "test_ne");
  const double ne_cluster = json_number(last_json_line(cluster.out), "test_ne");
  CHECK(json_number(last_json_line(cluster.out), "examples") == 40000);
  // Same data, model, order and optimizer: the cluster is the same computation, split over
  // services (with lookahead 0 the rows it reads are never stale).
  CHECK(std::abs(ne_cluster - ne_single) / ne_single < 0.005);
}

TEST_CASE("cluster: a local job's progressive metrics track its test metrics, and too few examples say so",
          "[integration]") {
  // Two trainers on 40,000 rows; the window: the last 10,000 examples, each scored by the model
  // before it trained on it, a model that has by then seen most of the data.
  const std::string common = " --trainers 2 --shards 1 --readers 2 --train " + train_files() + " --test " + data_dir() +
                             "/test.tsv --heartbeat-interval 0.2";
  auto r = run_command(bin + " local" + common + " --progressive-window 10000 --progress-interval 0.5");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const auto j = last_json_line(r.out);
  CHECK(ss::test::json_field(j, "progressive_enough") == "true");
  CHECK(json_number(j, "progressive_window") == 10000);
  // At least the window, and less than the window plus a slice (1/8 of it) per trainer.
  CHECK(json_number(j, "progressive_examples") >= 10000);
  CHECK(json_number(j, "progressive_examples") < 10000 + 2 * 1250);
  const double test_ne = json_number(j, "test_ne"), progressive_ne = json_number(j, "progressive_ne");
  CHECK(std::abs(progressive_ne - test_ne) / test_ne < 0.05);
  const double test_auc = json_number(j, "test_auc"), progressive_auc = json_number(j, "progressive_auc");
  CHECK(progressive_auc > 0.6);
  CHECK(std::abs(progressive_auc - test_auc) < 0.03);
  CHECK(json_number(j, "progressive_auc_error_bound") < 0.01);
  CHECK(std::abs(json_number(j, "progressive_calibration") - 1) < 0.15);
  // The progress lines and the summary say it too.
  CHECK(r.out.find(" trainers, progressive NE ") != std::string::npos);
  CHECK(r.out.find("  window  progressive NE ") != std::string::npos);

  // A window of 300 examples is too few to mean anything: said, not printed as numbers.
  auto few = run_command(bin + " local" + common + " --progressive-window 300 --progress-interval 0");
  INFO(few.out);
  REQUIRE(few.exit_code == 0);
  const auto f = last_json_line(few.out);
  CHECK(ss::test::json_field(f, "progressive_enough") == "false");
  CHECK(ss::test::json_field(f, "progressive_ne") == "null");
  CHECK(json_number(f, "progressive_examples") >= 300);
  CHECK(few.out.find("  window  progressive: too few examples (") != std::string::npos);
  CHECK(std::isfinite(json_number(f, "test_ne")));
}

TEST_CASE("cluster: the learning-rate schedule applies in the cluster as in train", "[integration]") {
  const std::string common = " --train " + train_files() + " --test " + data_dir() + "/test.tsv --progress-interval 0";
  auto ne_of = [&](const std::string& flags, bool cluster) {
    auto r = run_command(bin + (cluster ? " local --trainers 1 --shards 1 --readers 1 --threads 1 --lookahead 0 "
                                          "--heartbeat-interval 0.2"
                                        : " train --threads 1") +
                         common + flags);
    INFO(r.out);
    REQUIRE(r.exit_code == 0);
    return json_number(last_json_line(r.out), "test_ne");
  };
  // Warmup and cosine decay: the trainer scales the dense step and the shards the embedding step
  // at the batch's place in the job, as train does.
  const std::string cosine = " --lr-warmup-examples 4000 --lr-decay cosine --lr-decay-examples 30000 --lr-min-ratio 0.1";
  const double single = ne_of(cosine, false), cluster = ne_of(cosine, true);
  CHECK(std::abs(cluster - single) / single < 0.005);
  // A schedule that stops learning after the first batch leaves both models untrained: the scale
  // reaches the shards' and the trainer's steps.
  const std::string frozen = " --lr-decay linear --lr-decay-examples 1";
  const double single_frozen = ne_of(frozen, false), cluster_frozen = ne_of(frozen, true);
  CHECK(single_frozen > single + 0.05);
  CHECK(cluster_frozen > single + 0.05);
  CHECK(std::abs(cluster_frozen - single_frozen) / single_frozen < 0.005);
}

TEST_CASE("cluster: each service starts on its own from its flags", "[integration]") {
  ss::test::temp_dir logs;
  const int port = free_port();
  const std::string coordinator = "tcp://127.0.0.1:" + std::to_string(port);
  const std::string member = " --coordinator " + coordinator + " --listen tcp://127.0.0.1:0 --heartbeat-interval 0.2";
  child c(bin + " coordinator --listen " + coordinator + " --train " + train_files() + " --test " + data_dir() +
              "/test.tsv --shards 1 --readers 2 --heartbeat-interval 0.2 --progress-interval 0",
          logs.str("coordinator.log"));
  child s(bin + " shard --index 0" + member, logs.str("shard.log"));
  child r0(bin + " reader --index 0" + member, logs.str("reader0.log"));
  child r1(bin + " reader --index 1" + member, logs.str("reader1.log"));
  child t(bin + " trainer --threads 2" + member, logs.str("trainer.log"));
  const int rc = c.wait(std::chrono::seconds(240));
  INFO(c.output());
  INFO(t.output());
  REQUIRE(rc == 0);
  const auto j = last_json_line(c.output());
  CHECK(json_number(j, "examples") == 40000);
  CHECK(json_number(j, "examples_read") == 40000);
  // The members see the job end and exit 0 by themselves.
  CHECK(s.wait(std::chrono::seconds(20)) == 0);
  CHECK(r0.wait(std::chrono::seconds(20)) == 0);
  CHECK(r1.wait(std::chrono::seconds(20)) == 0);
  CHECK(t.wait(std::chrono::seconds(20)) == 0);
}

TEST_CASE("cluster: garbage and truncated and other-version frames are refused and the service keeps serving",
          "[integration]") {
  ss::test::temp_dir logs;
  const int port = free_port();
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(port);
  // A coordinator waiting for members that never come: a live service to attack.
  child c(bin + " coordinator --listen " + endpoint + " --train " + train_files(), logs.str("coordinator.log"));
  // Wait until it answers.
  ss::wire::envelope status;
  status.request_id = 1;
  status.message = ss::wire::status_request{};
  std::optional<ss::wire::envelope> first;
  for (int i = 0; i < 100 && !first; ++i) first = ask(endpoint, ss::wire::encode(status));
  REQUIRE(first.has_value());

  // Garbage (not Cap'n Proto), a truncated frame, and a frame of a future protocol version.
  const char junk[64] = "\x05\x00\x00\x00 definitely not a shadowsync message...";
  CHECK_FALSE(ask(endpoint, ss::wire::make_frame(junk, sizeof junk)).has_value());  // unanswerable
  auto good = ss::wire::encode(status);
  CHECK_FALSE(ask(endpoint, ss::wire::make_frame(good->data(), good->size() - 8)).has_value());
  ss::wire::envelope future = status;
  future.version = ss::wire::protocol_version + 1;
  future.request_id = 9;
  auto refusal = ask(endpoint, ss::wire::encode(future));
  REQUIRE(refusal.has_value());
  CHECK(refusal->request_id == 9);
  REQUIRE(std::holds_alternative<ss::wire::error_reply>(refusal->message));
  const auto& err = std::get<ss::wire::error_reply>(refusal->message);
  CHECK(err.code == ss::errc::version_mismatch);
  CHECK(err.message.find("protocol") != std::string::npos);

  // Still serving, and it counted what it refused.
  auto after = ask(endpoint, ss::wire::encode(status));
  REQUIRE(after.has_value());
  REQUIRE(std::holds_alternative<ss::wire::status_reply>(after->message));
  const auto json = std::get<ss::wire::status_reply>(after->message).json;
  INFO(json);
  CHECK(json_number(json, "frames_refused") >= 2);
  CHECK(json_number(json, "version_mismatches") == 1);
  CHECK(c.output().find("refused a frame") != std::string::npos);

  // SIGTERM: a clean exit.
  kill(c.pid, SIGTERM);
  CHECK(c.wait(std::chrono::seconds(20)) == 0);
}

TEST_CASE("cluster: a member of another protocol version is refused with a clear error", "[integration]") {
  ss::test::temp_dir logs;
  const int port = free_port();
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(port);
  child c(bin + " coordinator --listen " + endpoint + " --train " + train_files(), logs.str("coordinator.log"));
  ss::wire::envelope reg;
  reg.version = ss::wire::protocol_version + 1;
  reg.request_id = 3;
  reg.message = ss::wire::register_request{ss::wire::role::shard, "shard-0", 0, "tcp://127.0.0.1:1", 1};
  std::optional<ss::wire::envelope> reply;
  for (int i = 0; i < 100 && !reply; ++i) reply = ask(endpoint, ss::wire::encode(reg));
  REQUIRE(reply.has_value());
  REQUIRE(std::holds_alternative<ss::wire::error_reply>(reply->message));
  CHECK(std::get<ss::wire::error_reply>(reply->message).code == ss::errc::version_mismatch);
  kill(c.pid, SIGTERM);
  CHECK(c.wait(std::chrono::seconds(20)) == 0);
}
