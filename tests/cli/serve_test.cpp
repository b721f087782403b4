// shadowsync serve as a user runs it: a model trained and exported by `shadowsync train`, served
// by a real `shadowsync serve` process, asked over real sockets, its answers compared with
// `shadowsync predict --predictions` on the same rows; bad rows, oversized requests, many clients
// at once, /metrics, and SIGTERM. And --publish-dir: the same model published as a base, a delta
// written while serve runs, its answers compared with the base plus the delta scored here.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_support.hpp"
#include "ss/core/model_file/model_file.hpp"
#include "ss/core/publish/delta_file.hpp"
#include "ss/core/publish/publication.hpp"
#include "ss/core/serving/request_rows.hpp"
#include "ss/core/serving/served_model.hpp"
#include "support/files.hpp"

using namespace ss::test;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string joined(const std::vector<std::string>& lines, std::size_t from, std::size_t to) {
  std::string out;
  for (std::size_t i = from; i < to; ++i) out += lines[i] + "\n";
  return out;
}

// A model trained and exported on generated data, and its test rows.
struct trained {
  temp_dir dir;
  std::string model;
  std::vector<std::string> rows;

  trained() {
    REQUIRE(run_command(bin + " gen-data --out " + dir.str() + " --rows 20000 --test-rows 2000 --seed 5").exit_code ==
            0);
    model = dir.str("m.ssm");
    auto train = run_command(bin + " train --train " + dir.str("train.tsv") + " --threads 1 --progress-interval 0" +
                             " --sparse-optimizer rowwise-adagrad --bottom-mlp 32-16 --top-mlp 32-1 --export " + model);
    INFO(train.out);
    REQUIRE(train.exit_code == 0);
    rows = lines_of(read_file(dir.str("test.tsv")));
    REQUIRE(rows.size() == 2000);
  }

  // What `shadowsync predict --predictions` writes for these rows: one "%.9g" line per row.
  std::vector<std::string> predict(const std::string& text) const {
    const std::string in = dir.str("rows.tsv"), out = dir.str("p.txt");
    write_file(in, text);
    auto p = run_command(bin + " predict --model " + model + " --test " + in + " --predictions " + out);
    INFO(p.out);
    REQUIRE(p.exit_code == 0);
    return lines_of(read_file(out));
  }
};

trained& shared_model() {
  static trained t;
  return t;
}

// `shadowsync serve` in the background; the port it bound is read from its log.
struct serve_process {
  pid_t pid = -1;
  std::string log;
  int port = 0;

  serve_process(const std::string& flags, const std::string& log_path) : log(log_path) {
    pid = fork();
    if (pid == 0) {
      const std::string command = "exec " + bin + " serve --listen 127.0.0.1:0 " + flags + " >" + log + " 2>&1";
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    const std::regex listening("listening on http://127\\.0\\.0\\.1:([0-9]+)");
    const auto until = std::chrono::steady_clock::now() + 30s;
    while (port == 0 && std::chrono::steady_clock::now() < until) {
      std::smatch m;
      const std::string text = output();
      if (std::regex_search(text, m, listening)) port = std::stoi(m[1]);
      else std::this_thread::sleep_for(20ms);
    }
    INFO(output());
    REQUIRE(port != 0);
  }
  std::string output() const {
    std::ifstream f(log);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
  // The exit status, or -1 when it has not exited within `limit`.
  int wait(std::chrono::seconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    int st = 0;
    while (std::chrono::steady_clock::now() < until) {
      if (waitpid(pid, &st, WNOHANG) == pid) {
        pid = -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      }
      std::this_thread::sleep_for(20ms);
    }
    return -1;
  }
  ~serve_process() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
};

struct http_answer {
  int status = 0;
  std::string body;
};

// One HTTP/1.1 request over a fresh connection (no Catch assertions: clients run on threads).
http_answer http(int port, const std::string& method, const std::string& path, const std::string& body = "",
                 const std::string& type = "text/plain") {
  http_answer a;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (fd >= 0) ::close(fd);
    return a;
  }
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: localhost\r\n";
  if (method == "POST") req += "Content-Type: " + type + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  req += "\r\n" + body;
  for (std::size_t off = 0; off < req.size();) {
    const ssize_t n = ::send(fd, req.data() + off, req.size() - off, MSG_NOSIGNAL);
    if (n <= 0) break;
    off += static_cast<std::size_t>(n);
  }
  std::string in;
  char buf[65536];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) in.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  if (in.rfind("HTTP/1.1 ", 0) == 0 && in.size() > 12) a.status = std::stoi(in.substr(9, 3));
  const auto end = in.find("\r\n\r\n");
  if (end != std::string::npos) a.body = in.substr(end + 4);
  return a;
}

// The numbers of "predictions":[...] as they were written.
std::vector<std::string> predictions(const std::string& body) {
  const auto open = body.find("\"predictions\":[");
  const auto close = body.find(']', open);
  std::vector<std::string> out;
  if (open == std::string::npos || close == std::string::npos) return out;
  std::string list = body.substr(open + 15, close - open - 15);
  std::stringstream in(list);
  for (std::string p; std::getline(in, p, ',');) out.push_back(p);
  return out;
}

std::string json_rows(const std::vector<std::string>& rows, std::size_t from, std::size_t to) {
  std::string out = "{\"rows\":[";
  for (std::size_t i = from; i < to; ++i) {
    std::string r = rows[i];
    for (std::size_t at = r.find('\t'); at != std::string::npos; at = r.find('\t', at + 2)) r.replace(at, 1, "\\t");
    out += (i > from ? ",\"" : "\"") + r + "\"";
  }
  return out + "]}";
}

std::string without_label(const std::string& row) { return row.substr(row.find('\t') + 1); }

}  // namespace

TEST_CASE("serve: predictions over HTTP equal predict's on the same rows, in any batching", "[serve]") {
  auto& t = shared_model();
  const std::vector<std::string> want = t.predict(joined(t.rows, 0, 600));
  REQUIRE(want.size() == 600);
  serve_process s("--model " + t.model + " --workers 3", t.dir.str("serve.log"));
  REQUIRE(http(s.port, "GET", "/healthz").status == 200);
  const auto until = std::chrono::steady_clock::now() + 30s;
  while (http(s.port, "GET", "/readyz").status != 200 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(20ms);
  REQUIRE(http(s.port, "GET", "/readyz").status == 200);

  // Requests of 1, 7, 100 and 492 rows, text with labels, text without, JSON.
  std::vector<std::string> text, unlabelled, json;
  for (const auto& [from, to] : std::vector<std::pair<std::size_t, std::size_t>>{{0, 1}, {1, 8}, {8, 108}, {108, 600}}) {
    const auto a = http(s.port, "POST", "/predict", joined(t.rows, from, to));
    INFO(a.body.substr(0, 300));
    REQUIRE(a.status == 200);
    CHECK(a.body.rfind("{\"version\":0,\"examples_trained\":", 0) == 0);
    for (auto& p : predictions(a.body)) text.push_back(p);
    std::string bare;
    for (std::size_t i = from; i < to; ++i) bare += without_label(t.rows[i]) + "\n";
    for (auto& p : predictions(http(s.port, "POST", "/predict", bare).body)) unlabelled.push_back(p);
    for (auto& p : predictions(http(s.port, "POST", "/predict", json_rows(t.rows, from, to), "application/json").body))
      json.push_back(p);
  }
  CHECK(text == want);
  CHECK(unlabelled == want);
  CHECK(json == want);

  // A bad row: 400 naming it, and nothing scored.
  std::string bad = t.rows[3];
  bad.replace(bad.find('\t') + 1, 0, "x");
  const auto refused = http(s.port, "POST", "/predict", t.rows[1] + "\n" + t.rows[2] + "\n" + bad + "\n" + t.rows[4]);
  CHECK(refused.status == 400);
  CHECK(refused.body.find("\"error\":\"row 3 (line 3): I1:") != std::string::npos);
  CHECK(refused.body.find("\"row\":3") != std::string::npos);
  CHECK(refused.body.find("\"reason\":\"dense_value\"") != std::string::npos);
  CHECK(refused.body.find("predictions") == std::string::npos);

  // Many clients at once: every answer right.
  std::atomic<int> wrong{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&, c] {
      for (int i = 0; i < 15; ++i) {
        const std::size_t from = static_cast<std::size_t>((c * 15 + i) * 4 % 580);
        const auto a = http(s.port, "POST", "/predict", joined(t.rows, from, from + 20));
        const auto got = predictions(a.body);
        if (a.status != 200 || got != std::vector<std::string>(want.begin() + static_cast<std::ptrdiff_t>(from),
                                                               want.begin() + static_cast<std::ptrdiff_t>(from + 20)))
          ++wrong;
      }
    });
  }
  for (auto& c : clients) c.join();
  CHECK(wrong.load() == 0);

  const auto metrics = http(s.port, "GET", "/metrics");
  REQUIRE(metrics.status == 200);
  CHECK(metrics.body.find("shadowsync_serve_rows_scored " + std::to_string(3 * 600 + 8 * 15 * 20) + "\n") !=
        std::string::npos);
  CHECK(metrics.body.find("shadowsync_serve_requests_refused{reason=\"bad_row\"} 1\n") != std::string::npos);
  CHECK(metrics.body.find("shadowsync_serve_model_version 0\n") != std::string::npos);
  CHECK(metrics.body.find("shadowsync_serve_request_seconds_count " + std::to_string(12 + 1 + 120) + "\n") !=
        std::string::npos);

  // SIGTERM: a clean stop.
  REQUIRE(kill(s.pid, SIGTERM) == 0);
  CHECK(s.wait(10s) == 0);
  CHECK(s.output().find("serve: stopped after 133 requests") != std::string::npos);
}

TEST_CASE("serve: oversized requests get 413, wrong methods and paths 405 and 404", "[serve]") {
  auto& t = shared_model();
  serve_process s("--model " + t.model + " --max-request-rows 10 --max-request-bytes 5000", t.dir.str("serve2.log"));
  const auto until = std::chrono::steady_clock::now() + 30s;
  while (http(s.port, "GET", "/readyz").status != 200 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(20ms);
  CHECK(http(s.port, "POST", "/predict", joined(t.rows, 0, 10)).status == 200);
  const auto rows = http(s.port, "POST", "/predict", joined(t.rows, 0, 11));
  CHECK(rows.status == 413);
  CHECK(rows.body.find("more than 10 rows in one request (--max-request-rows)") != std::string::npos);
  const auto bytes = http(s.port, "POST", "/predict", std::string(5001, '1'));
  CHECK(bytes.status == 413);
  CHECK(bytes.body.find("at most 5000 bytes") != std::string::npos);
  CHECK(http(s.port, "GET", "/predict").status == 405);
  CHECK(http(s.port, "POST", "/metrics", "x").status == 405);
  CHECK(http(s.port, "GET", "/other").status == 404);
  REQUIRE(kill(s.pid, SIGTERM) == 0);
  CHECK(s.wait(10s) == 0);
}

TEST_CASE("serve: bad flags exit 2, a missing or damaged model exits 1 with a message", "[serve]") {
  temp_dir dir;
  expect_exit(bin + " serve", 2, "shadowsync serve: give --model or --publish-dir (one of them");
  expect_exit(bin + " serve --model a.ssm --publish-dir d", 2, "give --model or --publish-dir (one of them");
  expect_exit(bin + " serve --model x.ssm --workers 0", 2, "--workers");
  expect_exit(bin + " serve --model x.ssm --listen nowhere", 2, "--listen nowhere: expected HOST:PORT");
  expect_exit(bin + " serve --model " + dir.str("missing.ssm") + " --listen 127.0.0.1:0", 1, "cannot load the model");
  write_file(dir.str("junk.ssm"), "not a model at all");
  expect_exit(bin + " serve --model " + dir.str("junk.ssm") + " --listen 127.0.0.1:0", 1, "cannot load the model");
  auto help = expect_exit(bin + " serve --help", 0, "--max-request-rows");
  CHECK(help.out.find("--max-request-bytes") != std::string::npos);
}

namespace {

// Publishes `t`'s model as base 1 of `dir` (as a training job would: data file, then manifest).
ss::publish::manifest publish_base(const trained& t, const std::filesystem::path& dir) {
  namespace publish = ss::publish;
  auto loaded = ss::model::load_model(t.model);
  REQUIRE(loaded.is_ok());
  publish::manifest m;
  m.job_id = "job-1";
  m.sequence = 1;
  m.kind = publish::publication_kind::base;
  m.base = 1;
  m.examples_trained = loaded->header.train_examples;
  m.wall_unix_ms = loaded->header.created_unix_ms;
  m.data_file = publish::data_file_name(1, m.kind);
  m.shape = {loaded->header.tables, loaded->header.dim, loaded->header.dense_params};
  m.config_digest = publish::model_config_digest(loaded->job);
  std::filesystem::copy_file(t.model, dir / m.data_file);
  auto d = publish::digest_file(dir / m.data_file);
  REQUIRE(d.is_ok());
  m.data_bytes = d->bytes;
  m.data_crc32c = d->crc32c;
  m.rows = loaded->stats.rows;
  REQUIRE(publish::write_manifest(dir, m).is_ok());
  return m;
}

// Delta `seq` on base 1: every dense parameter halved, and rows for the ids of `rows_text`'s first
// row in every table given new values.
ss::serving::model_update publish_delta(const trained& t, const std::filesystem::path& dir, std::uint64_t seq,
                                        const std::string& rows_text) {
  namespace publish = ss::publish;
  auto loaded = ss::model::load_model(t.model);
  REQUIRE(loaded.is_ok());
  ss::serving::model_update u;
  u.version = {seq, loaded->header.train_examples + seq, 1'700'000'000'000};
  std::vector<float> dense(loaded->dense->params(), loaded->dense->params() + loaded->dense->size());
  for (auto& x : dense) x *= 0.5f;
  u.dense = dense;
  auto schema = ss::model::model_schema(loaded->header, loaded->job);
  REQUIRE(schema.is_ok());
  auto reader = ss::serving::request_reader::create(*schema, loaded->setup.dlrm.num_dense, loaded->setup.dlrm.num_sparse);
  REQUIRE(reader.is_ok());
  ss::data::example_batch batch;
  REQUIRE_FALSE(reader->read_text(rows_text.substr(0, rows_text.find('\n') + 1), 1, batch));
  for (std::uint32_t table = 0; table < loaded->header.tables; ++table) {
    ss::serving::table_update tu;
    tu.table = table;
    tu.ids = {batch.ids[table]};  // one id per feature in Criteo rows
    tu.values.assign(loaded->header.dim, 0.05f * static_cast<float>(table % 5));
    u.tables.push_back(tu);
  }
  publish::manifest m;
  m.job_id = "job-1";
  m.sequence = seq;
  m.kind = publish::publication_kind::delta;
  m.base = 1;
  m.previous = seq - 1;
  m.examples_trained = u.version.examples_trained;
  m.wall_unix_ms = u.version.wall_unix_ms;
  m.data_file = publish::data_file_name(seq, m.kind);
  m.shape = {loaded->header.tables, loaded->header.dim, loaded->header.dense_params};
  m.config_digest = publish::model_config_digest(loaded->job);
  auto w = publish::delta_writer::open((dir / m.data_file).string(), {seq, 1, seq - 1, m.shape, publish::row_encoding::fp32});
  REQUIRE(w.is_ok());
  REQUIRE(w->write_dense(dense.data(), dense.size()).is_ok());
  for (const auto& tu : u.tables) REQUIRE(w->add_rows(tu.table, tu.ids.data(), tu.values.data(), 1).is_ok());
  auto stats = w->finish();
  REQUIRE(stats.is_ok());
  m.data_bytes = stats->bytes;
  m.data_crc32c = stats->crc32c;
  m.rows = stats->rows;
  REQUIRE(publish::write_manifest(dir, m).is_ok());
  return u;
}

// What a model file with `u` applied answers for `rows_text`, written as serve writes it.
std::vector<std::string> expected_with(const trained& t, const ss::serving::model_update& u, const std::string& rows_text) {
  auto loaded = ss::model::load_model(t.model);
  REQUIRE(loaded.is_ok());
  auto schema = ss::model::model_schema(loaded->header, loaded->job);
  REQUIRE(schema.is_ok());
  auto reader = ss::serving::request_reader::create(*schema, loaded->setup.dlrm.num_dense, loaded->setup.dlrm.num_sparse);
  REQUIRE(reader.is_ok());
  ss::serving::served_model m(std::move(*loaded));
  REQUIRE(m.apply(u).is_ok());
  ss::data::example_batch batch;
  REQUIRE_FALSE(reader->read_text(rows_text, 1000, batch));
  ss::serving::scoring_scratch scratch(m);
  std::vector<float> p;
  REQUIRE(m.score(batch, scratch, p).is_ok());
  std::vector<std::string> out;
  for (float x : p) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(x));
    out.push_back(buf);
  }
  return out;
}

bool wait_for(const std::function<bool()>& done, std::chrono::seconds limit = 30s) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

}  // namespace

TEST_CASE("serve: --publish-dir serves the newest publication and follows new deltas", "[serve]") {
  auto& t = shared_model();
  temp_dir pub;
  serve_process s("--publish-dir " + pub.str() + " --poll-interval 0.05", t.dir.str("serve3.log"));
  // No base yet: live, not ready, and it says why.
  const auto empty = http(s.port, "GET", "/readyz");
  CHECK(empty.status == 503);
  CHECK(empty.body.find("not ready: no usable base in " + pub.str()) != std::string::npos);
  CHECK(http(s.port, "POST", "/predict", t.rows[0]).status == 503);

  publish_base(t, pub.path());
  REQUIRE(wait_for([&] { return http(s.port, "GET", "/readyz").status == 200; }));
  CHECK(http(s.port, "GET", "/readyz").body == "ready: version 1\n");
  const std::string rows = joined(t.rows, 0, 50);
  const auto base = http(s.port, "POST", "/predict", rows);
  CHECK(base.body.rfind("{\"version\":1,", 0) == 0);
  CHECK(predictions(base.body) == t.predict(rows));

  // A delta while it serves: answers from version 2, equal to the base with the delta applied.
  const auto update = publish_delta(t, pub.path(), 2, rows);
  REQUIRE(wait_for([&] { return http(s.port, "POST", "/predict", rows).body.rfind("{\"version\":2,", 0) == 0; }));
  const auto after = http(s.port, "POST", "/predict", rows);
  const auto want = expected_with(t, update, rows);
  CHECK(predictions(after.body) == want);
  CHECK(want != predictions(base.body));

  // A gap (4 without 3): version 2 stays, and /readyz and /metrics say how far behind.
  publish_delta(t, pub.path(), 4, rows);
  REQUIRE(wait_for([&] { return http(s.port, "GET", "/readyz").body.find("behind") != std::string::npos; }));
  const auto ready = http(s.port, "GET", "/readyz");
  CHECK(ready.status == 200);
  CHECK(ready.body.rfind("ready: version 2, 2 publications behind the newest (4): ", 0) == 0);
  const auto metrics = http(s.port, "GET", "/metrics").body;
  CHECK(metrics.find("shadowsync_serve_publications_behind 2\n") != std::string::npos);
  CHECK(metrics.find("shadowsync_serve_follow_stopped{reason=\"gap\"} 1\n") != std::string::npos);
  CHECK(metrics.find("shadowsync_serve_publication_problems{reason=\"gap\"} 1\n") != std::string::npos);
  CHECK(metrics.find("shadowsync_serve_model_version 2\n") != std::string::npos);
  CHECK(metrics.find("shadowsync_serve_deltas_applied 1\n") != std::string::npos);
  CHECK(predictions(http(s.port, "POST", "/predict", rows).body) == want);

  REQUIRE(kill(s.pid, SIGTERM) == 0);
  CHECK(s.wait(10s) == 0);
  CHECK(s.output().find("serve: serving version 1 from " + pub.str()) != std::string::npos);
}

TEST_CASE("serve: following a local job's publications ends at the job's final model, as predict scores it",
          "[serve]") {
  auto& t = shared_model();
  temp_dir run;
  const std::string pub = run.str("pub"), final_model = run.str("final.ssm");
  // serve first, on a directory that does not exist yet; the job publishes into it as it trains.
  serve_process s("--publish-dir " + pub + " --poll-interval 0.05", run.str("serve.log"));
  CHECK(http(s.port, "GET", "/readyz").status == 503);
  auto job = run_command(bin + " local --train " + t.dir.str("train.tsv") +
                         " --shards 2 --trainers 2 --threads 1 --progress-interval 0 --publish-dir " + pub +
                         " --publish-interval 0.2 --export " + final_model);
  INFO(job.out);
  REQUIRE(job.exit_code == 0);
  const std::string rows = joined(t.rows, 0, 200);
  std::vector<std::string> want;
  {
    const std::string in = run.str("rows.tsv"), out = run.str("p.txt");
    write_file(in, rows);
    REQUIRE(run_command(bin + " predict --model " + final_model + " --test " + in + " --predictions " + out).exit_code ==
            0);
    want = lines_of(read_file(out));
  }
  // The last publication is the final model: once serve has it, it answers what predict does.
  REQUIRE(wait_for([&] { return http(s.port, "GET", "/readyz").body.find("ready: version") == 0 &&
                                http(s.port, "GET", "/metrics").body.find("publications_behind 0\n") != std::string::npos; }));
  const auto a = http(s.port, "POST", "/predict", rows);
  INFO(a.body.substr(0, 200));
  CHECK(predictions(a.body) == want);
  CHECK(want.size() == 200);
  const auto metrics = http(s.port, "GET", "/metrics").body;
  CHECK(metrics.find("shadowsync_serve_bases_loaded") != std::string::npos);
  REQUIRE(kill(s.pid, SIGTERM) == 0);
  CHECK(s.wait(10s) == 0);
}
