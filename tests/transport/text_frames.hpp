// Frames that carry text, for the transport tests: one made from a string, and its bytes read back.
#pragma once

#include <string>

#include "ss/wire/frame.hpp"

namespace ss::test {

inline ss::wire::frame text_frame(const std::string& s) { return ss::wire::make_frame(s.data(), s.size()); }
inline std::string text(const ss::wire::frame& f) {
  return std::string(reinterpret_cast<const char*>(f->data()), f->size());
}

}  // namespace ss::test
