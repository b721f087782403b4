// HTTP/1.1 message text for the ops HTTP server: a request head's lines parsed into http_request
// (request line, header lines; the strict checks that turn garbage into 400, 414, 431 or 505),
// a response rendered to bytes, and the public http_request::header() and reason_phrase(). Pure
// functions of strings, no sockets: the server's thread (ops_http_server.cpp) calls them with
// complete lines and writes what render() returns.
#include <algorithm>

#include "http_message.hpp"

namespace ss::http {
namespace {

bool is_tchar(char c) noexcept {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '-':
    case '.': case '^': case '_': case '`': case '|': case '~':
      return true;
    default:
      return false;
  }
}

bool is_token(std::string_view s) noexcept {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar);
}

char lower_ascii(char c) noexcept { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower_ascii(c);
  return out;
}

bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower_ascii(a[i]) != lower_ascii(b[i])) return false;
  }
  return true;
}

bool istarts_with(std::string_view s, std::string_view prefix) noexcept {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

bool body_allowed(int status) noexcept { return status >= 200 && status != 204 && status != 304; }

}  // namespace

namespace detail {

int parse_request_line(std::string_view line, http_request& req) {
  const std::size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos) return 400;
  const std::size_t sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) return 400;
  const std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!is_token(method) || target.empty()) return 400;
  for (char c : target) {
    if (c <= 0x20 || c >= 0x7f) return 400;
  }
  const bool version_shape = version.size() == 8 && version.substr(0, 5) == "HTTP/" &&
                             version[5] >= '0' && version[5] <= '9' && version[6] == '.' &&
                             version[7] >= '0' && version[7] <= '9';
  if (!version_shape) return 400;
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return 505;

  // origin-form "/p?q", or absolute-form "http://host:port/p?q" (what proxies send).
  if (target[0] != '/') {
    std::size_t scheme_end = 0;
    if (istarts_with(target, "http://")) {
      scheme_end = 7;
    } else if (istarts_with(target, "https://")) {
      scheme_end = 8;
    } else {
      return 400;  // "*", authority-form, garbage
    }
    const std::size_t slash = target.find_first_of("/?#", scheme_end);
    if (scheme_end == target.size() || slash == scheme_end) return 400;  // no host
    target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
  }
  if (const std::size_t hash = target.find('#'); hash != std::string_view::npos) {
    target = target.substr(0, hash);
  }
  const std::size_t q = target.find('?');
  std::string_view path = target.substr(0, q);
  req.path = path.empty() ? "/" : std::string(path);
  req.query = q == std::string_view::npos ? std::string() : std::string(target.substr(q + 1));
  req.method = std::string(method);
  req.version = std::string(version);
  return 0;
}

int parse_header_line(std::string_view line, http_request& req) {
  if (line[0] == ' ' || line[0] == '\t') return 400;  // obsolete line folding
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return 400;
  const std::string_view name = line.substr(0, colon);
  if (!is_token(name)) return 400;  // also rejects "Name :" (whitespace before the colon)
  std::string_view value = line.substr(colon + 1);
  for (char ch : value) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\t') || c == 0x7f) return 400;  // CTLs, bare CR, NUL
  }
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  req.headers.emplace_back(lower(name), std::string(value));
  return 0;
}

int body_length(const http_request& req, std::size_t max_body, std::size_t& length) {
  if (req.header("transfer-encoding") != nullptr) return 501;
  const std::string* first = nullptr;
  for (const auto& [name, value] : req.headers) {
    if (name != "content-length") continue;
    if (first != nullptr && value != *first) return 400;
    first = &value;
  }
  if (first == nullptr) return 411;
  if (first->empty() || first->size() > 19 || first->find_first_not_of("0123456789") != std::string::npos) return 400;
  length = std::stoull(*first);
  return length > max_body ? 413 : 0;
}

std::string render(const http_response& r, bool head_only) {
  std::string out = "HTTP/1.1 ";
  out += std::to_string(r.status);
  out += ' ';
  out += reason_phrase(r.status);
  out += "\r\n";
  auto clean = [](const std::string& v) {
    return v.find_first_of("\r\n") == std::string::npos;
  };
  if (!r.content_type.empty() && clean(r.content_type)) {
    out += "Content-Type: ";
    out += r.content_type;
    out += "\r\n";
  }
  if (body_allowed(r.status)) {
    out += "Content-Length: ";
    out += std::to_string(r.body.size());
    out += "\r\n";
  }
  out += "Connection: close\r\n";
  for (const auto& [name, value] : r.headers) {
    if (!is_token(name) || !clean(value) || iequals(name, "content-length") ||
        iequals(name, "content-type") || iequals(name, "connection") ||
        iequals(name, "transfer-encoding")) {
      continue;
    }
    out += name;
    out += ": ";
    out += value;
    out += "\r\n";
  }
  out += "\r\n";
  if (!head_only && body_allowed(r.status)) out += r.body;
  return out;
}

http_response plain(int status, std::string body) {
  http_response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

}  // namespace detail

const std::string* http_request::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (iequals(k, name)) return &v;
  }
  return nullptr;
}

const char* reason_phrase(int status) noexcept {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 307: return "Temporary Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

}  // namespace ss::http
