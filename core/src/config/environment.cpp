#include "ss/core/config/environment.hpp"

#include <unistd.h>

#include <cstring>

extern char** environ;  // POSIX; declared here in case <unistd.h> left it out

namespace ss::config {

environment environment_from(const char* const* envp) {
  environment env;
  if (envp == nullptr) return env;
  for (; *envp != nullptr; ++envp) {
    const char* entry = *envp;
    const char* equals = std::strchr(entry, '=');
    if (equals == nullptr || equals == entry) continue;
    // emplace keeps the first of repeated names, as getenv would.
    env.emplace(std::string(entry, equals), std::string(equals + 1));
  }
  return env;
}

environment process_environment() { return environment_from(environ); }

}  // namespace ss::config
