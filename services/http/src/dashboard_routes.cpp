#include "ss/http/dashboard_routes.hpp"

#include <cmath>
#include <cstdlib>

#include "ss/core/json.hpp"
#include "ss/http/dashboard_assets.hpp"

namespace ss::http {
namespace {

// The page loads only what this endpoint serves; it draws its charts as inline SVG elements.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

void add_safety_headers(http_response& r) {
  r.headers.emplace_back("Content-Security-Policy", kContentSecurityPolicy);
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
}

http_response json_answer(const std::optional<std::string>& body, const std::string& why_not) {
  http_response r;
  r.content_type = "application/json";
  if (body) {
    r.body = *body;
  } else {
    r.status = 503;
    r.body = json_object().add("error", why_not.empty() ? std::string("not available") : why_not).str();
  }
  r.headers.emplace_back("Cache-Control", "no-store");
  add_safety_headers(r);
  return r;
}

std::optional<http_response> asset(const std::string& path) {
  const std::string wanted = path == "/" ? "/index.html" : path;
  for (const auto& f : dashboard_assets()) {
    if (f.path != wanted) continue;
    http_response r;
    r.content_type = std::string(f.content_type);
    r.body = std::string(f.bytes);
    r.headers.emplace_back("Cache-Control", "no-cache");
    add_safety_headers(r);
    return r;
  }
  return std::nullopt;
}

}  // namespace

double since_parameter(const std::string& query) {
  std::size_t start = 0;
  while (start <= query.size()) {
    const std::size_t end = std::min(query.find('&', start), query.size());
    const std::string part = query.substr(start, end - start);
    if (part.rfind("since=", 0) == 0) {
      const std::string text = part.substr(6);
      char* stop = nullptr;
      const double v = std::strtod(text.c_str(), &stop);
      if (!text.empty() && stop == text.c_str() + text.size() && std::isfinite(v)) return v;
      return -1;
    }
    start = end + 1;
  }
  return -1;
}

std::optional<http_response> dashboard_routes(const dashboard_source& source, const http_request& request) {
  std::string why_not;
  if (request.path == "/api/status") {
    auto body = source.status ? source.status(why_not) : std::nullopt;
    return json_answer(body, why_not);
  }
  if (request.path == "/api/history") {
    auto body = source.history ? source.history(since_parameter(request.query), why_not) : std::nullopt;
    return json_answer(body, why_not);
  }
  if (request.path == "/api/fields" && source.fields) {
    http_response r;
    r.content_type = "application/json";
    r.body = source.fields();
    r.headers.emplace_back("Cache-Control", "no-cache");
    add_safety_headers(r);
    return r;
  }
  return asset(request.path);
}

}  // namespace ss::http
