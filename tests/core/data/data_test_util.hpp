// Helpers shared by the data tests: scratch directories, whole-file I/O, gzip via zlib.
#pragma once

#include <zlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ss/core/data/example_batch.hpp"

namespace ss::data::test {

namespace fs = std::filesystem;

inline std::string sample_path(const std::string& relative) {
  return std::string(SS_SAMPLE_DATA_DIR) + "/" + relative;
}

// A fresh directory under the system temp dir, removed with everything in it.
class temp_dir {
 public:
  temp_dir() {
    static std::atomic<unsigned> counter{0};
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    for (int attempt = 0;; ++attempt) {
      path_ = fs::temp_directory_path() /
              ("ss_data_test_" + std::to_string(stamp) + "_" + std::to_string(counter++) + "_" +
               std::to_string(attempt));
      if (fs::create_directory(path_)) break;
    }
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

inline std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

inline void write_gzip(const std::string& path, const std::string& bytes) {
  gzFile gz = gzopen(path.c_str(), "wb6");
  if (gz == nullptr) throw std::runtime_error("cannot create " + path);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const auto n = static_cast<unsigned>(std::min<std::size_t>(bytes.size() - done, 1 << 20));
    if (gzwrite(gz, bytes.data() + done, n) != static_cast<int>(n)) throw std::runtime_error("gzwrite");
    done += n;
  }
  if (gzclose_w(gz) != Z_OK) throw std::runtime_error("gzclose");
}

inline std::string read_gzip(const std::string& path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  if (gz == nullptr) throw std::runtime_error("cannot open " + path);
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(gz, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  gzclose_r(gz);
  if (n < 0) throw std::runtime_error("gzread");
  return out;
}

// Lines of a text, without the '\n' (a last line without one included).
inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

inline std::string join_lines(const std::vector<std::string>& lines, std::size_t first, std::size_t last) {
  std::string out;
  for (std::size_t i = first; i < last; ++i) out += lines[i] + "\n";
  return out;
}

inline bool same_examples(const example_batch& a, const example_batch& b) {
  return a.num_dense == b.num_dense && a.num_sparse == b.num_sparse && a.labels == b.labels &&
         a.dense == b.dense && a.ids == b.ids && a.offsets == b.offsets;
}

}  // namespace ss::data::test
