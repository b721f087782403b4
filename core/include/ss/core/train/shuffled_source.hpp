// A batch source that permutes its input within windows of examples: reads `window` examples
// from the inner source, emits them in a seeded random order in batches of `batch_size`, then
// reads the next window. Memory is bounded by the window, so files larger than memory shuffle too
// (with the files' order permuted per epoch by the caller, examples travel across the whole input
// from epoch to epoch). The same seed gives the same order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ss/core/data/example_batch.hpp"
#include "ss/core/random.hpp"
#include "ss/core/train/hogwild_trainer.hpp"

namespace ss::train {

class shuffled_source final : public batch_source {
 public:
  shuffled_source(batch_source& inner, std::size_t window, std::size_t batch_size, std::uint64_t seed);

  result<bool> next(data::example_batch& out) override;
  double fraction_done() const override { return inner_.fraction_done(); }

 private:
  status refill();

  batch_source& inner_;
  std::size_t window_;
  std::size_t batch_size_;
  rng rng_;
  data::example_batch pool_;        // the current window
  std::vector<std::uint32_t> order_;  // its permutation
  std::size_t emitted_ = 0;         // of order_
  data::example_batch carry_;       // examples read past the window, for the next one
  std::size_t carry_from_ = 0;
  bool exhausted_ = false;
};

}  // namespace ss::train
