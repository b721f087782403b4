// The wire format, byte for byte: every sample message (and every default-constructed one)
// encodes to exactly the frame it encoded to when protocol 1 was laid down. Round trips cannot
// see a change of layout (a codec entry whose fields are reordered allocates its lists in another
// order and still reads back), but peers of other builds would: each frame's size and FNV-1a hash
// are pinned here.
//
// A new message adds a sample to one_of_each(): add the line this test prints for it. A line that
// changes for an existing message is an incompatible change (see wire::protocol_version).
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ss/wire/codec.hpp"
#include "wire_samples.hpp"

using namespace ss::wire;
using namespace ss::wire::testing;

namespace {

struct golden_frame {
  const char* message;
  std::size_t size;
  std::uint64_t fnv1a;
};

std::uint64_t fnv1a(const std::uint8_t* p, std::size_t n) {
  std::uint64_t h = 1469598103934665603ULL;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

std::string line_for(const envelope& e) {
  const frame f = encode(e);
  char line[128];
  std::snprintf(line, sizeof line, "{\"%s\", %zu, 0x%016llxULL},", message_name(e.message), f->size(),
                static_cast<unsigned long long>(fnv1a(f->data(), f->size())));
  return line;
}

std::string line_for(const golden_frame& g) {
  char line[128];
  std::snprintf(line, sizeof line, "{\"%s\", %zu, 0x%016llxULL},", g.message, g.size,
                static_cast<unsigned long long>(g.fnv1a));
  return line;
}

void check_frames(const std::vector<envelope>& samples, const std::vector<golden_frame>& golden) {
  for (std::size_t i = 0; i < samples.size(); ++i) {
    INFO("sample " << i << " encodes as " << line_for(samples[i]));
    REQUIRE(i < golden.size());
    CHECK(line_for(samples[i]) == line_for(golden[i]));
  }
  CHECK(samples.size() == golden.size());
}

}  // namespace

TEST_CASE("codec: every sample message encodes to its protocol 1 bytes", "[wire]") {
  const std::vector<golden_frame> golden = {
    {"error_reply", 80, 0x3b54b00ac5ed773dULL},
    {"register_request", 104, 0x0809bc2d640f27e4ULL},
    {"register_reply", 624, 0x759527bc02df66c2ULL},
    {"heartbeat", 352, 0xe1bdb48f84006490ULL},
    {"heartbeat_reply", 472, 0xb11739fbedd1072eULL},
    {"leave", 64, 0x6785dcd273a97828ULL},
    {"pull_request", 56, 0xc8fb636a10d32d00ULL},
    {"batch_message", 2032, 0x4056c87472a035c6ULL},
    {"end_of_data", 56, 0x57e92c5b80ec783bULL},
    {"batch_ack", 64, 0x31fd1ab3a4eea58cULL},
    {"lookup_request", 112, 0x5a6867cdd1c6af38ULL},
    {"lookup_reply", 104, 0x46ce98af00867adbULL},
    {"push_request", 136, 0xd95405f88d3fff66ULL},
    {"push_reply", 48, 0xe3b2765336bba08cULL},
    {"dense_request", 40, 0x995d8066d1d4b753ULL},
    {"dense_reply", 112, 0xc95f5eafd6a1dd89ULL},
    {"dense_report", 80, 0x9387a1f169b3ad35ULL},
    {"status_request", 40, 0x04530a51a2c5215bULL},
    {"status_reply", 96, 0xdadd5b48867f41a6ULL},
    {"stop_request", 64, 0x10889a74e9eef0fdULL},
    {"ack", 40, 0x30e21058daef9403ULL},
    {"sync_request", 96, 0x019182ba01b49893ULL},
    {"sync_reply", 88, 0x8f0dde53caffbba0ULL},
    {"snapshot_now", 40, 0x09bc3b49a98cffcbULL},
    {"snapshot_request", 80, 0x762361669979a704ULL},
    {"snapshot_reply", 120, 0xe64f90e70160797bULL},
    {"dump_request", 56, 0xc2fd71eb03141213ULL},
    {"dump_reply", 120, 0x54034b07c00a1dc2ULL},
    {"sync_restore", 96, 0x1b4396a37015589aULL},
    {"export_request", 72, 0x1c71728cd387b377ULL},
    {"export_reply", 96, 0x4a23d3e6afaef539ULL},
    {"sync_close", 48, 0x42e9162a5b8d3795ULL},
  };
  check_frames(one_of_each(), golden);
}

TEST_CASE("codec: every default-constructed message encodes to its protocol 1 bytes", "[wire]") {
  const std::vector<golden_frame> golden = {
    {"error_reply", 56, 0x38a79e2e7e7f2997ULL},
    {"register_request", 72, 0x03a5ea142326b238ULL},
    {"register_reply", 192, 0x422ff5d1b954522fULL},
    {"heartbeat", 256, 0xbe459262e0f5bac8ULL},
    {"heartbeat_reply", 136, 0x37b842ff8d6f369fULL},
    {"leave", 56, 0x5514390c6e5762caULL},
    {"pull_request", 56, 0x9f434eeea4ca3e4bULL},
    {"batch_message", 184, 0xe524416688bc7ad0ULL},
    {"end_of_data", 56, 0xc660b1328c2c4125ULL},
    {"batch_ack", 64, 0x08b2bc1f2d8e1dfcULL},
    {"lookup_request", 64, 0x969f1f1ed4454f47ULL},
    {"lookup_reply", 56, 0x64f22a5561f2be04ULL},
    {"push_request", 72, 0x309debf69212fe67ULL},
    {"push_reply", 48, 0x1a6613560952e818ULL},
    {"dense_request", 40, 0xf68f5ca312652d2cULL},
    {"dense_reply", 64, 0xda36fd9d40b779daULL},
    {"dense_report", 64, 0x9d3f0446268d8ff5ULL},
    {"status_request", 40, 0x9254991938869633ULL},
    {"status_reply", 48, 0x439ff2a848e9a247ULL},
    {"stop_request", 48, 0x093a9d11cc76934eULL},
    {"ack", 40, 0x3e3c45698a0bb286ULL},
    {"sync_request", 80, 0xe56bd88685a3e3a0ULL},
    {"sync_reply", 72, 0xe967058b1e712e3dULL},
    {"snapshot_now", 40, 0x58cc0112c0c5b6bdULL},
    {"snapshot_request", 56, 0xf8c2dd27553613cfULL},
    {"snapshot_reply", 88, 0x2cd24fd7660d03deULL},
    {"dump_request", 56, 0xe6abcd678cd5911eULL},
    {"dump_reply", 80, 0x025b5be2556a202aULL},
    {"sync_restore", 64, 0x0334142988d67301ULL},
    {"export_request", 48, 0x88b5aeea3dfda4f0ULL},
    {"export_reply", 72, 0x14401afe276fe675ULL},
    {"sync_close", 48, 0x99e1252e7ad9f9baULL},
  };
  std::vector<envelope> samples = one_of_each();
  for (envelope& e : samples) {
    e.request_id = 0;
    std::visit([](auto& m) { m = std::decay_t<decltype(m)>{}; }, e.message);
  }
  check_frames(samples, golden);
}
