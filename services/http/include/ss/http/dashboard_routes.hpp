// The coordinator's dashboard on its ops endpoint, next to ops_routes (health, metrics):
//
//   GET /              the page (index.html), which loads /dashboard.js and /dashboard.css
//   GET /api/status    the coordinator's status, exactly what `shadowsync status --json` shows
//   GET /api/history   its history (metrics::job_history's JSON); ?since=T: points after T only
//   GET /api/fields    the status's fields as the coordinator's status table declares them:
//                      {"service":[{"name","type","help"},...],"transport":[...]}
//
// Read-only: the server answers GET and HEAD only, and nothing here changes the job. The API
// answers 503 with {"error": why} while no status is there (the coordinator is starting). Every
// answer forbids caching of the API and carries a Content-Security-Policy that lets the page load
// only its own scripts, styles and data (no inline script, no other origin).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "ss/http/ops_http_server.hpp"

namespace ss::http {

struct dashboard_source {
  // The status JSON, or nullopt with `why_not` set (starting, stopped).
  std::function<std::optional<std::string>(std::string& why_not)> status;
  // The history JSON of the points later than `since` seconds, or nullopt with `why_not` set.
  std::function<std::optional<std::string>(double since, std::string& why_not)> history;
  // The fields JSON of /api/fields (the same for the process's life); empty: 404.
  std::function<std::string()> fields;
};

// The answer when the request is the dashboard's; nullopt for any other path.
std::optional<http_response> dashboard_routes(const dashboard_source& source, const http_request& request);

// The `since` parameter of a query ("since=12.5&x=y" -> 12.5); -1 (everything) when absent or bad.
double since_parameter(const std::string& query);

}  // namespace ss::http
