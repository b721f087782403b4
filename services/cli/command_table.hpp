// Every command of the shadowsync binary, in the order `shadowsync --help` lists them: its name,
// its summary, how it runs and the names of its options.
#pragma once

#include <string>
#include <vector>

#include "commands.hpp"

namespace ss::cli {

struct command_entry {
  const char* name;
  const char* summary;
  command* run;
  option_names* options;
};

const std::vector<command_entry>& command_table();

// Whether the variable (SHADOWSYNC_BATCH_SIZE) sets an option of some command, or is one the
// project's tools read (SHADOWSYNC_IMAGE, docker compose's); one environment may serve several
// commands, so a variable only another command reads is no mistake.
bool some_command_reads(const std::string& variable);

}  // namespace ss::cli
