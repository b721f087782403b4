#include "ss/core/job/member_name.hpp"

#include <cstdio>

namespace ss::job {

std::string default_member_name(std::string_view role, std::string_view host, std::uint64_t incarnation) {
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "%08x", static_cast<unsigned>(incarnation >> 32));
  const std::string h = host.empty() ? std::string("unknown-host") : std::string(host);
  const bool named_after_role =
      h == role || (h.size() > role.size() && h.compare(0, role.size(), role) == 0 && h[role.size()] == '-');
  return (named_after_role ? h : std::string(role) + "-" + h) + "-" + suffix;
}

}  // namespace ss::job
