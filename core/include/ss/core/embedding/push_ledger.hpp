// The gradient pushes a shard applied lately, by trainer: a push sent again (its answer was lost,
// or its shard seemed gone, and the trainer cannot know whether it was applied) is recognized and
// answered without being applied a second time.
//
// A trainer numbers its pushes from 1 (one counter for all its shards). Per trainer the ledger
// keeps the highest number it recorded and one bit for each of the `window` numbers below it;
// numbers arrive nearly in order (a trainer has a few batches in flight), so a resend is always
// within the window. One older than that cannot be told from an applied one, and is not applied.
//
// Not thread-safe: its owner serializes the calls.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ss::embedding {

class push_ledger {
 public:
  static constexpr std::uint64_t window = std::uint64_t{1} << 14;

  // Records push `number` of trainer `trainer`: true the first time, false when it was recorded
  // before or is older than the window. Number 0 (an unnumbered push) is never recorded: true.
  bool record(std::uint64_t trainer, std::uint64_t number);
  // Takes a record back: the push was not applied after all (the shard refused it), and may be
  // sent again.
  void forget(std::uint64_t trainer, std::uint64_t number);
  // Forgets the trainers not in `keep` that recorded nothing since the previous call (gone for
  // good: their resends would be fenced, or never come).
  void prune(const std::vector<std::uint64_t>& keep);

  std::size_t trainers() const { return trainers_.size(); }

 private:
  struct trainer_record {
    std::uint64_t high = 0;             // the highest number recorded
    std::vector<std::uint64_t> bits;    // number % window -> recorded, for numbers in (high - window, high]
    bool active = true;                 // recorded something since the last prune()
  };
  std::unordered_map<std::uint64_t, trainer_record> trainers_;
};

}  // namespace ss::embedding
