#include "ss/actors/status_metrics.hpp"

namespace ss::actors {

std::vector<status_table_info> status_tables() {
  return {{"gateway", "transport", gateway_field_list()},     {"coordinator", "service", coordinator_field_list()},
          {"shard", "service", shard_field_list()},           {"reader", "service", reader_field_list()},
          {"trainer", "service", trainer_field_list()},       {"sync", "service", sync_server_field_list()},
          {"member", "members", member_field_list()},         {"trainer member", "members", member_field_list("trainer")},
          {"shard member", "members", member_field_list("shard")}, {"reader member", "members", member_field_list("reader")}};
}

const metrics::field_list* role_fields(std::string_view role) {
  // Built once: /metrics asks at every scrape.
  static const std::vector<status_table_info> tables = status_tables();
  for (const auto& t : tables)
    if (std::string_view(t.section) == "service" && role == t.table) return &t.fields;
  return nullptr;
}

void append_status_metrics(metrics::prometheus_text& out, const json_value& status,
                           const metrics::prometheus_labels& labels) {
  const json_value& service = status["service"];
  if (const auto* fields = role_fields(service["role"].string()))
    metrics::append_status_metrics(out, "service", service, *fields, labels);
  static const metrics::field_list transport = gateway_field_list();
  metrics::append_status_metrics(out, "transport", status["transport"], transport, labels);
}

}  // namespace ss::actors
