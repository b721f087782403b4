// The wire format, byte for byte: every sample message (and every default-constructed one)
// encodes to exactly the frame it encoded to when protocol 2 was laid down. Round trips cannot
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

TEST_CASE("codec: every sample message encodes to its protocol 2 bytes", "[wire]") {
  const std::vector<golden_frame> golden = {
    {"error_reply", 80, 0xd9a2b4bb37df2cceULL},
    {"register_request", 136, 0xe7dba170f0ad6a44ULL},  // heartbeat interval, host, pid, membership (@5-@8), added compatibly
    {"register_reply", 696, 0xcac271a253126d28ULL},  // view.coordinator, memberships, dropped; membership: added compatibly
    {"heartbeat", 360, 0xa14410797590c6f1ULL},
    {"heartbeat_reply", 536, 0x82af1f2f88cd63caULL},  // view.coordinator, memberships, dropped: added compatibly
    {"leave", 64, 0x68450d55cb5aa3e3ULL},
    {"pull_request", 88, 0x6bd775f68db7d043ULL},  // with pull and abandoned (@2, @3), added compatibly
    {"batch_message", 2032, 0x01c5c7c9756a26f5ULL},
    {"end_of_data", 56, 0xdea8fb2365bbdb60ULL},
    {"batch_ack", 72, 0xb229d87e4e88e0aeULL},  // with trainer (@3), added compatibly
    {"lookup_request", 112, 0xd411945f1c11febfULL},  // with examples (@3), added compatibly
    {"lookup_reply", 104, 0xb44ca695f1bd770cULL},
    {"push_request", 160, 0xe667dd8614e418aeULL},  // trainer, membership, number (@4-@6), added compatibly
    {"push_reply", 56, 0xff1e17602892851eULL},  // duplicate (@1), added compatibly
    {"dense_request", 40, 0xf931fc75d6523594ULL},
    {"dense_reply", 112, 0x0cd56eeaba9c4d9aULL},
    {"dense_report", 80, 0x39c4c42ad415fb36ULL},
    {"status_request", 40, 0xf80f801ffb2874bcULL},
    {"status_reply", 96, 0xf082eedc636cfdc9ULL},
    {"stop_request", 64, 0x02240209e3c73656ULL},
    {"ack", 40, 0x5c1cac7984b81bd4ULL},
    {"sync_request", 160, 0x7185fef27cf5991dULL},  // membership (@8), added compatibly
    {"sync_reply", 144, 0x7353f02fd678090eULL},
    {"snapshot_now", 40, 0x9188df4cad55ec0cULL},
    {"snapshot_request", 80, 0x2fd711b491378e87ULL},
    {"snapshot_reply", 120, 0x0190d912a388bc44ULL},
    {"dump_request", 56, 0x55ab5da20f636910ULL},
    {"dump_reply", 120, 0x897bc8c99fabfa31ULL},
    {"sync_restore", 96, 0xa9613178571ea005ULL},
    {"export_request", 72, 0x3e0279b05d8c39b4ULL},
    {"export_reply", 96, 0xb71ec309ad00482eULL},
    {"sync_close", 48, 0xf54b5b6965131df6ULL},
    {"warm_request", 80, 0xd88c5f9ba76d7382ULL},
    {"warm_reply", 56, 0xc89b666d6c5518adULL},
  };
  check_frames(one_of_each(), golden);
}

TEST_CASE("codec: every default-constructed message encodes to its protocol 2 bytes", "[wire]") {
  const std::vector<golden_frame> golden = {
    {"error_reply", 56, 0x812f17518fad4084ULL},
    {"register_request", 96, 0xcc342c7957f5a5c7ULL},
    {"register_reply", 224, 0xbfe81bcf2d160d82ULL},
    {"heartbeat", 264, 0x12429d6ae81dc8f5ULL},
    {"heartbeat_reply", 160, 0xfdb19f044712d18cULL},
    {"leave", 56, 0x24ddbb6c768bf189ULL},
    {"pull_request", 72, 0xec177817532784beULL},
    {"batch_message", 184, 0xfdfe71d4dae98a23ULL},
    {"end_of_data", 56, 0xf376044d820028f6ULL},
    {"batch_ack", 72, 0xa49435ad767ba047ULL},
    {"lookup_request", 64, 0x2a8490c44c9eb774ULL},
    {"lookup_reply", 56, 0x54e48b2aac39ac17ULL},
    {"push_request", 96, 0x0277166df41d7722ULL},
    {"push_reply", 56, 0xbb803bead284c0cbULL},
    {"dense_request", 40, 0xb26a7e56dbd11cdfULL},
    {"dense_reply", 64, 0x14871c4d47bcee19ULL},
    {"dense_report", 64, 0x6d7b037f5c14f1e6ULL},
    {"status_request", 40, 0xdf94ad77a0f27ec0ULL},
    {"status_reply", 48, 0x46cc1793027748d4ULL},
    {"stop_request", 48, 0x81316d297eea57cdULL},
    {"ack", 40, 0x638c39fdece9cca5ULL},
    {"sync_request", 128, 0x2053213e1cc9b1d4ULL},
    {"sync_reply", 112, 0x6b0d1f51d7f6182fULL},
    {"snapshot_now", 40, 0xedf392f85dd57e6eULL},
    {"snapshot_request", 56, 0xc180d43c13d1ff2cULL},
    {"snapshot_reply", 88, 0x451ce2821e868ccdULL},
    {"dump_request", 56, 0xd397e3fbdc3281ddULL},
    {"dump_reply", 80, 0x9804cd42f96aa919ULL},
    {"sync_restore", 64, 0x35205da3615c7012ULL},
    {"export_request", 48, 0x4a8ef7ccbbf99963ULL},
    {"export_reply", 72, 0x16f08d8a5c263cf6ULL},
    {"sync_close", 48, 0x396381887f1d4499ULL},
    {"warm_request", 56, 0x0f6c2db59c7f00ceULL},
    {"warm_reply", 56, 0x7cc9924fe05ec036ULL},
  };
  std::vector<envelope> samples = one_of_each();
  for (envelope& e : samples) {
    e.request_id = 0;
    std::visit([](auto& m) { m = std::decay_t<decltype(m)>{}; }, e.message);
  }
  check_frames(samples, golden);
}
