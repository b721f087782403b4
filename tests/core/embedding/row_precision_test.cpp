#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ss/core/embedding/memory_rows.hpp"
#include "ss/core/embedding/row_layout.hpp"
#include "ss/core/embedding/row_precision.hpp"
#include "ss/core/embedding/shard_store.hpp"
#include "store_helpers.hpp"

using namespace ss::embedding;

namespace {

// The 16-bit word i of a row's values in its slots (host order, two a slot).
std::uint16_t half_at(const float* slots, std::size_t i) {
  std::uint16_t h;
  std::memcpy(&h, reinterpret_cast<const unsigned char*>(slots) + 2 * i, sizeof h);
  return h;
}

// The 16-bit value of `x` after one stochastic rounding with stream `s`.
float round_once(float x, row_precision p, std::uint64_t s) {
  float slot = 0.0f;
  encode_values_stochastic(&x, 1, p, s, &slot);
  float back = 0.0f;
  decode_values(&slot, 1, p, &back);
  return back;
}

}  // namespace

TEST_CASE("row precision: names, codes and the slots a row's values take", "[core][embedding][precision]") {
  CHECK(*parse_row_precision("fp32") == row_precision::fp32);
  CHECK(*parse_row_precision("bf16") == row_precision::bf16);
  CHECK(*parse_row_precision("fp16") == row_precision::fp16);
  auto bad = parse_row_precision("fp8");
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.error().message() == "unknown row precision 'fp8' (expected fp32, bf16 or fp16)");
  for (auto p : {row_precision::fp32, row_precision::bf16, row_precision::fp16})
    CHECK(*row_precision_of_code(static_cast<std::uint32_t>(p), "x") == p);
  auto unknown = row_precision_of_code(3, "model file m.ssm");
  REQUIRE_FALSE(unknown.is_ok());
  CHECK(unknown.error().message() == "model file m.ssm: row precision code 3 is none this build knows (0 fp32, 1 bf16, 2 fp16)");
  CHECK(value_slots(16, row_precision::fp32) == 16);
  CHECK(value_slots(16, row_precision::bf16) == 8);
  CHECK(value_slots(3, row_precision::fp16) == 2);  // an odd dim: the last slot half used
  CHECK(value_slots(3, row_precision::fp32) == 3);
}

TEST_CASE("row precision: every 16-bit value decodes and encodes back to itself", "[core][embedding][precision]") {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const float b = float_of_bf16(bits), f = float_of_fp16(bits);
    if (!std::isnan(b)) REQUIRE(bf16_of(b) == bits);
    else REQUIRE(std::isnan(float_of_bf16(bf16_of(b))));
    if (!std::isnan(f)) REQUIRE(fp16_of(f) == bits);
    else REQUIRE(std::isnan(float_of_fp16(fp16_of(f))));
  }
  // The batch conversions (vectorized; fp16 on the CPU's own instructions where it has them) agree
  // with the scalar ones on every pattern, and on FP32 values of every magnitude.
  std::vector<std::uint16_t> patterns(65536);
  for (std::uint32_t h = 0; h < 65536; ++h) patterns[h] = static_cast<std::uint16_t>(h);
  for (auto p : {row_precision::bf16, row_precision::fp16}) {
    CAPTURE(to_string(p));
    std::vector<float> decoded(65536);
    from_halves(patterns.data(), patterns.size(), p, decoded.data());
    for (std::uint32_t h = 0; h < 65536; ++h) {
      const float scalar = p == row_precision::bf16 ? float_of_bf16(patterns[h]) : float_of_fp16(patterns[h]);
      if (std::isnan(scalar)) REQUIRE(std::isnan(decoded[h]));
      else REQUIRE(std::memcmp(&decoded[h], &scalar, sizeof scalar) == 0);
    }
    std::vector<float> values;
    for (std::uint32_t e = 0; e < 256; ++e)
      for (std::uint32_t m : {0u, 1u, 0x1000u, 0x1FFFu, 0x2000u, 0x7FFFu, 0x8000u, 0x7FFFFFu, 0x3FF000u, 0x400FFFu})
        for (std::uint32_t sign : {0u, 0x80000000u}) {
          const std::uint32_t bits = sign | (e << 23) | m;
          float v;
          std::memcpy(&v, &bits, sizeof v);
          values.push_back(v);
        }
    std::vector<std::uint16_t> encoded(values.size());
    to_halves(values.data(), values.size(), p, encoded.data());
    std::vector<float> in_place = values;  // many chunks of round_to_nearest's buffer
    round_to_nearest(in_place.data(), in_place.size(), p);
    for (std::size_t i = 0; i < values.size(); ++i) {
      CAPTURE(values[i]);
      const std::uint16_t scalar = p == row_precision::bf16 ? bf16_of(values[i]) : fp16_of(values[i]);
      const float back = p == row_precision::bf16 ? float_of_bf16(encoded[i]) : float_of_fp16(encoded[i]);
      if (std::isnan(values[i])) {
        REQUIRE(std::isnan(back));
        REQUIRE(std::isnan(in_place[i]));
      } else {
        REQUIRE(encoded[i] == scalar);
        REQUIRE(std::memcmp(&in_place[i], &back, sizeof back) == 0);
      }
    }
  }
  // Known values: bf16 keeps FP32's exponent, fp16 has IEEE half's.
  CHECK(float_of_fp16(0x3C00) == 1.0f);
  CHECK(float_of_fp16(0x7BFF) == 65504.0f);
  CHECK(float_of_fp16(0x0001) == std::ldexp(1.0f, -24));
  CHECK(float_of_fp16(0xC000) == -2.0f);
  CHECK(float_of_bf16(0x3F80) == 1.0f);
  CHECK(float_of_bf16(0x4049) == 3.140625f);
}

TEST_CASE("row precision: nearest rounding ties to even and keeps specials", "[core][embedding][precision]") {
  // bf16 spacing at 1 is 2^-7: 1 + 2^-8 is a tie, to the even 1; 1 + 3 * 2^-8 ties to 1 + 2^-6.
  CHECK(float_of_bf16(bf16_of(1.0f + std::ldexp(1.0f, -8))) == 1.0f);
  CHECK(float_of_bf16(bf16_of(1.0f + 3 * std::ldexp(1.0f, -8))) == 1.0f + std::ldexp(1.0f, -6));
  CHECK(float_of_bf16(bf16_of(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20))) == 1.0f + std::ldexp(1.0f, -7));
  // fp16 spacing at 1 is 2^-10.
  CHECK(float_of_fp16(fp16_of(1.0f + std::ldexp(1.0f, -11))) == 1.0f);
  CHECK(float_of_fp16(fp16_of(1.0f + 3 * std::ldexp(1.0f, -11))) == 1.0f + std::ldexp(1.0f, -9));
  // fp16: beyond 65520 is infinity, below it the largest finite value; subnormals to 2^-24.
  CHECK(std::isinf(float_of_fp16(fp16_of(70000.0f))));
  CHECK(float_of_fp16(fp16_of(65519.0f)) == 65504.0f);
  CHECK(float_of_fp16(fp16_of(std::ldexp(3.0f, -25))) == std::ldexp(2.0f, -24));  // 1.5 units: to even 2
  CHECK(float_of_fp16(fp16_of(std::ldexp(1.0f, -26))) == 0.0f);
  CHECK(float_of_fp16(fp16_of(-std::ldexp(5.0f, -24))) == -std::ldexp(5.0f, -24));
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(float_of_bf16(bf16_of(-inf)) == -inf);
  CHECK(float_of_fp16(fp16_of(inf)) == inf);
  CHECK(std::isnan(float_of_bf16(bf16_of(nan))));
  CHECK(std::isnan(float_of_fp16(fp16_of(nan))));
  // A NaN whose payload sits only in the bits bf16 drops stays a NaN (not infinity).
  std::uint32_t low_nan_bits = 0x7F800001u;
  float low_nan;
  std::memcpy(&low_nan, &low_nan_bits, sizeof low_nan);
  CHECK(std::isnan(float_of_bf16(bf16_of(low_nan))));
}

TEST_CASE("row precision: stochastic rounding is unbiased, reproducible and lands on a neighbour",
          "[core][embedding][precision]") {
  struct probe {
    row_precision p;
    float x;
  };
  const probe probes[] = {
      {row_precision::bf16, 1.0f + 0.3f * std::ldexp(1.0f, -7)},   // 30% of the way to the next value
      {row_precision::bf16, -0.01f},                               // negative: away from zero as often
      {row_precision::fp16, 0.1f},
      {row_precision::fp16, std::ldexp(0.25f, -24)},               // a quarter of fp16's smallest subnormal
      {row_precision::fp16, -std::ldexp(1.0f, -15) * 1.37f},      // subnormal range
  };
  for (const auto& [p, x] : probes) {
    CAPTURE(to_string(p), x);
    // The two neighbours: x's bits truncated towards zero at the precision, and the next value out.
    const std::uint16_t toward_zero = p == row_precision::bf16 ? bf16_of(x) : fp16_of(x);
    float a = p == row_precision::bf16 ? float_of_bf16(toward_zero) : float_of_fp16(toward_zero);
    const auto step = static_cast<std::uint16_t>(std::fabs(a) > std::fabs(x) ? toward_zero - 1 : toward_zero + 1);
    float b = p == row_precision::bf16 ? float_of_bf16(step) : float_of_fp16(step);
    const float lo = std::min(a, b), hi = std::max(a, b);
    REQUIRE((lo < x && x < hi));
    constexpr int n = 200000;
    double sum = 0.0;
    for (int i = 0; i < n; ++i) {
      const float r = round_once(x, p, static_cast<std::uint64_t>(i) * 7919u);
      REQUIRE((r == lo || r == hi));
      sum += r;
    }
    const double mean = sum / n, gap = std::fabs(static_cast<double>(hi) - lo);
    // The mean of n draws between two values `gap` apart: within 5 standard errors of x.
    CHECK(std::fabs(mean - x) < 5 * gap * 0.5 / std::sqrt(static_cast<double>(n)));
    CHECK(round_once(x, p, 42) == round_once(x, p, 42));
  }
  // Representable values never move; nor do specials.
  for (std::uint64_t s = 0; s < 100; ++s) {
    for (float v : {1.0f, -2.5f, 0.0f, 65536.0f, 3.140625f}) REQUIRE(round_once(v, row_precision::bf16, s) == v);
    for (float v : {1.0f, -2.5f, 0.0f, 65504.0f, std::ldexp(3.0f, -24)}) REQUIRE(round_once(v, row_precision::fp16, s) == v);
  }
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (auto p : {row_precision::bf16, row_precision::fp16}) {
    CHECK(round_once(inf, p, 3) == inf);
    CHECK(round_once(-inf, p, 4) == -inf);
    CHECK(std::isnan(round_once(nan, p, 5)));
  }
  // No value rounds past the largest finite one.
  CHECK(round_once(65510.0f, row_precision::fp16, 5) == 65504.0f);
  CHECK(std::isfinite(round_once(std::numeric_limits<float>::max(), row_precision::bf16, 9)));
}

TEST_CASE("row precision: steps below the spacing still move a row, on average", "[core][embedding][precision]") {
  // bf16 near 1 is spaced 2^-7 = 0.0078: a step of 1e-4 is lost to nearest rounding every time,
  // and accumulates under stochastic rounding.
  float nearest_slot = 0.0f, stochastic_slot = 0.0f;
  const float one = 1.0f;
  encode_values(&one, 1, row_precision::bf16, &nearest_slot);
  encode_values(&one, 1, row_precision::bf16, &stochastic_slot);
  for (std::uint64_t step = 0; step < 1000; ++step) {
    float v = 0.0f;
    decode_values(&nearest_slot, 1, row_precision::bf16, &v);
    v += 1e-4f;
    encode_values(&v, 1, row_precision::bf16, &nearest_slot);
    decode_values(&stochastic_slot, 1, row_precision::bf16, &v);
    v += 1e-4f;
    encode_values_stochastic(&v, 1, row_precision::bf16, stochastic_stream(stochastic_update(1, 0, step), 7), &stochastic_slot);
  }
  float nearest = 0.0f, stochastic = 0.0f;
  decode_values(&nearest_slot, 1, row_precision::bf16, &nearest);
  decode_values(&stochastic_slot, 1, row_precision::bf16, &stochastic);
  CHECK(nearest == 1.0f);
  CHECK(stochastic == Approx(1.1f).margin(0.03));  // 1 + 1000 x 1e-4, within a few spacings
}

TEST_CASE("row precision: rows pack two values a slot, and an odd dim's spare half is zero",
          "[core][embedding][precision]") {
  const float values[3] = {0.5f, -0.25f, 3.0f};
  float slots[2];
  std::memset(slots, 0xFF, sizeof slots);
  encode_values(values, 3, row_precision::fp16, slots);
  CHECK(half_at(slots, 0) == fp16_of(0.5f));
  CHECK(half_at(slots, 1) == fp16_of(-0.25f));
  CHECK(half_at(slots, 2) == fp16_of(3.0f));
  CHECK(half_at(slots, 3) == 0);
  float back[3];
  decode_values(slots, 3, row_precision::fp16, back);
  CHECK(std::vector<float>(back, back + 3) == std::vector<float>(values, values + 3));
  std::uint16_t halves[3];
  to_halves(values, 3, row_precision::bf16, halves);
  float from[3];
  from_halves(halves, 3, row_precision::bf16, from);
  CHECK(std::vector<float>(from, from + 3) == std::vector<float>(values, values + 3));
}

TEST_CASE("shard store: bf16 and fp16 rows take half the slots and train like FP32 ones",
          "[core][embedding][precision]") {
  using testing::store_options;
  const std::uint32_t tables[] = {0, 0, 1};
  const std::uint64_t ids[] = {11, 12, 11};
  for (auto p : {row_precision::bf16, row_precision::fp16}) {
    CAPTURE(to_string(p));
    auto wide_options = store_options();
    wide_options.optimizer.kind = ss::optim::sparse_kind::rowwise_adagrad;
    wide_options.dim = 16;
    auto half_options = wide_options;
    half_options.precision = p;
    shard_store wide(wide_options), half(half_options), twin(half_options);
    CHECK(wide.row_floats() == 17);
    CHECK(half.row_floats() == 9);  // 8 slots of values, the Adagrad state at FP32
    std::vector<float> w(3 * 16), h(3 * 16), t(3 * 16);
    REQUIRE(wide.lookup(tables, ids, 3, true, w.data()).is_ok());
    REQUIRE(half.lookup(tables, ids, 3, true, h.data()).is_ok());
    // A new row is the FP32 row rounded to the nearest.
    std::vector<float> nearest = w;
    round_to_nearest(nearest.data(), nearest.size(), p);
    CHECK(h == nearest);
    // Many small pushes: the 16-bit rows follow the FP32 ones within a few of their spacings,
    // and two stores of one seed fed the same pushes hold the same rows.
    REQUIRE(twin.lookup(tables, ids, 3, true, t.data()).is_ok());
    std::vector<float> grads(3 * 16);
    for (int step = 0; step < 300; ++step) {
      // Of one sign, so that the rows travel far against the noise of rounding.
      for (std::size_t i = 0; i < grads.size(); ++i) grads[i] = 0.002f * static_cast<float>((i * 7 + step) % 11) + 0.001f;
      REQUIRE(wide.push(tables, ids, 3, grads.data(), 0.1f).is_ok());
      REQUIRE(half.push(tables, ids, 3, grads.data(), 0.1f).is_ok());
      REQUIRE(twin.push(tables, ids, 3, grads.data(), 0.1f).is_ok());
    }
    REQUIRE(wide.lookup(tables, ids, 3, false, w.data()).is_ok());
    REQUIRE(half.lookup(tables, ids, 3, false, h.data()).is_ok());
    REQUIRE(twin.lookup(tables, ids, 3, false, t.data()).is_ok());
    CHECK(h == t);
    // Each stochastic rounding adds noise of about a third of the spacing between 16-bit values
    // near the row (ulp), unbiased: after 300 updates a 16-bit value is off its FP32 twin by
    // sqrt(300 / 12) = 5 ulp in the root mean square (4 in the mean), not more.
    double moved = 0.0, off_in_ulps = 0.0;
    std::vector<float> start(3 * 16);
    shard_store fresh(wide_options);
    REQUIRE(fresh.lookup(tables, ids, 3, false, start.data()).is_ok());
    for (std::size_t i = 0; i < w.size(); ++i) {
      moved += std::fabs(w[i] - start[i]);
      const std::uint16_t bits = p == row_precision::bf16 ? bf16_of(w[i]) : fp16_of(w[i]);
      const auto next = static_cast<std::uint16_t>(bits + 1);
      const float ulp = p == row_precision::bf16 ? std::fabs(float_of_bf16(next) - float_of_bf16(bits))
                                                 : std::fabs(float_of_fp16(next) - float_of_fp16(bits));
      off_in_ulps += std::fabs(h[i] - w[i]) / ulp;
    }
    const double mean_off_in_ulps = off_in_ulps / static_cast<double>(w.size());
    CAPTURE(moved, mean_off_in_ulps);
    CHECK(moved > 10.0);               // the pushes moved the rows, by hundreds of ulps each
    CHECK(mean_off_in_ulps < 8.0);    // and the 16-bit rows went where the FP32 ones did
  }
}

TEST_CASE("shard store: 16-bit rows flush and read back from storage as they are", "[core][embedding][precision]") {
  using testing::store_options;
  auto o = store_options();
  o.dim = 5;  // odd: the last value slot is half used
  o.precision = row_precision::bf16;
  auto storage = std::make_shared<memory_rows>(shard_row_floats(o));
  CHECK(storage->row_floats() == 3);
  o.max_rows_in_memory = 1;
  o.cold = storage;
  shard_store store(o);
  const std::uint32_t tables[] = {0, 0, 0};
  const std::uint64_t ids[] = {1, 2, 3};
  std::vector<float> before(15), after(15), grads(15, 0.3f);
  REQUIRE(store.lookup(tables, ids, 3, true, before.data()).is_ok());
  REQUIRE(store.push(tables, ids, 3, grads.data()).is_ok());
  REQUIRE(store.lookup(tables, ids, 3, false, before.data()).is_ok());
  REQUIRE(testing::flush(store, *storage).is_ok());
  store.shrink_to_budget();  // two of the three go to storage
  REQUIRE(store.lookup(tables, ids, 3, false, after.data()).is_ok());
  CHECK(after == before);
  CHECK(store.stats().misses > 0);
}

TEST_CASE("shard store: a row's layout names what its slots hold", "[core][embedding][precision]") {
  shard_store_options o;
  o.dim = 16;
  CHECK(shard_row_layout(o) == "16 fp32 values");
  o.precision = row_precision::bf16;
  o.optimizer.kind = ss::optim::sparse_kind::rowwise_adagrad;
  CHECK(shard_row_layout(o) == "16 bf16 values, 1 fp32 optimizer value");
  o.ttl = *parse_row_ttl("100000ex");
  CHECK(shard_row_layout(o) == "16 bf16 values, 1 fp32 optimizer value, a TTL stamp");
  CHECK(shard_row_floats(o) == 10);
  // What a memory budget counts: the real bytes of the slots.
  CHECK(row_bytes_in_memory(shard_row_floats(o)) == 10 * 4 + row_overhead_bytes);
}

TEST_CASE("row layouts: described in words and read back; only a precision change converts", "[embedding]") {
  using ss::embedding::row_layout;
  using ss::embedding::row_precision;
  for (std::uint32_t dim : {1u, 16u, 63u}) {
    for (row_precision p : {row_precision::fp32, row_precision::bf16, row_precision::fp16}) {
      for (std::uint32_t state : {0u, 1u, 2u}) {
        for (bool ttl : {false, true}) {
          const row_layout l{dim, p, state, ttl};
          auto back = ss::embedding::parse_row_layout(describe(l));
          INFO(describe(l));
          REQUIRE(back.is_ok());
          CHECK(*back == l);
        }
      }
    }
  }
  CHECK(describe(row_layout{16, row_precision::bf16, 1, true}) == "16 bf16 values, 1 fp32 optimizer value, a TTL stamp");
  CHECK(describe(row_layout{8, row_precision::fp16, 2, false}) == "8 fp16 values, 2 fp32 optimizer values");
  for (const char* bad : {"", "16 fp8 values", "0 fp32 values", "16 fp32 values, 1 fp32 optimizer values",
                          "16 fp32 values, 2 fp32 optimizer value", "16 fp32 values, a TTL stamp, 1 fp32 optimizer value",
                          "16 fp32 values,", "x16 fp32 values", "16 fp32 values, a TTL stamp, a TTL stamp"}) {
    INFO(bad);
    auto r = ss::embedding::parse_row_layout(bad);
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.error().code() == ss::errc::parse_error);
  }
  const row_layout fp32{16, row_precision::fp32, 1, false};
  CHECK(converts_to(fp32, row_layout{16, row_precision::bf16, 1, false}));
  CHECK_FALSE(converts_to(fp32, row_layout{32, row_precision::bf16, 1, false}));  // same slots, another model
  CHECK_FALSE(converts_to(fp32, row_layout{16, row_precision::bf16, 2, false}));
  CHECK_FALSE(converts_to(fp32, row_layout{16, row_precision::fp32, 1, true}));
}

TEST_CASE("row layouts: a row converts to another precision rounded to the nearest, its state and stamp as bits",
          "[embedding]") {
  using ss::embedding::row_layout;
  using ss::embedding::row_precision;
  const row_layout fp32{5, row_precision::fp32, 1, true};
  const std::vector<float> row{1.0f + 1.0f / 512, -3.14159f, 1e-30f, 0.0f, 65519.0f, 0.123456789f, 7.0f};
  for (row_precision p : {row_precision::bf16, row_precision::fp16}) {
    const row_layout half{5, p, 1, true};
    std::vector<float> out(half.slots(), -1.0f);
    REQUIRE(convert_row(fp32, half, row.data(), out.data()));
    std::vector<float> values(5);
    ss::embedding::decode_values(out.data(), 5, p, values.data());
    std::vector<float> nearest(row.begin(), row.begin() + 5);
    ss::embedding::round_to_nearest(nearest.data(), 5, p);
    CHECK(values == nearest);
    CHECK(out[half.slots() - 2] == 0.123456789f);  // the optimizer value
    CHECK(out[half.slots() - 1] == 7.0f);          // the stamp
    // Back to fp32: exact.
    std::vector<float> back(fp32.slots());
    REQUIRE(convert_row(half, fp32, out.data(), back.data()));
    CHECK(std::vector<float>(back.begin(), back.begin() + 5) == nearest);
    CHECK(back[5] == row[5]);
    CHECK(back[6] == row[6]);
  }
  // fp16 ends at 65504 (65519 still rounds to it): a larger finite value does not convert.
  std::vector<float> big = row;
  big[4] = 65520.0f;
  std::vector<float> out(row_layout{5, row_precision::fp16, 1, true}.slots());
  CHECK_FALSE(convert_row(fp32, row_layout{5, row_precision::fp16, 1, true}, big.data(), out.data()));
  CHECK(convert_row(fp32, row_layout{5, row_precision::bf16, 1, true}, big.data(), out.data()));
  // bf16 keeps FP32's exponent, but a value in FP32's last half step of bf16 would round to infinity.
  big[4] = 3.4e38f;
  CHECK_FALSE(convert_row(fp32, row_layout{5, row_precision::bf16, 1, true}, big.data(), out.data()));
}

TEST_CASE("16-bit values as little-endian bytes, and the values that would round to infinity", "[embedding]") {
  const std::vector<float> values{1.0f, -2.0f, 0.5f};
  for (row_precision p : {row_precision::bf16, row_precision::fp16}) {
    std::vector<unsigned char> bytes(2 * values.size());
    to_halves_le(values.data(), values.size(), p, bytes.data());
    std::vector<std::uint16_t> halves(values.size());
    to_halves(values.data(), values.size(), p, halves.data());
    for (std::size_t i = 0; i < values.size(); ++i) {
      CHECK(bytes[2 * i] == (halves[i] & 0xFF));  // low byte first
      CHECK(bytes[2 * i + 1] == (halves[i] >> 8));
    }
    std::vector<float> back(values.size());
    from_halves_le(bytes.data(), values.size(), p, back.data());
    CHECK(back == values);
  }
  // More than one chunk of 64 goes through whole.
  std::vector<float> many(200);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = static_cast<float>(i) * 0.25f;
  std::vector<unsigned char> bytes(400);
  to_halves_le(many.data(), many.size(), row_precision::bf16, bytes.data());
  std::vector<float> back(many.size());
  from_halves_le(bytes.data(), many.size(), row_precision::bf16, back.data());
  CHECK(back == many);

  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // fp16: 65504 is its largest; from 65520 on, the nearest is infinity. Infinity and NaN are not
  // finite values that overflow.
  const std::vector<float> around16{65504.0f, 65519.99f, 65520.0f, -70000.0f, inf, nan};
  CHECK(overflows(around16.data(), around16.size(), row_precision::fp16) == 2);
  CHECK(overflows(around16.data(), around16.size(), row_precision::bf16) == 0);
  CHECK(overflows(around16.data(), around16.size(), row_precision::fp32) == 0);
  // bf16: halfway past its largest (0x7F7F) rounds to infinity.
  float below = 0, at = 0;
  const std::uint32_t below_bits = 0x7F7F7FFFu, at_bits = 0x7F7F8000u;
  std::memcpy(&below, &below_bits, 4);
  std::memcpy(&at, &at_bits, 4);
  const std::vector<float> around_bf16{below, at, -at};
  CHECK(overflows(around_bf16.data(), 3, row_precision::bf16) == 2);
  for (float v : around_bf16) CHECK(std::isinf(float_of_bf16(bf16_of(v))) == (v != below));
  CHECK(std::isinf(float_of_fp16(fp16_of(65520.0f))));
  CHECK_FALSE(std::isinf(float_of_fp16(fp16_of(65519.99f))));
}
