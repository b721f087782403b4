#include "ss/core/data/epoch_reader.hpp"

#include <algorithm>
#include <numeric>

#include "ss/core/hash.hpp"
#include "ss/core/random.hpp"

namespace ss::data {
namespace {

// Distinct streams of one seed for the files' order and the windows' orders.
constexpr std::uint64_t kFileOrderStream = 0x66696c65;    // "file"
constexpr std::uint64_t kWindowOrderStream = 0x77696e64;  // "wind"

// Files read before this reader began are skipped, or entered where they were left, in the pass
// that reaches them.
batch_reader_options options_of_epoch(const epoch_reader_options& o, std::uint32_t epoch) {
  auto input = o.input;
  const auto files = epoch_file_order(input.paths.size(), epoch, o.shuffle_window, o.seed);
  for (std::size_t k = 0; k < files.size(); ++k) input.paths[k] = o.input.paths[files[k]];
  if (!o.progress.empty()) {
    input.entries.assign(files.size(), file_entry{});
    for (std::size_t k = 0; k < files.size(); ++k) {
      const file_progress& p = o.progress[files[k]];
      input.entries[k].skip = p.passes > epoch;
      if (p.passes == epoch) input.entries[k].at = p.at;
    }
  }
  return input;
}

}  // namespace

// Permuted per epoch when examples are shuffled, so that examples meet other files' examples
// from epoch to epoch.
std::vector<std::size_t> epoch_file_order(std::size_t files, std::uint32_t epoch, std::size_t shuffle_window,
                                          std::uint64_t seed) {
  std::vector<std::size_t> order(files);
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (shuffle_window > 0) {
    rng r(hash_combine(hash_combine(seed, kFileOrderStream), epoch));
    ss::shuffle(order.begin(), order.end(), r);
  }
  return order;
}

result<epoch_reader> epoch_reader::open(epoch_reader_options options) {
  if (options.epochs == 0) return status(errc::invalid_argument, "a reader needs at least one epoch");
  if (options.input.batch_size == 0) return status(errc::invalid_argument, "the batch size must be positive");
  if (!options.progress.empty() && options.progress.size() != options.input.paths.size()) {
    return status(errc::invalid_argument, "progress of " + std::to_string(options.progress.size()) + " files for " +
                                              std::to_string(options.input.paths.size()) + " input files");
  }
  for (std::size_t k = 0; k < options.inherited.size(); ++k) {
    const auto& w = options.inherited[k];
    const std::string which = "inherited shuffle window " + std::to_string(k + 1);
    if (w.epoch >= options.epochs || (k > 0 && w.epoch < options.inherited[k - 1].epoch))
      return status(errc::invalid_argument, which + " is in epoch " + std::to_string(w.epoch + 1) +
                                                ": the windows go by epoch, within the job's " +
                                                std::to_string(options.epochs));
    if (w.handed == 0 || options.shuffle_window == 0)
      return status(errc::invalid_argument, which + " was not begun, or the job is not shuffled: nothing to finish");
  }
  auto first = batch_reader::open(options_of_epoch(options, 0));
  if (!first.is_ok()) return first.error();
  return epoch_reader(std::move(options), std::move(*first));
}

epoch_reader::epoch_reader(epoch_reader_options options, batch_reader first)
    : options_(std::move(options)), reader_(std::move(first)) {
  window_end_ = reader_->position();
}

epoch_reader::epoch_reader(epoch_reader&&) noexcept = default;
epoch_reader& epoch_reader::operator=(epoch_reader&&) noexcept = default;
epoch_reader::~epoch_reader() = default;

status epoch_reader::open_epoch(std::uint32_t epoch) {
  auto opened = batch_reader::open(options_of_epoch(options_, epoch));
  if (!opened.is_ok()) return opened.error();
  reader_.emplace(std::move(*opened));
  epoch_ = epoch;
  epoch_over_ = false;
  window_start_ = window_end_ = reader_->position();
  window_batches_ = handed_ = 0;
  bad_at_start_ = bad_at_end_ = 0;
  pool_.reset(0, 0);
  order_.clear();
  heir_.reset();
  next_inherited_ = 0;
  while (next_inherited_ < options_.inherited.size() && options_.inherited[next_inherited_].epoch < epoch)
    ++next_inherited_;
  return status::ok();
}

bool epoch_reader::inherited_pending() const noexcept {
  return next_inherited_ < options_.inherited.size() && options_.inherited[next_inherited_].epoch == epoch_;
}

// Reads the next inherited window as its old reader would have, past the `handed` batches it
// had handed out.
status epoch_reader::open_heir(std::uint32_t handed) {
  const inherited_window& w = options_.inherited[next_inherited_];
  const std::string which = "the shuffle window inherited from the readers before the change of count (" +
                            std::to_string(next_inherited_ + 1) + " of " + std::to_string(options_.inherited.size()) +
                            ")";
  epoch_reader_options o;
  o.input = w.input;
  o.progress = w.progress;
  o.epochs = w.epoch + 1;
  o.shuffle_window = options_.shuffle_window;
  o.seed = w.seed;
  auto opened = open(std::move(o));
  if (!opened.is_ok()) return opened.error().with_context(which);
  auto heir = std::make_unique<epoch_reader>(std::move(*opened));
  if (auto st = heir->seek({w.epoch, w.start, handed}); !st.is_ok()) return st.with_context(which);
  if (heir->handed_ >= heir->window_batches_)
    return status(errc::corrupt, which + " has " + std::to_string(heir->window_batches_) + " batches, all handed out");
  heir_ = std::move(heir);
  return status::ok();
}

// The next batch of the epoch's inherited windows: false once they are all finished.
result<bool> epoch_reader::next_inherited(example_batch& out) {
  if (!inherited_pending()) return false;
  if (!heir_) SS_RETURN_IF_ERROR(open_heir(options_.inherited[next_inherited_].handed));
  auto more = heir_->next(out);
  if (!more.is_ok()) return more.error();
  if (!*more) return status(errc::internal, "an inherited shuffle window ended before its batches");
  examples_ += out.size();
  if (heir_->handed_ == heir_->window_batches_) {
    // Its bad rows count with its last batch, as an own window's do.
    if (epoch_ == 0) inherited_bad_ += heir_->first_epoch_bad_rows();
    heir_.reset();
    ++next_inherited_;
  }
  return true;
}

// Reads whole batches from the files until the window holds shuffle_window examples (one batch
// without shuffling), and fixes their order from the seed, the epoch and the window's start.
status epoch_reader::fill_window() {
  window_start_ = reader_->position();
  bad_at_start_ = reader_->counters().bad;
  pool_.reset(0, 0);
  const std::size_t target = std::max<std::size_t>(options_.shuffle_window, 1);
  while (pool_.size() < target) {
    // The first batch straight into the pool, later ones through chunk_: both keep their buffers
    // from window to window, so reading allocates nothing in steady state.
    example_batch& into = pool_.empty() ? pool_ : chunk_;
    auto more = reader_->next(into);
    if (!more.is_ok()) return more.error();
    if (!*more) break;
    if (&into == &chunk_) pool_.append(chunk_);
  }
  window_end_ = reader_->position();
  bad_at_end_ = reader_->counters().bad;
  const std::size_t batch = options_.input.batch_size;
  window_batches_ = static_cast<std::uint32_t>((pool_.size() + batch - 1) / batch);
  handed_ = 0;
  order_.clear();
  if (options_.shuffle_window > 0) {
    order_.resize(pool_.size());
    std::iota(order_.begin(), order_.end(), 0u);
    rng r(hash_combine(
        hash_combine(hash_combine(hash_combine(options_.seed, kWindowOrderStream), epoch_), window_start_.file_index),
        window_start_.byte_offset));
    ss::shuffle(order_.begin(), order_.end(), r);
  }
  return status::ok();
}

result<bool> epoch_reader::next(example_batch& out) {
  if (epoch_over_) return false;
  if (inherited_pending()) {
    auto inherited = next_inherited(out);
    if (!inherited.is_ok() || *inherited) return inherited;
  }
  if (handed_ == window_batches_) {
    SS_RETURN_IF_ERROR(fill_window());
    if (window_batches_ == 0) {
      epoch_over_ = true;
      return false;
    }
  }
  if (order_.empty()) {  // in order: the window is one batch of the files
    std::swap(out, pool_);
    pool_.reset(out.num_dense, out.num_sparse);
  } else {
    const std::size_t batch = options_.input.batch_size;
    const std::size_t from = handed_ * batch, to = std::min(pool_.size(), from + batch);
    out.reset(pool_.num_dense, pool_.num_sparse);
    out.reserve(to - from);
    for (std::size_t k = from; k < to; ++k) out.append_example(pool_, order_[k]);
  }
  ++handed_;
  examples_ += out.size();
  return true;
}

result<bool> epoch_reader::next_epoch() {
  if (!epoch_over_)
    return status(errc::internal, "epoch " + std::to_string(epoch_ + 1) + " is not over: it cannot be left");
  if (epoch_ + 1 >= options_.epochs) return false;
  if (epoch_ == 0) first_epoch_bad_ = bad_at_end_ + inherited_bad_;
  SS_RETURN_IF_ERROR(open_epoch(epoch_ + 1));
  return true;
}

status epoch_reader::seek(const epoch_position& pos) {
  if (pos.epoch >= options_.epochs)
    return status(errc::out_of_range, "the position is in epoch " + std::to_string(pos.epoch + 1) + " of a run of " +
                                          std::to_string(options_.epochs));
  SS_RETURN_IF_ERROR(open_epoch(pos.epoch));
  first_epoch_bad_ = 0;
  examples_ = 0;
  inherited_bad_ = 0;
  if (pos.inherited > 0) {
    // Inside an inherited window: the own files wait at the epoch's start.
    const std::size_t k = pos.inherited - 1;
    if (k >= options_.inherited.size() || options_.inherited[k].epoch != pos.epoch || pos.window_batches == 0)
      return status(errc::corrupt, "the position is in inherited shuffle window " + std::to_string(pos.inherited) +
                                       " of epoch " + std::to_string(pos.epoch + 1) + ", which this reader does not "
                                       "have: its plan changed since it was taken");
    next_inherited_ = k;
    return open_heir(pos.window_batches);
  }
  while (inherited_pending()) ++next_inherited_;  // finished before the position
  SS_RETURN_IF_ERROR(reader_->seek(pos.window));
  window_start_ = window_end_ = reader_->position();
  if (pos.window_batches == 0) return status::ok();
  // Inside a window: read it again (the same rows in the same order) and skip what was handed out.
  SS_RETURN_IF_ERROR(fill_window());
  if (window_batches_ < pos.window_batches)
    return status(errc::corrupt, "the position is " + std::to_string(pos.window_batches) +
                                     " batches into a shuffle window of " + std::to_string(window_batches_) +
                                     ": the files or the batch size changed since it was taken");
  handed_ = pos.window_batches;
  return status::ok();
}

epoch_position epoch_reader::position() const noexcept {
  const auto inherited = static_cast<std::uint32_t>(next_inherited_ + 1);
  if (heir_) return {epoch_, heir_->window_start_, heir_->handed_, {}, inherited};
  if (inherited_pending()) {
    const auto& w = options_.inherited[next_inherited_];
    return {epoch_, w.start, w.handed, {}, inherited};
  }
  if (handed_ < window_batches_) return {epoch_, window_start_, handed_, window_end_, 0};
  return {epoch_, window_end_, 0, {}, 0};
}

std::uint64_t epoch_reader::first_epoch_bad_rows() const noexcept {
  if (epoch_ > 0) return first_epoch_bad_;
  return inherited_bad_ + (handed_ < window_batches_ ? bad_at_start_ : bad_at_end_);
}

double epoch_reader::fraction_done() const noexcept {
  const auto total = reader_->total_bytes();
  if (total == 0) return -1.0;
  const double in_epoch = epoch_over_ ? 1.0 : static_cast<double>(reader_->bytes_consumed()) / static_cast<double>(total);
  return (static_cast<double>(epoch_) + in_epoch) / static_cast<double>(options_.epochs);
}

}  // namespace ss::data
