// The ZAP handler (the ZeroMQ authentication protocol) of one zmq context: a REP socket bound at
// inproc://zeromq.zap.01 that libzmq asks, for every handshake on a listening socket of that
// context that has a ZAP domain, whether the client may connect: by its CURVE public key, and
// whether the socket has a free connection slot (connection_limit.hpp; plain sockets get a
// domain only for that). libzmq allows one handler per
// context, while several transports (one per service of the in-process cluster, or a test's
// pair) share a context: each transport registers its own ZAP domain (ZMQ_ZAP_DOMAIN of its
// ROUTER) with its authorized keys and a callback for refusals, and one authenticator per
// context, shared by them, answers for every domain.
//
// Threads: the REP socket lives on the authenticator's own thread (a ZeroMQ socket is not thread-safe), created on
// the first CURVE listen() of a context and stopped when the last transport using it lets go.
// The REP socket is unbound (inproc unbinds at once) and closed before that thread exits, so a
// later authenticator on the same context can bind again.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ss/core/status.hpp"

namespace zmq {
class context_t;
}

namespace ss::transport::detail {

class zap_authenticator {
 public:
  // Called on the authenticator's thread for every refused client: its Z85 public key and the
  // peer's IP address as libzmq reports it.
  using refusal_handler = std::function<void(const std::string& key_z85, const std::string& address)>;

  // The context's authenticator, started if there is none. Errors: unavailable when another
  // ZAP handler (not ours) is bound on the context.
  static result<std::shared_ptr<zap_authenticator>> for_context(const std::shared_ptr<zmq::context_t>& ctx);

  ~zap_authenticator();
  zap_authenticator(const zap_authenticator&) = delete;
  zap_authenticator& operator=(const zap_authenticator&) = delete;

  struct domain_policy {
    // true: CURVE clients whose Z85 key is in `keys`; false: plain (NULL mechanism) clients.
    bool curve = false;
    // Z85 key -> the user id libzmq attaches to every message of that client's connection.
    std::map<std::string, std::string> keys;
    refusal_handler on_refused;  // a CURVE client with an unknown key
    // Asked last, for a client that passed the key check: is there a free connection slot?
    // Null: always. `on_full` runs when it says no (with the peer's address).
    std::function<bool()> admit;
    std::function<void(const std::string& address)> on_full;
  };

  // Answers for `domain` by `policy` from now on. The callbacks run under the authenticator's
  // lock: they must be quick (count, log) and must not call back.
  void add_domain(const std::string& domain, domain_policy policy);
  // After it returns `on_refused` of that domain is never called again; its clients are refused.
  void remove_domain(const std::string& domain);

  struct impl;

 private:
  explicit zap_authenticator(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace ss::transport::detail
