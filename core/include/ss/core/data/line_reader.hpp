// Reads the lines of several text files in order, each plain or gzip-compressed (recognized by its
// magic bytes, not its name), with positions a run can resume from and byte counts for progress.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ss/core/status.hpp"

namespace ss::data {

// Where the next line starts. byte_offset counts uncompressed bytes from the start of the file, so
// a position is the same whether or not the file is compressed. The last two fields let seek()
// tell that the file is still the one the position was taken in (a file replaced or rewritten
// under the same name would resume at a meaningless offset); they are not part of the identity.
struct line_position {
  std::uint32_t file_index = 0;
  std::uint64_t byte_offset = 0;
  std::uint64_t line_number = 1;  // 1-based number of the line at byte_offset
  // CRC32C of the raw bytes of the line that ends at byte_offset (its line break included); 0:
  // not recorded (offset 0, an over-long line, or a position from an older version).
  std::uint32_t previous_line_crc = 0;
  // The file's on-disk size when it was read; 0: not recorded (or not a regular file).
  std::uint64_t file_size = 0;

  friend bool operator==(const line_position& a, const line_position& b) noexcept {
    return a.file_index == b.file_index && a.byte_offset == b.byte_offset && a.line_number == b.line_number;
  }
  friend bool operator!=(const line_position& a, const line_position& b) noexcept { return !(a == b); }
};

// Where the reading of a file begins when the reader reaches it: at its start; inside it, at a
// line (a job resumed on another reader count, whose earlier readers had read the lines before);
// or nowhere, when the file was read through already in this pass.
struct file_entry {
  bool skip = false;
  line_position at;  // its file_index is not used; byte_offset 0: the file's start
};

struct line_reader_options {
  std::size_t buffer_bytes = std::size_t{1} << 20;      // initial buffer; grows for long lines
  std::size_t max_line_bytes = std::size_t{16} << 20;  // longer lines are skipped and flagged
};

struct text_line {
  // Without the '\n' and a trailing '\r'. Valid until the next call to next() or seek().
  std::string_view text;
  std::string_view path;  // of the file it came from; valid while the reader lives
  std::uint32_t file_index = 0;
  std::uint64_t line_number = 0;  // 1-based, within its file
  std::uint64_t byte_offset = 0;  // of the line's first byte, uncompressed
  // The line was longer than max_line_bytes: text is empty, `length` says how long it was. The
  // reader skipped it without buffering it.
  bool too_long = false;
  std::uint64_t length = 0;  // bytes, without the line break
  // The file was entered past its first line (a seek or an entry point inside it): its header,
  // if it has one, is behind.
  bool past_header = false;
};

class line_reader {
 public:
  // Checks that every file exists and is not a directory (errc::not_found / errc::io_error, with
  // the path); files are opened one at a time as reading reaches them.
  // `entries`: none (every file from its start) or one per path, applied whenever reading
  // reaches the file, by next() or by a seek() to the file's start.
  static result<line_reader> open(std::vector<std::string> paths, line_reader_options options = {},
                                  std::vector<file_entry> entries = {});

  line_reader(line_reader&&) noexcept;
  line_reader& operator=(line_reader&&) noexcept;
  ~line_reader();

  // The next non-empty line: true with `out` filled, false at the end of the last file. Empty
  // lines (also "\r" alone) are skipped and counted. Errors (unreadable file, corrupt or truncated
  // gzip: errc::io_error / errc::corrupt, with the path) repeat until seek().
  result<bool> next(text_line& out);

  // Where the next line starts; pass it to seek() (also in a new reader) to resume there.
  line_position position() const noexcept;
  // Continues at `pos`. Plain files seek directly; gzip files are decompressed up to the offset.
  // The byte before the offset must be a line break (or the offset the end of the file). Where
  // `pos` recorded them, the file's size and the line before the offset must be as they were
  // (errc::corrupt, "... changed since it was read", otherwise).
  status seek(const line_position& pos);

  // On-disk (compressed) sizes of all inputs, and how much of them was read so far.
  std::uint64_t total_bytes() const noexcept { return total_bytes_; }
  std::uint64_t bytes_consumed() const noexcept;

  std::uint64_t empty_lines() const noexcept { return empty_lines_; }
  std::size_t file_count() const noexcept { return paths_.size(); }
  const std::string& path(std::size_t file_index) const { return paths_[file_index]; }

 private:
  class source;  // one open file, plain or gzip

  line_reader(std::vector<std::string> paths, std::vector<std::uint64_t> sizes, line_reader_options options,
              std::vector<file_entry> entries);
  status open_current();
  // Opens file_ where its entry says, through seek() (false: its entry skips it).
  result<bool> enter_current();
  status fill();  // reads more bytes after end_, compacting or growing the buffer first
  // Takes the CRC of the last consumed line while its bytes are still in the buffer.
  void keep_last_line_crc();
  // CRC32C of the bytes from the line break before `offset - 1` (exclusive) to `offset`, read
  // from the current file; 0 when that line is longer than max_line_bytes.
  result<std::uint32_t> crc_of_line_before(std::uint64_t offset) const;
  void finish_line(text_line& out, std::size_t length, std::size_t consumed);

  std::vector<std::string> paths_;
  std::vector<std::uint64_t> sizes_;
  line_reader_options options_;
  std::vector<file_entry> entries_;
  bool entered_inside_ = false;  // file_ was entered past its first line
  std::uint64_t total_bytes_ = 0;

  std::unique_ptr<source> source_;  // null between files
  std::uint32_t file_ = 0;          // the file being read (== paths_.size() at the end)
  bool eof_ = false;                // source_ has no more bytes
  std::vector<char> buffer_;
  std::size_t begin_ = 0;  // start of the unread bytes in buffer_
  std::size_t scan_ = 0;   // bytes in [begin_, scan_) are known to hold no '\n'
  std::size_t end_ = 0;    // end of the valid bytes in buffer_
  std::uint64_t offset_ = 0;       // uncompressed offset of buffer_[begin_]
  std::uint64_t line_number_ = 1;  // of the line starting at begin_
  // The line that ends at offset_: its bytes at buffer_[last_line_begin_, +last_line_bytes_)
  // while last_line_buffered_, else its CRC in last_line_crc_ (0: unknown).
  std::size_t last_line_begin_ = 0;
  std::size_t last_line_bytes_ = 0;
  bool last_line_buffered_ = false;
  std::uint32_t last_line_crc_ = 0;
  std::uint64_t skipped_ = 0;      // bytes of an over-long line already thrown away
  bool skipping_ = false;
  std::uint64_t empty_lines_ = 0;
  status error_;
};

// True when the file starts with the gzip magic bytes 0x1f 0x8b.
result<bool> is_gzip_file(const std::string& path);

}  // namespace ss::data
