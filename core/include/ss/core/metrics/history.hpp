// The coordinator's history of its own status: a bounded time series per number, so that the
// dashboard (services/http/dashboard_routes) shows a job's curves since it started, not only
// since the page was opened. Pure: time is a parameter (seconds since the coordinator started),
// there is no clock here.
//
// Bounded in memory: every series keeps at most `points_per_series` points. When a series is
// full it is thinned (every other point dropped, the newest always kept) and from then on takes a
// new point only when the one before is at least the mean spacing old (until then the newest
// point is replaced), so a series always spans the whole job at a resolution that halves as the
// job doubles in length. At most `max_series` series are kept; the ones beyond are not recorded
// (their samples counted). So the points held never exceed max_series * points_per_series, 16 bytes each:
// 4 MiB with the defaults (512 x 512), whatever the job's length.
//
// What is recorded is the status's numbers only (record() reads the JSON the coordinator serves to
// `shadowsync status`, by the fields its status tables mark for a chart), plus rates computed from
// its counters, so the history shows nothing that status does not. It knows no field by name.
//
// Thread-safety: record() and to_json() may be called from different threads (a mutex).
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "ss/core/json_value.hpp"
#include "ss/core/metrics/status_metrics.hpp"

namespace ss::metrics {

struct series_point {
  double t = 0;  // seconds since the coordinator started
  double value = 0;
};

// One curve of at most `capacity` points (at least 4), thinned as described above.
class bounded_series {
 public:
  explicit bounded_series(std::size_t capacity);
  // Points must come in time order; a non-finite value or an earlier time is ignored.
  void add(double t, double value);
  const std::vector<series_point>& points() const noexcept { return points_; }
  // The least time between kept points: 0 until the series was first thinned.
  double spacing() const noexcept { return spacing_; }

 private:
  void thin();

  std::size_t capacity_;
  double spacing_ = 0;
  bool provisional_ = false;  // the newest point is replaced by the next sample
  std::vector<series_point> points_;
};

struct history_limits {
  std::size_t points_per_series = 512;
  std::size_t max_series = 512;
};

class job_history {
 public:
  explicit job_history(history_limits limits = {});

  // Records the numbers of `section` (a status object: the coordinator's, or one member's) that
  // its table `fields` marks for a chart (field_info::history), taken `t` seconds after the
  // coordinator started: each field as the series <prefix><field>, its rate as
  // <prefix><field>_per_sec. Absent and null numbers make no point.
  void record(double t, std::string_view prefix, const json_value& section, const field_list& fields);
  // One number of series `name` at `t`.
  void add(const std::string& name, double t, double value);

  // {"capacity":N,"max_series":M,"dropped_samples":D,"series":{"job/examples":[[t,v],...],...}},
  // the points later than `since` only (the page asks for what it has not seen yet).
  std::string to_json(double since = -1) const;

  std::size_t series_count() const;
  std::size_t dropped_samples() const;
  // The most points the history can hold, all series together.
  std::size_t max_points() const noexcept { return limits_.points_per_series * limits_.max_series; }
  // The longest series.
  std::size_t longest_series() const;

 private:
  void add_locked(const std::string& name, double t, double value);
  // The rate of `counter` since its previous sample, or NaN (the first, or it went back: a restart).
  double rate_locked(const std::string& counter, double t, double value);

  history_limits limits_;
  mutable std::mutex mu_;
  std::map<std::string, bounded_series> series_;
  std::map<std::string, series_point> last_counter_;  // for rates; as bounded as series_
  std::size_t dropped_ = 0;
};

}  // namespace ss::metrics
