// serve's routes over a real server and sockets: predictions equal the served model's scores for
// text and JSON bodies, every refusal with its status and reason counted, readiness and /metrics.
#include "http_test_support.hpp"

#include <random>

#include "ss/core/embedding/local_embeddings.hpp"
#include "ss/core/json_value.hpp"
#include "ss/core/job/job_options.hpp"
#include "ss/core/train/dense_model.hpp"
#include "ss/http/predict_routes.hpp"

using namespace ss::test;
using ss::http::predict_routes;
namespace serving = ss::serving;

namespace {

// A small model of Criteo's shape (13 dense, 26 categorical features), rows for a few ids.
std::shared_ptr<serving::served_model> criteo_model(std::uint64_t sequence = 0) {
  ss::model::loaded_model m;
  m.job.dense_features = 13;
  m.job.categorical_features = 26;
  m.job.model.embedding_dim = 4;
  m.job.model.bottom_mlp = "8-4";
  m.job.model.top_mlp = "8-1";
  auto s = ss::job::resolve_model(m.job.model, 13, 26);
  REQUIRE(s.is_ok());
  m.setup = *s;
  m.dense = std::make_unique<ss::train::dense_model>(m.setup.dlrm, m.setup.dense, 3);
  m.embeddings = std::make_unique<ss::embedding::local_embeddings>(m.setup.embeddings);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (std::size_t i = 0; i < m.dense->size(); ++i) m.dense->params()[i] = u(rng);
  return std::make_shared<serving::served_model>(std::move(m), serving::model_version{sequence, 77, 1000});
}

std::string criteo_row(int k, bool label = true) {
  std::string row = label ? std::to_string(k % 2) + "\t" : "";
  for (int i = 0; i < 13; ++i) row += std::to_string((k * 3 + i) % 20) + "\t";
  for (int i = 0; i < 26; ++i) row += (i ? "\t" : "") + std::to_string(k % 7 + i);
  return row;
}

// The served model's probabilities for these rows (read as a data file's rows).
std::vector<float> expected(const serving::served_model& m, const std::string& text) {
  auto reader = serving::request_reader::create(ss::data::input_schema::criteo(), 13, 26);
  REQUIRE(reader.is_ok());
  ss::data::example_batch batch;
  REQUIRE_FALSE(reader->read_text(text, 1000, batch));
  serving::scoring_scratch scratch(m);
  std::vector<float> out;
  REQUIRE(m.score(batch, scratch, out).is_ok());
  return out;
}

struct serve_fixture {
  ss::steady_clock_source clock;
  std::unique_ptr<predict_routes> routes;
  std::unique_ptr<ss::http::ops_http_server> server;

  explicit serve_fixture(std::size_t max_rows = 50, std::size_t max_bytes = 100000) {
    ss::http::predict_route_options ro;
    ro.max_rows = max_rows;
    ro.clock = &clock;
    ro.wall_unix_ms = [] { return std::int64_t{4000}; };
    routes = std::make_unique<predict_routes>(std::move(ro));
    ops_http_options o;
    o.bind = "127.0.0.1";
    o.handler = [this](const http_request& r) { return routes->handle(r); };
    o.max_body_bytes = max_bytes;
    o.body_handler = [this] { return routes->make_worker_handler(); };
    o.workers = 2;
    server = start_server(std::move(o));
    routes->attach(server.get());
  }
  ~serve_fixture() { server->stop(); }

  parsed_response post(const std::string& body, const std::string& type = "text/plain",
                       const std::string& path = "/predict") {
    return parse_response(raw_exchange(server->port(), "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: " + type +
                                                           "\r\nContent-Length: " + std::to_string(body.size()) +
                                                           "\r\n\r\n" + body)
                              .data);
  }
  parsed_response get(const std::string& path) {
    return parse_response(raw_exchange(server->port(), "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n").data);
  }
};

}  // namespace

TEST_CASE("predict routes: text and JSON rows get the served model's probabilities and version", "[http][serve]") {
  serve_fixture f;
  auto model = criteo_model(3);
  f.routes->serve(model);
  std::string text, json = "{\"rows\": [";
  for (int k = 0; k < 30; ++k) {
    text += criteo_row(k, true) + "\n";
    std::string escaped = criteo_row(k, false);
    for (std::size_t at = escaped.find('\t'); at != std::string::npos; at = escaped.find('\t', at + 2))
      escaped.replace(at, 1, "\\t");
    json += (k ? ",\"" : "\"") + escaped + "\"";
  }
  json += "]}";
  const auto want = expected(*model, text);
  const auto r = f.post(text);
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(has_header(r, "Content-Type: application/json"));
  auto doc = ss::json_value::parse(r.body);
  REQUIRE(doc.is_ok());
  CHECK((*doc)["version"].uint64() == 3);
  CHECK((*doc)["examples_trained"].uint64() == 77);
  std::vector<float> got;
  for (const auto& p : (*doc)["predictions"].items()) got.push_back(static_cast<float>(p.number()));
  CHECK(got == want);  // %.9g reads back as the same float
  const auto j = f.post(json, "application/json; charset=utf-8");
  REQUIRE(j.status == 200);
  auto jdoc = ss::json_value::parse(j.body);
  REQUIRE(jdoc.is_ok());
  std::vector<float> jgot;
  for (const auto& p : (*jdoc)["predictions"].items()) jgot.push_back(static_cast<float>(p.number()));
  CHECK(jgot == want);
  CHECK(f.routes->counters().rows_scored.load() == 60);
}

TEST_CASE("predict routes: refusals name the row and reason, and are counted", "[http][serve]") {
  serve_fixture f(/*max_rows=*/5, /*max_bytes=*/4000);
  // No model yet: not ready, 503.
  CHECK(f.get("/readyz").status == 503);
  CHECK(f.get("/readyz").body == "not ready: starting\n");
  CHECK(f.post(criteo_row(1)).status == 503);
  f.routes->serve(criteo_model());
  CHECK(f.get("/readyz").status == 200);
  CHECK(f.get("/healthz").status == 200);

  std::string bad = criteo_row(2);
  bad.erase(bad.rfind('\t'));
  bad.erase(bad.rfind('\t'));  // two fields fewer: neither a row nor a row without its label
  auto r = f.post(criteo_row(1) + "\n" + bad + "\n" + criteo_row(3) + "\n");
  CHECK(r.status == 400);
  auto doc = ss::json_value::parse(r.body);
  REQUIRE(doc.is_ok());
  CHECK((*doc)["row"].uint64() == 2);
  CHECK((*doc)["reason"].string() == "field_count");
  CHECK((*doc)["error"].string() ==
        "row 2 (line 2): expected 40 fields, as the request's first row (with the label column 'label'), found 38");

  std::string six;
  for (int k = 0; k < 6; ++k) six += criteo_row(k) + "\n";
  CHECK(f.post(six).status == 413);  // rows over max_rows
  CHECK(f.post(std::string(4001, 'x')).status == 413);  // bytes over max_body_bytes, refused by the server
  CHECK(f.post("{\"rows\": 3}", "application/json").status == 400);
  CHECK(f.post("\n\n").status == 400);
  const auto wrong_method = f.get("/predict");
  CHECK(wrong_method.status == 405);
  CHECK(has_header(wrong_method, "Allow: POST"));
  const auto post_metrics = f.post("x", "text/plain", "/metrics");
  CHECK(post_metrics.status == 405);
  CHECK(has_header(post_metrics, "Allow: GET, HEAD"));
  CHECK(f.get("/nope").status == 404);
  CHECK(f.post("x", "text/plain", "/nope").status == 404);

  const auto& refused = f.routes->refused();
  CHECK(refused.no_model.load() == 1);
  CHECK(refused.bad_row.load() == 1);
  CHECK(refused.too_many_rows.load() == 1);
  CHECK(refused.bad_json.load() == 1);
  CHECK(refused.no_rows.load() == 1);
  CHECK(refused.method.load() == 2);
  CHECK(refused.not_found.load() == 2);
  CHECK(f.server->stats().bodies_too_large == 1);
  CHECK(f.routes->counters().predict_requests.load() == 5);  // those that reached the route
  CHECK(f.routes->counters().rows_scored.load() == 0);

  const std::string m = f.get("/metrics").body;
  for (const char* line : {
           "shadowsync_serve_ready 1\n",
           "shadowsync_serve_model_version 0\n",
           "shadowsync_serve_model_examples_trained 77\n",
           "shadowsync_serve_model_age_seconds 3\n",  // wall 4000 ms, the version's 1000 ms
           "shadowsync_serve_predict_requests 5\n",
           "shadowsync_serve_rows_scored 0\n",
           "shadowsync_serve_requests_refused{reason=\"bad_row\"} 1\n",
           "shadowsync_serve_requests_refused{reason=\"too_many_rows\"} 1\n",
           "shadowsync_serve_requests_refused{reason=\"no_model\"} 1\n",
           "# TYPE shadowsync_serve_request_seconds histogram\n",
           "shadowsync_serve_request_seconds_bucket{le=\"+Inf\"} 5\n",
           "shadowsync_serve_request_seconds_count 5\n",
           "shadowsync_ops_http_bodies_too_large 1\n",
           "shadowsync_serve_updates_applied 0\n",
       }) {
    INFO(line);
    CHECK(m.find(line) != std::string::npos);
  }
  f.routes->not_ready("stopping");
  CHECK(f.get("/readyz").body == "not ready: stopping\n");
}

TEST_CASE("predict routes: a request reports the version that scored it while updates apply", "[http][serve]") {
  serve_fixture f;
  auto model = criteo_model(0);
  f.routes->serve(model);
  const std::string rows = criteo_row(1) + "\n" + criteo_row(2) + "\n";
  std::vector<std::vector<float>> by_version{expected(*model, rows)};
  std::atomic<bool> done{false};
  std::atomic<int> bad{0}, answered{0};
  std::vector<std::vector<float>> seen(4);
  std::mutex mu;
  std::vector<std::thread> clients;
  for (int c = 0; c < 3; ++c) {
    clients.emplace_back([&] {
      while (!done.load()) {
        const auto r = f.post(rows);
        auto doc = ss::json_value::parse(r.body);
        if (r.status != 200 || !doc.is_ok()) {
          ++bad;
          continue;
        }
        std::vector<float> got;
        for (const auto& p : (*doc)["predictions"].items()) got.push_back(static_cast<float>(p.number()));
        std::lock_guard<std::mutex> lock(mu);
        const auto v = (*doc)["version"].uint64();
        if (v >= seen.size()) {
          ++bad;
        } else if (seen[v].empty()) {
          seen[v] = got;
        } else if (seen[v] != got) {
          ++bad;
        }
        ++answered;
      }
    });
  }
  for (std::uint64_t v = 1; v <= 3; ++v) {
    REQUIRE(wait_until([&] { return answered.load() > static_cast<int>(10 * v); }));
    serving::model_update u;
    u.version = {v, 77 + v, 2000};
    u.dense = std::vector<float>(static_cast<std::size_t>(ss::model::dense_layout(model->config()).size()),
                                 0.01f * static_cast<float>(v));
    REQUIRE(model->apply(u).is_ok());
  }
  REQUIRE(wait_until([&] { return answered.load() > 50; }));
  done.store(true);
  for (auto& t : clients) t.join();
  CHECK(bad.load() == 0);
  std::lock_guard<std::mutex> lock(mu);
  CHECK(seen[0] == by_version[0]);
  CHECK_FALSE(seen[3].empty());
  CHECK(seen[3] != seen[0]);
}
