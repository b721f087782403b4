// The operations endpoint of a service process (--ops-listen HOST:PORT): /healthz, /readyz and
// /metrics (Prometheus) over HTTP, for orchestrators and scrapers; a coordinator's also serves the
// dashboard (/, /api/status, /api/history: ss/http/dashboard_routes.hpp). The service registers
// itself once it is up and withdraws before it stops; until then the endpoint is live but not
// ready. A coordinator's endpoint keeps the job's final status and history when the service
// withdraws, so the dashboard shows the finished job while the process lingers (linger()).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "ss/actors/service.hpp"
#include "ss/core/status.hpp"
#include "ss/http/ops_http_server.hpp"

namespace ss::cli {

// HOST:PORT (a --listen flag's value: "0.0.0.0:9100", ":9100" for every address) as a host and a
// port from 0 to 65535; invalid_argument naming `flag` otherwise.
result<std::pair<std::string, std::uint16_t>> parse_host_port(const std::string& flag, const std::string& text);

class ops_endpoint {
 public:
  // "" = no endpoint (start returns an inactive one). Errors: a malformed address, a busy port.
  // `dashboard`: also serve the coordinator's dashboard. Says so at start when it listens beyond
  // loopback.
  static result<std::unique_ptr<ops_endpoint>> start(const std::string& listen, const std::string& service_name,
                                                     bool dashboard = false);
  ~ops_endpoint();

  // The running service whose status feeds /metrics and /readyz; nullptr withdraws it (waits for
  // a request that is using it to finish, so the caller may then destroy the service).
  void attach(actors::running_service* service);
  // The job has ended: a dashboard shows the status and history of this moment from now on
  // (members leave after it; the page keeps showing them as they were at the end).
  void job_ended();
  // The process is on its way out: /healthz keeps answering, /readyz says why it is not ready; a
  // dashboard keeps showing the final state (job_ended(), else the service's last).
  void stopping(const std::string& why);
  std::uint16_t port() const;
  // Keeps serving (the final state) for `seconds`, or until `stop_requested` says so (checked
  // every 100 ms): a dashboard of a finished job stays readable. Returns at once with no endpoint.
  void linger(double seconds, const std::function<bool()>& stop_requested) const;

 private:
  ops_endpoint() = default;
  http::http_response handle(const http::http_request& request);
  void keep_final_state();  // with mu_ held
  std::optional<std::string> status_for_dashboard(std::string& why_not);
  std::optional<std::string> history_for_dashboard(double since, std::string& why_not);

  std::string name_;
  std::string address_;  // http://HOST:PORT
  bool dashboard_ = false;
  // The withdrawn service's last status and history (dashboard only), served once it is gone.
  std::optional<std::string> final_status_, final_history_;
  // Guards service_, why_not_ready_ and server_ (set); held while a request reads status.
  mutable std::mutex mu_;
  actors::running_service* service_ = nullptr;
  std::string why_not_ready_ = "starting";
  std::unique_ptr<http::ops_http_server> server_;
};

}  // namespace ss::cli
