// The start every command shares: its flags parsed (command line, --config file, SHADOWSYNC_*
// variables), --help answered, logging started; and the one way a command refuses to run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "ss/core/config/option_set.hpp"

namespace ss::cli {

// --log-level and --log-format, for the commands that log.
struct log_flags {
  std::string level = "info";
  std::string format = "human";
};

void add_log_flags(config::option_set& opts, log_flags& f);

// A refusal to run (exit 2): "shadowsync COMMAND: why" on stderr and, for the commands whose
// callers read only their last stdout line, a JSON line {"command":..., "ok":false, "error":why}.
struct refusal {
  std::string command;       // "train", "coordinator", ...
  std::string json_command;  // the JSON line's "command" ("train", "cluster"); "": no JSON line
  int operator()(const std::string& why) const;
};

// The names of the options `add(opts, flags)` declares, on flags of its own.
template <class Flags, class Add>
std::vector<std::string> names_of_options(Add&& add) {
  Flags flags;
  config::option_set opts("", "");
  add(opts, flags);
  return opts.names();
}

// A command's flags, and how it refuses to run.
class command_line {
 public:
  // `description`: the first paragraph of --help.
  command_line(refusal refuse, const std::string& description);

  config::option_set& options() { return opts_; }
  // Parses the flags, answers --help and, given `logging`, starts logging. Returns the exit status
  // when the command ends here (0 after --help, 2 after refusing bad flags), nothing when its
  // work may begin.
  std::optional<int> parse(const args& a, const config::environment& env, const log_flags* logging = nullptr);
  int refuse(const std::string& why) const { return refuse_(why); }

 private:
  refusal refuse_;
  config::option_set opts_;
};

}  // namespace ss::cli
