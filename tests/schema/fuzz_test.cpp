// A deterministic mini-fuzzer: random mutations of valid frames must never crash the decoder.
// Whatever it accepts must be a valid envelope: it re-encodes, and the re-encoded frame decodes
// and re-encodes to the same bytes.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "ss/wire/codec.hpp"
#include "wire_samples.hpp"

using namespace ss::wire;
using namespace ss::wire::testing;

TEST_CASE("codec: 20000 random mutations of valid frames never crash the decoder", "[wire]") {
  std::vector<std::vector<std::uint8_t>> corpus;
  for (const envelope& e : one_of_each()) corpus.push_back(bytes_of(encode(e)));
  batch_message big;
  big.batch = criteo_batch(16, 5);
  corpus.push_back(bytes_of(encode(envelope{protocol_version, 3, big})));

  std::mt19937_64 rng(0x5eed2024);
  int accepted = 0;
  int refused = 0;
  for (int round = 0; round < 20000; ++round) {
    std::vector<std::uint8_t> b = corpus[rng() % corpus.size()];
    const int kind = static_cast<int>(rng() % 8);
    if (kind < 5) {
      // Overwrite 1 to 8 bytes with random values.
      const int n = 1 + static_cast<int>(rng() % 8);
      for (int i = 0; i < n; ++i) b[rng() % b.size()] = static_cast<std::uint8_t>(rng());
    } else if (kind == 5) {
      // Flip one bit, mostly where the pointers and struct headers are.
      const std::size_t span = std::min<std::size_t>(b.size(), 96);
      b[rng() % span] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
    } else if (kind == 6) {
      // Overwrite one aligned word with a random one (a random pointer, often).
      const std::size_t words = b.size() / 8;
      put_u64(b, 8 * (rng() % words), rng());
    } else {
      // Cut or extend by whole words and fix up the segment table to match.
      const std::size_t words = b.size() / 8;
      const std::size_t new_words = 1 + rng() % (words + 4);
      b.resize(new_words * 8, static_cast<std::uint8_t>(rng()));
      put_u32(b, 0, 0);
      put_u32(b, 4, static_cast<std::uint32_t>(new_words - 1));
    }
    // Half the time through a misaligned copy.
    ss::result<envelope> r = (round % 2 == 0) ? decode_bytes(b) : [&b] {
      std::vector<std::uint8_t> shifted(b.size() + 1);
      std::copy(b.begin(), b.end(), shifted.begin() + 1);
      return decode(shifted.data() + 1, b.size());
    }();
    (void)peek_header(*make_frame(b.data(), b.size()));
    if (!r.is_ok()) {
      ++refused;
      continue;
    }
    ++accepted;
    frame again = encode(*r);
    auto r2 = decode(*again);
    if (!r2.is_ok())
      FAIL("round " << round
                    << ": an accepted frame re-encodes to a refused one: " << error_of(r2));
    if (bytes_of(encode(*r2)) != bytes_of(again))
      FAIL("round " << round << ": re-encoding is not stable");
  }
  INFO("accepted " << accepted << ", refused " << refused);
  CHECK(accepted + refused == 20000);
  CHECK(refused > 0);
  CHECK(accepted > 0);  // many mutations only touch values
}
