#include "ss/http/ops_routes.hpp"

#include "ss/core/metrics/prometheus.hpp"

namespace ss::http {

http_response ops_routes(const ops_probe& probe, const http_request& request) {
  http_response r;
  if (request.path == "/healthz") {
    const bool live = !probe.live || probe.live();
    r.status = live ? 200 : 503;
    r.body = live ? "ok\n" : "not live\n";
    return r;
  }
  if (request.path == "/readyz") {
    std::pair<bool, std::string> ready{true, {}};
    if (probe.ready) ready = probe.ready();
    r.status = ready.first ? 200 : 503;
    r.body = ready.first ? "ready\n" : "not ready: " + ready.second + "\n";
    return r;
  }
  if (request.path == "/metrics") {
    r.content_type = metrics::prometheus_content_type;
    if (probe.metrics) r.body = probe.metrics();
    return r;
  }
  r.status = 404;
  r.body = "not found\n";
  return r;
}

}  // namespace ss::http
