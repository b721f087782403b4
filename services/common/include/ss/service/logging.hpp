// spdlog set-up for every shadowsync process: one stderr logger, human or JSON lines.
#pragma once

#include <string>

#include "ss/core/status.hpp"

namespace ss::service {

// level: trace, debug, info, warn, error, off. format: "human" or "json".
status init_logging(const std::string& level, const std::string& format);

}  // namespace ss::service
