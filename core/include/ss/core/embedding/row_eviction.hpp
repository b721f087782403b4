// Eviction: a counting CLOCK over one stripe's rows. Each row has the passes of the hand it
// survives: a lookup gives it one more (up to touch_chances), each pass takes one away, and the
// first row the hand finds with none left goes. So a row used in many batches outlasts a burst of
// ids seen once, which plain CLOCK (one second chance) does not tell apart (docs/embeddings.md).
//
// The hand only picks; which rows may go at all is the caller's (a memory budget's: rows storage
// holds as they are), and so is removing the row. Behind the stripe's lock; nothing here locks.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ss/core/embedding/row_index.hpp"

namespace ss::embedding {

class clock_hand {
 public:
  // The most passes lookups can save a row for: 3 had a hit rate of 0.833 against plain CLOCK's
  // 0.818 (1M-row job, a 10% budget), 11% fewer rows read back; an offline replay of that job's
  // ids found little more above 3 (docs/embeddings.md).
  static constexpr std::uint8_t touch_chances = 3;
  // A row read ahead by a prefetch hint: its batch is a few batches away.
  static constexpr std::uint8_t warmed_chances = 4;
  // Steps of the hand per find_victim call: a stripe of rows that may not go costs a new row a
  // bounded scan; the hand goes on from there the next time.
  static constexpr std::size_t max_steps = 256;
  static constexpr std::size_t none = ~std::size_t{0};

  // Keeps a mark per slot (a table without a budget keeps none and never evicts).
  void assign(std::size_t slots) { chances_.assign(slots); }

  std::uint8_t chances(std::size_t i) const { return chances_[i]; }
  // A row came into RAM (new, or read back from storage): one pass.
  void came_in(std::size_t i) { chances_[i] = 1; }
  // A row read ahead of its lookup: passes enough to outlast the hand until its batch comes.
  void warmed(std::size_t i) { chances_[i] = warmed_chances; }
  // A lookup: one pass more, up to touch_chances.
  void looked_up(std::size_t i) {
    std::uint8_t& c = chances_[i];
    c = c >= touch_chances ? touch_chances : static_cast<std::uint8_t>(c + 1);
  }
  // A push: at least one pass (the lookup before it gave the rest).
  void pushed(std::size_t i) { chances_[i] = std::max<std::uint8_t>(chances_[i], 1); }

  // A row that may go came in (one read from storage, unchanged): the hand looks again even where
  // it found nothing at this epoch.
  void rows_may_go() {
    barren_ = false;
    fruitless_ = 0;
  }

  // The slot of the row to evict, or none. may_go(i): whether slot i's row may leave RAM. `epoch`
  // changes whenever rows that could not go may (a budget's stored flush generation): once the
  // hand went round touch_chances + 1 times without finding one, it does not scan again in the
  // same epoch (until rows_may_go), which saves a scan of the whole stripe per new row.
  template <class MayGo>
  std::size_t find_victim(const row_index& index, std::uint32_t epoch, MayGo&& may_go) {
    if (index.used() == 0) return none;
    if (barren_ && barren_at_ == epoch) return none;
    const std::size_t mask = index.size() - 1;
    if (barren_at_ != epoch) fruitless_ = 0;
    for (std::size_t step = 0; step < max_steps; ++step) {
      const std::size_t i = hand_;
      hand_ = (hand_ + 1) & mask;
      if (++fruitless_ > turns_past_lookups(index)) break;
      if (!index.occupied(i) || !may_go(i)) continue;
      if (chances_[i] != 0) {
        --chances_[i];
        continue;
      }
      fruitless_ = 0;
      return i;
    }
    barren_at_ = epoch;
    barren_ = fruitless_ > turns_past_lookups(index);
    return none;
  }

  // The slot of a row to give up whatever storage holds (a full table's eviction for good), or
  // none when the stripe has no row. A row's passes are at most warmed_chances, so the hand finds
  // one within warmed_chances + 1 turns.
  std::size_t pick_any(const row_index& index) {
    if (index.used() == 0) return none;
    const std::size_t mask = index.size() - 1;
    for (std::size_t step = 0;; ++step) {
      const std::size_t i = hand_;
      hand_ = (hand_ + 1) & mask;
      if (!index.occupied(i)) continue;
      if (chances_[i] != 0 && step < (warmed_chances + 1) * index.size()) {
        --chances_[i];
        continue;
      }
      return i;
    }
  }

  // Runs the hand as find_victim does, for at most touch_chances + 1 turns, calling found(i) on
  // each row with no pass left until `want` of those calls returned true: what a write-back
  // takes next (embedding_table::take_victims).
  template <class Found>
  void sweep(const row_index& index, std::size_t want, Found&& found) {
    if (index.used() == 0) return;
    const std::size_t mask = index.size() - 1;
    std::size_t got = 0;
    for (std::size_t step = 0; step < turns_past_lookups(index) && got < want; ++step) {
      const std::size_t i = hand_;
      hand_ = (hand_ + 1) & mask;
      if (!index.occupied(i)) continue;
      if (chances_[i] != 0) {
        --chances_[i];
        continue;
      }
      if (found(i)) ++got;
    }
  }

  // Following the index (row_index::erase, grow); a grown index starts the hand over.
  void move(std::size_t from, std::size_t to) { chances_.move(from, to); }
  void vacate(std::size_t i) { chances_.vacate(i); }
  void follow(const std::vector<std::uint32_t>& moved_to) {
    chances_.follow(moved_to);
    hand_ = 0;
  }

 private:
  // Steps of the hand in which it takes away every pass that lookups can give a row.
  static std::size_t turns_past_lookups(const row_index& index) { return (touch_chances + 1) * index.size(); }

  slot_column<std::uint8_t> chances_;
  std::size_t hand_ = 0;
  // The hand went round touch_chances + 1 times without a row that may go, at epoch barren_at_.
  bool barren_ = false;
  std::uint32_t barren_at_ = 0;
  std::size_t fruitless_ = 0;  // steps of the hand since it last found a row that may go
};

}  // namespace ss::embedding
