#include "ss/core/metrics/prometheus.hpp"

#include <cassert>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <system_error>

namespace ss::metrics {

namespace {

bool is_name_start(char c, bool allow_colon) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (allow_colon && c == ':');
}

bool is_name_char(char c, bool allow_colon) noexcept {
  return is_name_start(c, allow_colon) || (c >= '0' && c <= '9');
}

bool valid_name(std::string_view name, bool allow_colon) noexcept {
  if (name.empty() || !is_name_start(name[0], allow_colon)) return false;
  for (char c : name) {
    if (!is_name_char(c, allow_colon)) return false;
  }
  return true;
}

// A name from code: asserted, then sanitized so a release build still emits valid text.
std::string checked_metric_name(std::string_view name) {
  assert(is_valid_metric_name(name) && "invalid Prometheus metric name");
  return is_valid_metric_name(name) ? std::string(name) : sanitize_metric_name(name);
}

std::string checked_label_name(std::string_view name) {
  assert(is_valid_label_name(name) && "invalid Prometheus label name");
  return is_valid_label_name(name) ? std::string(name) : sanitize_metric_name(name, false);
}

void append_label(std::string& out, const std::string& name, std::string_view value) {
  if (out.size() > 1) out += ',';
  out += checked_label_name(name);
  out += "=\"";
  out += escape_label_value(value);
  out += '"';
}

}  // namespace

bool is_valid_metric_name(std::string_view name) noexcept { return valid_name(name, true); }

bool is_valid_label_name(std::string_view name) noexcept { return valid_name(name, false); }

std::string sanitize_metric_name(std::string_view name, bool allow_colon) {
  std::string out;
  out.reserve(name.size() + 1);
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) out += '_';
  for (char c : name) out += is_name_char(c, allow_colon) ? c : '_';
  return out;
}

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

std::string escape_help(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, value);
  if (res.ec != std::errc()) return "NaN";  // cannot happen with 64 bytes
  return std::string(buf, res.ptr);
}

// ---- prometheus_text ------------------------------------------------------------------------

prometheus_text::family* prometheus_text::family_for(std::string_view name, std::string_view help,
                                                     const char* type) {
  std::string n = checked_metric_name(name);
  auto it = index_.find(n);
  if (it != index_.end()) {
    family& f = families_[it->second];
    if (std::strcmp(f.type, type) != 0) return nullptr;  // same name, another type: dropped
    return &f;
  }
  index_.emplace(n, families_.size());
  families_.push_back(family{std::move(n), std::string(help), type, {}});
  return &families_.back();
}

void prometheus_text::sample(family& f, std::string_view sample_name,
                             const prometheus_labels& labels,
                             const std::pair<std::string, std::string>* extra_label,
                             double value) {
  std::string label_text = "{";
  for (const auto& [k, v] : labels) append_label(label_text, k, v);
  if (extra_label != nullptr) append_label(label_text, extra_label->first, extra_label->second);
  label_text += '}';
  std::string series(sample_name);
  if (label_text.size() > 2) series += label_text;
  if (!series_.insert(series).second) {
    ++dropped_;
    return;
  }
  f.samples += series;
  f.samples += ' ';
  f.samples += format_value(value);
  f.samples += '\n';
}

prometheus_text& prometheus_text::gauge(std::string_view name, std::string_view help, double value,
                                        const prometheus_labels& labels) {
  family* f = family_for(name, help, "gauge");
  if (f == nullptr) {
    ++dropped_;
    return *this;
  }
  sample(*f, f->name, labels, nullptr, value);
  return *this;
}

prometheus_text& prometheus_text::counter(std::string_view name, std::string_view help,
                                          double value, const prometheus_labels& labels) {
  family* f = family_for(name, help, "counter");
  if (f == nullptr) {
    ++dropped_;
    return *this;
  }
  sample(*f, f->name, labels, nullptr, value);
  return *this;
}

prometheus_text& prometheus_text::summary(std::string_view name, std::string_view help,
                                          const std::vector<std::pair<double, double>>& quantiles,
                                          double sum, std::uint64_t count,
                                          const prometheus_labels& labels) {
  family* f = family_for(name, help, "summary");
  if (f == nullptr) {
    ++dropped_;
    return *this;
  }
  const std::string base = f->name;  // f stays valid: no family is added below
  for (const auto& [q, v] : quantiles) {
    const std::pair<std::string, std::string> quantile{"quantile", format_value(q)};
    sample(*f, base, labels, &quantile, v);
  }
  sample(*f, base + "_sum", labels, nullptr, sum);
  sample(*f, base + "_count", labels, nullptr, static_cast<double>(count));
  return *this;
}

prometheus_text& prometheus_text::histogram(std::string_view name, std::string_view help,
                                            const std::vector<std::pair<double, std::uint64_t>>& buckets,
                                            double sum, std::uint64_t count, const prometheus_labels& labels) {
  family* f = family_for(name, help, "histogram");
  if (f == nullptr) {
    ++dropped_;
    return *this;
  }
  const std::string base = f->name;  // f stays valid: no family is added below
  for (const auto& [le, n] : buckets) {
    const std::pair<std::string, std::string> bound{"le", format_value(le)};
    sample(*f, base + "_bucket", labels, &bound, static_cast<double>(n));
  }
  const std::pair<std::string, std::string> all{"le", "+Inf"};
  sample(*f, base + "_bucket", labels, &all, static_cast<double>(count));
  sample(*f, base + "_sum", labels, nullptr, sum);
  sample(*f, base + "_count", labels, nullptr, static_cast<double>(count));
  return *this;
}

std::string prometheus_text::str() const {
  std::string out;
  for (const family& f : families_) {
    if (f.samples.empty()) continue;
    out += "# HELP ";
    out += f.name;
    out += ' ';
    out += escape_help(f.help);
    out += "\n# TYPE ";
    out += f.name;
    out += ' ';
    out += f.type;
    out += '\n';
    out += f.samples;
  }
  return out;
}

void prometheus_text::clear() {
  families_.clear();
  index_.clear();
  series_.clear();
  dropped_ = 0;
}

}  // namespace ss::metrics
