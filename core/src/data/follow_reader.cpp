#include "ss/core/data/follow_reader.hpp"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "ss/core/checksum.hpp"

namespace ss::data {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxNotices = 100;

struct file_stat {
  bool exists = false;
  bool regular = false;
  bool directory = false;
  std::uint64_t device = 0, inode = 0, size = 0;
};

file_stat of(const struct stat& st) {
  return {true, S_ISREG(st.st_mode), S_ISDIR(st.st_mode), static_cast<std::uint64_t>(st.st_dev),
          static_cast<std::uint64_t>(st.st_ino), static_cast<std::uint64_t>(st.st_size)};
}

result<file_stat> stat_path(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return file_stat{};
    return errno_status(path, "cannot stat", errno);
  }
  return of(st);
}

result<file_stat> stat_fd(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return errno_status(path, "cannot stat", errno);
  return of(st);
}

// Up to n bytes at `offset` (fewer at the end of the file).
result<std::size_t> read_at(int fd, char* dst, std::size_t n, std::uint64_t offset, const std::string& path) {
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, dst + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errno_status(path, "read failed", errno);
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  return got;
}

// CRC32C of the line that ends at `offset` (its break is the byte before it); 0 when that line is
// longer than max_line (its CRC was never recorded).
result<std::uint32_t> crc_of_line_before(int fd, std::uint64_t offset, std::size_t max_line, const std::string& path) {
  std::vector<char> bytes;
  for (std::uint64_t window = 4096;; window *= 8) {
    const std::uint64_t from = offset > window ? offset - window : 0;
    bytes.resize(offset - from);
    auto got = read_at(fd, bytes.data(), bytes.size(), from, path);
    if (!got) return got.error();
    if (*got < bytes.size()) return status(errc::out_of_range, path + ": byte offset " + std::to_string(offset) + " is past its end");
    // The line's own break is its last byte; the one before it ends the previous line.
    const auto end = bytes.end() - 1;
    const auto prev = std::find(std::make_reverse_iterator(end), bytes.rend(), '\n');
    if (prev != bytes.rend()) {
      const std::size_t start = static_cast<std::size_t>(bytes.rend() - prev);
      return crc32c(bytes.data() + start, bytes.size() - start);
    }
    if (from == 0) return crc32c(bytes.data(), bytes.size());
    if (window > max_line + 2) return std::uint32_t{0};
  }
}

}  // namespace

namespace detail {
owned_fd& owned_fd::operator=(owned_fd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}
void owned_fd::reset() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}
}  // namespace detail

bool follow_name_matches(const std::string& pattern, const std::string& name) {
  return ::fnmatch(pattern.c_str(), name.c_str(), FNM_PERIOD) == 0;
}

result<follow_reader> follow_reader::open(follow_source source, line_reader_options options) {
  if (source.path.empty()) return status(errc::invalid_argument, "no input to follow");
  if (options.max_line_bytes == 0 || options.buffer_bytes == 0)
    return status(errc::invalid_argument, "line reader buffer sizes must be positive");
  std::error_code ec;
  const bool dir = fs::is_directory(source.path, ec);
  if (dir && (source.pattern.empty() || source.pattern.find('/') != std::string::npos))
    return status(errc::invalid_argument,
                  "the pattern '" + source.pattern + "' of " + source.path + " must name files, without '/'");
  if (!dir && fs::path(source.path).filename().empty())
    return status(errc::invalid_argument, source.path + " is not a directory, and names no file to follow");
  return follow_reader(std::move(source), dir, options);
}

follow_reader::follow_reader(follow_source source, bool directory, line_reader_options options)
    : source_(std::move(source)), directory_(directory), options_(options) {
  if (directory_) {
    dir_ = source_.path;
  } else {
    const fs::path p(source_.path);
    dir_ = p.has_parent_path() ? p.parent_path().string() : std::string(".");
    base_ = p.filename().string();
  }
}

follow_reader::follow_reader(follow_reader&&) noexcept = default;
follow_reader& follow_reader::operator=(follow_reader&&) noexcept = default;
follow_reader::~follow_reader() = default;

std::string follow_reader::file_path(const std::string& name) const {
  return directory_ ? (fs::path(dir_) / name).string() : source_.path;
}

void follow_reader::notice(std::string text) {
  if (notices_.size() < kMaxNotices) {
    notices_.push_back(std::move(text));
  } else {
    ++notices_dropped_;
  }
}

std::vector<std::string> follow_reader::take_notices() {
  std::vector<std::string> out;
  out.swap(notices_);
  if (notices_dropped_ > 0) out.push_back(std::to_string(notices_dropped_) + " more such events were not listed");
  notices_dropped_ = 0;
  return out;
}

void follow_reader::reset_buffer() {
  begin_ = scan_ = end_ = 0;
  skipping_ = false;
  skipped_ = 0;
}

void follow_reader::close_file() {
  fd_.reset();
  reset_buffer();  // the bytes stay: the last line returned may point into them
  settling_ = false;
}

status follow_reader::open_at(const std::string& name, const std::string& path) {
  detail::owned_fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return errno_status(path, "cannot open", errno);
  auto st = stat_fd(fd.get(), path);
  if (!st) return st.error();
  if (!st->regular) return status(errc::invalid_argument, path + ": not a regular file; only files can be followed");
  if (directory_ && !name_.empty()) passed_.insert(name_);
  fd_ = std::move(fd);
  name_ = name;
  path_ = path;
  device_ = st->device;
  inode_ = st->inode;
  ++serial_;
  ++counters_.files;
  opened_any_ = true;
  reset_buffer();
  offset_ = 0;
  line_number_ = 1;
  previous_crc_ = 0;
  gzip_checked_ = false;
  settling_ = false;
  replaced_said_ = false;
  if (buffer_.empty()) buffer_.resize(std::min(options_.buffer_bytes, options_.max_line_bytes + 1));
  return status::ok();
}

status follow_reader::scan_directory() {
  std::vector<std::pair<std::string, std::uint64_t>> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (!follow_name_matches(source_.pattern, name) || !it->is_regular_file(type_ec)) continue;
    if (name_.empty() || name > name_) {
      std::error_code size_ec;
      const auto size = it->file_size(size_ec);
      found.emplace_back(name, size_ec ? 0 : static_cast<std::uint64_t>(size));
    } else if (name != name_ && passed_.insert(name).second) {
      ++counters_.files_refused;
      notice(file_path(name) + " appeared after " + file_path(name_) +
             " was reached, and its name sorts before that one: it is not read (a followed directory is read in "
             "name order; name a new file after the files before it)");
    }
  }
  if (ec) return status(errc::io_error, dir_ + ": cannot list the directory: " + ec.message());
  std::sort(found.begin(), found.end());
  later_ = std::move(found);
  return status::ok();
}

result<bool> follow_reader::open_next() {
  if (!directory_) {
    auto st = stat_path(source_.path);
    if (!st) return st.error();
    if (st->exists && st->directory)
      return status(errc::invalid_argument, source_.path + " is a directory now; it was followed as a file");
    if (st->exists) {
      missing_said_ = false;
      status opened = open_at(base_, source_.path);
      if (opened.code() != errc::not_found) {
        if (!opened.is_ok()) return opened;
        return true;
      }
    }
    if (!missing_said_) notice("waiting for " + source_.path + " to appear");
    missing_said_ = true;
    return false;
  }
  if (later_.empty()) SS_RETURN_IF_ERROR(scan_directory());
  while (!later_.empty()) {
    const std::string name = later_.front().first;
    later_.erase(later_.begin());
    status opened = open_at(name, file_path(name));
    if (opened.code() == errc::not_found) continue;  // removed meanwhile
    if (!opened.is_ok()) return opened;
    return true;
  }
  return false;
}

result<std::size_t> follow_reader::fill() {
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    scan_ -= begin_;
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) buffer_.resize(std::min(buffer_.size() * 2, options_.max_line_bytes + 1));
  ssize_t n = 0;
  do {
    n = ::read(fd_.get(), buffer_.data() + end_, buffer_.size() - end_);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return errno_status(path_, "read failed", errno);
  end_ += static_cast<std::size_t>(n);
  if (!gzip_checked_ && (offset_ > 0 || end_ >= 2)) {
    gzip_checked_ = true;
    if (offset_ == 0 && static_cast<unsigned char>(buffer_[0]) == 0x1f && static_cast<unsigned char>(buffer_[1]) == 0x8b)
      return status(errc::invalid_argument, path_ + ": a gzip file cannot be followed (a compressed stream cannot be "
                                                    "read while it is written); follow plain text");
  }
  return static_cast<std::size_t>(n);
}

bool follow_reader::take_line(text_line& out, std::size_t stop, bool has_break) {
  const char* buf = buffer_.data();
  const std::size_t length = stop - begin_;
  if (line_serial_ != serial_ || line_path_.empty()) {
    line_path_ = path_;
    line_serial_ = serial_;
  }
  out.path = line_path_;
  out.file_index = serial_;
  out.line_number = line_number_;
  out.byte_offset = offset_ - skipped_;
  out.length = skipped_ + length;
  out.too_long = skipping_ || length > options_.max_line_bytes;
  out.text = {};
  if (!out.too_long) {
    out.text = std::string_view(buf + begin_, length);
    if (!out.text.empty() && out.text.back() == '\r') out.text.remove_suffix(1);
  }
  const std::size_t consumed = length + (has_break ? 1 : 0);
  previous_crc_ = out.too_long ? 0 : crc32c(buf + begin_, consumed);
  begin_ += consumed;
  scan_ = begin_;
  offset_ += consumed;
  ++line_number_;
  skipping_ = false;
  skipped_ = 0;
  if (!out.too_long && out.text.empty()) {
    ++counters_.empty_lines;
    return false;
  }
  ++counters_.lines;
  return true;
}

status follow_reader::restart_file(const std::string& why) {
  notice(why);
  ++counters_.truncations;
  if (::lseek(fd_.get(), 0, SEEK_SET) < 0) return errno_status(path_, "cannot seek", errno);
  reset_buffer();
  offset_ = 0;
  line_number_ = 1;
  previous_crc_ = 0;
  gzip_checked_ = false;
  settling_ = false;
  ++serial_;  // its first line is a header again
  return status::ok();
}

result<bool> follow_reader::name_holds_another_file() {
  auto st = stat_path(source_.path);
  if (!st) return st.error();
  if (!st->exists) {
    if (!missing_said_)
      notice(source_.path + " is gone (rotated or deleted): the file read so far is followed until a new file takes "
                            "its name");
    missing_said_ = true;
    return false;
  }
  missing_said_ = false;
  return st->device != device_ || st->inode != inode_;
}

result<follow_reader::at_end> follow_reader::check_end() {
  auto st = stat_fd(fd_.get(), path_);
  if (!st) return st.error();
  const std::uint64_t read_to = offset_ + (end_ - begin_);
  if (st->size < read_to) {
    SS_RETURN_IF_ERROR(restart_file(path_ + " was truncated to " + std::to_string(st->size) + " bytes, below the " +
                                    std::to_string(read_to) + " read (copytruncate?): reading it again from its start"));
    return at_end::again;
  }
  if (directory_) {
    if (!replaced_said_) {
      auto now = stat_path(path_);
      if (!now) return now.error();
      if (now->exists && (now->device != device_ || now->inode != inode_)) {
        replaced_said_ = true;
        ++counters_.files_refused;
        notice(path_ + " was replaced by another file while it was read: the new file under that name is not read "
                       "(a followed directory's files are read once each, in name order)");
      }
    }
    SS_RETURN_IF_ERROR(scan_directory());
    // A file is complete once a file with a later name exists.
    return later_.empty() ? at_end::wait : at_end::finish;
  }
  auto rotated = name_holds_another_file();
  if (!rotated) return rotated.error();
  if (!*rotated) {
    settling_ = false;
    return at_end::wait;
  }
  // Rotated: the old file is finished once it stopped growing (a writer may not have reopened yet).
  if (settling_ && settle_size_ == st->size) {
    ++counters_.rotations;
    notice(source_.path + " was rotated: its previous file was read to its end (" + std::to_string(line_number_ - 1) +
           " lines); reading the new file from its start");
    return at_end::finish;
  }
  settling_ = true;
  settle_size_ = st->size;
  return at_end::wait;
}

result<bool> follow_reader::next(text_line& out) {
  while (true) {
    if (!error_.is_ok()) return error_;
    if (!fd_) {
      auto opened = open_next();
      if (!opened) {
        error_ = opened.error();
        return error_;
      }
      if (!*opened) {
        ++counters_.waits;
        return false;
      }
    }
    const char* buf = buffer_.data();
    const void* nl = scan_ < end_ ? std::memchr(buf + scan_, '\n', end_ - scan_) : nullptr;
    if (nl != nullptr) {
      if (take_line(out, static_cast<std::size_t>(static_cast<const char*>(nl) - buf), true)) return true;
      continue;
    }
    scan_ = end_;
    if (!skipping_ && end_ - begin_ > options_.max_line_bytes) skipping_ = true;
    if (skipping_) {
      // Throw the over-long line away as it streams by, keeping only its length.
      skipped_ += end_ - begin_;
      offset_ += end_ - begin_;
      begin_ = scan_ = end_ = 0;
    }
    auto got = fill();
    if (!got) {
      error_ = got.error();
      return error_;
    }
    if (*got > 0) continue;
    auto end = check_end();
    if (!end) {
      error_ = end.error();
      return error_;
    }
    if (*end == at_end::wait) {
      ++counters_.waits;
      return false;
    }
    if (*end == at_end::again) continue;
    // Finished: its last line counts even without a line break; then the next file.
    const bool returned = (begin_ < end_ || skipping_) && take_line(out, end_, false);
    close_file();
    if (returned) return true;
  }
}

follow_position follow_reader::position() const {
  follow_position p;
  if (!fd_) {
    p.file = directory_ ? name_ : (opened_any_ ? base_ : std::string());
    return p;
  }
  p.file = name_;
  p.device = device_;
  p.inode = inode_;
  p.byte_offset = offset_ - skipped_;
  p.line_number = line_number_;
  p.previous_line_crc = previous_crc_;
  return p;
}

std::optional<std::uint32_t> follow_reader::file_in_progress() const noexcept {
  if (fd_ && offset_ > 0) return serial_;
  return std::nullopt;
}

std::uint64_t follow_reader::bytes_behind() const {
  std::uint64_t behind = 0;
  for (const auto& [name, size] : later_) behind += size;
  if (fd_) {
    struct stat st {};
    const std::uint64_t at = offset_ - skipped_;
    if (::fstat(fd_.get(), &st) == 0 && static_cast<std::uint64_t>(st.st_size) > at)
      behind += static_cast<std::uint64_t>(st.st_size) - at;
  } else if (!directory_) {
    struct stat st {};
    if (::stat(source_.path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) behind += static_cast<std::uint64_t>(st.st_size);
  }
  return behind;
}

result<std::string> follow_reader::find_by_identity(std::uint64_t device, std::uint64_t inode) const {
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    struct stat st {};
    const std::string path = it->path().string();
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_dev) == device &&
        static_cast<std::uint64_t>(st.st_ino) == inode)
      return path;
  }
  if (ec) return status(errc::io_error, dir_ + ": cannot list the directory: " + ec.message());
  return std::string();
}

status follow_reader::seek(const follow_position& pos) {
  close_file();
  later_.clear();
  passed_.clear();
  missing_said_ = false;
  error_ = seek_to(pos);
  return error_;
}

status follow_reader::seek_to(const follow_position& pos) {
  if (pos.file.find('/') != std::string::npos || (!directory_ && !pos.file.empty() && pos.file != base_))
    return status(errc::invalid_argument,
                  "the position names the file '" + pos.file + "', which is not of the followed input " + source_.path);
  if (pos.line_number == 0) return status(errc::out_of_range, "invalid position: line 0");
  name_ = directory_ ? pos.file : base_;
  opened_any_ = !pos.file.empty();
  if (directory_ && !pos.file.empty()) {
    // The names up to the position's were read (or refused) before.
    std::error_code ec;
    for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name <= pos.file && follow_name_matches(source_.pattern, name)) passed_.insert(name);
    }
    if (ec) return status(errc::io_error, dir_ + ": cannot list the directory: " + ec.message());
  }
  if (pos.file.empty() || pos.inode == 0) return status::ok();  // the next file, from its start
  // The position's file: under its name, or rotated away while no reader ran (found by identity).
  std::string path = file_path(pos.file);
  auto st = stat_path(path);
  if (!st) return st.error();
  if (!st->exists || st->device != pos.device || st->inode != pos.inode) {
    auto found = find_by_identity(pos.device, pos.inode);
    if (!found) return found.error();
    if (found->empty()) {
      ++counters_.tails_lost;
      notice("the file " + path + " was read to byte " + std::to_string(pos.byte_offset) + " (line " +
             std::to_string(pos.line_number) + ") when its reader stopped, and is gone now (rotated away and removed, "
             "or deleted): the rows after that position in it are lost; going on with " +
             (directory_ ? std::string("the files after it") : "the file now named " + source_.path + " from its start"));
      return status::ok();
    }
    if (!directory_)
      notice(source_.path + " was rotated while no reader ran: resuming in its previous file, now " + *found +
             ", at byte " + std::to_string(pos.byte_offset) + "; then the new file from its start");
    path = *found;
  }
  SS_RETURN_IF_ERROR(open_at(name_, path));
  return seek_in_open_file(pos);
}

status follow_reader::seek_in_open_file(const follow_position& pos) {
  auto st = stat_fd(fd_.get(), path_);
  if (!st) return st.error();
  if (st->size < pos.byte_offset)
    return restart_file(path_ + " is " + std::to_string(st->size) + " bytes, shorter than the position (byte " +
                        std::to_string(pos.byte_offset) + "): truncated while no reader ran; reading it again from its start");
  if (pos.byte_offset > 0) {
    // The line before the position must be the one read (else the file was rewritten meanwhile).
    char last = 0;
    auto got = read_at(fd_.get(), &last, 1, pos.byte_offset - 1, path_);
    if (!got) return got.error();
    bool same = *got == 1 && last == '\n';
    if (same && pos.previous_line_crc != 0) {
      auto crc = crc_of_line_before(fd_.get(), pos.byte_offset, options_.max_line_bytes, path_);
      if (!crc) return crc.error();
      same = *crc == 0 || *crc == pos.previous_line_crc;
    }
    if (!same)
      return restart_file(path_ + ": the line before byte " + std::to_string(pos.byte_offset) + " (line " +
                          std::to_string(pos.line_number - 1) + ") is not the one read: the file was rewritten while no "
                          "reader ran (truncated and written past the position again?); reading it again from its start");
  }
  if (::lseek(fd_.get(), static_cast<off_t>(pos.byte_offset), SEEK_SET) < 0)
    return errno_status(path_, "cannot seek", errno);
  offset_ = pos.byte_offset;
  line_number_ = pos.line_number;
  previous_crc_ = pos.previous_line_crc;
  gzip_checked_ = pos.byte_offset > 0;
  return status::ok();
}

}  // namespace ss::data
