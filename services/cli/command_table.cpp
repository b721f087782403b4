#include "command_table.hpp"

#include <algorithm>

#include "ss/core/config/option_set.hpp"

namespace ss::cli {

const std::vector<command_entry>& command_table() {
  static const std::vector<command_entry> table = {
      {"train", "train a DLRM in this process (Hogwild threads) and evaluate it", run_train, train_option_names},
      {"gen-data", "write Criteo-format data labelled by a hidden teacher, with its Bayes-optimal loss", run_gen_data,
       gen_data_option_names},
      {"local", "run a whole cluster on this machine (in one process, or --processes on loopback)", run_local,
       local_option_names},
      {"coordinator", "run a job's sync coordinator service", run_coordinator, coordinator_option_names},
      {"shard", "run an embedding shard server", run_shard, shard_option_names},
      {"reader", "run a data reader service", run_reader, reader_option_names},
      {"trainer", "run a trainer service", run_trainer, trainer_option_names},
      {"sync-server", "run an extra sync server (one slice of the dense parameters)", run_sync_server,
       sync_server_option_names},
      {"status", "print a running job's status (JSON) from its coordinator", run_status, status_option_names},
      {"snapshot", "take a cluster snapshot of a running job now", run_snapshot, snapshot_option_names},
      {"export", "write a running job's current model to a model file (for predict)", run_export,
       export_option_names},
      {"stop", "end a running job (a following one as at the end of its data)", run_stop, stop_option_names},
      {"reshard", "change a running job's shard count (rows move to their new owners)", run_reshard,
       reshard_option_names},
      {"predict", "score data files with an exported model (.ssm) and report its test metrics", run_predict,
       predict_option_names},
      {"serve", "serve click predictions from a model over HTTP (POST /predict), with health and metrics", run_serve,
       serve_option_names},
      {"keygen", "make CURVE key pairs (one, or a cluster's set) for authenticated, encrypted links", run_keygen,
       keygen_option_names},
  };
  return table;
}

bool some_command_reads(const std::string& variable) {
  if (variable == "SHADOWSYNC_IMAGE") return true;
  for (const auto& c : command_table()) {
    const auto names = c.options();
    if (std::any_of(names.begin(), names.end(),
                    [&](const std::string& n) { return config::environment_name(n) == variable; }))
      return true;
  }
  return false;
}

}  // namespace ss::cli
