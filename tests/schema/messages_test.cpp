#include <catch2/catch.hpp>

#include <string>

#include "ss/wire/messages.hpp"
#include "wire_samples.hpp"

using namespace ss::wire;

TEST_CASE("messages: every role and job state has a name", "[wire]") {
  CHECK(std::string(to_string(role::coordinator)) == "coordinator");
  CHECK(std::string(to_string(role::shard)) == "shard");
  CHECK(std::string(to_string(role::trainer)) == "trainer");
  CHECK(std::string(to_string(role::reader)) == "reader");
  CHECK(std::string(to_string(role::client)) == "client");
  CHECK(std::string(to_string(static_cast<role>(17))) == "unknown");
  CHECK(std::string(to_string(job_state::waiting)) == "waiting");
  CHECK(std::string(to_string(job_state::running)) == "running");
  CHECK(std::string(to_string(job_state::draining)) == "draining");
  CHECK(std::string(to_string(job_state::done)) == "done");
  CHECK(std::string(to_string(job_state::failed)) == "failed");
  CHECK(std::string(to_string(static_cast<job_state>(9))) == "unknown");
}

TEST_CASE("messages: message_name names every message type", "[wire]") {
  const char* expected[] = {"error_reply",  "register_request", "register_reply",
                            "heartbeat",    "heartbeat_reply",  "leave",
                            "pull_request", "batch_message",    "end_of_data",
                            "batch_ack",    "lookup_request",   "lookup_reply",
                            "push_request", "push_reply",       "dense_request",
                            "dense_reply",  "dense_report",     "status_request",
                            "status_reply", "stop_request",     "ack",
                            "sync_request", "sync_reply",       "snapshot_now",
                            "snapshot_request", "snapshot_reply", "dump_request", "dump_reply",
                            "sync_restore", "export_request", "export_reply",
                            "sync_close", "warm_request", "warm_reply"};
  static_assert(sizeof(expected) / sizeof(expected[0]) == std::variant_size_v<body>);
  auto all = testing::one_of_each();
  REQUIRE(all.size() == std::variant_size_v<body>);
  for (std::size_t i = 0; i < all.size(); ++i) {
    CHECK(all[i].message.index() == i);
    CHECK(std::string(message_name(all[i].message)) == expected[i]);
  }
}
