// One request to a running service, one answer: the client side of `shadowsync status`,
// `shadowsync snapshot`, and the local supervisor's questions to its coordinator.
#pragma once

#include <string>

#include "ss/core/status.hpp"
#include "ss/transport/curve.hpp"
#include "ss/wire/messages.hpp"

namespace ss::cli {

// Sends `message` to the service at `endpoint` and waits at most `timeout_seconds` for the answer.
// `security`: CURVE with the cluster's server public key and a client pair listed in the
// cluster's authorized_keys, when the cluster runs CURVE (a plain client gets no answer).
result<wire::body> call_once(const std::string& endpoint, wire::body message, double timeout_seconds,
                             const transport::transport_security& security = {});

// The service's status JSON, or "" when it does not answer in time.
std::string query_status(const std::string& endpoint, double timeout_seconds,
                         const transport::transport_security& security = {});

}  // namespace ss::cli
