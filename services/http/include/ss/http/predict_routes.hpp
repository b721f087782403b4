// The routes of `shadowsync serve`, over ops_http_server (GET and HEAD on its loop thread, POST on
// its workers):
//
//   POST /predict  rows in the model's input format (serving/request_rows.hpp): a text body (one
//                  row per line; Content-Type text/plain, text/csv, text/tab-separated-values or
//                  none) or JSON (application/json: {"rows": ["<row>", ...]}, "header" for a schema
//                  with a header line; any other Content-Type is read as text). 200 {"version":N,"examples_trained":E,"predictions":[p,...]},
//                  one click probability per row, in order, all scored by version N. 400 for a bad
//                  row ({"error":"row 3: ...","row":3,"reason":"dense_value"}: nothing is scored),
//                  a bad body or header; 413 for more rows than max_rows (bodies over the server's
//                  max_body_bytes are refused before this); 503 while no model is loaded.
//   GET /healthz, /readyz (ready once a model is served: "ready\n", or "ready: <detail>\n" with
//                  ready_detail), /metrics (Prometheus: the model's
//                  version and age, updates applied, requests, rows scored, bad requests by
//                  reason, the request latency histogram, the HTTP server's counters).
//   405 for another method on these paths (with Allow), 404 elsewhere.
//
// A route object outlives the server that calls it. The served model is set once loaded, and may be
// set again (a model replaced by another object); workers pick it up at their next request.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "ss/core/clock.hpp"
#include "ss/core/log_limiter.hpp"
#include "ss/core/metrics/counter_set.hpp"
#include "ss/core/metrics/latency_histogram.hpp"
#include "ss/core/metrics/prometheus.hpp"
#include "ss/core/serving/request_rows.hpp"
#include "ss/core/serving/served_model.hpp"
#include "ss/http/ops_http_server.hpp"

namespace ss::http {

// What serve counts, each counter declared once (its name is its /metrics name's end).
struct serve_counters : metrics::counter_set {
  metrics::counter predict_requests{*this, "predict_requests", "POST /predict requests answered, any status."};
  metrics::counter predictions{*this, "predict_ok", "POST /predict requests answered with predictions (200)."};
  metrics::counter rows_scored{*this, "rows_scored", "Rows scored, in requests answered 200."};
};

// Requests refused, by reason: one counter per reason, exported as one family with a reason label.
struct refused_request_counters : metrics::counter_set {
  metrics::counter bad_row{*this, "bad_row", "A row the model's schema does not read."};
  metrics::counter bad_json{*this, "bad_json", "A JSON body that is not {\"rows\": [...]}."};
  metrics::counter bad_header{*this, "bad_header", "A header line missing, or not the schema's."};
  metrics::counter no_rows{*this, "no_rows", "A request without rows."};
  metrics::counter too_many_rows{*this, "too_many_rows", "More rows than --max-request-rows."};
  metrics::counter not_found{*this, "not_found", "A path the server does not have."};
  metrics::counter method{*this, "method", "A method the path does not take."};
  metrics::counter no_model{*this, "no_model", "A request before a model was loaded."};
};

struct predict_route_options {
  std::size_t max_rows = 1000;  // rows per request
  const clock_source* clock = nullptr;  // request latencies (required)
  std::function<std::int64_t()> wall_unix_ms;  // the model's age (required)
  // Optional: what /readyz adds after "ready: " (how far behind the newest publication the model
  // is), and samples /metrics adds (the publish follower's).
  std::function<std::string()> ready_detail;
  std::function<void(metrics::prometheus_text&)> more_metrics;
};

class predict_routes {
 public:
  explicit predict_routes(predict_route_options options);

  // The model to serve from now on; ready from then on.
  void serve(std::shared_ptr<const serving::served_model> model);
  // /readyz's reason while no model is served, or once stopping (the model stays, not ready).
  void not_ready(const std::string& why);
  // The server whose counters /metrics adds (after it started; nullptr: none).
  void attach(const ops_http_server* server);

  // GET and HEAD (the server's loop thread).
  http_response handle(const http_request& request);
  // POST, on a worker: a handler with the worker's own scratch.
  http_handler make_worker_handler();

  std::string metrics_text() const;
  const serve_counters& counters() const { return counters_; }
  const refused_request_counters& refused() const { return refused_; }

 private:
  struct worker;
  std::shared_ptr<const serving::served_model> model() const;
  std::pair<bool, std::string> readiness() const;
  http_response predict(worker& w, const http_request& request);
  http_response refuse(int status, metrics::counter& reason, const std::string& message);
  http_response refuse_rows(const serving::request_error& e);

  predict_route_options options_;
  serve_counters counters_;
  refused_request_counters refused_;
  metrics::latency_histogram latency_;
  mutable std::mutex mu_;  // guards model_, why_not_ready_, server_
  std::shared_ptr<const serving::served_model> model_;
  std::string why_not_ready_ = "starting";
  const ops_http_server* server_ = nullptr;
  std::mutex log_mu_;  // guards refusals_log_ (workers refuse concurrently)
  log_limiter refusals_log_{60'000'000'000};  // a line per reason and minute at most
};

}  // namespace ss::http
