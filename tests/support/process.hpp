// Test helpers: run a command line in a real child process, capture its output and exit status,
// and read fields out of the JSON line it printed.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

namespace ss::test {

struct process_result {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

// Runs `command` with /bin/sh, stderr merged into stdout.
inline process_result run_command(const std::string& command) {
  process_result r;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = ::pclose(p);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

// The last line of `text` that starts with '{' (the result JSON line).
inline std::string last_json_line(const std::string& text) {
  std::string best;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start && text[start] == '{') best = text.substr(start, end - start);
    start = end + 1;
  }
  return best;
}

// The raw value of top-level-or-nested `"key":` in a JSON line (first occurrence): a number,
// true/false/null, or a string without its quotes.
inline std::string json_field(const std::string& json, const std::string& key) {
  const std::string needle = "\"" + key + "\":";
  const std::size_t at = json.find(needle);
  if (at == std::string::npos) return "";
  std::size_t v = at + needle.size();
  if (v < json.size() && json[v] == '"') {
    const std::size_t end = json.find('"', v + 1);
    return json.substr(v + 1, end - v - 1);
  }
  std::size_t end = json.find_first_of(",}", v);
  return json.substr(v, end - v);
}

inline double json_number(const std::string& json, const std::string& key) {
  const std::string v = json_field(json, key);
  return v.empty() || v == "null" ? std::nan("") : std::strtod(v.c_str(), nullptr);
}

// A fresh directory under the system temp dir, removed when the object dies.
class temp_dir {
 public:
  temp_dir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("shadowsync-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string str(const std::string& name = "") const { return (name.empty() ? path_ : path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace ss::test
