// The process environment as a value. The library never calls getenv: main() snapshots the
// environment once and passes it in, so tests (and fuzzers) can hand over any map they like.
//
// Thread-safety: environment is a plain value. process_environment() reads the C library's
// environ and must not race with setenv/putenv (call it early in main()).
#pragma once

#include <map>
#include <string>

namespace ss::config {

using environment = std::map<std::string, std::string>;

// Builds an environment from "NAME=value" strings ending in a null pointer (the shape of environ
// and of main's third argument). Entries without '=' are skipped; a repeated name keeps the first.
environment environment_from(const char* const* envp);

// Snapshots this process's environ. Only main() should call this.
environment process_environment();

}  // namespace ss::config
