// Checksums for durable data: CRC32C (Castagnoli) to detect torn or bit-flipped records, and a
// stable 64-bit hash for content fingerprints (checkpoint manifests). Both are fixed algorithms:
// their values are part of on-disk formats and must never change.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ss {

// CRC32C (Castagnoli polynomial 0x1EDC6F41, reflected, init and final xor 0xFFFFFFFF: the iSCSI /
// ext4 / RocksDB CRC). Pass a previous result as `crc` to continue over more bytes:
// crc32c(b, nb, crc32c(a, na)) == crc32c(a ++ b). crc32c("123456789", 9) == 0xE3069283.
// Uses SSE4.2 when the CPU has it (checked once at run time), else table-driven slicing-by-8.
// Thread-safe, allocation-free.
std::uint32_t crc32c(const void* data, std::size_t n, std::uint32_t crc = 0);

// A stable 64-bit hash of a byte string (little-endian by definition, the same on every host),
// seeded. Not cryptographic: it detects accidents (corruption, truncation), not adversaries.
// Equal to ss::hash_bytes (ss/core/hash.hpp) for the same bytes and seed.
std::uint64_t hash64(const void* data, std::size_t n, std::uint64_t seed = 0);

}  // namespace ss
