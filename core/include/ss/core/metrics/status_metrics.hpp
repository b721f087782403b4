// Status tables: the machinery by which each service declares every field of its status once.
// A service's table (one status_field per field: name, type, help, and how the value is read from
// the service's state) gives
//   - its status JSON, what `shadowsync status` shows (to_json: the fields in table order), and
//   - its /metrics: each counter and gauge as shadowsync_<section>_<name> with its type and help
//     (append_status_metrics), read back from that JSON so a scrape shows what status shows.
// The tables themselves live with the services (actors/, ss/actors/status_metrics.hpp lists them);
// this header knows no service's field names.
//
//   struct my_view { const my_counters& c; };
//   const metrics::status_table<my_view>& my_fields() {
//     static const metrics::status_table<my_view> table = {
//         {"role", metrics::metric_type::status_only, "The service's role.", [](const my_view&) { return "mine"; }},
//         {"lookups", metrics::metric_type::counter, "Lookup requests served.",
//          [](const my_view& v) { return v.c.lookups.load(); }},
//     };
//     return table;
//   }
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ss/core/json.hpp"
#include "ss/core/json_value.hpp"
#include "ss/core/metrics/prometheus.hpp"

namespace ss::metrics {

// counter and gauge: shown by status and exported on /metrics; status_only: shown by status only
// (text, identities, settings, numbers no scrape wants).
enum class metric_type { gauge, counter, status_only };

// "gauge", "counter", "status".
const char* to_string(metric_type t) noexcept;

// Whether the coordinator's history (history.hpp) keeps a curve of a field, for the dashboard:
// its value, the rate of its count per second (a series named <field>_per_sec), both, or its
// value while it is known (not negative: a negative value says "none yet").
enum class chart { none, value, rate, value_and_rate, known };

// A JSON text written as it is (an array, an object): for the few fields that are not one value.
struct raw_json {
  std::string text;
};

// One status value, written as the JSON writer writes its type: integers exactly, doubles as
// %.10g (not finite: null), bools as true/false, text quoted. Implicit from each of those types,
// so a table's reader returns what it reads.
class field_value {
 public:
  field_value(bool v) : v_(v) {}
  field_value(double v) : v_(v) {}
  field_value(int v) : v_(static_cast<std::int64_t>(v)) {}
  field_value(long v) : v_(static_cast<std::int64_t>(v)) {}
  field_value(long long v) : v_(static_cast<std::int64_t>(v)) {}
  field_value(unsigned v) : v_(static_cast<std::uint64_t>(v)) {}
  field_value(unsigned long v) : v_(static_cast<std::uint64_t>(v)) {}
  field_value(unsigned long long v) : v_(static_cast<std::uint64_t>(v)) {}
  field_value(std::string v) : v_(std::move(v)) {}
  field_value(const char* v) : v_(std::string(v)) {}
  field_value(raw_json v) : v_(std::move(v)) {}

  void add_to(json_object& o, std::string_view key) const;

 private:
  std::variant<bool, std::int64_t, std::uint64_t, double, std::string, raw_json> v_;
};

// One field of a service's status, read from a `View` (whatever the service's status function
// bundles: its counters, its stats, its options).
template <class View>
struct status_field {
  const char* name;  // the key in the status JSON; exported as shadowsync_<section>_<name>
  metric_type type;
  const char* help;  // the metric's HELP text (and the dashboard's)
  std::function<field_value(const View&)> read;
  chart history = chart::none;
};

template <class View>
using status_table = std::vector<status_field<View>>;

// The table's fields of `view`, in table order, added to `o`.
template <class View>
json_object& add_fields(json_object& o, const status_table<View>& table, const View& view) {
  for (const auto& f : table) f.read(view).add_to(o, f.name);
  return o;
}

template <class View>
std::string to_json(const status_table<View>& table, const View& view) {
  json_object o;
  return add_fields(o, table, view).str();
}

// A field as /metrics, the dashboard and the golden list see it: without its reader.
struct field_info {
  const char* name;
  metric_type type;
  const char* help;
  chart history = chart::none;
};
using field_list = std::vector<field_info>;

template <class View>
field_list describe(const status_table<View>& table) {
  field_list out;
  out.reserve(table.size());
  for (const auto& f : table) out.push_back({f.name, f.type, f.help, f.history});
  return out;
}

// Appends each counter and gauge of `fields` that the status object `section` holds (a number,
// or a bool as 0/1; absent, null or text: skipped) to `out` as shadowsync_<section_name>_<name>.
void append_status_metrics(prometheus_text& out, std::string_view section_name, const json_value& section,
                           const field_list& fields, const prometheus_labels& labels);

// The fields as JSON: [{"name":..,"type":"counter"|"gauge"|"status","help":..},...].
std::string fields_json(const field_list& fields);

}  // namespace ss::metrics
