#include <catch2/catch.hpp>

#include <cctype>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <capnp/schema.h>

#include "message_fields.hpp"
#include "ss/wire/messages.hpp"
#include "wire_samples.hpp"

using namespace ss::wire;

namespace {

// "register_request" -> "registerRequest": the name Cap'n Proto gives the member.
std::string camel_case(const std::string& snake) {
  std::string out;
  bool upper = false;
  for (char c : snake) {
    if (c == '_') {
      upper = true;
    } else {
      out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      upper = false;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("messages: every role and job state has a name", "[wire]") {
  const std::pair<role, const char*> roles[] = {{role::coordinator, "coordinator"}, {role::shard, "shard"},
                                                {role::trainer, "trainer"},         {role::reader, "reader"},
                                                {role::client, "client"},           {static_cast<role>(17), "unknown"}};
  for (const auto& [r, name] : roles) CHECK(std::string(to_string(r)) == name);
  const std::pair<job_state, const char*> states[] = {
      {job_state::waiting, "waiting"}, {job_state::running, "running"}, {job_state::draining, "draining"},
      {job_state::done, "done"},       {job_state::failed, "failed"},   {static_cast<job_state>(9), "unknown"}};
  for (const auto& [s, name] : states) CHECK(std::string(to_string(s)) == name);
}

// The names come from the codec table; each must be its C++ type's name, once, and the member
// of Envelope.body (schema/envelope.capnp) at the message's tag must be its camelCase form.
TEST_CASE("messages: message_name names every message type", "[wire]") {
  const std::vector<std::string> names = testing::table_names();
  const std::vector<std::string> types = testing::type_names();
  REQUIRE(names.size() == std::variant_size_v<body>);
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());
  const auto members = capnp::Schema::from<detail::Body>().getUnionFields();
  REQUIRE(members.size() == names.size());
  auto all = testing::one_of_each();
  REQUIRE(all.size() == std::variant_size_v<body>);
  for (std::size_t i = 0; i < all.size(); ++i) {
    INFO("message " << i << ": " << names[i]);
    CHECK(all[i].message.index() == i);
    CHECK(std::string(message_name(all[i].message)) == names[i]);
    CHECK(names[i] == types[i]);
    const auto member = members[static_cast<capnp::uint>(i)].getProto();
    CHECK(member.getDiscriminantValue() == i);
    CHECK(std::string(member.getName().cStr()) == camel_case(names[i]));
  }
}
