#include "ss/core/embedding/push_ledger.hpp"

#include <algorithm>

namespace ss::embedding {
namespace {

constexpr std::uint64_t words = push_ledger::window / 64;

bool test(const std::vector<std::uint64_t>& bits, std::uint64_t n) {
  return (bits[(n % push_ledger::window) / 64] >> (n % 64)) & 1u;
}
void set(std::vector<std::uint64_t>& bits, std::uint64_t n, bool on) {
  auto& w = bits[(n % push_ledger::window) / 64];
  const std::uint64_t bit = std::uint64_t{1} << (n % 64);
  w = on ? (w | bit) : (w & ~bit);
}

}  // namespace

bool push_ledger::record(std::uint64_t trainer, std::uint64_t number) {
  if (number == 0) return true;
  auto& t = trainers_[trainer];
  t.active = true;
  if (t.bits.empty()) t.bits.assign(words, 0);
  if (number > t.high) {
    // The numbers between the old high and this one leave the window's far end: clear them.
    if (number - t.high >= window) {
      std::fill(t.bits.begin(), t.bits.end(), 0);
    } else {
      for (std::uint64_t n = t.high + 1; n < number; ++n) set(t.bits, n, false);
    }
    t.high = number;
    set(t.bits, number, true);
    return true;
  }
  if (t.high - number >= window) return false;  // too old to tell: it may have been applied
  if (test(t.bits, number)) return false;
  set(t.bits, number, true);
  return true;
}

void push_ledger::forget(std::uint64_t trainer, std::uint64_t number) {
  auto it = trainers_.find(trainer);
  if (number == 0 || it == trainers_.end() || it->second.bits.empty()) return;
  if (number <= it->second.high && it->second.high - number < window) set(it->second.bits, number, false);
}

void push_ledger::prune(const std::vector<std::uint64_t>& keep) {
  for (auto it = trainers_.begin(); it != trainers_.end();) {
    const bool kept = std::find(keep.begin(), keep.end(), it->first) != keep.end();
    if (!kept && !it->second.active) {
      it = trainers_.erase(it);
    } else {
      it->second.active = false;
      ++it;
    }
  }
}

}  // namespace ss::embedding
