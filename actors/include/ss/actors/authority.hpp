// Who may ask what. Every request a service receives falls in one class:
//   open     status_request: anyone who can connect (an operator must see an overloaded or
//            misconfigured service)
//   member   membership, data, lookups, pushes, sync, reports, and the pages of rows one shard
//            pulls from another (a dump_request by placement): any peer the transport admitted
//            (under CURVE: a key listed in authorized_keys)
//   control  operator -> coordinator: stop_request, snapshot_now, export_request;
//            coordinator -> shard or sync server: snapshot_request, dump_request of every row,
//            sync_restore, publish_rows_request, take_rows_request, drop_rows_request
// A control request is served only from a peer allowed to control the job: under CURVE a key
// listed with role=coordinator or role=admin; in plain mode (nobody is authenticated) a peer on
// this host (inproc, ipc or loopback tcp), or anyone when the service was started with
// --allow-remote-control (which it announces loudly). The gateway applies this to every inbound
// request before any actor sees it, and logs each control request it serves or refuses with its
// sender.
#pragma once

#include <string>

#include "ss/actors/transport.hpp"
#include "ss/core/status.hpp"
#include "ss/wire/messages.hpp"

namespace ss::actors {

enum class request_class { open, member, control };

request_class class_of(const wire::body& message);

struct authority_policy {
  // The service's transport authenticates clients (CURVE): roles come from the keys.
  bool authenticated = false;
  // Plain mode: serve control requests from other hosts too. Default: false
  bool allow_remote_control = false;
};

// OK, or permission_denied with a message that names the request, the sender and the fix.
status authorize(const authority_policy& policy, const peer_identity& sender, const wire::body& message);

}  // namespace ss::actors
