// The coordinator's history of its status (coordinator_options::history), for the dashboard.
#include <spdlog/spdlog.h>

#include "state.hpp"
#include "ss/core/json_value.hpp"

namespace ss::actors::coordinator_detail {

void record_history(coordinator_actor* self, clock_type::time_point now) {
  auto& st = self->state;
  if (!st.options.history || st.history_final) return;
  const bool ended = st.state == wire::job_state::done || st.state == wire::job_state::failed;
  if (!ended && st.last_history && seconds_between(*st.last_history, now) < st.options.history_interval) return;
  st.last_history = now;
  st.history_final = ended;
  // The status's own text, parsed: the history holds only what status shows.
  auto status = json_value::parse(status_json(self));
  if (!status.is_ok()) {
    spdlog::warn("{}: the status does not parse, not recorded: {}", st.options.name, status.error().message());
    return;
  }
  st.options.history->record(seconds_between(st.started_at, now), *status);
}

}  // namespace ss::actors::coordinator_detail
