// Counters that are declared once: where a service declares a counter (a member of its counter
// set), it gives the counter's status key, help and type; the service's status table takes every
// counter of the set at once (counter_fields), so status JSON, /metrics and the dashboard's help all
// follow from that one line.
//
//   struct my_counters : metrics::counter_set {
//     metrics::counter lookups{*this, "lookups", "Lookup requests served."};
//     metrics::counter busy_ns{*this, "busy_seconds", "Seconds busy.", metrics::counter_unit::nanoseconds};
//     metrics::counter rows_restored{*this, "rows_restored", "Rows restored at start.", metrics::metric_type::gauge};
//   };
//   ... c.lookups.add();  c.rows_restored.store(n);
//
//   status table: concat(table_before, counter_fields<my_counters, my_view>([](const my_view& v) -> const my_counters& { return v.c; }), ...)
//
// A counter set is neither copied nor moved (its counters know their set by address).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "ss/core/metrics/status_metrics.hpp"

namespace ss::metrics {

class counter;

// How a counter's count is shown: as it is, or a count of nanoseconds shown as seconds.
enum class counter_unit { one, nanoseconds };

class counter_set {
 public:
  counter_set() = default;
  counter_set(const counter_set&) = delete;
  counter_set& operator=(const counter_set&) = delete;

  // Every counter of the set, in the order they are declared.
  const std::vector<const counter*>& counters() const noexcept { return counters_; }

 private:
  friend class counter;
  std::vector<const counter*> counters_;
};

// A number a service counts (or sets) from any thread. Relaxed atomics: a status read may lag a
// moment behind, never tears. The std::atomic members that the call sites use are kept.
class counter {
 public:
  counter(counter_set& set, const char* name, const char* help, metric_type type = metric_type::counter,
          counter_unit unit = counter_unit::one)
      : name_(name), help_(help), type_(type), unit_(unit) {
    set.counters_.push_back(this);
  }
  counter(counter_set& set, const char* name, const char* help, counter_unit unit)
      : counter(set, name, help, metric_type::counter, unit) {}
  counter(const counter&) = delete;
  counter& operator=(const counter&) = delete;

  void add(std::uint64_t n = 1) noexcept { v_.fetch_add(n, std::memory_order_relaxed); }
  std::uint64_t fetch_add(std::uint64_t n, std::memory_order order = std::memory_order_relaxed) noexcept {
    return v_.fetch_add(n, order);
  }
  std::uint64_t fetch_sub(std::uint64_t n, std::memory_order order = std::memory_order_relaxed) noexcept {
    return v_.fetch_sub(n, order);
  }
  void store(std::uint64_t v, std::memory_order order = std::memory_order_relaxed) noexcept { v_.store(v, order); }
  std::uint64_t load(std::memory_order order = std::memory_order_relaxed) const noexcept { return v_.load(order); }
  operator std::uint64_t() const noexcept { return load(); }

  const char* name() const noexcept { return name_; }
  const char* help() const noexcept { return help_; }
  metric_type type() const noexcept { return type_; }
  // The value as status shows it (nanoseconds as seconds).
  field_value value() const {
    const std::uint64_t n = load();
    if (unit_ == counter_unit::nanoseconds) return static_cast<double>(n) * 1e-9;
    return n;
  }

 private:
  std::atomic<std::uint64_t> v_{0};
  const char* name_;
  const char* help_;
  metric_type type_;
  counter_unit unit_;
};

// The status fields of every counter of `Set` (a counter_set with a default constructor), in
// declaration order, each read from the set `set_of(view)` returns. The names come from a set
// made once for the purpose, so a table can be described without a service.
template <class Set, class View, class Get>
status_table<View> counter_fields(Get set_of) {
  static const Set names{};
  status_table<View> out;
  const auto& counters = names.counters();
  out.reserve(counters.size());
  for (std::size_t i = 0; i < counters.size(); ++i) {
    const counter& c = *counters[i];
    out.push_back({c.name(), c.type(), c.help(),
                   [set_of, i](const View& v) { return static_cast<const counter_set&>(set_of(v)).counters()[i]->value(); }});
  }
  return out;
}

// The tables one after the other: a table made of its own fields and of counter_fields().
template <class View>
status_table<View> concat(std::initializer_list<status_table<View>> parts) {
  status_table<View> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

}  // namespace ss::metrics
