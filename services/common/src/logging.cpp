#include "ss/service/logging.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>

#include "ss/core/json.hpp"

namespace ss::service {
namespace {

// %j: the log message as a JSON string literal (quotes and control characters escaped), so
// every JSON log line parses whatever the message holds.
class json_message_flag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    const std::string quoted = json_quote(std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(quoted.data(), quoted.data() + quoted.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<json_message_flag>();
  }
};

}  // namespace

status init_logging(const std::string& level, const std::string& format) {
  const auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off")
    return {errc::invalid_argument, "unknown log level '" + level + "' (trace, debug, info, warn, error, off)"};
  if (format != "human" && format != "json")
    return {errc::invalid_argument, "unknown log format '" + format + "' (human, json)"};
  auto logger = spdlog::get("shadowsync");
  if (!logger) logger = spdlog::stderr_logger_mt("shadowsync");
  logger->set_level(lvl);
  if (format == "json") {
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<json_message_flag>('j').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","logger":"%n","msg":%j})");
    logger->set_formatter(std::move(formatter));
  } else {
    logger->set_pattern("[%H:%M:%S.%e] %^%l%$ %v");
  }
  spdlog::set_default_logger(logger);
  return status::ok();
}

}  // namespace ss::service
