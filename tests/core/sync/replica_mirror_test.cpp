#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ss/core/random.hpp"
#include "ss/core/sync/replica_mirror.hpp"
#include "ss/core/sync/sync_algorithms.hpp"

using namespace ss;
using namespace ss::sync;

namespace {

constexpr std::uint32_t block = 64;

std::vector<float> gaussian(std::size_t n, rng& r, float scale) {
  std::vector<float> v(n);
  for (auto& x : v) x = scale * static_cast<float>(r.normal());
  return v;
}

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  float m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// One EASGD exchange over the mirror: the trainer sends its live replica, the server rebuilds it,
// moves its center by the dequantized delta and the trainer's replica by minus the same.
void easgd_exchange(mirror_sender& trainer, mirror_receiver& server, std::vector<float>& live,
                    std::vector<float>& center, float alpha) {
  const std::size_t n = live.size();
  quantized_vector request, reply;
  if (trainer.base() == 0) {
    trainer.encode_full(live.data());
    server.decode_full(live.data());
  } else {
    trainer.encode(live.data(), request);
    REQUIRE(server.decode(trainer.base(), request).is_ok());
  }
  std::vector<float> delta(n), applied(n), scratch = center;
  easgd_step(server.replica().data(), scratch.data(), alpha, delta.data(), n);
  server.encode_delta(delta.data(), block, reply, applied.data());
  for (std::size_t i = 0; i < n; ++i) center[i] += applied[i];
  trainer.accept(server.sequence(), reply, true, live.data());
}

}  // namespace

TEST_CASE("replica mirror: both ends hold the same mirror after every exchange, and rounding never piles up",
          "[core][sync]") {
  const std::size_t n = 300;
  rng r(7);
  std::vector<float> live = gaussian(n, r, 0.1f), center = live;
  mirror_sender trainer(n, block);
  mirror_receiver server(n);
  float worst = 0;
  for (int round = 0; round < 200; ++round) {
    // The workers train between two exchanges.
    const auto step = gaussian(n, r, 0.01f);
    for (std::size_t i = 0; i < n; ++i) live[i] += step[i];
    const auto before = live;
    easgd_exchange(trainer, server, live, center, 0.45f);
    // The mirrors agree bit for bit: the next request is decoded from the very values it was encoded against.
    REQUIRE(trainer.mirror() == server.mirror());
    // What the server rebuilt differs from the replica by one request's rounding (at most half a
    // step of a block whose values are a round's change): error feedback keeps it from growing.
    worst = std::max(worst, max_abs_diff(server.replica(), before));
  }
  CHECK(trainer.base() == 200);
  CHECK(worst < 0.01f);  // a round's change is ~0.01 per value, its rounding at most ~0.0003
  CHECK(worst > 0.0f);   // (and it is quantized at all)
}

TEST_CASE("replica mirror: the center gains exactly what the replica gives up", "[core][sync]") {
  const std::size_t n = 130;
  rng r(3);
  std::vector<float> live = gaussian(n, r, 1.0f), center = gaussian(n, r, 1.0f);
  mirror_sender trainer(n, block);
  mirror_receiver server(n);
  for (int round = 0; round < 5; ++round) {
    const auto live_before = live, center_before = center;
    easgd_exchange(trainer, server, live, center, 0.3f);
    for (std::size_t i = 0; i < n; ++i)
      CHECK(static_cast<double>(live[i]) + center[i] ==
            Approx(static_cast<double>(live_before[i]) + center_before[i]).margin(1e-6));
  }
}

TEST_CASE("replica mirror: a target comes back as target - replica and the replica lands on it", "[core][sync]") {
  const std::size_t n = 200;
  rng r(11);
  std::vector<float> live = gaussian(n, r, 0.5f);
  mirror_sender trainer(n, block);
  mirror_receiver server(n);
  trainer.encode_full(live.data());
  server.decode_full(live.data());
  const auto target = gaussian(n, r, 0.5f);
  quantized_vector reply;
  server.encode_target(target.data(), block, reply);
  trainer.accept(server.sequence(), reply, false, live.data());
  CHECK(trainer.mirror() == server.mirror());
  CHECK(max_abs_diff(live, target) < 0.02f);  // one 8-bit step of a ~1.5-wide block
  CHECK(max_abs_diff(live, trainer.mirror()) < 1e-6f);
}

TEST_CASE("replica mirror: a request against a mirror the server does not hold, or malformed, is refused",
          "[core][sync]") {
  const std::size_t n = 100;
  rng r(5);
  std::vector<float> live = gaussian(n, r, 0.1f), center = live;
  mirror_sender trainer(n, block);
  mirror_receiver server(n), restarted(n);
  easgd_exchange(trainer, server, live, center, 0.5f);
  quantized_vector q;
  trainer.encode(live.data(), q);
  // A restarted server holds no mirror; an old base (the answer to an exchange was lost) is stale.
  CHECK(restarted.decode(trainer.base(), q).code() == errc::not_found);
  CHECK(server.decode(trainer.base() + 1, q).code() == errc::not_found);
  const auto held = server.replica();
  auto bad = q;
  bad.scales[0] = std::numeric_limits<float>::infinity();
  CHECK(server.decode(trainer.base(), bad).code() == errc::out_of_range);
  bad = q;
  bad.values.pop_back();
  CHECK(server.decode(trainer.base(), bad).code() == errc::invalid_argument);
  CHECK(server.replica() == held);  // nothing changed
  // A retry decodes the same request again from the same mirror: the same replica, not twice the change.
  REQUIRE(server.decode(trainer.base(), q).is_ok());
  const auto once = server.replica();
  REQUIRE(server.decode(trainer.base(), q).is_ok());
  CHECK(server.replica() == once);
  // After a reset the trainer sends its full slice, which starts a new mirror.
  trainer.reset();
  CHECK(trainer.base() == 0);
  easgd_exchange(trainer, restarted, live, center, 0.5f);
  CHECK(trainer.base() == restarted.sequence());
  CHECK(trainer.mirror() == restarted.mirror());
}
