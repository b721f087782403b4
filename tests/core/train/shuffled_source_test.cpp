// The windowed shuffle of training examples: every example once, whole (multi-value ids too),
// never outside its window, in an order fixed by the seed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ss/core/train/shuffled_source.hpp"

using namespace ss;

namespace {

// Example i: label i % 2, dense {i}, feature 0 holds (i % 3) + 1 ids i*10, i*10+1, ..., feature 1 holds id i.
class counting_source final : public train::batch_source {
 public:
  counting_source(std::size_t examples, std::size_t batch, std::size_t fail_after = 0)
      : examples_(examples), batch_(batch), fail_after_(fail_after) {}
  result<bool> next(data::example_batch& out) override {
    if (fail_after_ > 0 && next_ >= fail_after_) return status(errc::io_error, "disk gone");
    if (next_ >= examples_) return false;
    out.reset(1, 2);
    for (std::size_t k = 0; k < batch_ && next_ < examples_; ++k, ++next_) {
      out.begin_example(static_cast<float>(next_ % 2));
      out.add_dense(static_cast<float>(next_));
      for (std::size_t j = 0; j <= next_ % 3; ++j) out.add_id(next_ * 10 + j);
      out.end_feature();
      out.add_id(next_);
      out.end_feature();
    }
    return true;
  }

 private:
  std::size_t examples_, batch_, fail_after_, next_ = 0;
};

struct drained {
  std::vector<std::size_t> order;  // example indices as emitted
  std::vector<std::size_t> batch_sizes;
};

drained drain(std::size_t examples, std::size_t window, std::uint64_t seed, std::size_t in_batch = 7) {
  counting_source inner(examples, in_batch);
  train::shuffled_source s(inner, window, 16, seed);
  drained d;
  data::example_batch b;
  while (true) {
    auto more = s.next(b);
    REQUIRE(more.is_ok());
    if (!*more) break;
    d.batch_sizes.push_back(b.size());
    for (std::size_t e = 0; e < b.size(); ++e) {
      const auto i = static_cast<std::size_t>(b.dense[e]);
      // The example arrives whole: its label and every id of both features.
      CHECK(b.labels[e] == static_cast<float>(i % 2));
      const std::uint32_t* off = &b.offsets[e * 2];
      REQUIRE(off[1] - off[0] == i % 3 + 1);
      for (std::uint32_t j = off[0]; j < off[1]; ++j) CHECK(b.ids[j] == i * 10 + (j - off[0]));
      CHECK(b.ids[off[1]] == i);
      d.order.push_back(i);
    }
  }
  return d;
}

}  // namespace

TEST_CASE("shuffled source: every example once, whole, within its window", "[core][train]") {
  const std::size_t n = 1000, window = 128;
  auto d = drain(n, window, 5);
  REQUIRE(d.order.size() == n);
  auto sorted = d.order;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < n; ++i) CHECK(sorted[i] == i);
  // Example i sits in window i / 128, and windows are emitted in turn.
  for (std::size_t k = 0; k < n; ++k) CHECK(d.order[k] / window == k / window);
  CHECK(d.order != sorted);  // shuffled
  // Full batches except at the end of a window (1000 = 7 x 128 + 104; 128 = 8 x 16).
  for (std::size_t k = 0; k + 1 < d.batch_sizes.size(); ++k) CHECK(d.batch_sizes[k] == 16);
}

TEST_CASE("shuffled source: the seed fixes the order", "[core][train]") {
  CHECK(drain(500, 1000, 9).order == drain(500, 1000, 9).order);
  CHECK(drain(500, 1000, 9).order != drain(500, 1000, 10).order);
  // The inner source's batching does not matter, only the examples and the seed.
  CHECK(drain(500, 100, 3, 1).order == drain(500, 100, 3, 64).order);
  // A window of one keeps the input order.
  auto same = drain(50, 1, 1);
  for (std::size_t k = 0; k < same.order.size(); ++k) CHECK(same.order[k] == k);
}

TEST_CASE("shuffled source: an error of the input is returned", "[core][train]") {
  counting_source inner(1000, 10, 300);
  train::shuffled_source s(inner, 100, 16, 1);
  data::example_batch b;
  result<bool> more = true;
  std::size_t seen = 0;
  while (more.is_ok() && *more) {
    more = s.next(b);
    if (more.is_ok() && *more) seen += b.size();
  }
  REQUIRE_FALSE(more.is_ok());
  CHECK(more.error().message() == "disk gone");
  CHECK(seen == 300);  // the windows before the error
}
