// The walk over the codec entries' fields (message_fields.hpp) that the other wire tests compare
// and generate samples with: it must name what differs, and its generated samples must hold a
// value other than the default in every field of every message, and be accepted by the decoder.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "message_fields.hpp"
#include "ss/wire/codec.hpp"
#include "wire_samples.hpp"

using namespace ss::wire;
using namespace ss::wire::testing;

TEST_CASE("message fields: every message's generated sample sets every field and survives a round trip",
          "[wire]") {
  for (std::size_t i = 0; i < detail::message_count; ++i) {
    envelope e;
    e.request_id = 7;
    e.message = generated_message(i);
    INFO(message_name(e.message) << (has_written_sample(i) ? "" : ", whose only sample this is"));
    std::visit(
        [](const auto& m) {
          for (const std::string& same : fields_that_match(m, std::decay_t<decltype(m)>{})) {
            FAIL_CHECK("the generated sample holds the default in " << same);
          }
        },
        e.message);
    auto r = decode(*encode(e));
    INFO("decoded: " << error_of(r) << " (refused by the entry's check? write a sample in written_samples())");
    REQUIRE(r.is_ok());
    check_same(e, *r);
  }
}

TEST_CASE("message fields: every codec entry names every member of its C++ and Cap'n Proto structs",
          "[wire]") {
  // What the walk cannot see: a member its entry leaves out is neither generated nor compared.
  for (const std::string& problem : entry_coverage_problems()) FAIL_CHECK(problem);
  CHECK(member_count<register_request>() == 9);
  CHECK(member_count<dense_request>() == 1);
  CHECK(member_count<status_request>() == 0);
  CHECK(member_count<batch_message>() == 6);
}

TEST_CASE("message fields: a difference is named by its path and both values", "[wire]") {
  heartbeat a = generated_sample<heartbeat>();
  heartbeat b = a;
  CHECK(fields_that_differ(a, b).empty());
  b.progress.committed.epoch += 1;
  b.progress.sync_gap = -0.0;
  a.progress.sync_gap = 0.0;  // the same number, other bits
  const std::vector<std::string> expected = {
      "heartbeat.progress.sync_gap: 0 vs -0",
      "heartbeat.progress.committed.epoch: " + std::to_string(a.progress.committed.epoch) + " vs " +
          std::to_string(b.progress.committed.epoch)};
  CHECK(fields_that_differ(a, b) == expected);

  // An optional field is compared only where its flag says it is there.
  b = a;
  a.progress.has_committed = b.progress.has_committed = false;
  b.progress.committed.epoch += 1;
  CHECK(fields_that_differ(a, b).empty());

  cluster_view v = sample_view();
  cluster_view w = v;
  w.shards.pop_back();
  w.trainer_incarnations[1] = 5;
  CHECK(fields_that_differ(v, w) == std::vector<std::string>{"cluster_view.shards: 3 elements vs 2",
                                                             "cluster_view.trainer_incarnations: element 1: "
                                                             "18446744073709551615 vs 5"});
  envelope x{protocol_version, 1, leave{}};
  envelope y{protocol_version, 2, ack{}};
  CHECK(fields_that_differ(x, y) ==
        std::vector<std::string>{"envelope.request_id: 1 vs 2", "envelope.message: leave vs ack"});
}

TEST_CASE("message fields: every field of an entry is named by its member", "[wire]") {
  // The names come from the compiler's name of each member pointer: a field without one would be
  // "field <index>".
  const register_request r = generated_sample<register_request>();
  std::vector<std::string> paths;
  for (const std::string& same : fields_that_match(r, r)) paths.push_back(same.substr(0, same.find(':')));
  CHECK(paths == std::vector<std::string>{"register_request.from", "register_request.name",
                                          "register_request.index", "register_request.endpoint",
                                          "register_request.incarnation", "register_request.heartbeat_interval_ms",
                                          "register_request.host", "register_request.pid",
                                          "register_request.membership"});
  for (std::size_t i = 0; i < detail::message_count; ++i) {
    std::visit(
        [](const auto& m) {
          for (const std::string& same : fields_that_match(m, m)) {
            INFO(same);
            CHECK(same.find(".field ") == std::string::npos);
          }
        },
        generated_message(i));
  }
}
