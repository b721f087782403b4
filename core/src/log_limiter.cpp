#include "ss/core/log_limiter.hpp"

namespace ss {

bool log_limiter::admit(const std::string& key, std::int64_t now_ns, std::uint64_t* held_back) {
  if (entries_.size() >= max_keys_ && entries_.count(key) == 0) entries_.clear();  // forget, stay bounded
  auto [it, fresh] = entries_.try_emplace(key);
  if (!fresh && now_ns - it->second.last_ns < interval_ns_) {
    ++it->second.held_back;
    return false;
  }
  if (held_back != nullptr) *held_back = it->second.held_back;
  it->second.last_ns = now_ns;
  it->second.held_back = 0;
  return true;
}

}  // namespace ss
