// The sectioned files' framing: writing through a temporary, reading with every CRC verified
// (ss/core/io/section_file.hpp).
#include "ss/core/io/section_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "ss/core/checksum.hpp"
#include "ss/core/io/byte_order.hpp"
#include "ss/core/io/durable_file.hpp"

namespace ss::io {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t io_buffer_bytes = std::size_t{1} << 20;

std::string errno_text() { return std::strerror(errno); }

}  // namespace

void encode_section_head(unsigned char* out, const char* tag, std::uint32_t a, std::uint64_t b) {
  std::memcpy(out, tag, 4);
  put_le(out + 4, a);
  put_le(out + 8, b);
  put_le(out + 16, ss::crc32c(out, 16));
}

std::string tag_text(const unsigned char* tag) {
  std::string s;
  for (int i = 0; i < 4; ++i) {
    const unsigned char c = tag[i];
    if (c >= 0x20 && c < 0x7f) {
      s += static_cast<char>(c);
    } else {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      s += b;
    }
  }
  return s;
}

// ============================================================================================
// section_writer

section_writer::~section_writer() { abort(); }

section_writer::section_writer(section_writer&& other) noexcept { *this = std::move(other); }

section_writer& section_writer::operator=(section_writer&& other) noexcept {
  if (this != &other) {
    abort();
    path_ = std::move(other.path_);
    tmp_ = std::move(other.tmp_);
    prefix_ = std::move(other.prefix_);
    f_ = std::exchange(other.f_, nullptr);
    io_buffer_ = std::move(other.io_buffer_);  // the FILE's buffer: moving a vector keeps its storage
    bytes_ = other.bytes_;
    crc_ = other.crc_;
    error_ = std::move(other.error_);
  }
  return *this;
}

status section_writer::open(const std::string& path, std::string prefix, const char* magic, std::uint32_t version) {
  path_ = path;
  tmp_ = path + ".tmp";
  prefix_ = std::move(prefix);
  f_ = std::fopen(tmp_.c_str(), "wb");
  if (f_ == nullptr) return fail({errc::io_error, prefix_ + "cannot create " + tmp_ + ": " + errno_text()});
  io_buffer_.resize(io_buffer_bytes);
  std::setvbuf(f_, io_buffer_.data(), _IOFBF, io_buffer_.size());
  unsigned char pre[section_preamble_bytes];
  std::memcpy(pre, magic, 8);
  put_le(pre + 8, version);
  return write(pre, sizeof pre);
}

void section_writer::abort() {
  if (f_ != nullptr) {
    std::fclose(f_);
    f_ = nullptr;
    std::error_code ec;
    fs::remove(tmp_, ec);
  }
}

status section_writer::fail(status st) {
  abort();
  error_ = st;
  return st;
}

status section_writer::write(const void* p, std::size_t n) {
  if (failed()) return error_;
  if (n > 0 && std::fwrite(p, 1, n, f_) != n)
    return fail({errc::io_error, prefix_ + "cannot write " + tmp_ + ": " + errno_text()});
  bytes_ += n;
  crc_ = ss::crc32c(p, n, crc_);
  return status::ok();
}

status section_writer::write_section(const char* tag, std::uint32_t a, std::uint64_t b, const void* payload,
                                     std::size_t n) {
  unsigned char head[section_head_bytes];
  encode_section_head(head, tag, a, b);
  SS_RETURN_IF_ERROR(write(head, sizeof head));
  SS_RETURN_IF_ERROR(write(payload, n));
  unsigned char crc[4];
  put_le(crc, ss::crc32c(payload, n));
  return write(crc, sizeof crc);
}

status section_writer::truncate_to(std::uint64_t bytes) {
  if (failed()) return error_;
  if (bytes > bytes_) return fail({errc::invalid_argument, prefix_ + "cannot truncate forward"});
  if (std::fflush(f_) != 0 || ::ftruncate(::fileno(f_), static_cast<off_t>(bytes)) != 0 ||
      std::fseek(f_, static_cast<long>(bytes), SEEK_SET) != 0)
    return fail({errc::io_error, prefix_ + "cannot rewind " + tmp_ + ": " + errno_text()});
  bytes_ = bytes;
  crc_ = 0;
  return status::ok();
}

status section_writer::commit() {
  if (failed()) return error_;
  if (std::fflush(f_) != 0) return fail({errc::io_error, prefix_ + "cannot write " + tmp_ + ": " + errno_text()});
  if (::fsync(::fileno(f_)) != 0) return fail({errc::io_error, prefix_ + "fsync of " + tmp_ + ": " + errno_text()});
  const int closed = std::fclose(f_);
  f_ = nullptr;
  std::error_code ec;
  if (closed != 0) {
    const std::string why = errno_text();
    fs::remove(tmp_, ec);
    return fail({errc::io_error, prefix_ + "cannot close " + tmp_ + ": " + why});
  }
  fs::rename(tmp_, path_, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(tmp_, ec);
    return fail({errc::io_error, prefix_ + "cannot rename " + tmp_ + " into place: " + why});
  }
  // The file's bytes are synced; its name is durable once the directory is.
  if (auto synced = sync_directory(fs::path(path_).parent_path()); !synced.is_ok())
    return fail({errc::io_error, prefix_ + synced.message()});
  return status::ok();
}

// ============================================================================================
// section_reader

bool section_reader::head::is(const char* t) const { return std::memcmp(tag, t, 4) == 0; }

section_reader::~section_reader() {
  if (f_ != nullptr) std::fclose(f_);
}

section_reader::section_reader(section_reader&& other) noexcept { *this = std::move(other); }

section_reader& section_reader::operator=(section_reader&& other) noexcept {
  if (this != &other) {
    if (f_ != nullptr) std::fclose(f_);
    prefix_ = std::move(other.prefix_);
    f_ = std::exchange(other.f_, nullptr);
    memory_ = std::exchange(other.memory_, nullptr);
    io_buffer_ = std::move(other.io_buffer_);
    size_ = other.size_;
    pos_ = other.pos_;
    crc_ = other.crc_;
    tracking_ = other.tracking_;
    buf_ = std::move(other.buf_);
  }
  return *this;
}

status section_reader::open_file(const std::string& path, std::string prefix) {
  prefix_ = std::move(prefix);
  std::error_code ec;
  if (!fs::exists(path, ec)) return {errc::not_found, prefix_ + "no such file"};
  if (fs::is_directory(path, ec)) return {errc::invalid_argument, prefix_ + "is a directory"};
  f_ = std::fopen(path.c_str(), "rb");
  if (f_ == nullptr) return {errc::io_error, prefix_ + "cannot open: " + errno_text()};
  io_buffer_.resize(io_buffer_bytes);
  std::setvbuf(f_, io_buffer_.data(), _IOFBF, io_buffer_.size());
  const auto n = fs::file_size(path, ec);
  if (ec) return {errc::io_error, prefix_ + "cannot stat: " + ec.message()};
  size_ = n;
  return status::ok();
}

void section_reader::open_memory(const void* data, std::size_t size, std::string prefix) {
  prefix_ = std::move(prefix);
  memory_ = static_cast<const unsigned char*>(data);
  size_ = size;
}

status section_reader::truncated(const std::string& where) const {
  return {errc::corrupt, prefix_ + "truncated after " + std::to_string(size_) + " bytes (" + where + ")"};
}

status section_reader::corrupt(const std::string& what) const { return {errc::corrupt, prefix_ + what}; }

status section_reader::read(void* p, std::size_t n, const std::string& where) {
  if (n > size_ - pos_) return truncated(where);
  if (n > 0) {
    if (memory_ != nullptr) {
      std::memcpy(p, memory_ + pos_, n);
    } else if (std::fread(p, 1, n, f_) != n) {
      if (std::ferror(f_) != 0) return {errc::io_error, prefix_ + "read failed: " + errno_text()};
      return truncated(where);  // the file shrank under us
    }
  }
  pos_ += n;
  if (tracking_) crc_ = ss::crc32c(p, n, crc_);
  return status::ok();
}

result<std::uint32_t> section_reader::read_preamble(const char* magic, const std::string& magic_name,
                                                    const std::string& what, std::uint32_t newest) {
  unsigned char pre[section_preamble_bytes];
  const status no_magic = corrupt("not " + what + " (no " + magic_name + " magic)");
  if (size_ < 8) {
    // Too short even for the magic: a truncated file if what is there matches it.
    const std::size_t got = static_cast<std::size_t>(size_);
    SS_RETURN_IF_ERROR(read(pre, got, "in the preamble"));
    if (std::memcmp(pre, magic, got) == 0) return truncated("in the preamble");
    return no_magic;
  }
  SS_RETURN_IF_ERROR(read(pre, 8, "in the preamble"));
  if (std::memcmp(pre, magic, 8) != 0) return no_magic;
  SS_RETURN_IF_ERROR(read(pre + 8, 4, "in the preamble's format version"));
  const auto version = get_le<std::uint32_t>(pre + 8);
  if (version > newest)
    return status(errc::version_mismatch, prefix_ + "written by format version " + std::to_string(version) +
                                               ", this build reads " + std::to_string(newest));
  if (version == 0)
    return corrupt("format version 0 is not a valid version (this build reads " + std::to_string(newest) + ")");
  return version;
}

result<section_reader::head> section_reader::read_head(const std::string& name) {
  head h;
  h.offset = pos_;
  unsigned char raw[section_head_bytes];
  SS_RETURN_IF_ERROR(read(raw, sizeof raw, "in " + name));
  std::memcpy(h.tag, raw, 4);
  h.a = get_le<std::uint32_t>(raw + 4);
  h.b = get_le<std::uint64_t>(raw + 8);
  if (ss::crc32c(raw, 16) != get_le<std::uint32_t>(raw + 16))
    return corrupt(name + " fails its checksum (its section head, at offset " + std::to_string(h.offset) + ")");
  return h;
}

status section_reader::read_payload(std::uint64_t n, const std::string& name, std::uint64_t offset) {
  if (n > left() || left() - n < 4)
    return truncated("in " + name + ", which needs " + std::to_string(n + 4) + " bytes from offset " +
                     std::to_string(pos_));
  buf_.resize(static_cast<std::size_t>(n) + 4);
  SS_RETURN_IF_ERROR(read(buf_.data(), buf_.size(), "in " + name));
  if (ss::crc32c(buf_.data(), static_cast<std::size_t>(n)) != get_le<std::uint32_t>(buf_.data() + n))
    return corrupt(name + " fails its checksum (section at offset " + std::to_string(offset) + ")");
  return status::ok();
}

}  // namespace ss::io
