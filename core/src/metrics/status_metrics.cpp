#include "ss/core/metrics/status_metrics.hpp"

#include <string>
#include <type_traits>

namespace ss::metrics {

const char* to_string(metric_type t) noexcept {
  switch (t) {
    case metric_type::gauge: return "gauge";
    case metric_type::counter: return "counter";
    case metric_type::status_only: return "status";
  }
  return "status";
}

void field_value::add_to(json_object& o, std::string_view key) const {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, raw_json>) o.add_raw(key, v.text);
        else if constexpr (std::is_same_v<T, std::string>) o.add(key, std::string_view(v));
        else o.add(key, v);
      },
      v_);
}

void append_status_metrics(prometheus_text& out, std::string_view section_name, const json_value& section,
                           const field_list& fields, const prometheus_labels& labels) {
  const std::string prefix = "shadowsync_" + std::string(section_name) + "_";
  for (const auto& f : fields) {
    if (f.type == metric_type::status_only) continue;
    const json_value& v = section[f.name];
    if (v.type() != json_value::kind::number && v.type() != json_value::kind::boolean) continue;
    const double value = v.type() == json_value::kind::boolean ? (v.boolean() ? 1.0 : 0.0) : v.number();
    if (f.type == metric_type::counter) out.counter(prefix + f.name, f.help, value, labels);
    else out.gauge(prefix + f.name, f.help, value, labels);
  }
}

std::string fields_json(const field_list& fields) {
  std::vector<std::string> items;
  items.reserve(fields.size());
  for (const auto& f : fields)
    items.push_back(json_object().add("name", f.name).add("type", to_string(f.type)).add("help", f.help).str());
  return json_array(items);
}

}  // namespace ss::metrics
