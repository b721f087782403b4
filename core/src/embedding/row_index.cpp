#include "ss/core/embedding/row_index.hpp"

namespace ss::embedding {

std::vector<std::uint32_t> row_index::grow() {
  std::vector<slot> bigger(slots_.size() * 2);
  std::vector<std::uint32_t> moved_to(slots_.size(), moved_nowhere);
  const std::size_t mask = bigger.size() - 1;
  for (std::size_t j = 0; j < slots_.size(); ++j) {
    const slot& old = slots_[j];
    if (old.row == nullptr) continue;
    std::size_t i = mix64(old.key) & mask;
    while (bigger[i].row != nullptr) i = (i + 1) & mask;
    bigger[i] = old;
    moved_to[j] = static_cast<std::uint32_t>(i);
  }
  slots_.swap(bigger);
  publish_home();
  return moved_to;
}

}  // namespace ss::embedding
