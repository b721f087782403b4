// The operations routes every service serves through ops_http_server:
//
//   GET /healthz  200 "ok\n"                      503 "not live\n" when live() is false
//   GET /readyz   200 "ready\n"                   503 "not ready: <reason>\n" when ready() is false
//   GET /metrics  200, Content-Type "text/plain; version=0.0.4; charset=utf-8", body = metrics()
//   anything else 404 "not found\n"
//
// The query string is ignored. An unset probe function counts as "live", "ready" and an empty
// metrics body. A probe that throws becomes a 500 through the server.
//
//   ops_probe probe{[] { return true; }, [&] { return svc.readiness(); }, [&] { return svc.metrics(); }};
//   ops_http_options o;
//   o.port = 9100;
//   o.handler = [probe](const http_request& r) { return ops_routes(probe, r); };
//   auto server = ops_http_server::start(std::move(o));
//
// append_ops_http_metrics() adds the server's own counters (ops_http_stats) to a /metrics body,
// each as shadowsync_ops_http_<field>: a handler that renders /metrics calls it with
// server.stats(), so that evictions and refusals under a connection flood can be watched.
#pragma once

#include <functional>
#include <string>
#include <utility>

#include "ss/core/metrics/prometheus.hpp"
#include "ss/http/ops_http_server.hpp"

namespace ss::http {

struct ops_probe {
  std::function<bool()> live;                          // the process works (not wedged)
  std::function<std::pair<bool, std::string>()> ready;  // {ready?, reason when not}
  std::function<std::string()> metrics;                // Prometheus text exposition
};

http_response ops_routes(const ops_probe& probe, const http_request& request);

// shadowsync_ops_http_connections_accepted, _connections_evicted, _connections_refused,
// _requests, _bad_requests, _read_timeouts, _accept_failures, _bodies_too_large, _requests_shed
// (counters), _connections_open,
// _max_connections and _reserve (gauges), with help text and `labels`.
void append_ops_http_metrics(metrics::prometheus_text& out, const ops_http_stats& stats,
                             const metrics::prometheus_labels& labels = {});

}  // namespace ss::http
