#include "command_line.hpp"

#include <cstdio>
#include <utility>

#include "command_table.hpp"
#include "ss/core/json.hpp"
#include "ss/service/logging.hpp"

namespace ss::cli {

void add_log_flags(config::option_set& opts, log_flags& f) {
  opts.add("log-level", &f.level, "Log level.").choices({"trace", "debug", "info", "warn", "error", "off"});
  opts.add("log-format", &f.format, "Log line format.").choices({"human", "json"});
}

int refusal::operator()(const std::string& why) const {
  std::fprintf(stderr, "shadowsync %s: %s\n", command.c_str(), why.c_str());
  if (!json_command.empty()) {
    std::printf("%s\n", json_object().add("command", json_command).add("ok", false).add("error", why).str().c_str());
    std::fflush(stdout);
  }
  return 2;
}

command_line::command_line(refusal refuse, const std::string& description)
    : refuse_(std::move(refuse)), opts_(refuse_.command, description) {}

std::optional<int> command_line::parse(const args& a, const config::environment& env, const log_flags* logging) {
  if (auto st = opts_.parse(a, env); !st.is_ok()) return refuse(st.message());
  if (opts_.help_requested()) {
    std::printf("%s", opts_.help().c_str());
    return 0;
  }
  if (logging != nullptr) {
    if (auto st = service::init_logging(logging->level, logging->format); !st.is_ok()) return refuse(st.message());
  }
  // A variable no command reads is a mistake (misspelt far off, or left over); one another command
  // reads is said once at the start, so that one meant for this command and misplaced is seen.
  for (const auto& name : opts_.ignored_environment()) {
    if (!some_command_reads(name))
      return refuse(name + " is not an option of any shadowsync command: unset it (`shadowsync " + refuse_.command +
                    " --help` lists this command's, each also a SHADOWSYNC_* variable)");
    std::fprintf(stderr, "shadowsync %s: %s is not an option of this command; ignored\n", refuse_.command.c_str(),
                 name.c_str());
  }
  return std::nullopt;
}

}  // namespace ss::cli
