// Which fields of a service's status (what `shadowsync status` shows) its /metrics endpoint
// exports, under which name and type, with which help: an explicit list, so a new status field is
// exported only when it is added here, and a metric's name never depends on a JSON key by accident.
#pragma once

#include "ss/core/json_value.hpp"
#include "ss/core/metrics/prometheus.hpp"

namespace ss::metrics {

enum class metric_type { gauge, counter };

struct status_metric {
  const char* section;  // "service" (the role's own status) or "transport" (its gateway's)
  const char* field;    // the number's (or bool's) key in that section
  metric_type type;
  const char* help;
};

// Every exported field; the metric is shadowsync_<section>_<field>.
const std::vector<status_metric>& status_metrics();

// Appends each listed field the status holds (a number, or a bool as 0/1) to `out` with `labels`;
// fields the status lacks (another role's) are skipped.
void append_status_metrics(prometheus_text& out, const json_value& status, const prometheus_labels& labels);

}  // namespace ss::metrics
