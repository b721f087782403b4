#include "ss/core/metrics/history.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "ss/core/json.hpp"

namespace ss::metrics {

bounded_series::bounded_series(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 4)) {
  points_.reserve(capacity_);
}

void bounded_series::add(double t, double value) {
  if (!std::isfinite(value) || !std::isfinite(t)) return;
  if (!points_.empty() && t < points_.back().t) return;
  // Once thinned, the newest point is provisional: it moves forward with each sample until it is
  // `spacing_` past the one before it, so the series keeps its resolution and ends with the
  // current value.
  if (provisional_) {
    points_.back() = {t, value};
    provisional_ = t - points_[points_.size() - 2].t < spacing_;
    return;
  }
  points_.push_back({t, value});
  if (points_.size() >= capacity_) thin();
  const std::size_t n = points_.size();
  provisional_ = n >= 2 && points_[n - 1].t - points_[n - 2].t < spacing_;
}

void bounded_series::thin() {
  // Keep the newest point and every other one before it.
  std::vector<series_point> kept;
  kept.reserve(capacity_);
  for (std::size_t i = points_.size(); i >= 2; i -= 2) kept.push_back(points_[i - 1]);
  if (points_.size() % 2 == 1) kept.push_back(points_.front());
  std::reverse(kept.begin(), kept.end());
  points_.swap(kept);
  if (points_.size() >= 2)
    spacing_ = (points_.back().t - points_.front().t) / static_cast<double>(points_.size() - 1);
}

job_history::job_history(history_limits limits) : limits_(limits) {}

void job_history::add(const std::string& name, double t, double value) {
  std::lock_guard<std::mutex> lock(mu_);
  add_locked(name, t, value);
}

void job_history::add_locked(const std::string& name, double t, double value) {
  if (!std::isfinite(value)) return;
  auto it = series_.find(name);
  if (it == series_.end()) {
    if (series_.size() >= limits_.max_series) {
      ++dropped_;
      return;
    }
    it = series_.emplace(name, bounded_series(limits_.points_per_series)).first;
  }
  it->second.add(t, value);
}

double job_history::rate_locked(const std::string& counter, double t, double value) {
  auto it = last_counter_.find(counter);
  if (it == last_counter_.end()) {
    if (last_counter_.size() < limits_.max_series) last_counter_.emplace(counter, series_point{t, value});
    return std::nan("");
  }
  const series_point before = it->second;
  it->second = {t, value};
  if (t <= before.t || value < before.value) return std::nan("");
  return (value - before.value) / (t - before.t);
}

namespace {

// A number of the status, NaN when it is absent or null (NE before any example).
double number_of(const json_value& v) {
  if (v.type() == json_value::kind::number) return v.number();
  return std::nan("");
}

}  // namespace

void job_history::record(double t, std::string_view prefix, const json_value& section, const field_list& fields) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string name(prefix);
  for (const auto& f : fields) {
    if (f.history == chart::none) continue;
    name.resize(prefix.size());
    name += f.name;
    const double value = number_of(section[f.name]);
    if (f.history == chart::value || f.history == chart::value_and_rate) add_locked(name, t, value);
    if (f.history == chart::known && value >= 0) add_locked(name, t, value);
    if (f.history == chart::rate || f.history == chart::value_and_rate) {
      const double rate = rate_locked(name, t, value);
      add_locked(name + "_per_sec", t, rate);
    }
  }
}

namespace {

// Seconds to the millisecond, without trailing zeros ("12.5", "3"): integer arithmetic, the
// fastest way to write most of an answer that is mostly times.
char* write_seconds(char* at, double t) {
  const long long ms = std::llround(t * 1000);
  at = std::to_chars(at, at + 24, ms / 1000).ptr;
  long long frac = ms % 1000;
  if (frac == 0) return at;
  *at++ = '.';
  const char digits[3] = {static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                          static_cast<char>('0' + frac % 10)};
  const int n = digits[2] != '0' ? 3 : digits[1] != '0' ? 2 : 1;
  for (int i = 0; i < n; ++i) *at++ = digits[i];
  return at;
}

// One point as "[t,v]": t to the millisecond, v to 7 significant digits (a curve needs no more;
// the job's result keeps every digit).
void append_point(std::string& out, const series_point& p) {
  char buf[80];
  char* at = buf;
  *at++ = '[';
  at = write_seconds(at, p.t);
  *at++ = ',';
  if (p.value == std::floor(p.value) && std::fabs(p.value) < 1e15) {
    at = std::to_chars(at, buf + 78, static_cast<long long>(p.value)).ptr;
  } else {
    at = std::to_chars(at, buf + 78, p.value, std::chars_format::general, 7).ptr;
  }
  *at++ = ']';
  out.append(buf, at);
}

}  // namespace

std::string job_history::to_json(double since) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::size_t points = 0;
  for (const auto& [name, s] : series_) points += s.points().size();
  std::string out;
  out.reserve(128 + series_.size() * 64 + points * 32);
  out += "{\"capacity\":" + std::to_string(limits_.points_per_series) +
         ",\"max_series\":" + std::to_string(limits_.max_series) + ",\"dropped_samples\":" + std::to_string(dropped_) +
         ",\"series\":{";
  bool first_series = true;
  for (const auto& [name, s] : series_) {
    if (!first_series) out += ',';
    first_series = false;
    out += json_quote(name);
    out += ":[";
    bool first_point = true;
    for (const auto& p : s.points()) {
      if (p.t <= since) continue;
      if (!first_point) out += ',';
      first_point = false;
      append_point(out, p);
    }
    out += ']';
  }
  out += "}}";
  return out;
}

std::size_t job_history::series_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return series_.size();
}

std::size_t job_history::dropped_samples() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

std::size_t job_history::longest_series() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::size_t most = 0;
  for (const auto& [name, s] : series_) most = std::max(most, s.points().size());
  return most;
}

}  // namespace ss::metrics
