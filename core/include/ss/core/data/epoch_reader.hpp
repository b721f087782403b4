// Reads a list of files for several epochs, each in a seeded order that a restart can resume
// exactly: with a shuffle window, every epoch reads the files in its own permutation and hands out
// the examples of each window of about `shuffle_window` examples (a run of whole batches from the
// files, so memory is bounded on files larger than memory) in a random order. The order depends
// only on the seed, the epoch and where the window starts, so position() after any batch, passed
// to seek() (also in another process), hands out exactly the batches that would have followed:
// every example once per epoch. A reader of a job resumed on another reader count first finishes,
// in each epoch, the shuffle windows the readers before the change left unfinished in it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ss/core/data/batch_reader.hpp"
#include "ss/core/data/example_batch.hpp"
#include "ss/core/data/line_reader.hpp"
#include "ss/core/status.hpp"

namespace ss::data {

// After a batch: where its window starts in the epoch's file order and how many of the window's
// batches were handed out. window_batches == 0: the next window starts at `window`.
struct epoch_position {
  std::uint32_t epoch = 0;  // 0-based
  line_position window;
  std::uint32_t window_batches = 0;
  // Inside a window of the reader's own files: where the window ends, so that the files before
  // it count as read when the job changes its reader count and another reader finishes the
  // window (job::replan_readers). Not used by seek().
  line_position window_end;
  // 0: the reader's own files (every inherited window of the epoch is finished); k: inherited
  // window k (1-based, epoch_reader_options::inherited), `window` its start and `window_batches`
  // its batches handed out.
  std::uint32_t inherited = 0;
};

// How far a file was read before this reader began (a job resumed on another reader count, whose
// earlier readers had read parts of the files): the passes over it done, and where the next pass
// goes on. A pass skips the files whose passes are ahead of it.
struct file_progress {
  std::uint32_t passes = 0;
  line_position at;  // its file_index is not used; byte_offset 0: the next pass reads the whole file

  friend bool operator==(const file_progress& a, const file_progress& b) noexcept {
    return a.passes == b.passes && a.at.byte_offset == b.at.byte_offset && a.at.line_number == b.at.line_number;
  }
};

// A shuffle window that a reader of the job's earlier reader count left unfinished. Its rows are
// handed out in an order that only that reader's files, progress and seed give, so the reader that
// inherits it reads it as that one would have (the same options, the same window) and hands out
// the batches it had not.
struct inherited_window {
  batch_reader_options input;           // the old reader's files, in its order
  std::vector<file_progress> progress;  // where they stood when it began; empty: nothing read before
  std::uint64_t seed = 0;               // the old reader's
  std::uint32_t epoch = 0;
  line_position start;                  // in that epoch's order of the old reader's files
  std::uint32_t handed = 0;             // batches of it the old reader handed out (at least 1)
};

struct epoch_reader_options {
  batch_reader_options input;  // the files in their given order, the batch size, the bad-row policy
  std::vector<file_progress> progress;  // by input.paths index; empty: nothing read before
  std::uint32_t epochs = 1;
  std::size_t shuffle_window = 0;  // examples; 0 = the files and their rows in order
  std::uint64_t seed = 0;
  // Finished at the start of their epoch, before the reader's own files; ordered by epoch.
  std::vector<inherited_window> inherited;
};

// The order epoch `epoch` reads `files` files in (indices into them): a permutation per epoch
// when examples are shuffled, as given otherwise.
std::vector<std::size_t> epoch_file_order(std::size_t files, std::uint32_t epoch, std::size_t shuffle_window,
                                          std::uint64_t seed);

class epoch_reader {
 public:
  // Opens the first epoch's files (the schema binds to its first file's header, if any).
  static result<epoch_reader> open(epoch_reader_options options);
  epoch_reader(epoch_reader&&) noexcept;
  epoch_reader& operator=(epoch_reader&&) noexcept;
  ~epoch_reader();

  // The next batch of the current epoch: true; false: the epoch is over (see next_epoch). Errors
  // are the batch reader's.
  result<bool> next(example_batch& out);
  // Starts the next epoch once the current one is over: true; false: that was the last epoch.
  result<bool> next_epoch();

  // Resumes where position() was, in this or another reader over the same files and options.
  status seek(const epoch_position& pos);
  epoch_position position() const noexcept;

  std::uint32_t epoch() const noexcept { return epoch_; }
  std::uint32_t epochs() const noexcept { return options_.epochs; }
  bool epoch_over() const noexcept { return epoch_over_; }
  // The examples this object handed out (after a seek: since then).
  std::uint64_t examples() const noexcept { return examples_; }
  // Bad rows of the first epoch before position(), as this object read them: a window's bad rows
  // count with its last batch (a resume inside the window reads them again), and later epochs,
  // which read the same rows, add none.
  std::uint64_t first_epoch_bad_rows() const noexcept;

  // The current epoch's batch reader: its schema, counters and bad-row reports.
  const batch_reader& current() const noexcept { return *reader_; }
  // Input bytes of one epoch, and the fraction of all epochs read so far.
  std::uint64_t epoch_bytes() const noexcept { return reader_->total_bytes(); }
  double fraction_done() const noexcept;

 private:
  epoch_reader(epoch_reader_options options, batch_reader first);
  status open_epoch(std::uint32_t epoch);
  status fill_window();
  bool inherited_pending() const noexcept;
  status open_heir(std::uint32_t handed);
  result<bool> next_inherited(example_batch& out);

  epoch_reader_options options_;
  std::uint32_t epoch_ = 0;
  std::optional<batch_reader> reader_;
  bool epoch_over_ = false;
  // The current window: its examples, their order, its bounds, and the batches handed out.
  example_batch pool_;
  example_batch chunk_;  // a batch of the files on its way into the pool
  std::vector<std::uint32_t> order_;
  line_position window_start_, window_end_;
  std::uint32_t window_batches_ = 0, handed_ = 0;
  std::uint64_t bad_at_start_ = 0, bad_at_end_ = 0;  // the batch reader's bad rows at the window's bounds
  std::uint64_t first_epoch_bad_ = 0;                 // bad rows of epochs before this one (first only)
  std::uint64_t examples_ = 0;
  // Inherited windows: the next one to finish (options_.inherited), and the reader finishing it.
  std::size_t next_inherited_ = 0;
  std::unique_ptr<epoch_reader> heir_;
  std::uint64_t inherited_bad_ = 0;  // bad rows of the first epoch's inherited windows finished
};

}  // namespace ss::data
