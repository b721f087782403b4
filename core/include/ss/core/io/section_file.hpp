// The framing of shadowsync's binary files (the model file, the delta file): a 12-byte preamble
// (8-byte magic, u32 format version) and checksummed sections, written through PATH.tmp that
// replaces PATH only when the file is complete, and read with every checksum verified before
// anything in a section is used. Each format says what its sections hold.
//
//   section := head (20 bytes)  payload  u32 CRC32C of the payload
//   head    := tag (4 ASCII bytes)  u32 a  u64 b  u32 CRC32C of those 16 bytes
//
// The head has its own CRC so that a damaged length is reported as damage, never followed.
// Integers are little endian. Errors start with the file's prefix ("model file m.ssm: ").
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ss/core/status.hpp"

namespace ss::io {

inline constexpr std::size_t section_preamble_bytes = 12;
inline constexpr std::size_t section_head_bytes = 20;

// A section head: tag, two fields, the CRC32C of those 16 bytes.
void encode_section_head(unsigned char* out, const char* tag, std::uint32_t a, std::uint64_t b);
// A tag for messages: printable bytes as they are, others as \xNN.
std::string tag_text(const unsigned char* tag);

// Writes a sectioned file to PATH.tmp, renamed to PATH by commit(). After an error the writer is
// failed (later writes return that error) and PATH.tmp is removed; destroying an uncommitted writer
// removes it too. Keeps the CRC32C of every byte written (the whole file's, once committed).
class section_writer {
 public:
  section_writer() = default;
  ~section_writer();
  section_writer(section_writer&& other) noexcept;
  section_writer& operator=(section_writer&& other) noexcept;
  section_writer(const section_writer&) = delete;
  section_writer& operator=(const section_writer&) = delete;

  // Creates PATH.tmp (replacing a stale one) and writes the preamble. `prefix` starts every error.
  status open(const std::string& path, std::string prefix, const char* magic, std::uint32_t version);
  status write(const void* p, std::size_t n);
  // A whole section: head, payload (already encoded), payload CRC.
  status write_section(const char* tag, std::uint32_t a, std::uint64_t b, const void* payload, std::size_t n);
  // Cuts the file back to `bytes` (<= bytes()); the whole-file CRC is unknown from then on.
  status truncate_to(std::uint64_t bytes);
  // Flushes, fsyncs, closes, renames PATH.tmp to PATH and fsyncs the directory.
  status commit();
  // Closes and removes PATH.tmp, unless committed. Idempotent.
  void abort();
  // Fails the writer with `st` (removing PATH.tmp) and returns it.
  status fail(status st);

  std::uint64_t bytes() const { return bytes_; }
  std::uint32_t crc32c() const { return crc_; }  // of every byte written (unless truncated)
  bool failed() const { return !error_.is_ok(); }
  const status& error() const { return error_; }
  const std::string& prefix() const { return prefix_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string tmp_;
  std::string prefix_;
  std::FILE* f_ = nullptr;
  std::vector<char> io_buffer_;
  std::uint64_t bytes_ = 0;
  std::uint32_t crc_ = 0;
  status error_;
};

// Reads a sectioned file (or bytes in memory) front to back. Not thread-safe.
class section_reader {
 public:
  struct head {
    unsigned char tag[4] = {0, 0, 0, 0};
    std::uint32_t a = 0;
    std::uint64_t b = 0;
    std::uint64_t offset = 0;  // of the head in the file
    bool is(const char* t) const;
  };

  section_reader() = default;
  ~section_reader();
  section_reader(section_reader&& other) noexcept;
  section_reader& operator=(section_reader&& other) noexcept;
  section_reader(const section_reader&) = delete;
  section_reader& operator=(const section_reader&) = delete;

  // not_found, "is a directory" (invalid_argument) or io_error, each after `prefix`.
  status open_file(const std::string& path, std::string prefix);
  // Bytes that outlive the reader.
  void open_memory(const void* data, std::size_t size, std::string prefix);

  // The preamble: `magic` (named `magic_name` in errors, "SSMODEL") and a version from 1 to
  // `newest`; returns the version. `what` is "a shadowsync model file" for "not a shadowsync
  // model file (no SSMODEL magic)".
  result<std::uint32_t> read_preamble(const char* magic, const std::string& magic_name, const std::string& what,
                                      std::uint32_t newest);
  // Exactly n bytes; `where` completes "truncated after N bytes (...)".
  status read(void* p, std::size_t n, const std::string& where);
  // A section head, its CRC verified; `name` names the section in errors.
  result<head> read_head(const std::string& name);
  // A payload of n bytes and its CRC into payload(), verified.
  status read_payload(std::uint64_t n, const std::string& name, std::uint64_t offset);
  const unsigned char* payload() const { return buf_.data(); }

  status truncated(const std::string& where) const;
  status corrupt(const std::string& what) const;

  std::uint64_t size() const { return size_; }
  std::uint64_t pos() const { return pos_; }
  std::uint64_t left() const { return size_ - pos_; }
  // The CRC32C of every byte read so far, when track_crc() was called before the first read (it
  // costs a second pass over the bytes, which a model file's reader does not need).
  void track_crc() { tracking_ = true; }
  std::uint32_t crc32c() const { return crc_; }
  const std::string& prefix() const { return prefix_; }

 private:
  std::string prefix_;
  std::FILE* f_ = nullptr;
  const unsigned char* memory_ = nullptr;
  std::vector<char> io_buffer_;
  std::uint64_t size_ = 0;
  std::uint64_t pos_ = 0;
  std::uint32_t crc_ = 0;
  bool tracking_ = false;
  std::vector<unsigned char> buf_;
};

}  // namespace ss::io
