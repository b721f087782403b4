// Authenticated, encrypted links between services: ZeroMQ CURVE (CurveZMQ) keys, their files,
// and the transport's security settings (zmq_transport_options::security).
//
// The scheme. A cluster has ONE server key pair and one client key pair per member:
//   - every listening socket (each service's ROUTER) is a CURVE server with the cluster's server
//     secret key; every outbound link (DEALER) is a CURVE client that pins the cluster's server
//     PUBLIC key (ZMQ_CURVE_SERVERKEY) and authenticates with its own client key pair;
//   - a ZAP handler (one per zmq context, on a thread of its own) accepts a client only when its
//     public key is in the transport's authorized list (the `authorized_keys` file); any other key
//     is refused, logged ("refused a CURVE client with unknown key XYZ... from 10.0.0.7") and
//     counted (zmq_transport_counters::auth_refused).
// `shadowsync keygen --cluster --out DIR --members coordinator,shard-0,...` writes such a set,
// ready to mount as a Kubernetes Secret or compose secret (deploy/, docker/compose.yaml).
//
// Threat model. What CURVE gives every tcp/ipc link: confidentiality and integrity of every
// frame (Curve25519 key exchange, XSalsa20-Poly1305 per message, perfect forward secrecy through
// per-connection transient keys); client authentication (only listed client keys get a
// connection; a plain client, a client with an unknown key, or a client that pinned another
// server key never delivers a single frame); server authentication (a dialer talks only to a
// server holding the secret key of the public key it pinned, so a man in the middle or an
// impostor service cannot read or answer it). What it does not give: protection against a
// compromised member (anyone holding a listed client key and the server public key is a full
// member: remove the key from authorized_keys and restart the listeners to revoke it; anyone
// holding the server secret key can impersonate every service: rotate the whole set);
// fine-grained authorization between members (a key's role in authorized_keys decides only
// whether it may send control requests, ss/actors/authority.hpp; any member may send any member
// message); protection from connection floods or slow handshakes (bounded only by the OS, the
// high-water marks and frame size limits, and a network policy in front of the ports); and
// inproc:// links, which never leave the process and to which libzmq applies no mechanism.
// Plain mode stays for a single-machine run; bound beyond loopback it warns loudly at start.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "ss/actors/transport.hpp"
#include "ss/core/status.hpp"

namespace ss::transport {

// A CURVE key pair, each key Z85-encoded (40 characters for 32 bytes). A public-only pair (for
// a dialer that only pins a server key) has an empty secret_key.
struct curve_key_pair {
  std::string public_key;
  std::string secret_key;
};

enum class security_mode { plain, curve };

// One line of an authorized_keys file: a client public key (Z85) and what its holder may ask.
struct authorized_client {
  authorized_client() = default;
  authorized_client(std::string key, std::string key_name = {}, actors::peer_role key_role = actors::peer_role::member)
      : public_key(std::move(key)), name(std::move(key_name)), role(key_role) {}
  std::string public_key;
  std::string name;  // for logs: who holds the key ("shard-0", "ops")
  actors::peer_role role = actors::peer_role::member;

  bool operator==(const authorized_client& o) const {
    return public_key == o.public_key && name == o.name && role == o.role;
  }
};

struct transport_security {
  // plain: no authentication, no encryption (a single-machine run).
  // curve: every tcp/ipc socket uses CURVE as described above.
  // Default: plain
  security_mode mode = security_mode::plain;

  // The cluster's server key pair: listening sockets use its secret key, every outbound link
  // pins its public key. A transport that never listens (a CLI client) needs only the public key.
  curve_key_pair server;

  // This service's client key pair: its outbound links authenticate with it.
  curve_key_pair client;

  // The client keys the listening socket accepts, each with its name and role; every other key is
  // refused. Required (non-empty) for a CURVE transport that listens.
  std::vector<authorized_client> authorized_clients;
};

// Whether the libzmq in use was built with CURVE (libsodium): zmq_has("curve").
bool curve_available();

// A fresh key pair (zmq_curve_keypair). Errors: unavailable without CURVE support.
result<curve_key_pair> generate_curve_key_pair();

// Checks that `key` is a Z85 CURVE key (40 characters of the Z85 alphabet that decode to 32
// bytes). `what` names it in the message: "server public key: 39 characters, a Z85 CURVE key has 40".
status check_z85_key(const std::string& key, const std::string& what);

// The checks zmq_transport's constructor applies: plain always passes; curve needs CURVE support,
// valid keys, a client pair, the server public key, and the public key matching each secret key.
status check_security(const transport_security& s);

// Reads a key file. The format (also what czmq's zcert writes, which is accepted):
//   # comment
//   public-key = <40 Z85 characters>
//   secret-key = <40 Z85 characters>      (only in the secret file, NAME.key)
// Values may be quoted; other lines ("metadata", "curve", "name = ...") are ignored. With
// `require_secret`, a file without a secret-key is an error. A file holding a secret key must pass
// check_secret_key_file_access (below) for the file it read (fstat of the open file), e.g.
// "keys/shard-0.key: a secret key file must not be accessible by group or others (mode 0644); run chmod 600 keys/shard-0.key".
// The secret key must match the public key.
result<curve_key_pair> read_key_file(const std::string& path, bool require_secret);

// The ownership and mode rule for a file holding a secret key (the rule PostgreSQL applies to its
// ssl_key_file), given the file's mode, owner and group and this process's effective uid, gid and
// supplementary groups:
//   - owned by this process's user: no access at all for group or others (0600 or less), as ssh;
//   - owned by root: readable by its group at most (0640 or less: no group write or execute,
//     nothing for others), and a group-readable file's group must be this process's effective gid
//     or one of its supplementary groups. This is how a Kubernetes Secret volume looks to a
//     non-root pod with securityContext.fsGroup: the kubelet makes every file root:<fsGroup> and
//     adds group read (defaultMode 0400 becomes 0440, kubernetes/kubernetes#57923), and without
//     fsGroup a non-root process cannot read a Secret file that is not readable by others at all.
//     A group-readable key is thus exposed only to processes that hold that group, which root
//     (the owner) granted deliberately; a file the process owns itself stays 0600, so a key does
//     not end up group-readable by accident (umask, copies);
//   - owned by anyone else: refused.
// OK, or invalid_argument with a message that names the path, the mode and the fix.
status check_secret_key_file_access(const std::string& path, mode_t mode, uid_t owner, gid_t group, uid_t euid,
                                    gid_t egid, const std::vector<gid_t>& supplementary_groups);

// Reads an authorized_keys file: one Z85 public key per line (40 characters), optionally followed
// by `name=NAME` and `role=ROLE` (member, coordinator or admin; member when absent) and a '#'
// comment ('#' is itself a Z85 character); lines starting with '#' and blank lines are ignored.
//   rq7...Zt  name=coordinator role=coordinator
//   Hb2...9w  name=ops role=admin   # the on-call operator
// A key without a name is named by its first 8 characters. An empty list is an error.
result<std::vector<authorized_client>> read_authorized_keys(const std::string& path);

// The role names of authorized_keys ("member", "coordinator", "admin"); invalid_argument else.
result<actors::peer_role> parse_key_role(const std::string& text);

// Writes DIR/NAME.key (public and secret key, mode 0600, created exclusively: an existing file is
// an error, never overwritten) and DIR/NAME.pub (public key only, mode 0644).
status write_key_pair(const std::string& dir, const std::string& name, const curve_key_pair& keys);

// The security of a service started with --curve-server-key, --curve-client-key and
// --curve-authorized-keys (an empty path: not given). All empty: plain. `listens`: the service
// binds, so the server file must hold the secret key and authorized keys are required; a client
// (status, snapshot, export) needs the server's public key and its client pair only.
result<transport_security> load_curve_security(const std::string& server_key_file,
                                               const std::string& client_key_file,
                                               const std::string& authorized_keys_file, bool listens);

// Whether an endpoint stays on this machine: inproc://, ipc://, tcp on 127.0.0.0/8, ::1 or
// localhost. Plain mode warns when it listens on anything else.
bool is_loopback_endpoint(const std::string& endpoint);

// Whether a peer's IP address (as libzmq reports it: "127.0.0.1", "::1", "::ffff:127.0.0.1") is
// a loopback address of this host.
bool is_loopback_address(const std::string& address);

// The User-Id a CURVE connection of `client` carries ("admin:ops"), and the identity read back
// from it (with the peer's address) on every message of that connection.
std::string user_id_of(const authorized_client& client);
actors::peer_identity identity_of(const std::string& user_id, const std::string& address);

}  // namespace ss::transport
