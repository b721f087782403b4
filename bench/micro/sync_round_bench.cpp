// What one sync exchange costs in CPU, both ends together, without the transport: the trainer
// encodes its slice against its mirror, the server rebuilds it, runs the round and encodes the
// answer, the trainer applies it. For quantized EASGD (the default), quantized MA/BMUF (an answer
// that is a target), and FP32 EASGD as the baseline. On a small machine these microseconds come
// out of training: every trainer pays them once per slice per round.
//
//   sync_round_bench [--values N] [--repeat R]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "ss/core/sync/quantize.hpp"
#include "ss/core/sync/replica_mirror.hpp"
#include "ss/core/sync/sync_algorithms.hpp"

using clock_type = std::chrono::steady_clock;

namespace {

struct ends {
  std::vector<float> live, snapshot, central, target, delta, applied;
  ss::sync::mirror_sender sender;
  ss::sync::mirror_receiver receiver;
  ss::sync::quantized_vector request, reply;
  ends(std::size_t n, std::uint32_t block)
      : live(n), snapshot(n), central(n), target(n), delta(n), applied(n), sender(n, block), receiver(n) {}
};

// Moves the live replica a little, as training would between two rounds.
void train_a_little(std::vector<float>& live, std::mt19937& rng) {
  std::normal_distribution<float> step(0.0f, 1e-3f);
  for (std::size_t i = 0; i < live.size(); i += 7) live[i] += step(rng);
}

double quantized_easgd(ends& e, std::uint32_t block, float alpha) {
  const auto t0 = clock_type::now();
  std::copy(e.live.begin(), e.live.end(), e.snapshot.begin());
  e.sender.encode(e.snapshot.data(), e.request);
  if (!e.receiver.decode(e.sender.base(), e.request).is_ok()) std::abort();
  const float* replica = e.receiver.replica().data();
  ss::sync::easgd_delta(replica, e.central.data(), alpha, e.delta.data(), e.delta.size());
  e.receiver.encode_delta(e.delta.data(), block, e.reply, e.applied.data());
  ss::sync::add(e.central.data(), e.applied.data(), e.central.size());
  (void)ss::sync::relative_distance(replica, e.central.data(), e.central.size());
  e.sender.accept(e.receiver.sequence(), e.reply, true, e.live.data());
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double quantized_target(ends& e, std::uint32_t block) {
  const auto t0 = clock_type::now();
  std::copy(e.live.begin(), e.live.end(), e.snapshot.begin());
  e.sender.encode(e.snapshot.data(), e.request);
  if (!e.receiver.decode(e.sender.base(), e.request).is_ok()) std::abort();
  (void)ss::sync::relative_distance(e.receiver.replica().data(), e.target.data(), e.target.size());
  e.receiver.encode_target(e.target.data(), block, e.reply);
  e.sender.accept(e.receiver.sequence(), e.reply, false, e.live.data());
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double fp32_easgd(ends& e, float alpha) {
  const auto t0 = clock_type::now();
  std::copy(e.live.begin(), e.live.end(), e.snapshot.begin());
  std::vector<float> request(e.snapshot), reply(e.snapshot.size());  // what the wire copies
  (void)ss::sync::relative_distance(request.data(), e.central.data(), e.central.size());
  ss::sync::easgd_step(request.data(), e.central.data(), alpha, reply.data(), reply.size());
  ss::sync::subtract(e.live.data(), reply.data(), reply.size());
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = 238000;
  int repeat = 200;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "sync_round_bench: %s needs a value (--values N, --repeat R)\n", a.c_str());
      return 2;
    }
    if (a == "--values") n = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--repeat") repeat = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "sync_round_bench: unknown option %s (--values N, --repeat R)\n", a.c_str());
      return 2;
    }
  }
  if (n == 0 || repeat < 1) {
    std::fprintf(stderr, "sync_round_bench: --values and --repeat must be positive\n");
    return 2;
  }
  const std::uint32_t block = ss::sync::default_quantization_block;
  std::mt19937 rng(7);
  std::normal_distribution<float> init(0.0f, 0.05f);
  ends e(n, block);
  for (auto& x : e.live) x = init(rng);
  e.central = e.live;
  e.target = e.live;
  // The first exchange of a mirror is full; every later one is quantized.
  e.sender.encode_full(e.live.data());
  e.receiver.decode_full(e.live.data());
  e.receiver.encode_delta(e.delta.data(), block, e.reply, e.applied.data());
  e.sender.accept(e.receiver.sequence(), e.reply, true, e.live.data());

  std::vector<double> easgd, target, fp32;
  for (int r = 0; r < repeat; ++r) {
    train_a_little(e.live, rng);
    easgd.push_back(quantized_easgd(e, block, 0.45f));
    train_a_little(e.live, rng);
    fp32.push_back(fp32_easgd(e, 0.45f));
  }
  ends m(n, block);  // a second pair for rounds answered with a target (MA, BMUF)
  m.live = e.live;
  m.target = e.live;
  m.sender.encode_full(m.live.data());
  m.receiver.decode_full(m.live.data());
  m.receiver.encode_target(m.target.data(), block, m.reply);
  m.sender.accept(m.receiver.sequence(), m.reply, false, m.live.data());
  for (int r = 0; r < repeat; ++r) {
    train_a_little(m.live, rng);
    for (std::size_t i = 0; i < n; i += 5) m.target[i] += 1e-4f;
    target.push_back(quantized_target(m, block));
  }
  const double us_e = 1e6 * median(easgd), us_t = 1e6 * median(target), us_f = 1e6 * median(fp32);
  std::printf("one sync exchange of %zu values, both ends, no transport (median of %d):\n", n, repeat);
  std::printf("  int8 EASGD        %8.0f us  (%.2f ns per value)  %.2fx the FP32 exchange\n", us_e, 1e3 * us_e / n,
              us_e / us_f);
  std::printf("  int8 MA/BMUF      %8.0f us  (%.2f ns per value)  %.2fx the FP32 exchange\n", us_t, 1e3 * us_t / n,
              us_t / us_f);
  std::printf("  FP32 EASGD        %8.0f us  (%.2f ns per value)\n", us_f, 1e3 * us_f / n);
  std::printf("{\"bench\":\"sync_round\",\"values\":%zu,\"repeat\":%d,\"int8_easgd_us\":%.1f,\"int8_target_us\":%.1f,"
              "\"fp32_easgd_us\":%.1f}\n",
              n, repeat, us_e, us_t, us_f);
  return 0;
}
