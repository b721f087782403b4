// shadowsync: one binary, one subcommand per job or service.
#include <cstdio>
#include <exception>
#include <new>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "commands.hpp"
#include "ss/core/config/suggest.hpp"
#include "ss/core/model/gemm.hpp"
#include "ss/service/memory_release.hpp"

namespace {

struct command {
  const char* name;
  const char* summary;
  int (*run)(const ss::cli::args&, const ss::config::environment&);
};

const command commands[] = {
    {"train", "train a DLRM in this process (Hogwild threads) and evaluate it", ss::cli::run_train},
    {"gen-data", "write Criteo-format data labelled by a hidden teacher, with its Bayes-optimal loss",
     ss::cli::run_gen_data},
    {"local", "run a whole cluster on this machine (in one process, or --processes on loopback)",
     ss::cli::run_local},
    {"coordinator", "run a job's sync coordinator service", ss::cli::run_coordinator},
    {"shard", "run an embedding shard server", ss::cli::run_shard},
    {"reader", "run a data reader service", ss::cli::run_reader},
    {"trainer", "run a trainer service", ss::cli::run_trainer},
    {"sync-server", "run an extra sync server (one slice of the dense parameters)", ss::cli::run_sync_server},
    {"status", "print a running job's status (JSON) from its coordinator", ss::cli::run_status},
    {"snapshot", "take a cluster snapshot of a running job now", ss::cli::run_snapshot},
    {"export", "write a running job's current model to a model file (for predict)", ss::cli::run_export},
    {"predict", "score data files with an exported model (.ssm) and report its test metrics",
     ss::cli::run_predict},
    {"keygen", "make CURVE key pairs (one, or a cluster's set) for authenticated, encrypted links",
     ss::cli::run_keygen},
};

void usage(FILE* out) {
  std::fprintf(out,
               "shadowsync: distributed DLRM training with background (shadow) synchronization\n\n"
               "usage: shadowsync <command> [options]     shadowsync <command> --help\n\ncommands:\n");
  for (const auto& c : commands) std::fprintf(out, "  %-12s %s\n", c.name, c.summary);
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
  for (const auto& c : commands) {
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
