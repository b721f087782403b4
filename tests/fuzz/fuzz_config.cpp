// libFuzzer target: configuration text and options, which reach services from files, the
// environment, flags and (the job config in a register_reply) the network.
//
// Input: byte 0 picks the mode, the rest is text.
//   0  parse_ini on the text; every value it returns must survive ini_quote and parse back.
//   1  ini_quote / ini_needs_quotes of the text as one value: quoted, it parses back exactly;
//      when it needs no quotes, written bare it parses back exactly too.
//   2  parse_job_config (what a member does with the coordinator's job config); what it accepts
//      prints (job_config_text) to text that parses to the same text again.
//   3  option_set::parse over every job option: the text split at '\0' is the argument list,
//      except "SHADOWSYNC_NAME=value" items, which form the environment. --config and
//      SHADOWSYNC_CONFIG are dropped (they would read files). What parses is written as a config
//      file (effective_config) that parses back to the same values.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "ss/core/config/environment.hpp"
#include "ss/core/config/ini.hpp"
#include "ss/core/config/option_set.hpp"
#include "ss/core/job/job_options.hpp"

namespace {

using namespace ss::config;

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

void check_error(const ss::status& st) {
  SS_FUZZ_CHECK(st.code() == ss::errc::parse_error || st.code() == ss::errc::invalid_argument ||
                    st.code() == ss::errc::out_of_range,
                st.to_string().c_str());
  SS_FUZZ_CHECK(!st.message().empty(), "an error without a message");
}

void quoted_round_trip(std::string_view value) {
  const std::string text = "key = " + ini_quote(value) + "\n";
  auto back = parse_ini(text, "quoted");
  SS_FUZZ_CHECK(back.is_ok(), ("a quoted value does not parse: " + back.error().to_string()).c_str());
  SS_FUZZ_CHECK(back->size() == 1, "a quoted value gave another number of entries than one");
  SS_FUZZ_CHECK((*back)[0].key == "key" && (*back)[0].value == value && (*back)[0].quoted,
                "a quoted value did not read back unchanged");
}

void mode_ini(std::string_view text) {
  auto entries = parse_ini(text, "fuzz.ini");
  if (!entries.is_ok()) {
    check_error(entries.error());
    return;
  }
  std::size_t last_line = 0;
  for (const ini_entry& e : *entries) {
    SS_FUZZ_CHECK(e.line >= 1 && e.line >= last_line, "entry lines out of order");
    last_line = e.line;
    quoted_round_trip(e.value);
  }
}

void mode_quote(std::string_view value) {
  quoted_round_trip(value);
  if (!ini_needs_quotes(value) && value.find('\n') == std::string_view::npos) {
    auto back = parse_ini("key = " + std::string(value) + "\n", "bare");
    SS_FUZZ_CHECK(back.is_ok(), ("a value that needs no quotes does not parse bare: " + back.error().to_string()).c_str());
    SS_FUZZ_CHECK(back->size() == 1 && (*back)[0].value == value, "a bare value did not read back unchanged");
  }
}

void mode_job_config(std::string_view text) {
  auto job = ss::job::parse_job_config(text);
  if (!job.is_ok()) {
    check_error(job.error());
    return;
  }
  const std::string printed = ss::job::job_config_text(*job);
  auto again = ss::job::parse_job_config(printed);
  SS_FUZZ_CHECK(again.is_ok(), ("job_config_text wrote text that does not parse: " + again.error().to_string()).c_str());
  SS_FUZZ_CHECK(ss::job::job_config_text(*again) == printed, "the job config text is not a fixed point");
}

void mode_options(std::string_view text) {
  std::vector<std::string> args;
  environment env;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\0', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string item(text.substr(pos, end - pos));
    pos = end + 1;
    if (starts_with(item, "--config")) continue;
    if (starts_with(item, "SHADOWSYNC_")) {
      const std::size_t eq = item.find('=');
      if (eq != std::string::npos && item.compare(0, eq, "SHADOWSYNC_CONFIG") != 0) {
        env.emplace(item.substr(0, eq), item.substr(eq + 1));
      }
      continue;
    }
    args.push_back(std::move(item));
  }

  ss::job::job_options o;
  option_set opts("job", "fuzzed");
  ss::job::add_job_options(opts, o);
  opts.allow_positionals("FILE...", "files");
  const ss::status st = opts.parse(args, env);
  if (!st.is_ok()) {
    check_error(st);
    return;
  }
  if (opts.help_requested()) {
    SS_FUZZ_CHECK(!opts.help().empty(), "an empty --help");
    return;
  }
  const std::string config = opts.effective_config();
  ss::job::job_options o2;
  option_set opts2("job", "fuzzed");
  ss::job::add_job_options(opts2, o2);
  const ss::status st2 = opts2.parse_config_text(config, "effective");
  SS_FUZZ_CHECK(st2.is_ok(), ("effective_config wrote text that does not parse: " + st2.to_string()).c_str());
  SS_FUZZ_CHECK(opts2.effective_config() == config, "effective_config is not a fixed point");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: mode_ini(text); break;
    case 1: mode_quote(text); break;
    case 2: mode_job_config(text); break;
    default: mode_options(text); break;
  }
  return 0;
}
