// Follows one input as it grows, with `tail -F` semantics: lines appear as they are written (a
// last line without its line break waits for it), and so does a file's rotation and truncation.
// The input is a file, or a directory whose files matching a pattern are read in name order.
//
// - Appended: read as it comes; at the end of the file the reader waits (next() says "no line
//   now") and reads on when the file grows.
// - Rotated (the name now points at another file: renamed away, a new file created under the
//   name): the old file is read to its end through the descriptor still open, once it stopped
//   growing (one check later: a writer that has not reopened yet still appends to it), its last
//   line even without a line break; then the new file from its start. Counted (rotations).
// - Truncated (copytruncate: the file is shorter than the position): said, counted (truncations),
//   and read again from its start.
// - A directory: its files whose names match the pattern (names starting with '.' never match),
//   in name order; a file is finished once a file with a later name exists (its last line is read
//   even without a line break), and the last file is followed as it grows. A file that appears
//   with a name sorting before the one being read is never read: said once and counted
//   (files_refused), never skipped silently or read out of order.
// Plain text only: a gzip stream cannot be read while it is written, so a followed gzip file is an
// error naming it.
//
// A position names its file by name and identity (device, inode), plus the offset, the line
// number and the CRC32C of the line before the offset, so that a new reader (another process)
// resumes exactly there: in the same file under its name; after a rotation while no reader ran, in
// the rotated file found among its directory's entries by identity (its rest is read, then the
// new file); a file that was truncated or rewritten meanwhile is read again from its start (said
// and counted); a file that is gone is said and counted (tails_lost).
//
// Time is the caller's: the reader never sleeps, it answers "no line now", and events worth a log
// line are queued as notices for the caller to log (take_notices()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ss/core/data/line_reader.hpp"
#include "ss/core/status.hpp"

namespace ss::data {

namespace detail {
// An open file descriptor, closed when dropped; movable.
class owned_fd {
 public:
  owned_fd() = default;
  explicit owned_fd(int fd) noexcept : fd_(fd) {}
  owned_fd(owned_fd&& other) noexcept : fd_(other.release()) {}
  owned_fd& operator=(owned_fd&& other) noexcept;
  owned_fd(const owned_fd&) = delete;
  owned_fd& operator=(const owned_fd&) = delete;
  ~owned_fd() { reset(); }
  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  int release() noexcept {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset() noexcept;

 private:
  int fd_ = -1;
};
}  // namespace detail

struct follow_source {
  std::string path;           // a file (it may not exist yet), or a directory
  std::string pattern = "*";  // in a directory: the names read (shell pattern, fnmatch with FNM_PERIOD)
};

// Where the next line of a followed input starts.
struct follow_position {
  // The file's name in its directory (a followed file: the followed name, whichever file it holds
  // now); "" = nothing read yet.
  std::string file;
  // The file read (stat's st_dev and st_ino). inode 0: no file is open at the position: the next
  // one is read from its start (a followed file: the file its name holds; a directory: the first
  // name after `file`).
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::uint64_t byte_offset = 0;
  std::uint64_t line_number = 1;        // 1-based number of the line at byte_offset
  std::uint32_t previous_line_crc = 0;  // CRC32C of the line ending at byte_offset (its break included)

  friend bool operator==(const follow_position& a, const follow_position& b) noexcept {
    return a.file == b.file && a.device == b.device && a.inode == b.inode && a.byte_offset == b.byte_offset &&
           a.line_number == b.line_number && a.previous_line_crc == b.previous_line_crc;
  }
  friend bool operator!=(const follow_position& a, const follow_position& b) noexcept { return !(a == b); }
};

struct follow_counters {
  std::uint64_t lines = 0;          // non-empty lines returned
  std::uint64_t empty_lines = 0;    // skipped, not rows
  std::uint64_t waits = 0;          // next() found no complete line
  std::uint64_t files = 0;          // files opened
  std::uint64_t rotations = 0;      // a followed name came to hold another file
  std::uint64_t truncations = 0;    // a file shorter than the position (or rewritten): read again from its start
  std::uint64_t files_refused = 0;  // directory: files whose names sort before the one being read
  std::uint64_t tails_lost = 0;     // resuming: the file of the position was gone, its rest unread
};

class follow_reader {
 public:
  // A directory is followed as a directory; anything else (also a path that does not exist yet,
  // waited for) as a file. Errors: an empty path or pattern, a pattern with '/'.
  static result<follow_reader> open(follow_source source, line_reader_options options = {});

  follow_reader(follow_reader&&) noexcept;
  follow_reader& operator=(follow_reader&&) noexcept;
  ~follow_reader();

  // The next non-empty complete line: true with `out` filled (text and path valid until the next
  // call); false: none now (the input may grow). Errors (an unreadable file, a gzip file) name the
  // file and repeat until seek().
  result<bool> next(text_line& out);

  // Where the next line starts; seek() (also in a new reader of the same source) resumes there.
  follow_position position() const;
  // Resumes at `pos`, as the header says. Errors: a position of another input (a file name with
  // '/', another followed name), an unreadable file.
  status seek(const follow_position& pos);

  // Input bytes not read yet: the rest of the open file, and the later files of a directory (as
  // of the last look at it). Asks the file system.
  std::uint64_t bytes_behind() const;
  const follow_counters& counters() const noexcept { return counters_; }
  // Events worth a log line (a rotation, a truncation, a refused file), oldest first; at most 100
  // are kept between two calls.
  std::vector<std::string> take_notices();
  bool directory() const noexcept { return directory_; }
  const std::string& path() const noexcept { return source_.path; }
  // The file_index of the lines to come when the position is past the first line of its file
  // (whose header, with a header schema, is then behind it); nullopt when the next line starts a file.
  std::optional<std::uint32_t> file_in_progress() const noexcept;
  // The open file's path ("" between files).
  std::string open_file_path() const { return fd_ ? path_ : std::string(); }

 private:
  enum class at_end { wait, again, finish };

  follow_reader(follow_source source, bool directory, line_reader_options options);
  void notice(std::string text);
  void close_file();
  void reset_buffer();
  // Opens the next file: the followed name's, or the directory's next name. false: none yet.
  result<bool> open_next();
  status open_at(const std::string& name, const std::string& path);
  result<std::size_t> fill();
  bool take_line(text_line& out, std::size_t stop, bool has_break);
  result<at_end> check_end();
  result<bool> name_holds_another_file();
  status scan_directory();
  status restart_file(const std::string& why);
  status seek_in_open_file(const follow_position& pos);
  status seek_to(const follow_position& pos);
  // The path of the entry of dir_ that is file (device, inode); "" when there is none.
  result<std::string> find_by_identity(std::uint64_t device, std::uint64_t inode) const;
  std::string file_path(const std::string& name) const;

  follow_source source_;
  bool directory_ = false;
  std::string dir_;   // the directory holding the files
  std::string base_;  // a followed file: its name in dir_
  line_reader_options options_;

  detail::owned_fd fd_;
  std::string name_;       // of the open file (a directory: also of the last file finished)
  std::string path_;       // the open file's path, for messages
  std::string line_path_;  // the path of the last line returned (text_line::path points here)
  std::uint64_t device_ = 0, inode_ = 0;
  std::uint32_t serial_ = 0;  // files opened or restarted: text_line::file_index, so each one's header is known
  std::uint32_t line_serial_ = 0;  // the serial line_path_ is of
  bool opened_any_ = false;
  bool gzip_checked_ = false;
  bool missing_said_ = false;          // "waiting for the file to appear" was said
  bool settling_ = false;              // a rotation was seen at the end of the file; finish at the next
  std::uint64_t settle_size_ = 0;      // end if the old file has not grown since
  bool replaced_said_ = false;         // a directory: the open file's name holds another file (said once)

  std::vector<char> buffer_;
  std::size_t begin_ = 0, scan_ = 0, end_ = 0;
  std::uint64_t offset_ = 0;  // file offset of buffer_[begin_]
  std::uint64_t line_number_ = 1;
  std::uint32_t previous_crc_ = 0;
  std::uint64_t skipped_ = 0;  // bytes of an over-long line thrown away
  bool skipping_ = false;

  // A directory: names at or before name_ seen so far (read, or refused), and the names after it
  // as of the last scan, in order, with their bytes.
  std::set<std::string> passed_;
  std::vector<std::pair<std::string, std::uint64_t>> later_;

  follow_counters counters_;
  std::vector<std::string> notices_;
  std::uint64_t notices_dropped_ = 0;
  status error_;
};

// True when `name` matches the shell pattern (fnmatch, FNM_PERIOD: a leading '.' must be matched
// explicitly, so hidden files and editors' temporaries are left out by "*").
bool follow_name_matches(const std::string& pattern, const std::string& name);

}  // namespace ss::data
