#include "ss/core/data/line_reader.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "ss/core/checksum.hpp"

namespace ss::data {
namespace {

static_assert(sizeof(z_off_t) >= 8, "gzseek/gzoffset must take 64-bit offsets");
static_assert(sizeof(long) >= 8, "std::fseek must take 64-bit offsets");

}  // namespace

// One open input file. Plain files are read with stdio; gzip files with zlib's gz* API, which
// handles concatenated members and checks the CRC of each.
class line_reader::source {
 public:
  static result<std::unique_ptr<source>> open(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) return errno_status(path, "cannot open", errno);
    unsigned char magic[2] = {0, 0};
    const std::size_t n = std::fread(magic, 1, 2, f);
    if (std::ferror(f) != 0) {
      const int err = errno;
      std::fclose(f);
      return errno_status(path, "cannot read", err);
    }
    auto s = std::unique_ptr<source>(new source(path));
    if (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
      std::fclose(f);
      s->gz_ = gzopen(path.c_str(), "rb");
      if (s->gz_ == nullptr) return errno_status(path, "cannot open", errno);
      gzbuffer(s->gz_, 256 * 1024);  // zlib's default 8 KiB input buffer costs many syscalls
    } else {
      if (std::fseek(f, 0, SEEK_SET) != 0) {
        const int err = errno;
        std::fclose(f);
        return errno_status(path, "cannot seek", err);
      }
      s->file_ = f;
    }
    return s;
  }

  source(const source&) = delete;
  source& operator=(const source&) = delete;
  ~source() {
    if (file_ != nullptr) std::fclose(file_);
    if (gz_ != nullptr) gzclose_r(gz_);
  }

  bool gzip() const noexcept { return gz_ != nullptr; }

  // Up to n bytes; 0 at the end of the file.
  result<std::size_t> read(char* dst, std::size_t n) {
    if (file_ != nullptr) {
      const std::size_t got = std::fread(dst, 1, n, file_);
      if (got == 0 && std::ferror(file_) != 0) return errno_status(path_, "read failed", errno);
      return got;
    }
    const int got = gzread(gz_, dst, static_cast<unsigned>(std::min<std::size_t>(n, INT_MAX / 2)));
    if (got > 0) return static_cast<std::size_t>(got);
    int errnum = Z_OK;
    const char* msg = gzerror(gz_, &errnum);
    if (got == 0 && errnum == Z_OK) return std::size_t{0};
    if (errnum == Z_ERRNO) return errno_status(path_, "read failed", errno);
    if (errnum == Z_BUF_ERROR) {
      return status(errc::corrupt, path_ + ": truncated gzip stream (" + msg + ")");
    }
    return status(errc::corrupt, path_ + ": corrupt gzip stream (" + msg + ")");
  }

  // Only on a freshly opened source. gzip seeks by decompressing up to the offset.
  status seek(std::uint64_t offset) {
    if (file_ != nullptr) {
      if (std::fseek(file_, static_cast<long>(offset), SEEK_SET) != 0) {
        return errno_status(path_, "cannot seek", errno);
      }
      return status::ok();
    }
    if (gzseek(gz_, static_cast<z_off_t>(offset), SEEK_SET) < 0) {
      int errnum = Z_OK;
      const char* msg = gzerror(gz_, &errnum);
      return status(errc::corrupt, path_ + ": cannot seek in gzip stream (" + msg + ")");
    }
    return status::ok();
  }

  // Compressed bytes consumed so far (gzip only; plain files use the line offset).
  std::uint64_t raw_offset() const noexcept {
    const z_off_t off = gzoffset(gz_);
    return off < 0 ? 0 : static_cast<std::uint64_t>(off);
  }

 private:
  explicit source(std::string path) : path_(std::move(path)) {}

  std::string path_;
  std::FILE* file_ = nullptr;
  gzFile gz_ = nullptr;
};

result<bool> is_gzip_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return errno_status(path, "cannot open", errno);
  unsigned char magic[2] = {0, 0};
  const std::size_t n = std::fread(magic, 1, 2, f);
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (failed) return errno_status(path, "cannot read", err);
  return n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

result<line_reader> line_reader::open(std::vector<std::string> paths, line_reader_options options,
                                      std::vector<file_entry> entries) {
  if (paths.empty()) return status(errc::invalid_argument, "no input files");
  if (!entries.empty() && entries.size() != paths.size()) {
    return status(errc::invalid_argument, std::to_string(entries.size()) + " entry points for " +
                                              std::to_string(paths.size()) + " input files");
  }
  if (options.max_line_bytes == 0 || options.buffer_bytes == 0) {
    return status(errc::invalid_argument, "line reader buffer sizes must be positive");
  }
  std::vector<std::uint64_t> sizes;
  for (const auto& path : paths) {
    std::error_code ec;
    const auto st = std::filesystem::status(path, ec);
    if (!std::filesystem::exists(st)) return status(errc::not_found, path + ": no such file");
    if (std::filesystem::is_directory(st)) return status(errc::io_error, path + ": is a directory");
    // Fail now rather than hours into a run when reading reaches this file.
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) return errno_status(path, "cannot open", errno);
    std::fclose(f);
    const auto size = std::filesystem::is_regular_file(st) ? std::filesystem::file_size(path, ec) : 0;
    sizes.push_back(ec ? 0 : static_cast<std::uint64_t>(size));
  }
  return line_reader(std::move(paths), std::move(sizes), options, std::move(entries));
}

line_reader::line_reader(std::vector<std::string> paths, std::vector<std::uint64_t> sizes,
                         line_reader_options options, std::vector<file_entry> entries)
    : paths_(std::move(paths)), sizes_(std::move(sizes)), options_(options), entries_(std::move(entries)) {
  for (const auto s : sizes_) total_bytes_ += s;
}

line_reader::line_reader(line_reader&&) noexcept = default;
line_reader& line_reader::operator=(line_reader&&) noexcept = default;
line_reader::~line_reader() = default;

status line_reader::open_current() {
  auto s = source::open(paths_[file_]);
  if (!s) return s.error();
  source_ = std::move(*s);
  if (buffer_.empty()) buffer_.resize(std::min(options_.buffer_bytes, options_.max_line_bytes + 1));
  eof_ = false;
  begin_ = scan_ = end_ = 0;
  skipping_ = false;
  skipped_ = 0;
  last_line_buffered_ = false;
  last_line_crc_ = 0;
  entered_inside_ = false;
  return status::ok();
}

result<bool> line_reader::enter_current() {
  // A seek to the file's start goes where its entry point says (seek() applies them).
  SS_RETURN_IF_ERROR(seek({file_, 0, 1}));
  return source_ != nullptr;
}

void line_reader::keep_last_line_crc() {
  if (!last_line_buffered_) return;
  last_line_crc_ = crc32c(buffer_.data() + last_line_begin_, last_line_bytes_);
  last_line_buffered_ = false;
}

status line_reader::fill() {
  keep_last_line_crc();  // the compaction below moves the bytes away
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    scan_ -= begin_;
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) {
    // Only reached while the partial line is at most max_line_bytes long, so this stays bounded.
    buffer_.resize(std::min(buffer_.size() * 2, options_.max_line_bytes + 1));
  }
  auto got = source_->read(buffer_.data() + end_, buffer_.size() - end_);
  if (!got) return got.error();
  if (*got == 0) eof_ = true;
  end_ += *got;
  return status::ok();
}

result<bool> line_reader::next(text_line& out) {
  while (true) {
    if (!error_.is_ok()) return error_;
    if (!source_) {
      if (file_ >= paths_.size()) return false;
      auto entered = enter_current();
      if (!entered) {
        error_ = entered.error();
        return error_;
      }
      if (!*entered) {
        ++file_;
        continue;
      }
    }
    const char* buf = buffer_.data();
    const void* nl = scan_ < end_ ? std::memchr(buf + scan_, '\n', end_ - scan_) : nullptr;
    if (nl != nullptr || (eof_ && (begin_ < end_ || skipping_))) {
      // A complete line: up to the '\n', or the unterminated last line of the file.
      const std::size_t stop = nl != nullptr ? static_cast<std::size_t>(static_cast<const char*>(nl) - buf) : end_;
      const std::size_t length = stop - begin_;
      out.path = paths_[file_];
      out.file_index = file_;
      out.line_number = line_number_;
      out.byte_offset = offset_ - skipped_;
      out.length = skipped_ + length;
      out.too_long = skipping_ || length > options_.max_line_bytes;
      out.past_header = entered_inside_;
      out.text = {};
      if (!out.too_long) {
        out.text = std::string_view(buf + begin_, length);
        if (!out.text.empty() && out.text.back() == '\r') out.text.remove_suffix(1);
      }
      const std::size_t consumed = length + (nl != nullptr ? 1 : 0);
      // Its CRC is taken only if position() is asked for (once a batch) or the bytes must go.
      last_line_begin_ = begin_;
      last_line_bytes_ = consumed;
      last_line_buffered_ = !out.too_long;
      last_line_crc_ = 0;
      begin_ += consumed;
      scan_ = begin_;
      offset_ += consumed;
      ++line_number_;
      skipping_ = false;
      skipped_ = 0;
      if (!out.too_long && out.text.empty()) {
        ++empty_lines_;
        continue;
      }
      return true;
    }
    if (eof_) {  // nothing left in this file
      source_.reset();
      ++file_;
      offset_ = 0;
      line_number_ = 1;
      last_line_buffered_ = false;
      last_line_crc_ = 0;
      continue;
    }
    scan_ = end_;
    if (!skipping_ && end_ - begin_ > options_.max_line_bytes) skipping_ = true;
    if (skipping_) {
      // Throw the over-long line away as it streams by, keeping only its length.
      keep_last_line_crc();
      skipped_ += end_ - begin_;
      offset_ += end_ - begin_;
      begin_ = scan_ = end_ = 0;
    }
    if (status s = fill(); !s.is_ok()) {
      error_ = s;
      return s;
    }
  }
}

line_position line_reader::position() const noexcept {
  if (file_ >= paths_.size()) return {file_, 0, 1};
  const std::uint32_t crc =
      last_line_buffered_ ? crc32c(buffer_.data() + last_line_begin_, last_line_bytes_) : last_line_crc_;
  return {file_, offset_, line_number_, offset_ > 0 ? crc : 0, sizes_[file_]};
}

result<std::uint32_t> line_reader::crc_of_line_before(std::uint64_t offset) const {
  // Read a window that ends at the offset, wider until it holds the line's start.
  std::vector<char> bytes;
  for (std::uint64_t window = 4096;; window *= 8) {
    const std::uint64_t from = offset > window ? offset - window : 0;
    auto src = source::open(paths_[file_]);
    if (!src) return src.error();
    if (status s = (*src)->seek(from); !s.is_ok()) return s;
    bytes.resize(offset - from);
    std::size_t got = 0;
    while (got < bytes.size()) {
      auto n = (*src)->read(bytes.data() + got, bytes.size() - got);
      if (!n) return n.error();
      if (*n == 0) break;
      got += *n;
    }
    if (got < bytes.size()) {
      return status(errc::out_of_range, paths_[file_] + ": byte offset " + std::to_string(offset) +
                                            " is past the end of the file");
    }
    // The line's own break is its last byte; the one before it ends the previous line.
    const auto end = bytes.end() - 1;
    const auto prev = std::find(std::make_reverse_iterator(end), bytes.rend(), '\n');
    if (prev != bytes.rend()) {
      const std::size_t start = static_cast<std::size_t>(bytes.rend() - prev);
      return crc32c(bytes.data() + start, bytes.size() - start);
    }
    if (from == 0) return crc32c(bytes.data(), bytes.size());
    if (window > options_.max_line_bytes + 2) return std::uint32_t{0};  // over-long: never recorded
  }
}

std::uint64_t line_reader::bytes_consumed() const noexcept {
  std::uint64_t done = 0;
  for (std::size_t i = 0; i < file_ && i < sizes_.size(); ++i) done += sizes_[i];
  if (file_ < sizes_.size()) {
    const std::uint64_t current = source_ && source_->gzip() ? source_->raw_offset() : offset_;
    done += std::min(current, sizes_[file_]);
  }
  return done;
}

status line_reader::seek(const line_position& pos) {
  source_.reset();
  error_ = status::ok();
  eof_ = false;
  begin_ = scan_ = end_ = 0;
  skipping_ = false;
  skipped_ = 0;
  if (pos.file_index > paths_.size() || (pos.file_index == paths_.size() && pos.byte_offset != 0) ||
      pos.line_number == 0) {
    error_ = status(errc::out_of_range, "invalid position: file " + std::to_string(pos.file_index) +
                                            ", byte " + std::to_string(pos.byte_offset) + ", line " +
                                            std::to_string(pos.line_number));
    return error_;
  }
  file_ = pos.file_index;
  offset_ = 0;
  line_number_ = 1;
  if (file_ == paths_.size()) return status::ok();
  // The start of a file with an entry point is where that entry says (next() skips a skipped one).
  if (pos.byte_offset == 0 && file_ < entries_.size()) {
    if (entries_[file_].skip) return status::ok();
    if (entries_[file_].at.byte_offset > 0) {
      line_position at = entries_[file_].at;
      at.file_index = file_;
      return seek(at);
    }
  }
  if (pos.byte_offset > 0) {
    // Resuming in a file that is no longer the one read would train on a meaningless remainder.
    const std::string& path = paths_[file_];
    const std::string changed = path + " changed since it was read (";
    const std::string why = "); a training file must stay as it is while its job runs: new data needs a new job";
    if (pos.file_size != 0 && sizes_[file_] != pos.file_size) {
      error_ = status(errc::corrupt, changed + std::to_string(pos.file_size) + " bytes then, " +
                                         std::to_string(sizes_[file_]) + " now" + why);
      return error_;
    }
    if (pos.previous_line_crc != 0) {
      auto crc = crc_of_line_before(pos.byte_offset);
      if (!crc) {
        error_ = crc.error();
        return error_;
      }
      if (*crc != 0 && *crc != pos.previous_line_crc) {
        error_ = status(errc::corrupt, changed + "line " + std::to_string(pos.line_number - 1) +
                                           ", the last one before byte offset " + std::to_string(pos.byte_offset) +
                                           ", is not the one read" + why);
        return error_;
      }
    }
  }
  if (status s = open_current(); !s.is_ok()) {
    error_ = s;
    return s;
  }
  if (pos.byte_offset > 0) {
    // Land one byte early to check that the offset starts a line.
    if (status s = source_->seek(pos.byte_offset - 1); !s.is_ok()) {
      error_ = s;
      return s;
    }
    char probe[2] = {0, 0};
    std::size_t got = 0;
    while (got < 2) {
      auto n = source_->read(probe + got, 2 - got);
      if (!n) {
        error_ = n.error();
        return error_;
      }
      if (*n == 0) break;
      got += *n;
    }
    const std::string& path = paths_[file_];
    if (got == 0) {
      error_ = status(errc::out_of_range,
                      path + ": byte offset " + std::to_string(pos.byte_offset) + " is past the end of the file");
      return error_;
    }
    if (got == 2 && probe[0] != '\n') {
      error_ = status(errc::invalid_argument,
                      path + ": byte offset " + std::to_string(pos.byte_offset) + " is not the start of a line");
      return error_;
    }
    if (got == 2) {
      buffer_[0] = probe[1];
      end_ = 1;
    } else {
      eof_ = true;  // the offset is the end of the file
    }
  }
  offset_ = pos.byte_offset;
  line_number_ = pos.line_number;
  last_line_crc_ = pos.byte_offset > 0 ? pos.previous_line_crc : 0;
  entered_inside_ = pos.byte_offset > 0;
  return status::ok();
}

}  // namespace ss::data
