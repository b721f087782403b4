// Test helpers: a whole file read into a string, and a string written as a whole file.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace ss::test {

// The bytes of the file at `path` (none when it cannot be read).
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Writes `bytes` as the whole file at `path`.
inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace ss::test
