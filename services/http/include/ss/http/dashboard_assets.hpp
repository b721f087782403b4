// The dashboard's static files (services/http/dashboard/: index.html, dashboard.js, dashboard.css),
// compiled into the binary by cmake/embed_files.cmake: nothing to install, no CDN, no network.
#pragma once

#include <string_view>
#include <vector>

namespace ss::http {

struct embedded_file {
  std::string_view path;          // "/index.html"
  std::string_view content_type;  // "text/html; charset=utf-8"
  std::string_view bytes;
};

const std::vector<embedded_file>& dashboard_assets();

}  // namespace ss::http
