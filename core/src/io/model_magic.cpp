#include "ss/core/io/model_magic.hpp"

#include <cstring>
#include <fstream>

namespace ss::io {

bool starts_with_model_magic(const std::string& path) {
  char head[sizeof model_magic] = {};
  std::ifstream in(path, std::ios::binary);
  return in.read(head, sizeof head) && std::memcmp(head, model_magic, sizeof head) == 0;
}

}  // namespace ss::io
