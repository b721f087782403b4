#include "ss/actors/authority.hpp"

namespace ss::actors {

request_class class_of(const wire::body& message) {
  if (std::holds_alternative<wire::status_request>(message)) return request_class::open;
  // A page of the whole rows that move to one shard: what a shard asks the others for while the
  // job takes another shard count (a member; lookups read the same rows).
  if (const auto* dump = std::get_if<wire::dump_request>(&message); dump != nullptr && dump->placement_shards > 0)
    return request_class::member;
  if (std::holds_alternative<wire::stop_request>(message) || std::holds_alternative<wire::snapshot_now>(message) ||
      std::holds_alternative<wire::export_request>(message) || std::holds_alternative<wire::snapshot_request>(message) ||
      std::holds_alternative<wire::dump_request>(message) || std::holds_alternative<wire::sync_restore>(message) ||
      std::holds_alternative<wire::sync_close>(message) || std::holds_alternative<wire::publish_rows_request>(message) ||
      std::holds_alternative<wire::take_rows_request>(message) || std::holds_alternative<wire::drop_rows_request>(message) ||
      std::holds_alternative<wire::reshard_request>(message))
    return request_class::control;
  return request_class::member;
}

status authorize(const authority_policy& policy, const peer_identity& sender, const wire::body& message) {
  if (class_of(message) != request_class::control) return status::ok();
  const std::string what = std::string(wire::message_name(message)) + " from " + sender.describe();
  if (policy.authenticated) {
    if (sender.role == peer_role::coordinator || sender.role == peer_role::admin) return status::ok();
    return status(errc::permission_denied,
                  what + " refused: control requests need a key listed with role=coordinator or role=admin in "
                         "authorized_keys");
  }
  if (sender.local || policy.allow_remote_control) return status::ok();
  return status(errc::permission_denied,
                what + " refused: without CURVE keys, control requests are served only from this host "
                       "(start the service with --allow-remote-control to serve them from anywhere, or use CURVE "
                       "keys with an admin role)");
}

}  // namespace ss::actors
