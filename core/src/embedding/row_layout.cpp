#include "ss/core/embedding/row_layout.hpp"

#include <cstring>
#include <vector>

namespace ss::embedding {
namespace {

// The words between the commas of a layout, trimmed.
std::vector<std::string> parts_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto first = part.find_first_not_of(' ');
    const auto last = part.find_last_not_of(' ');
    out.push_back(first == std::string::npos ? std::string() : part.substr(first, last - first + 1));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// "<count> <rest>" with count a positive decimal of at most 9 digits.
bool count_then(const std::string& part, const std::string& rest, std::uint32_t* count) {
  const auto space = part.find(' ');
  if (space == 0 || space == std::string::npos || space > 9 || part.substr(space + 1) != rest) return false;
  std::uint32_t n = 0;
  for (std::size_t i = 0; i < space; ++i) {
    if (part[i] < '0' || part[i] > '9') return false;
    n = n * 10 + static_cast<std::uint32_t>(part[i] - '0');
  }
  *count = n;
  return n > 0;
}

}  // namespace

std::string describe(const row_layout& l) {
  std::string s = std::to_string(l.dim) + " " + to_string(l.precision) + " values";
  if (l.state_floats > 0) s += ", " + std::to_string(l.state_floats) + " fp32 optimizer value" + (l.state_floats > 1 ? "s" : "");
  if (l.ttl_stamp) s += ", a TTL stamp";
  return s;
}

result<row_layout> parse_row_layout(const std::string& text) {
  const auto bad = [&text] {
    return status(errc::parse_error, "\"" + text + "\" is not a row layout (\"16 bf16 values, 1 fp32 optimizer "
                                     "value, a TTL stamp\")");
  };
  const auto parts = parts_of(text);
  row_layout l;
  bool known = false;
  for (row_precision p : {row_precision::fp32, row_precision::bf16, row_precision::fp16}) {
    if (count_then(parts[0], std::string(to_string(p)) + " values", &l.dim)) {
      l.precision = p;
      known = true;
    }
  }
  if (!known) return bad();
  std::size_t next = 1;
  if (next < parts.size() && (count_then(parts[next], "fp32 optimizer value", &l.state_floats) ||
                              count_then(parts[next], "fp32 optimizer values", &l.state_floats))) {
    if ((l.state_floats == 1) != (parts[next].find("values") == std::string::npos)) return bad();
    ++next;
  }
  if (next < parts.size() && parts[next] == "a TTL stamp") {
    l.ttl_stamp = true;
    ++next;
  }
  if (next != parts.size()) return bad();
  return l;
}

bool converts_to(const row_layout& from, const row_layout& to) {
  return from.dim == to.dim && from.state_floats == to.state_floats && from.ttl_stamp == to.ttl_stamp;
}

bool convert_row(const row_layout& from, const row_layout& to, const float* in, float* out) {
  std::vector<float> values(from.dim);
  decode_values(in, from.dim, from.precision, values.data());
  if (overflows(values.data(), from.dim, to.precision) > 0) return false;
  encode_values(values.data(), to.dim, to.precision, out);
  const std::uint32_t rest = from.state_floats + (from.ttl_stamp ? 1 : 0);
  std::memcpy(out + value_slots(to.dim, to.precision), in + value_slots(from.dim, from.precision), rest * sizeof(float));
  return true;
}

}  // namespace ss::embedding
