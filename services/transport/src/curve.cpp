#include "ss/transport/curve.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <zmq.h>

namespace ss::transport {
namespace {

constexpr const char* kZ85Alphabet =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string unquote(const std::string& s) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front())
    return s.substr(1, s.size() - 2);
  return s;
}

std::string octal_mode(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

}  // namespace

bool curve_available() { return zmq_has("curve") != 0; }

result<curve_key_pair> generate_curve_key_pair() {
  if (!curve_available()) {
    return status(errc::unavailable, "this libzmq was built without CURVE (libsodium): no keys can be made");
  }
  char pub[41] = {0}, sec[41] = {0};
  if (zmq_curve_keypair(pub, sec) != 0) {
    return status(errc::internal, std::string("zmq_curve_keypair: ") + zmq_strerror(zmq_errno()));
  }
  return curve_key_pair{pub, sec};
}

status check_z85_key(const std::string& key, const std::string& what) {
  if (key.empty()) return status(errc::invalid_argument, what + ": missing");
  if (key.size() != 40) {
    return status(errc::invalid_argument,
                  what + ": " + std::to_string(key.size()) + " characters, a Z85 CURVE key has 40");
  }
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (std::strchr(kZ85Alphabet, key[i]) == nullptr || key[i] == '\0') {
      return status(errc::invalid_argument, what + ": character '" + std::string(1, key[i]) + "' at position " +
                                                std::to_string(i + 1) + " is not in the Z85 alphabet");
    }
  }
  std::uint8_t raw[32];
  if (zmq_z85_decode(raw, key.c_str()) == nullptr) {
    return status(errc::invalid_argument, what + ": not a valid Z85 encoding (a group of 5 characters overflows)");
  }
  return status::ok();
}

namespace {

status check_pair_matches(const curve_key_pair& k, const std::string& what) {
  if (k.secret_key.empty()) return status::ok();
  char derived[41] = {0};
  if (zmq_curve_public(derived, k.secret_key.c_str()) != 0) {
    return status(errc::unavailable, what + ": cannot derive the public key (this libzmq lacks CURVE)");
  }
  if (k.public_key != derived) {
    return status(errc::invalid_argument, what + ": the public key does not belong to the secret key");
  }
  return status::ok();
}

}  // namespace

status check_security(const transport_security& s) {
  if (s.mode == security_mode::plain) return status::ok();
  if (!curve_available()) {
    return status(errc::unavailable,
                  "CURVE was requested but this libzmq was built without it (zmq_has(\"curve\") is 0); install a "
                  "libzmq built with libsodium, or run plain (no --curve-* keys) on one machine");
  }
  SS_RETURN_IF_ERROR(check_z85_key(s.server.public_key, "server public key"));
  if (!s.server.secret_key.empty()) SS_RETURN_IF_ERROR(check_z85_key(s.server.secret_key, "server secret key"));
  SS_RETURN_IF_ERROR(check_z85_key(s.client.public_key, "client public key"));
  SS_RETURN_IF_ERROR(check_z85_key(s.client.secret_key, "client secret key"));
  SS_RETURN_IF_ERROR(check_pair_matches(s.server, "server key pair"));
  SS_RETURN_IF_ERROR(check_pair_matches(s.client, "client key pair"));
  for (std::size_t i = 0; i < s.authorized_clients.size(); ++i)
    SS_RETURN_IF_ERROR(check_z85_key(s.authorized_clients[i].public_key, "authorized key " + std::to_string(i + 1)));
  return status::ok();
}

status check_secret_key_file_access(const std::string& path, mode_t mode, uid_t owner, gid_t group, uid_t euid,
                                    gid_t egid, const std::vector<gid_t>& supplementary_groups) {
  const std::string m = octal_mode(mode);
  if (owner == euid) {
    if ((mode & 0077) != 0) {
      return status(errc::invalid_argument,
                    path + ": a secret key file must not be accessible by group or others (mode " + m +
                        "); run chmod 600 " + path +
                        (euid == 0 ? std::string()
                                   : std::string(" (only a file owned by root may be readable by this process's "
                                                 "group, as a Kubernetes Secret volume with fsGroup is)")));
    }
    return status::ok();
  }
  if (owner != 0) {
    return status(errc::invalid_argument, path + ": a secret key file must be owned by this process's user (uid " +
                                              std::to_string(euid) + ") or by root, not by uid " +
                                              std::to_string(owner) + "; run chown " + std::to_string(euid) +
                                              " " + path + " (and chmod 600)");
  }
  if ((mode & 0037) != 0) {
    return status(errc::invalid_argument,
                  path + ": a secret key file owned by root may be readable by its group at most, not writable or "
                         "executable by it nor accessible by others (mode " +
                      m + ", at most 0640); run chmod 640 " + path + " (a Kubernetes Secret volume: defaultMode 0440)");
  }
  if ((mode & 0040) != 0 && group != egid) {
    bool member = false;
    for (const gid_t g : supplementary_groups) member = member || g == group;
    if (!member) {
      std::string groups = std::to_string(egid);
      for (const gid_t g : supplementary_groups)
        if (g != egid) groups += "," + std::to_string(g);
      return status(errc::invalid_argument,
                    path + ": a group-readable secret key file owned by root must belong to one of this process's "
                           "groups (" +
                        groups + "), not to gid " + std::to_string(group) + " (mode " + m + "); run chgrp " +
                        std::to_string(egid) + " " + path + " (Kubernetes: the pod's securityContext.fsGroup)");
    }
  }
  return status::ok();
}

namespace {

std::vector<gid_t> process_groups() {
  const int n = ::getgroups(0, nullptr);
  if (n <= 0) return {};
  std::vector<gid_t> groups(static_cast<std::size_t>(n));
  const int got = ::getgroups(n, groups.data());
  groups.resize(got < 0 ? 0 : static_cast<std::size_t>(got));
  return groups;
}

}  // namespace

result<curve_key_pair> read_key_file(const std::string& path, bool require_secret) {
  // One open file for the contents and the mode check (fstat), so that both are the same file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    return status(e == ENOENT ? errc::not_found : errc::io_error,
                  path + ": cannot read the key file: " + std::strerror(e));
  }
  struct stat st{};
  std::string text;
  {
    bool ok = ::fstat(fd, &st) == 0;
    char buf[4096];
    // A key file is a few lines; anything far larger is not one.
    while (ok && text.size() < (1u << 20)) {
      const ssize_t r = ::read(fd, buf, sizeof buf);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) ok = false;
      if (r <= 0) break;
      text.append(buf, static_cast<std::size_t>(r));
    }
    const int e = errno;
    ::close(fd);
    if (!ok) return status(errc::io_error, path + ": cannot read the key file: " + std::strerror(e));
  }
  std::istringstream in(text);
  curve_key_pair k;
  std::string line;
  int n = 0, public_line = 0, secret_line = 0;
  while (std::getline(in, line)) {
    ++n;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const auto eq = t.find('=');
    if (eq == std::string::npos) continue;  // "metadata", "curve": zcert section names
    const std::string name = trim(t.substr(0, eq));
    const std::string value = unquote(trim(t.substr(eq + 1)));
    const std::string where = path + ":" + std::to_string(n) + ": " + name;
    if (name == "public-key") {
      SS_RETURN_IF_ERROR(check_z85_key(value, where));
      k.public_key = value;
      public_line = n;
    } else if (name == "secret-key") {
      SS_RETURN_IF_ERROR(check_z85_key(value, where));
      k.secret_key = value;
      secret_line = n;
    }
  }
  if (public_line == 0) return status(errc::parse_error, path + ": no 'public-key = <Z85>' line");
  if (secret_line == 0 && require_secret) {
    return status(errc::parse_error, path + ": no 'secret-key = <Z85>' line (give the secret NAME.key file, not NAME.pub)");
  }
  if (secret_line != 0) {
    SS_RETURN_IF_ERROR(check_secret_key_file_access(path, st.st_mode, st.st_uid, st.st_gid, ::geteuid(), ::getegid(),
                                                    process_groups()));
    SS_RETURN_IF_ERROR(check_pair_matches(k, path));
  }
  return k;
}

result<actors::peer_role> parse_key_role(const std::string& text) {
  if (text == "member") return actors::peer_role::member;
  if (text == "coordinator") return actors::peer_role::coordinator;
  if (text == "admin") return actors::peer_role::admin;
  return status(errc::invalid_argument, "unknown role '" + text + "' (member, coordinator or admin)");
}

result<std::vector<authorized_client>> read_authorized_keys(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return status(errno == ENOENT ? errc::not_found : errc::io_error,
                  path + ": cannot read the authorized keys: " + std::strerror(errno));
  }
  std::vector<authorized_client> keys;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const std::string where = path + ":" + std::to_string(n);
    // '#' is a Z85 character: a comment is a line starting with '#', or a word starting with '#'
    // after the key ("<key>  # shard-0").
    std::istringstream words(trim(line));
    std::string key;
    if (!(words >> key) || key[0] == '#') continue;
    SS_RETURN_IF_ERROR(check_z85_key(key, where));
    authorized_client client(key, key.substr(0, 8));
    std::string word;
    while (words >> word) {
      if (word[0] == '#') break;
      const auto eq = word.find('=');
      const std::string field = eq == std::string::npos ? word : word.substr(0, eq);
      const std::string value = eq == std::string::npos ? std::string() : word.substr(eq + 1);
      if (field == "name" && !value.empty()) {
        client.name = value;
      } else if (field == "role") {
        auto role = parse_key_role(value);
        if (!role.is_ok()) return role.error().with_context(where);
        client.role = *role;
      } else {
        return status(errc::parse_error, where + ": unexpected '" + word +
                                             "': a key may be followed by name=NAME, role=ROLE and a '#' comment");
      }
    }
    keys.push_back(std::move(client));
  }
  if (keys.empty()) return status(errc::parse_error, path + ": no authorized keys (one Z85 public key per line)");
  return keys;
}

status write_key_pair(const std::string& dir, const std::string& name, const curve_key_pair& keys) {
  if (name.empty() || name.find('/') != std::string::npos) {
    return status(errc::invalid_argument, "key name '" + name + "' is empty or contains '/'");
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return status(errc::io_error, dir + ": cannot create the directory: " + ec.message());
  const std::string secret_path = (std::filesystem::path(dir) / (name + ".key")).string();
  const std::string public_path = (std::filesystem::path(dir) / (name + ".pub")).string();
  auto write_file = [](const std::string& path, const std::string& text, mode_t mode) -> status {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0) {
      return status(errno == EEXIST ? errc::invalid_argument : errc::io_error,
                    path + ": " + std::strerror(errno) + (errno == EEXIST ? " (keys are never overwritten)" : ""));
    }
    (void)::fchmod(fd, mode);  // whatever the umask
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
      if (w < 0) {
        const int e = errno;
        ::close(fd);
        return status(errc::io_error, path + ": " + std::strerror(e));
      }
      done += static_cast<std::size_t>(w);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) return status(errc::io_error, path + ": " + std::strerror(errno));
    return status::ok();
  };
  std::ostringstream secret;
  secret << "# shadowsync CURVE key pair '" << name << "': SECRET, keep private (mode 0600)\n"
         << "public-key = " << keys.public_key << "\n"
         << "secret-key = " << keys.secret_key << "\n";
  SS_RETURN_IF_ERROR(write_file(secret_path, secret.str(), 0600));
  std::ostringstream pub;
  pub << "# shadowsync CURVE public key '" << name << "'\n"
      << "public-key = " << keys.public_key << "\n";
  return write_file(public_path, pub.str(), 0644);
}

result<transport_security> load_curve_security(const std::string& server_key_file,
                                               const std::string& client_key_file,
                                               const std::string& authorized_keys_file, bool listens) {
  transport_security s;
  const bool any = !server_key_file.empty() || !client_key_file.empty() || !authorized_keys_file.empty();
  if (!any) return s;
  const bool all = !server_key_file.empty() && !client_key_file.empty() && (!listens || !authorized_keys_file.empty());
  if (!all) {
    return status(errc::invalid_argument,
                  listens ? "give all three of --curve-server-key, --curve-client-key and --curve-authorized-keys, "
                            "or none (plain transport)"
                          : "give both --curve-server-key and --curve-client-key, or neither (plain transport)");
  }
  if (!curve_available()) {
    return status(errc::unavailable,
                  "--curve-* keys were given but this libzmq was built without CURVE (zmq_has(\"curve\") is 0)");
  }
  s.mode = security_mode::curve;
  auto server = read_key_file(server_key_file, listens);
  if (!server.is_ok()) return server.error().with_context("--curve-server-key");
  s.server = *server;
  auto client = read_key_file(client_key_file, true);
  if (!client.is_ok()) return client.error().with_context("--curve-client-key");
  s.client = *client;
  if (!authorized_keys_file.empty()) {
    auto keys = read_authorized_keys(authorized_keys_file);
    if (!keys.is_ok()) return keys.error().with_context("--curve-authorized-keys");
    s.authorized_clients = *keys;
  }
  if (auto st = check_security(s); !st.is_ok()) return st;
  return s;
}

bool is_loopback_endpoint(const std::string& endpoint) {
  if (endpoint.rfind("inproc://", 0) == 0 || endpoint.rfind("ipc://", 0) == 0) return true;
  if (endpoint.rfind("tcp://", 0) != 0) return false;
  std::string host = endpoint.substr(6);
  // tcp://[::1]:5555, tcp://127.0.0.1:5555, tcp://localhost:5555; a "source;dest" form counts by dest.
  if (const auto semi = host.find(';'); semi != std::string::npos) host = host.substr(semi + 1);
  if (!host.empty() && host[0] == '[') {
    const auto close = host.find(']');
    return close != std::string::npos && host.substr(1, close - 1) == "::1";
  }
  const auto colon = host.rfind(':');
  if (colon != std::string::npos) host.resize(colon);
  return host == "localhost" || host == "lo" || host.rfind("127.", 0) == 0;
}

bool is_loopback_address(const std::string& address) {
  return address == "::1" || address.rfind("127.", 0) == 0 || address.rfind("::ffff:127.", 0) == 0;
}

std::string user_id_of(const authorized_client& client) {
  return std::string(actors::to_string(client.role)) + ":" + client.name;
}

actors::peer_identity identity_of(const std::string& user_id, const std::string& address) {
  actors::peer_identity id;
  id.address = address;
  id.local = address.empty() || is_loopback_address(address);
  const auto colon = user_id.find(':');
  if (colon == std::string::npos) return id;  // plain: nobody is authenticated
  auto role = parse_key_role(user_id.substr(0, colon));
  if (!role.is_ok()) return id;
  id.role = *role;
  id.name = user_id.substr(colon + 1);
  return id;
}

}  // namespace ss::transport
