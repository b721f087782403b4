// The wire format, byte for byte: every sample message (one_of_each) and every default-constructed
// one encodes to exactly the frame pinned for it in golden_frames.txt, each frame's size and
// FNV-1a hash, as protocol 3 lays them down. Round trips cannot see a change of layout (a
// codec entry whose fields are reordered allocates its lists in another order and still reads
// back), but peers of other builds would.
//
// A new message has no lines yet and fails here, named; so does a changed frame. After checking
// the change, rewrite the file with
//   SS_UPDATE_GOLDEN=1 build/tests/schema/wire_tests [golden]
// and review its diff: the new message's lines are added, every other line stays as it was.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ss/wire/codec.hpp"
#include "wire_samples.hpp"

using namespace ss::wire;
using namespace ss::wire::testing;

namespace {

const std::string golden_path = std::string(SS_SOURCE_DIR) + "/tests/schema/golden_frames.txt";

const char* how_to_update =
    "rerun with SS_UPDATE_GOLDEN=1 (SS_UPDATE_GOLDEN=1 build/tests/schema/wire_tests [golden]), which "
    "rewrites tests/schema/golden_frames.txt, and review its diff";

std::uint64_t fnv1a(const std::uint8_t* p, std::size_t n) {
  std::uint64_t h = 1469598103934665603ULL;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

// "sample error_reply": a line's kind and message.
std::string key_of(const std::string& kind, const envelope& e) { return kind + " " + message_name(e.message); }

// "80 0xd9a2b4bb37df2cce": the frame's size and hash.
std::string frame_of(const envelope& e) {
  const frame f = encode(e);
  char text[64];
  std::snprintf(text, sizeof text, "%zu 0x%016llx", f->size(),
                static_cast<unsigned long long>(fnv1a(f->data(), f->size())));
  return text;
}

std::vector<envelope> default_samples() {
  std::vector<envelope> samples = one_of_each();
  for (envelope& e : samples) {
    e.request_id = 0;
    std::visit([](auto& m) { m = std::decay_t<decltype(m)>{}; }, e.message);
  }
  return samples;
}

struct golden_line {
  std::string frame;  // "80 0x..."
  std::string note;   // "" or "# ..."
};

struct golden_file {
  bool found = false;
  std::string header;  // the comment lines it starts with, kept when it is rewritten
  std::vector<std::string> keys;  // in the file's order
  std::map<std::string, golden_line> lines;
  std::vector<std::string> problems;  // lines it cannot read, keys it repeats
};

golden_file read_golden() {
  golden_file g;
  std::ifstream in(golden_path);
  g.found = static_cast<bool>(in);
  for (std::string text; std::getline(in, text);) {
    if (g.keys.empty() && g.problems.empty() && !text.empty() && text[0] == '#') g.header += text + "\n";
    if (text.empty() || text[0] == '#') continue;
    golden_line line;
    if (const auto hash = text.find('#'); hash != std::string::npos) {
      line.note = text.substr(hash);
      text.erase(hash);
    }
    std::istringstream fields(text);
    std::string kind, message, size, fnv;
    if (!(fields >> kind >> message >> size >> fnv) || (kind != "sample" && kind != "default")) {
      g.problems.push_back("cannot read the line '" + text + "'");
      continue;
    }
    const std::string key = kind + " " + message;
    line.frame = size + " " + fnv;
    if (!g.lines.emplace(key, line).second) g.problems.push_back(key + " has two lines");
    g.keys.push_back(key);
  }
  return g;
}

// With SS_UPDATE_GOLDEN=1, once per run: writes every sample's and default's line, in body's order,
// each with the note its line had, under the file's header.
void update_golden_if_asked() {
  static bool done = false;
  const char* update = std::getenv("SS_UPDATE_GOLDEN");
  if (done || update == nullptr || std::string(update) != "1") return;
  done = true;
  const golden_file old = read_golden();
  std::ofstream out(golden_path);
  out << (old.header.empty() ? "# kind, message, frame size, FNV-1a hash of the frame  # why it changed\n" : old.header);
  for (const auto& [kind, samples] : {std::pair{"sample", one_of_each()}, std::pair{"default", default_samples()}}) {
    for (const envelope& e : samples) {
      const std::string key = key_of(kind, e);
      out << key << " " << frame_of(e);
      if (const auto it = old.lines.find(key); it != old.lines.end() && !it->second.note.empty()) {
        out << "  " << it->second.note;
      }
      out << "\n";
    }
  }
  WARN("rewrote " << golden_path);
}

// Every sample against its line of `kind`, and every line of `kind` against a sample.
void check_frames(const std::string& kind, const std::vector<envelope>& samples) {
  update_golden_if_asked();
  const golden_file golden = read_golden();
  if (!golden.found) FAIL("cannot read " << golden_path);
  for (const std::string& problem : golden.problems) FAIL_CHECK(golden_path << ": " << problem);
  std::map<std::string, bool> sampled;
  std::size_t pinned = 0;  // samples whose frame is their line's
  for (const envelope& e : samples) {
    const std::string key = key_of(kind, e);
    sampled[key] = true;
    const auto it = golden.lines.find(key);
    if (it == golden.lines.end()) {
      FAIL_CHECK(key << " (" << frame_of(e) << ") has no line in " << golden_path
                     << ": a new message? Check its sample, then " << how_to_update);
    } else if (it->second.frame != frame_of(e)) {
      FAIL_CHECK("the frame of " << key << " changed: it encodes as " << frame_of(e) << ", " << golden_path
                                 << " pins " << it->second.frame
                                 << ". Peers of other builds read the old bytes (see wire::protocol_version); "
                                    "if the change is meant, "
                                 << how_to_update << " and say why in the line's note");
    } else {
      ++pinned;
    }
  }
  CHECK(pinned == samples.size());
  for (const std::string& key : golden.keys) {
    if (key.rfind(kind + " ", 0) == 0 && sampled.count(key) == 0) {
      FAIL_CHECK(golden_path << " pins " << key << ", which is no message of wire::body: " << how_to_update);
    }
  }
}

}  // namespace

TEST_CASE("codec: every sample message encodes to its protocol 3 bytes", "[wire][golden]") {
  check_frames("sample", one_of_each());
}

TEST_CASE("codec: every default-constructed message encodes to its protocol 3 bytes", "[wire][golden]") {
  check_frames("default", default_samples());
}
