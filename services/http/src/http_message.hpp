// HTTP/1.1 message text for ops_http_server (private to services/http/src): parsing one line of a
// request head, rendering a response. Pure functions of strings, defined in http_message.cpp.
#pragma once

#include <string>
#include <string_view>

#include "ss/http/ops_http_server.hpp"

namespace ss::http::detail {

// Fills method, path, query and version; 0 when fine, else the HTTP status to answer.
int parse_request_line(std::string_view line, http_request& req);

// Appends one header (name lower-cased, value trimmed); 0 when fine, else the HTTP status to answer.
int parse_header_line(std::string_view line, http_request& req);

// A POST's body length (Content-Length) into `length`; 0 when fine, else the HTTP status to answer:
// 501 with Transfer-Encoding, 411 without Content-Length, 400 for a malformed one or two that
// disagree, 413 above max_body.
int body_length(const http_request& req, std::size_t max_body, std::size_t& length);

// The whole response: status line, headers ("Connection: close" always), body unless head_only
// or the status has none.
std::string render(const http_response& r, bool head_only);

// A response with the default content type and this body.
http_response plain(int status, std::string body);

}  // namespace ss::http::detail
