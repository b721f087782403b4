// The fuzz targets without libFuzzer: replays every file of corpus/<target>/ and
// regressions/<target>/ through that target's LLVMFuzzerTestOneInput (compiled here under the
// name ss_fuzz_<target>), so the normal build proves that every input a fuzzer ever found stays
// fixed. A broken invariant aborts (the test fails and the message names the file).
//
//   fuzz_replay DIR            every target's corpus/ and regressions/ under DIR (tests/fuzz)
//   fuzz_replay TARGET FILE... the given files through one target
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int ss_fuzz_frame(const std::uint8_t*, std::size_t);
extern "C" int ss_fuzz_messages(const std::uint8_t*, std::size_t);
extern "C" int ss_fuzz_row_parser(const std::uint8_t*, std::size_t);
extern "C" int ss_fuzz_config(const std::uint8_t*, std::size_t);
extern "C" int ss_fuzz_publish(const std::uint8_t*, std::size_t);

namespace {

namespace fs = std::filesystem;
using entry_point = int (*)(const std::uint8_t*, std::size_t);

struct target {
  const char* name;
  entry_point run;
};
constexpr target targets[] = {{"fuzz_frame", ss_fuzz_frame},
                              {"fuzz_messages", ss_fuzz_messages},
                              {"fuzz_row_parser", ss_fuzz_row_parser},
                              {"fuzz_config", ss_fuzz_config},
                              {"fuzz_publish", ss_fuzz_publish}};

bool replay(entry_point run, const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", file.c_str());
    return false;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // A copy of exactly the input's size, as libFuzzer passes it (so reads past the end are caught
  // by a sanitizer build).
  std::vector<std::uint8_t> copy(bytes.begin(), bytes.end());
  std::fprintf(stderr, "%s\n", file.c_str());
  run(copy.data(), copy.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2) {
    const fs::path root = argv[1];
    std::size_t files = 0;
    bool ok = true;
    for (const target& t : targets) {
      for (const char* kind : {"corpus", "regressions"}) {
        const fs::path dir = root / kind / t.name;
        if (!fs::is_directory(dir)) continue;
        std::vector<fs::path> paths;
        for (const auto& e : fs::directory_iterator(dir)) {
          if (e.is_regular_file()) paths.push_back(e.path());
        }
        std::sort(paths.begin(), paths.end());
        for (const auto& p : paths) {
          ok = replay(t.run, p) && ok;
          ++files;
        }
      }
    }
    std::printf("replayed %zu inputs\n", files);
    if (files == 0) {
      std::fprintf(stderr, "no inputs under %s/{corpus,regressions}/<target>/\n", root.c_str());
      return 1;
    }
    return ok ? 0 : 1;
  }
  if (argc >= 3) {
    for (const target& t : targets) {
      if (std::strcmp(t.name, argv[1]) != 0) continue;
      bool ok = true;
      for (int i = 2; i < argc; ++i) ok = replay(t.run, argv[i]) && ok;
      return ok ? 0 : 1;
    }
    std::fprintf(stderr, "unknown target '%s'\n", argv[1]);
    return 2;
  }
  std::fprintf(stderr, "usage: fuzz_replay DIR | fuzz_replay TARGET FILE...\n");
  return 2;
}
