// shadowsync: one binary, one subcommand per job or service.
#include <cstdio>
#include <exception>
#include <new>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "command_table.hpp"
#include "ss/core/config/suggest.hpp"
#include "ss/core/model/gemm.hpp"
#include "ss/service/memory_release.hpp"

namespace {

void usage(FILE* out) {
  std::fprintf(out,
               "shadowsync: distributed DLRM training with background (shadow) synchronization\n\n"
               "usage: shadowsync <command> [options]     shadowsync <command> --help\n\ncommands:\n");
  for (const auto& c : ss::cli::command_table()) std::fprintf(out, "  %-12s %s\n", c.name, c.summary);
  std::fprintf(out, "\nOptions come from flags, a --config file and SHADOWSYNC_* environment variables.\n");
}

}  // namespace

int main(int argc, char** argv) {
  ss::service::apply_allocator_policy(ss::service::allocator_policy_for(argc > 1 ? argv[1] : nullptr),
                                      std::getenv("GLIBC_TUNABLES"));
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const std::string name = argv[1];
  if (name == "-h" || name == "--help" || name == "help") {
    usage(stdout);
    return 0;
  }
  if (name == "--version" || name == "version") {
    std::printf("shadowsync 0.1.0 (oneDNN ISA %s)\n", ss::model::gemm_isa());
    return 0;
  }
  std::vector<std::string> names;
  for (const auto& c : ss::cli::command_table()) {
    names.emplace_back(c.name);
    if (name == c.name) {
      ss::cli::args a(argv + 2, argv + argc);
      // Nothing that escapes a command may end in a core dump: say what it was and exit 1.
      try {
        return c.run(a, ss::config::process_environment());
      } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "shadowsync %s: out of memory\n", c.name);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "shadowsync %s: %s\n", c.name, e.what());
      }
      return 1;
    }
  }
  const std::string guess = ss::config::closest_match(name, names);
  std::fprintf(stderr, "shadowsync: unknown command '%s'%s\n", name.c_str(),
               guess.empty() ? "" : (" (did you mean '" + guess + "'?)").c_str());
  usage(stderr);
  return 2;
}
