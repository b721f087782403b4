#include "ss/core/job/membership_fence.hpp"

namespace ss::job {

void membership_fence::follow(const std::vector<std::uint64_t>& live, const std::vector<std::uint64_t>& memberships,
                              const std::vector<std::uint64_t>& dropped) {
  live_.clear();
  for (std::size_t i = 0; i < live.size(); ++i) live_[live[i]] = i < memberships.size() ? memberships[i] : 0;
  dropped_ = std::unordered_set<std::uint64_t>(dropped.begin(), dropped.end());
}

bool membership_fence::fenced(std::uint64_t incarnation, std::uint64_t membership) const {
  if (incarnation == 0 || membership == 0) return false;
  if (auto it = live_.find(incarnation); it != live_.end()) return it->second > membership;
  return dropped_.count(incarnation) > 0;
}

std::uint64_t membership_fence::membership_of(std::uint64_t incarnation) const {
  auto it = live_.find(incarnation);
  return it == live_.end() ? 0 : it->second;
}

}  // namespace ss::job
