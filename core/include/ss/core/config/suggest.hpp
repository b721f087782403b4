// "Did you mean ...?" for mistyped flags, config keys and command names.
//
// Thread-safety: the functions are pure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ss::config {

// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of adjacent
// characters each cost 1. O(|a| * |b|).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word` if it is close enough to be a plausible typo (distance 1 for
// words up to 3 characters, 2 up to 6, else 3); the first such candidate on ties; "" if none.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace ss::config
