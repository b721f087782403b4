// What the command line tests share: the shadowsync binary they run, and a run of it that must
// end with a given exit status and say a given thing.
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "support/process.hpp"

namespace ss::test {

inline const std::string bin = SS_SHADOWSYNC_BIN;

// Runs `command`; checks that it exits with `exit_code` and that its output (stdout and stderr
// together) contains `says`. Returns the result for further checks.
inline process_result expect_exit(const std::string& command, int exit_code, const std::string& says) {
  const process_result r = run_command(command);
  INFO(command << "\n" << r.out);
  CHECK(r.exit_code == exit_code);
  CHECK(r.out.find(says) != std::string::npos);
  return r;
}

}  // namespace ss::test
