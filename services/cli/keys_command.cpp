// shadowsync keygen: CURVE key pairs for authenticated, encrypted links (ss/transport/curve.hpp).
//   shadowsync keygen --out DIR [--name NAME]
//       DIR/NAME.key (public + secret key, mode 0600) and DIR/NAME.pub (public key)
//   shadowsync keygen --cluster --out DIR --members coordinator,shard-0,...
//       DIR/server.{key,pub}: the cluster's server pair (every listener's secret, every dialer's
//       pinned public key); DIR/<member>.{key,pub} for each member; DIR/authorized_keys: every
//       member's public key. Mount DIR as a Kubernetes Secret (defaultMode 0440 with fsGroup) or compose
//       secrets and start each service with
//         --curve-server-key DIR/server.key --curve-client-key DIR/<member>.key
//         --curve-authorized-keys DIR/authorized_keys
// Existing key files are never overwritten.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "commands.hpp"
#include "ss/core/config/option_set.hpp"
#include "ss/core/json.hpp"
#include "ss/transport/curve.hpp"

namespace ss::cli {
namespace {

int fail(const std::string& message, int rc = 1) {
  std::fprintf(stderr, "shadowsync keygen: %s\n", message.c_str());
  return rc;
}

// A new key pair, written to DIR/NAME.key and DIR/NAME.pub.
result<transport::curve_key_pair> make_key_pair(const std::string& dir, const std::string& name) {
  auto k = transport::generate_curve_key_pair();
  if (!k.is_ok()) return k;
  if (auto st = transport::write_key_pair(dir, name, *k); !st.is_ok()) return st;
  return k;
}

const char* const keygen_help =
    "Makes CURVE key pairs for authenticated, encrypted links between services. Alone: --out/NAME.key (secret, "
    "mode 0600) and --out/NAME.pub. With --cluster: the cluster's server pair (server.key, server.pub), one "
    "client pair per --members entry and an authorized_keys file listing their public keys, ready to mount as "
    "a Kubernetes Secret or compose secret; start each service with --curve-server-key DIR/server.key "
    "--curve-client-key DIR/<member>.key --curve-authorized-keys DIR/authorized_keys. Never overwrites a key "
    "file.";

}  // namespace

status write_cluster_keys(const std::string& dir, const std::vector<std::string>& members,
                          const std::vector<std::string>& admins, std::string* server_public) {
  if (members.empty()) return status(errc::invalid_argument, "--cluster needs --members (e.g. coordinator,shard-0,reader-0,trainer-0)");
  std::set<std::string> seen;
  for (const auto& m : members) {
    if (m.empty() || m.find('/') != std::string::npos) return status(errc::invalid_argument, "bad member name '" + m + "'");
    if (m == "server" || m == "authorized_keys") return status(errc::invalid_argument, "member name '" + m + "' is reserved");
    if (!seen.insert(m).second) return status(errc::invalid_argument, "member '" + m + "' is listed twice");
  }
  for (const auto& a : admins) {
    if (seen.count(a) == 0) return status(errc::invalid_argument, "admin '" + a + "' is not one of --members");
  }
  if (!transport::curve_available()) {
    return status(errc::unavailable, "this libzmq was built without CURVE (libsodium): no keys can be made");
  }
  const auto authorized = std::filesystem::path(dir) / "authorized_keys";
  if (std::filesystem::exists(authorized)) {
    return status(errc::invalid_argument,
                  authorized.string() + " exists already (keys are never overwritten; use a new directory)");
  }
  auto server = make_key_pair(dir, "server");
  if (!server.is_ok()) return server.error();
  if (server_public != nullptr) *server_public = server->public_key;
  std::string list = "# shadowsync: client public keys accepted by every service of this cluster\n";
  for (const auto& m : members) {
    auto k = make_key_pair(dir, m);
    if (!k.is_ok()) return k.error();
    // Roles (authority.hpp): the coordinator drives shards and sync servers; admins may stop,
    // snapshot and export; everyone else is a member.
    const bool admin = std::find(admins.begin(), admins.end(), m) != admins.end();
    const char* role = admin ? "admin" : m == "coordinator" ? "coordinator" : "member";
    list += k->public_key + "  name=" + m + " role=" + role + "\n";
  }
  // Written last: its presence means the set is complete.
  std::ofstream f(authorized);
  f << list;
  if (!f.flush()) return status(errc::io_error, authorized.string() + ": cannot write");
  return status::ok();
}

namespace {

struct keygen_flags {
  std::string out;
  std::string name = "client";
  bool cluster = false;
  std::vector<std::string> members;
  std::vector<std::string> admins{"admin"};
};

void add_keygen_flags(config::option_set& opts, keygen_flags& f) {
  opts.add("out", &f.out, "Directory to write the key files to (created if missing).");
  opts.add("name", &f.name, "Name of the key pair (without --cluster).");
  opts.add("cluster", &f.cluster, "Make a whole cluster's key set (needs --members).");
  opts.add("members", &f.members,
           "With --cluster: the members that get a client pair, e.g. coordinator,shard-0,shard-1,reader-0,trainer-0 "
           "(add an `admin` member for shadowsync status/snapshot/export). The member named coordinator gets "
           "role=coordinator in authorized_keys.");
  opts.add("admins", &f.admins,
           "With --cluster: the members that get role=admin (may stop the job, take snapshots and export); "
           "members not listed here cannot, though they may join and train. Names missing from --members are "
           "skipped.");
}

}  // namespace

std::vector<std::string> keygen_option_names() { return names_of_options<keygen_flags>(add_keygen_flags); }

int run_keygen(const args& a, const config::environment& env) {
  keygen_flags f;
  command_line cmd({"keygen", ""}, keygen_help);
  add_keygen_flags(cmd.options(), f);
  if (auto done = cmd.parse(a, env)) return *done;
  const auto& [out, name, cluster, members, admins] = f;
  if (out.empty()) return fail("--out is required", 2);
  if (!transport::curve_available()) return fail("this libzmq was built without CURVE (libsodium): no keys can be made");
  if (!cluster) {
    if (!members.empty()) return fail("--members needs --cluster", 2);
    auto k = make_key_pair(out, name);
    if (!k.is_ok()) return fail(k.error().message());
    std::printf("shadowsync keygen: wrote %s/%s.key (secret) and %s.pub: public key %s\n", out.c_str(), name.c_str(),
                name.c_str(), k->public_key.c_str());
    std::printf("%s\n", json_object()
                            .add("command", "keygen")
                            .add("ok", true)
                            .add("name", name)
                            .add("public_key", k->public_key)
                            .str()
                            .c_str());
    return 0;
  }
  std::string server_public;
  std::vector<std::string> listed_admins;
  for (const auto& adm : admins)
    if (std::find(members.begin(), members.end(), adm) != members.end()) listed_admins.push_back(adm);
  if (auto st = write_cluster_keys(out, members, listed_admins, &server_public); !st.is_ok()) {
    return fail(st.message(), st.code() == errc::invalid_argument ? 2 : 1);
  }
  std::printf("shadowsync keygen: wrote a cluster key set to %s: server.key/.pub, %zu member pair(s), "
              "authorized_keys\n",
              out.c_str(), members.size());
  std::printf("%s\n", json_object()
                          .add("command", "keygen")
                          .add("ok", true)
                          .add("cluster", true)
                          .add("members", static_cast<std::uint64_t>(members.size()))
                          .add("server_public_key", server_public)
                          .str()
                          .c_str());
  return 0;
}

}  // namespace ss::cli
