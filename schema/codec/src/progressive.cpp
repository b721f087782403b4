#include "ss/wire/progressive.hpp"

#include <cmath>
#include <string>

namespace ss::wire {
namespace {

status refuse(const std::string& what) { return status(errc::parse_error, "progressive window: " + what); }

}  // namespace

progressive_window to_wire(const std::deque<metrics::window_slice>& slices, double now) {
  progressive_window w;
  for (const auto& s : slices) {
    if (s.examples == 0) continue;
    w.start_ages.push_back(std::max(0.0, now - s.start_seconds));
    w.end_ages.push_back(std::max(0.0, now - s.end_seconds));
    w.examples.push_back(s.examples);
    w.clicks.push_back(s.clicks);
    w.prediction_sums.push_back(s.prediction_sum);
    w.log_loss_sums.push_back(s.log_loss_sum);
    std::uint32_t entries = 0;
    for (std::uint32_t b = 0; b < s.click_counts.size(); ++b) {
      if (s.click_counts[b] == 0 && s.non_click_counts[b] == 0) continue;
      w.buckets.push_back(b);
      w.bucket_clicks.push_back(s.click_counts[b]);
      w.bucket_non_clicks.push_back(s.non_click_counts[b]);
      ++entries;
    }
    w.bucket_counts.push_back(entries);
  }
  return w;
}

status check_progressive(const progressive_window& w) {
  const std::size_t slices = w.examples.size();
  if (slices > max_progressive_slices)
    return refuse(std::to_string(slices) + " slices, more than the " + std::to_string(max_progressive_slices) +
                  " a window holds");
  for (const std::size_t n : {w.start_ages.size(), w.end_ages.size(), w.clicks.size(), w.prediction_sums.size(),
                              w.log_loss_sums.size(), w.bucket_counts.size()})
    if (n != slices) return refuse(std::to_string(slices) + " slices but a per-slice list of " + std::to_string(n));
  const std::size_t entries = w.buckets.size();
  if (w.bucket_clicks.size() != entries || w.bucket_non_clicks.size() != entries)
    return refuse(std::to_string(entries) + " buckets but " + std::to_string(w.bucket_clicks.size()) +
                  " click counts and " + std::to_string(w.bucket_non_clicks.size()) + " non-click counts");
  std::size_t at = 0;
  for (std::size_t s = 0; s < slices; ++s) {
    const std::string slice = "slice " + std::to_string(s) + ": ";
    if (!(w.end_ages[s] >= 0 && w.start_ages[s] >= w.end_ages[s] && std::isfinite(w.start_ages[s])))
      return refuse(slice + "ages " + std::to_string(w.start_ages[s]) + " to " + std::to_string(w.end_ages[s]) +
                    " are not a span of time before the heartbeat");
    if (w.clicks[s] > w.examples[s])
      return refuse(slice + std::to_string(w.clicks[s]) + " clicks of " + std::to_string(w.examples[s]) + " examples");
    if (w.bucket_counts[s] > entries - at)
      return refuse(slice + std::to_string(w.bucket_counts[s]) + " buckets, past the " + std::to_string(entries) +
                    " sent");
    std::uint64_t clicks = 0, non_clicks = 0;
    for (std::size_t i = at; i < at + w.bucket_counts[s]; ++i) {
      if (w.buckets[i] >= metrics::progressive_buckets)
        return refuse(slice + "bucket " + std::to_string(w.buckets[i]) + " is outside 0.." +
                      std::to_string(metrics::progressive_buckets - 1));
      if (i > at && w.buckets[i] <= w.buckets[i - 1]) return refuse(slice + "buckets are not in ascending order");
      clicks += w.bucket_clicks[i];
      non_clicks += w.bucket_non_clicks[i];
    }
    if (clicks != w.clicks[s] || clicks + non_clicks != w.examples[s])
      return refuse(slice + "its buckets hold " + std::to_string(clicks) + " clicks of " +
                    std::to_string(clicks + non_clicks) + " examples, its counts say " + std::to_string(w.clicks[s]) +
                    " of " + std::to_string(w.examples[s]));
    at += w.bucket_counts[s];
  }
  if (at != entries)
    return refuse(std::to_string(entries) + " buckets sent, " + std::to_string(at) + " of them the slices'");
  return status::ok();
}

result<std::vector<metrics::window_slice>> from_wire(const progressive_window& w, double received) {
  SS_RETURN_IF_ERROR(check_progressive(w));
  std::vector<metrics::window_slice> out(w.examples.size());
  std::size_t at = 0;
  for (std::size_t s = 0; s < out.size(); ++s) {
    auto& slice = out[s];
    slice.start_seconds = received - w.start_ages[s];
    slice.end_seconds = received - w.end_ages[s];
    slice.examples = w.examples[s];
    slice.clicks = w.clicks[s];
    slice.prediction_sum = w.prediction_sums[s];
    slice.log_loss_sum = w.log_loss_sums[s];
    slice.click_counts.assign(metrics::progressive_buckets, 0);
    slice.non_click_counts.assign(metrics::progressive_buckets, 0);
    for (std::size_t i = at; i < at + w.bucket_counts[s]; ++i) {
      slice.click_counts[w.buckets[i]] = w.bucket_clicks[i];
      slice.non_click_counts[w.buckets[i]] = w.bucket_non_clicks[i];
    }
    at += w.bucket_counts[s];
  }
  return out;
}

}  // namespace ss::wire
