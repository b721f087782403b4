// Rate limit for repeated log lines (refused frames, refused requests): at most one line per key
// per interval; the events held back are counted, and the next line of that key says how many.
// A flood of bad input thus costs a few log lines a minute, not one per frame. At most
// `max_keys` keys are remembered (an address per key cannot grow it without bound). Not
// thread-safe: one owner (an actor, a transport thread) calls it.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

namespace ss {

class log_limiter {
 public:
  explicit log_limiter(std::int64_t interval_ns, std::size_t max_keys = 256)
      : interval_ns_(interval_ns), max_keys_(max_keys) {}

  // Whether an event of `key` at `now_ns` (a monotonic clock) should be logged. When it should,
  // *held_back is the number of events of that key not logged since its previous line.
  bool admit(const std::string& key, std::int64_t now_ns, std::uint64_t* held_back);

 private:
  struct entry {
    std::int64_t last_ns = 0;
    std::uint64_t held_back = 0;
  };
  std::int64_t interval_ns_;
  std::size_t max_keys_;
  std::unordered_map<std::string, entry> entries_;
};

}  // namespace ss
