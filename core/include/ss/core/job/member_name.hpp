// The name a member takes when it is given none (--name): its role, its host and its incarnation,
// so that two processes never share one, and a restart is a new member. A host already named
// after the role (compose's hostname: trainer-0, a StatefulSet's trainer-0) is not prefixed again.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ss::job {

// "<role>-<host>-<8 hex digits of the incarnation's high half>", or "<host>-<8 hex>" when the host
// is the role's name or starts with "<role>-"; an empty host is "unknown-host".
std::string default_member_name(std::string_view role, std::string_view host, std::uint64_t incarnation);

}  // namespace ss::job
