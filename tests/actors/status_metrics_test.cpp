// The status tables of every service (ss/actors/status_metrics.hpp) against the checked-in list
// tests/actors/exported_metrics.txt, so that a new, renamed or retyped field is a visible change
// in review; and what /metrics and the dashboard take from them.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ss/actors/status_metrics.hpp"
#include "ss/core/json_value.hpp"

namespace {

using ss::metrics::metric_type;

const std::string golden_path = std::string(SS_SOURCE_DIR) + "/tests/actors/exported_metrics.txt";

const char* golden_header =
    "# Every field of every status table (actors/include/ss/actors/status_metrics.hpp lists the tables):\n"
    "# table, section, field, type. Counters and gauges are exported on /metrics as\n"
    "# shadowsync_<section>_<field>; \"status\" fields are shown by `shadowsync status` only.\n"
    "# Checked by status_metrics_tests; after a deliberate change, rewrite it with\n"
    "#   SS_UPDATE_GOLDEN=1 build/tests/actors/status_metrics_tests\n"
    "# and say in review which metric was added, renamed or retyped.\n";

std::vector<std::string> table_lines() {
  std::vector<std::string> lines;
  for (const auto& t : ss::actors::status_tables())
    for (const auto& f : t.fields)
      lines.push_back(std::string(t.table) + ", " + t.section + ", " + f.name + ", " + ss::metrics::to_string(f.type));
  return lines;
}

std::vector<std::string> golden_lines() {
  std::ifstream in(golden_path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  return lines;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("status tables: every field against the golden list", "[actors][metrics]") {
  const auto now = table_lines();
  if (const char* update = std::getenv("SS_UPDATE_GOLDEN"); update != nullptr && std::string(update) == "1") {
    std::ofstream out(golden_path);
    out << golden_header;
    for (const auto& l : now) out << l << "\n";
    WARN("rewrote " << golden_path);
  }
  const auto golden = golden_lines();
  const std::set<std::string> in_golden(golden.begin(), golden.end()), in_tables(now.begin(), now.end());
  for (const auto& l : now)
    if (in_golden.count(l) == 0) FAIL_CHECK("in a status table, not in " << golden_path << ": " << l);
  for (const auto& l : golden)
    if (in_tables.count(l) == 0) FAIL_CHECK("in " << golden_path << ", in no status table: " << l);
  CHECK(now == golden);  // the order too: status shows the fields in table order
}

TEST_CASE("status tables: names are valid, each once per table, exported ones with help", "[actors][metrics]") {
  std::map<std::string, metric_type> exported;  // shadowsync_<section>_<field> -> its type
  for (const auto& t : ss::actors::status_tables()) {
    std::set<std::string> names;
    for (const auto& f : t.fields) {
      const std::string name = std::string("shadowsync_") + t.section + "_" + f.name;
      INFO(t.table << ": " << f.name);
      CHECK(ss::metrics::is_valid_metric_name(name));
      CHECK(names.insert(f.name).second);
      CHECK(std::string(f.help).size() > 5);
      if (f.type == metric_type::status_only) continue;
      // A name several roles export (examples, refused, finished) has one type on every endpoint.
      auto [it, first] = exported.emplace(name, f.type);
      CHECK((first || it->second == f.type));
    }
  }
  CHECK(exported.count("shadowsync_service_lookups") == 1);
  CHECK(exported.count("shadowsync_transport_queue_depth") == 1);
}

TEST_CASE("status tables: /metrics exports a status by its role's table and the gateway's", "[actors][metrics]") {
  auto status = ss::json_value::parse(
      R"({"name":"shard-0","service":{"role":"shard","rows":7,"lookups":12,"persisted":true,"index":0,"unlisted_field":3,)"
      R"("examples":5,"members":[{"examples":1}]},"transport":{"queue_depth":2,"frames_refused":1}})");
  REQUIRE(status.is_ok());
  ss::metrics::prometheus_text p;
  ss::actors::append_status_metrics(p, *status, {{"service", "shard-0"}});
  const std::string text = p.str();
  CHECK(text.find("# HELP shadowsync_service_rows Embedding rows held.\n# TYPE shadowsync_service_rows gauge\n"
                  "shadowsync_service_rows{service=\"shard-0\"} 7\n") != std::string::npos);
  CHECK(text.find("# TYPE shadowsync_service_lookups counter\nshadowsync_service_lookups{service=\"shard-0\"} 12\n") !=
        std::string::npos);
  CHECK(text.find("shadowsync_service_persisted{service=\"shard-0\"} 1\n") != std::string::npos);
  CHECK(text.find("shadowsync_transport_queue_depth{service=\"shard-0\"} 2\n") != std::string::npos);
  CHECK(text.find("shadowsync_transport_frames_refused{service=\"shard-0\"} 1\n") != std::string::npos);
  CHECK(text.find("unlisted_field") == std::string::npos);  // only what the table names
  CHECK(text.find("members") == std::string::npos);
  CHECK(text.find("shadowsync_service_index") == std::string::npos);     // status only
  CHECK(text.find("shadowsync_service_examples") == std::string::npos);  // not a shard's field
  ss::metrics::prometheus_text unknown;
  ss::actors::append_status_metrics(unknown, *ss::json_value::parse(R"({"service":{"role":"x","rows":1}})"), {});
  CHECK(unknown.str().find("rows") == std::string::npos);
}

TEST_CASE("status tables: every coordinator field the dashboard reads is in its table", "[actors][metrics]") {
  // The page names a field of the coordinator's status as s.FIELD, and its cards' fields in
  // CARD_FIELDS; a renamed field would leave it reading nothing.
  const std::string js = read_file(std::string(SS_SOURCE_DIR) + "/services/http/dashboard/dashboard.js");
  REQUIRE(!js.empty());
  std::set<std::string> declared;
  for (const auto& f : ss::actors::coordinator_field_list()) declared.insert(f.name);
  std::set<std::string> read;
  const std::regex field(R"(\bs\.([a-z_][a-z0-9_]*)\b)");
  for (auto it = std::sregex_iterator(js.begin(), js.end(), field); it != std::sregex_iterator(); ++it)
    read.insert((*it)[1]);
  const std::regex card(R"re("sum-[a-z-]+": "([a-z_0-9]+)")re");
  for (auto it = std::sregex_iterator(js.begin(), js.end(), card); it != std::sregex_iterator(); ++it)
    read.insert((*it)[1]);
  CHECK(read.size() > 10);
  for (const auto& f : read) {
    INFO("dashboard.js reads the coordinator's status field " << f);
    CHECK(declared.count(f) == 1);
  }
}
