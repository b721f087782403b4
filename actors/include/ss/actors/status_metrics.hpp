// Every service's status table, as /metrics, the dashboard and the golden list of exported metrics
// (tests/actors/exported_metrics.txt) see them. Each table is declared once, beside the status
// function that fills it (the gateway's in common/gateway.cpp, the coordinator's in
// coordinator/coordinator.cpp, the shard's in shard/shard.cpp, ...): a field's JSON key, its type
// (counter, gauge, or status only) and help, and how its value is read. No CAF here.
#pragma once

#include <string_view>
#include <vector>

#include "ss/core/json_value.hpp"
#include "ss/core/metrics/history.hpp"
#include "ss/core/metrics/prometheus.hpp"
#include "ss/core/metrics/status_metrics.hpp"

namespace ss::actors {

// Each table's fields, in status order.
metrics::field_list gateway_field_list();      // the "transport" section of every service
metrics::field_list coordinator_field_list();  // the "service" section of role "coordinator"
metrics::field_list shard_field_list();        // ... "shard"
metrics::field_list reader_field_list();       // ... "reader"
metrics::field_list trainer_field_list();      // ... "trainer"
metrics::field_list sync_server_field_list();  // ... "sync"
// The coordinator's status lists every member ("members"): each with every member's fields, then
// its role's ("trainer", "shard", "reader"; none for other roles). Shown by status, charted by the
// dashboard's history, not exported (the members export their own).
metrics::field_list member_field_list();
metrics::field_list member_field_list(std::string_view role);

struct status_table_info {
  const char* table;    // the gateway's, or the role its status names ("service": {"role": ...})
  const char* section;  // "transport" or "service": the metric is shadowsync_<section>_<field>;
                        // "members": fields of the coordinator's list of members, not exported
  metrics::field_list fields;
};

// Every table: the gateway's first, then each role's.
std::vector<status_table_info> status_tables();

// A role's table (the "service" section), or null for a role without one.
const metrics::field_list* role_fields(std::string_view role);

// Records the coordinator's status (its "service" object), taken `t` seconds after it started, in
// `history`: the fields its table and its members' tables mark for a chart (series job/FIELD and
// ROLE/NAME/FIELD), and job/members, how many members it lists.
void record_status(metrics::job_history& history, double t, const json_value& status);

// /metrics of a service's status (`running_service::status()`: {"name", "service", "transport"}):
// its transport section by the gateway's table, its service section by its role's table. Fields
// the status lacks (null, absent) are skipped.
void append_status_metrics(metrics::prometheus_text& out, const json_value& status,
                           const metrics::prometheus_labels& labels);

}  // namespace ss::actors
