// Time as an injected dependency: services use steady_clock_source, tests a manual_clock.
#pragma once

#include <chrono>
#include <cstdint>

namespace ss {

class clock_source {
 public:
  virtual ~clock_source() = default;
  // Monotonic time in nanoseconds since an arbitrary epoch.
  virtual std::int64_t now_ns() const = 0;
  double now_seconds() const { return static_cast<double>(now_ns()) * 1e-9; }
};

class steady_clock_source final : public clock_source {
 public:
  std::int64_t now_ns() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

// A clock that moves only when told to.
class manual_clock final : public clock_source {
 public:
  explicit manual_clock(std::int64_t start_ns = 0) : now_(start_ns) {}
  std::int64_t now_ns() const override { return now_; }
  void advance_ns(std::int64_t d) { now_ += d; }
  void advance_seconds(double s) { now_ += static_cast<std::int64_t>(s * 1e9); }

 private:
  std::int64_t now_;
};

}  // namespace ss
