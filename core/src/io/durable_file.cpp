#include "ss/core/io/durable_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace ss::io {
namespace fs = std::filesystem;

status write_file_synced(const fs::path& path, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return {errc::io_error, path.string() + ": " + std::strerror(errno)};
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string why = std::strerror(errno);
      ::close(fd);
      return {errc::io_error, path.string() + ": " + why};
    }
    done += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  const std::string why = synced ? "" : std::strerror(errno);
  ::close(fd);
  if (!synced) return {errc::io_error, path.string() + ": fsync: " + why};
  return status::ok();
}

namespace {
status sync_path(const fs::path& p, int flags) {
  const int fd = ::open(p.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return {errc::io_error, p.string() + ": " + std::strerror(errno)};
  const bool synced = ::fsync(fd) == 0;
  const std::string why = synced ? "" : std::strerror(errno);
  ::close(fd);
  if (!synced) return {errc::io_error, p.string() + ": fsync: " + why};
  return status::ok();
}
}  // namespace

status sync_file(const fs::path& path) { return sync_path(path, O_RDONLY); }

status sync_directory(const fs::path& dir) { return sync_path(dir.empty() ? fs::path(".") : dir, O_RDONLY | O_DIRECTORY); }

status replace_file(const fs::path& path, const std::string& bytes) {
  fs::path tmp = path;
  tmp += ".tmp";
  SS_RETURN_IF_ERROR(write_file_synced(tmp, bytes));
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return {errc::io_error, "rename " + tmp.string() + " to " + path.filename().string() + ": " + ec.message()};
  }
  return sync_directory(path.parent_path());
}

result<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return status(errc::not_found, path.string() + " is missing");
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return status(errc::io_error, path.string() + ": read failed");
  return s.str();
}

}  // namespace ss::io
