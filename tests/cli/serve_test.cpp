// shadowsync serve as a user runs it: a model trained and exported by `shadowsync train`, served
// by a real `shadowsync serve` process, asked over real sockets, its answers compared with
// `shadowsync predict --predictions` on the same rows; bad rows, oversized requests, many clients
// at once, /metrics, and SIGTERM.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_support.hpp"
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
  expect_exit(bin + " serve", 2, "shadowsync serve: --model is required");
  expect_exit(bin + " serve --model x.ssm --workers 0", 2, "--workers");
  expect_exit(bin + " serve --model x.ssm --listen nowhere", 2, "--listen nowhere: expected HOST:PORT");
  expect_exit(bin + " serve --model " + dir.str("missing.ssm") + " --listen 127.0.0.1:0", 1, "cannot load the model");
  write_file(dir.str("junk.ssm"), "not a model at all");
  expect_exit(bin + " serve --model " + dir.str("junk.ssm") + " --listen 127.0.0.1:0", 1, "cannot load the model");
  auto help = expect_exit(bin + " serve --help", 0, "--max-request-rows");
  CHECK(help.out.find("--max-request-bytes") != std::string::npos);
}
