#include "ss/http/predict_routes.hpp"

#include <spdlog/spdlog.h>

#include <cctype>
#include <cstdio>
#include <optional>

#include "ss/core/json.hpp"
#include "ss/core/metrics/prometheus.hpp"
#include "ss/core/model_file/model_file.hpp"
#include "ss/http/ops_routes.hpp"

namespace ss::http {

// A worker thread's scratch, rebuilt when the served model object changes.
struct predict_routes::worker {
  std::shared_ptr<const serving::served_model> model;
  std::optional<serving::request_reader> reader;
  std::optional<serving::scoring_scratch> scratch;
  data::example_batch batch;
  std::vector<float> probabilities;
};

namespace {

// The request latency histogram's buckets: 2^k microseconds, 64 us to about 8 s.
constexpr int first_bucket_power = 6, last_bucket_power = 23;

http_response json_response(int status, std::string body) {
  http_response r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::move(body);
  r.body += '\n';
  return r;
}

bool is_json(const http_request& request) {
  const std::string* type = request.header("content-type");
  if (type == nullptr) return false;
  std::string media = type->substr(0, type->find(';'));
  while (!media.empty() && (media.back() == ' ' || media.back() == '\t')) media.pop_back();
  for (char& c : media) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return media == "application/json";
}

// {"version":N,"examples_trained":E,"predictions":[...]}: each probability with 9 significant digits,
// which read back as the same float.
std::string predictions_json(const serving::model_version& v, const std::vector<float>& p) {
  std::string out = "{\"version\":" + std::to_string(v.sequence) +
                    ",\"examples_trained\":" + std::to_string(v.examples_trained) + ",\"predictions\":[";
  out.reserve(out.size() + p.size() * 16 + 2);
  char buf[32];
  for (std::size_t i = 0; i < p.size(); ++i) {
    const int n = std::snprintf(buf, sizeof buf, "%s%.9g", i == 0 ? "" : ",", static_cast<double>(p[i]));
    out.append(buf, static_cast<std::size_t>(n));
  }
  out += "]}";
  return out;
}

}  // namespace

predict_routes::predict_routes(predict_route_options options) : options_(std::move(options)) {}

void predict_routes::serve(std::shared_ptr<const serving::served_model> model) {
  std::lock_guard<std::mutex> lock(mu_);
  model_ = std::move(model);
  why_not_ready_.clear();
}

void predict_routes::not_ready(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  why_not_ready_ = why;
}

void predict_routes::attach(const ops_http_server* server) {
  std::lock_guard<std::mutex> lock(mu_);
  server_ = server;
}

std::shared_ptr<const serving::served_model> predict_routes::model() const {
  std::lock_guard<std::mutex> lock(mu_);
  return model_;
}

std::pair<bool, std::string> predict_routes::readiness() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (model_ != nullptr && why_not_ready_.empty()) return {true, {}};
  return {false, why_not_ready_.empty() ? std::string("no model loaded") : why_not_ready_};
}

http_response predict_routes::handle(const http_request& request) {
  if (request.path == "/predict") {
    http_response r = refuse(405, refused_.method, "POST /predict with rows to score");
    r.headers.emplace_back("Allow", "POST");
    return r;
  }
  if (request.path != "/healthz" && request.path != "/readyz" && request.path != "/metrics")
    return refuse(404, refused_.not_found, "not found: " + request.path);
  if (request.path == "/readyz") {
    const auto [ready, why] = readiness();
    const std::string detail = ready && options_.ready_detail ? options_.ready_detail() : std::string();
    http_response r;
    r.status = ready ? 200 : 503;
    r.body = ready ? (detail.empty() ? "ready\n" : "ready: " + detail + "\n") : "not ready: " + why + "\n";
    return r;
  }
  const ops_probe probe{nullptr, nullptr, [this] { return metrics_text(); }};
  return ops_routes(probe, request);
}

http_handler predict_routes::make_worker_handler() {
  auto w = std::make_shared<worker>();
  return [this, w](const http_request& request) -> http_response {
    if (request.path == "/predict") return predict(*w, request);
    if (request.path == "/healthz" || request.path == "/readyz" || request.path == "/metrics") {
      http_response r = refuse(405, refused_.method, request.method + " " + request.path + ": use GET");
      r.headers.emplace_back("Allow", "GET, HEAD");
      return r;
    }
    return refuse(404, refused_.not_found, "not found: " + request.path);
  };
}

http_response predict_routes::predict(worker& w, const http_request& request) {
  const std::int64_t start = options_.clock->now_ns();
  counters_.predict_requests.add();
  auto answer = [&](http_response r) {
    latency_.record(static_cast<double>(options_.clock->now_ns() - start) * 1e-9);
    return r;
  };
  const auto m = model();
  if (m == nullptr) return answer(refuse(503, refused_.no_model, "no model is loaded yet"));
  if (w.model != m) {
    auto schema = model::model_schema(m->header(), m->job());
    auto reader = schema.is_ok() ? serving::request_reader::create(*schema, m->config().num_dense, m->config().num_sparse)
                                 : result<serving::request_reader>(schema.error());
    if (!reader.is_ok()) {
      spdlog::error("serve: the model's input schema cannot read requests: {}", reader.error().message());
      return answer(json_response(500, json_object().add("error", reader.error().message()).str()));
    }
    w.reader.emplace(std::move(*reader));
    w.scratch.emplace(*m);
    w.model = m;
  }
  auto problem = is_json(request) ? w.reader->read_json(request.body, options_.max_rows, w.batch)
                                  : w.reader->read_text(request.body, options_.max_rows, w.batch);
  if (problem) return answer(refuse_rows(*problem));
  auto version = m->score(w.batch, *w.scratch, w.probabilities);
  if (!version.is_ok()) {  // the reader makes batches of the model's shape: a bug
    spdlog::error("serve: scoring failed: {}", version.error().message());
    return answer(json_response(500, json_object().add("error", version.error().message()).str()));
  }
  counters_.predictions.add();
  counters_.rows_scored.add(w.batch.size());
  return answer(json_response(200, predictions_json(*version, w.probabilities)));
}

http_response predict_routes::refuse(int status, metrics::counter& reason, const std::string& message) {
  reason.add();
  std::uint64_t held_back = 0;
  bool log = false;
  {
    std::lock_guard<std::mutex> lock(log_mu_);
    log = refusals_log_.admit(reason.name(), options_.clock->now_ns(), &held_back);
  }
  if (log)
    spdlog::info("serve: refused a request ({}): {}{}", status, message,
                 held_back > 0 ? " (and " + std::to_string(held_back) + " more for this reason in the last minute)"
                               : std::string());
  return json_response(status, json_object().add("error", message).str());
}

http_response predict_routes::refuse_rows(const serving::request_error& e) {
  using serving::request_problem;
  switch (e.problem) {
    case request_problem::bad_row: {
      http_response r = refuse(400, refused_.bad_row, e.message);
      r.body = json_object()
                   .add("error", e.message)
                   .add("row", static_cast<std::uint64_t>(e.row))
                   .add("reason", data::to_string(e.row_reason))
                   .str() +
               "\n";
      return r;
    }
    case request_problem::bad_json: return refuse(400, refused_.bad_json, e.message);
    case request_problem::bad_header: return refuse(400, refused_.bad_header, e.message);
    case request_problem::no_rows: return refuse(400, refused_.no_rows, e.message);
    case request_problem::too_many_rows: return refuse(413, refused_.too_many_rows, e.message);
  }
  return refuse(400, refused_.bad_json, e.message);
}

std::string predict_routes::metrics_text() const {
  metrics::prometheus_text p;
  const auto m = model();
  const bool ready = readiness().first;
  p.gauge("shadowsync_serve_ready", "1 when a model is served and the server is not stopping.", ready ? 1 : 0);
  if (m != nullptr) {
    const serving::served_stats s = m->stats();
    const auto n = [](std::uint64_t v) { return static_cast<double>(v); };
    p.gauge("shadowsync_serve_model_version", "The sequence number of the version served (0: a model file).",
            n(s.version.sequence));
    p.gauge("shadowsync_serve_model_examples_trained", "Examples the version served had trained on.",
            n(s.version.examples_trained));
    if (s.version.wall_unix_ms > 0)
      p.gauge("shadowsync_serve_model_age_seconds", "Seconds since the version served was cut.",
              static_cast<double>(options_.wall_unix_ms() - s.version.wall_unix_ms) * 1e-3);
    p.gauge("shadowsync_serve_model_rows", "Embedding rows the model holds.", n(s.rows));
    p.counter("shadowsync_serve_updates_applied", "Updates (deltas) applied to the model.", n(s.updates_applied));
    p.counter("shadowsync_serve_models_replaced", "Times the model was replaced by another (a new base).",
              n(s.models_replaced));
    p.counter("shadowsync_serve_update_rows_written", "Rows written by updates.", n(s.rows_written));
    p.counter("shadowsync_serve_update_rows_erased", "Rows erased by updates (tombstones of rows held).",
              n(s.rows_erased));
  }
  for (const metrics::counter* c : counters_.counters())
    p.counter("shadowsync_serve_" + std::string(c->name()), c->help(), static_cast<double>(c->load()));
  for (const metrics::counter* c : refused_.counters())
    p.counter("shadowsync_serve_requests_refused",
              "Requests refused, by reason: bad_row, bad_json, bad_header, no_rows (400), too_many_rows (413), "
              "not_found (404), method (405), no_model (503). Bodies over --max-request-bytes are "
              "shadowsync_ops_http_bodies_too_large.",
              static_cast<double>(c->load()), {{"reason", c->name()}});
  std::vector<std::pair<double, std::uint64_t>> buckets;
  for (int k = first_bucket_power; k <= last_bucket_power; ++k)
    buckets.emplace_back(static_cast<double>(std::uint64_t{1} << k) * 1e-6, latency_.count_below_power_of_two_us(k));
  p.histogram("shadowsync_serve_request_seconds", "Time to answer POST /predict (read, score, write the answer).",
              buckets, latency_.sum_seconds(), latency_.count());
  if (options_.more_metrics) options_.more_metrics(p);
  const ops_http_server* server = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    server = server_;
  }
  if (server != nullptr) append_ops_http_metrics(p, server->stats());
  return p.str();
}

}  // namespace ss::http
