// Prometheus text exposition format (version 0.0.4): what every service serves on GET /metrics.
//
//   prometheus_text p;
//   p.counter("shadowsync_examples_total", "Examples trained.", 1234, {{"role", "trainer"}});
//   p.gauge("shadowsync_queue_depth", "Batches waiting.", 3, {{"queue", "input"}});
//   std::string body = p.str();
//
// Samples are grouped into metric families by name: each family gets one "# HELP" and one
// "# TYPE" line, families come out in first-seen order and samples in call order. Names are not
// suffixed automatically (pass "..._total" for a counter yourself).
//
// Names must match [a-zA-Z_:][a-zA-Z0-9_:]* and label names [a-zA-Z_][a-zA-Z0-9_]*. An invalid
// name is a programming error: it asserts in debug builds and is sanitized (each bad character
// becomes '_') in release builds. Names built from data must go through sanitize_metric_name()
// first (the exported status fields are declared in status tables: status_metrics.hpp). Label values and HELP text may hold any bytes; they are escaped.
//
// Thread-safety: a prometheus_text is a plain value (not thread-safe); the free functions are pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ss/core/status.hpp"

namespace ss::metrics {

// Label name/value pairs, rendered in the given order.
using prometheus_labels = std::vector<std::pair<std::string, std::string>>;

// The Content-Type of a text exposition body.
inline constexpr const char* prometheus_content_type = "text/plain; version=0.0.4; charset=utf-8";

class prometheus_text {
 public:
  // A sample of a gauge family.
  prometheus_text& gauge(std::string_view name, std::string_view help, double value,
                         const prometheus_labels& labels = {});
  // A sample of a counter family. The name is used as given (no "_total" is appended).
  prometheus_text& counter(std::string_view name, std::string_view help, double value,
                           const prometheus_labels& labels = {});
  // A summary family: name{quantile="q"} for each (q, value) pair, then name_sum and name_count.
  // `labels` must not contain "quantile".
  prometheus_text& summary(std::string_view name, std::string_view help,
                           const std::vector<std::pair<double, double>>& quantiles, double sum,
                           std::uint64_t count, const prometheus_labels& labels = {});

  // A histogram family: name_bucket{le="b"} with the count of observations at most b, for each
  // (b, count) pair of `buckets` (ascending, cumulative), then le="+Inf" (= count), name_sum and
  // name_count. `labels` must not contain "le".
  prometheus_text& histogram(std::string_view name, std::string_view help,
                             const std::vector<std::pair<double, std::uint64_t>>& buckets, double sum,
                             std::uint64_t count, const prometheus_labels& labels = {});

  // The exposition text: every family, each line ending in '\n'. Empty when nothing was added.
  std::string str() const;
  bool empty() const noexcept { return families_.empty(); }
  void clear();

  // Samples dropped because a series (name + labels) was added twice, or because a name was
  // reused with another type. The first one wins; the exposition stays valid.
  std::size_t dropped() const noexcept { return dropped_; }

 private:
  struct family {
    std::string name;
    std::string help;
    const char* type;
    std::string samples;  // rendered sample lines
  };
  family* family_for(std::string_view name, std::string_view help, const char* type);
  void sample(family& f, std::string_view sample_name, const prometheus_labels& labels,
              const std::pair<std::string, std::string>* extra_label, double value);

  std::vector<family> families_;
  std::unordered_map<std::string, std::size_t> index_;  // family name -> families_ index
  std::unordered_set<std::string> series_;              // "name{labels}" already emitted
  std::size_t dropped_ = 0;
};

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool is_valid_metric_name(std::string_view name) noexcept;
// [a-zA-Z_][a-zA-Z0-9_]*
bool is_valid_label_name(std::string_view name) noexcept;
// Each invalid character becomes '_'; a leading digit gets a '_' in front; "" becomes "_".
// With allow_colon = false (label names), ':' is invalid too.
std::string sanitize_metric_name(std::string_view name, bool allow_colon = true);

// Label value escaping: backslash, double quote and newline become \\, \" and \n.
std::string escape_label_value(std::string_view value);
// HELP text escaping: backslash and newline become \\ and \n.
std::string escape_help(std::string_view help);
// A sample value as Prometheus parses it: "NaN", "+Inf", "-Inf", otherwise the shortest decimal
// that reads back as the same double ("1.5", "42", "1e+20").
std::string format_value(double value);

}  // namespace ss::metrics
