// The names of the enumerations of messages.hpp. message_name() is in codec.cpp: the names of
// messages are their entries in the codec table.
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

}  // namespace ss::wire
