// Number formatting for human-readable output: "2,000,000", "1.5 GB", "1m 05s".
#pragma once

#include <cstdint>
#include <string>

namespace ss::service {

std::string with_commas(std::uint64_t n);
std::string human_bytes(double bytes);
std::string human_seconds(double seconds);

}  // namespace ss::service
