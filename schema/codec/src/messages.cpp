#include "ss/wire/messages.hpp"

namespace ss::wire {

const char* to_string(role r) {
  switch (r) {
    case role::coordinator: return "coordinator";
    case role::shard: return "shard";
    case role::trainer: return "trainer";
    case role::reader: return "reader";
    case role::client: return "client";
    case role::sync: return "sync";
  }
  return "unknown";
}

const char* to_string(job_state s) {
  switch (s) {
    case job_state::waiting: return "waiting";
    case job_state::running: return "running";
    case job_state::draining: return "draining";
    case job_state::done: return "done";
    case job_state::failed: return "failed";
  }
  return "unknown";
}

namespace {

// One overload per alternative of `body`: adding a message without a name does not compile.
struct name_of {
  const char* operator()(const error_reply&) const { return "error_reply"; }
  const char* operator()(const register_request&) const { return "register_request"; }
  const char* operator()(const register_reply&) const { return "register_reply"; }
  const char* operator()(const heartbeat&) const { return "heartbeat"; }
  const char* operator()(const heartbeat_reply&) const { return "heartbeat_reply"; }
  const char* operator()(const leave&) const { return "leave"; }
  const char* operator()(const pull_request&) const { return "pull_request"; }
  const char* operator()(const batch_message&) const { return "batch_message"; }
  const char* operator()(const end_of_data&) const { return "end_of_data"; }
  const char* operator()(const batch_ack&) const { return "batch_ack"; }
  const char* operator()(const lookup_request&) const { return "lookup_request"; }
  const char* operator()(const lookup_reply&) const { return "lookup_reply"; }
  const char* operator()(const push_request&) const { return "push_request"; }
  const char* operator()(const push_reply&) const { return "push_reply"; }
  const char* operator()(const dense_request&) const { return "dense_request"; }
  const char* operator()(const dense_reply&) const { return "dense_reply"; }
  const char* operator()(const sync_request&) const { return "sync_request"; }
  const char* operator()(const sync_reply&) const { return "sync_reply"; }
  const char* operator()(const snapshot_now&) const { return "snapshot_now"; }
  const char* operator()(const snapshot_request&) const { return "snapshot_request"; }
  const char* operator()(const snapshot_reply&) const { return "snapshot_reply"; }
  const char* operator()(const dump_request&) const { return "dump_request"; }
  const char* operator()(const dump_reply&) const { return "dump_reply"; }
  const char* operator()(const sync_restore&) const { return "sync_restore"; }
  const char* operator()(const export_request&) const { return "export_request"; }
  const char* operator()(const export_reply&) const { return "export_reply"; }
  const char* operator()(const dense_report&) const { return "dense_report"; }
  const char* operator()(const status_request&) const { return "status_request"; }
  const char* operator()(const status_reply&) const { return "status_reply"; }
  const char* operator()(const stop_request&) const { return "stop_request"; }
  const char* operator()(const ack&) const { return "ack"; }
};

}  // namespace

const char* message_name(const body& b) {
  // valueless_by_exception only after a throwing assignment; report it rather than throw here.
  if (b.valueless_by_exception()) return "none";
  return std::visit(name_of{}, b);
}

}  // namespace ss::wire
