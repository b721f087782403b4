// The coordinator's history of its status (coordinator_options::history), for the dashboard: the
// numbers its status tables mark for a chart, the job's and each member's.
#include <spdlog/spdlog.h>

#include <string>

#include "state.hpp"
#include "ss/actors/status_metrics.hpp"
#include "ss/core/json_value.hpp"
#include "ss/core/metrics/history.hpp"

namespace ss::actors::coordinator_detail {

void record_history(coordinator_actor* self, clock_type::time_point now) {
  auto& st = self->state;
  if (!st.options.history || st.history_final) return;
  const bool ended = st.state == wire::job_state::done || st.state == wire::job_state::failed;
  if (!ended && st.last_history && seconds_between(*st.last_history, now) < st.options.history_interval) return;
  st.last_history = now;
  st.history_final = ended;
  // The status's own text, parsed: the history holds only what status shows.
  auto status = json_value::parse(status_json(st, now));
  if (!status.is_ok()) {
    spdlog::warn("{}: the status does not parse, not recorded: {}", st.options.name, status.error().message());
    return;
  }
  record_status(*st.options.history, seconds_between(st.started_at, now), *status);
}

}  // namespace ss::actors::coordinator_detail

namespace ss::actors {

void record_status(metrics::job_history& history, double t, const json_value& status) {
  static const metrics::field_list job_fields = coordinator_field_list();
  history.record(t, "job/", status, job_fields);
  const auto& members = status["members"].items();
  history.add("job/members", t, static_cast<double>(members.size()));
  // Each member's fields: every member's, then its role's.
  static const metrics::field_list every_member = member_field_list();
  for (const auto& member : members) {
    const std::string role = member["role"].string();
    const std::string prefix = role + "/" + member["name"].string() + "/";
    history.record(t, prefix, member, every_member);
    history.record(t, prefix, member, member_field_list(role));
  }
}

}  // namespace ss::actors
