#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "ss/core/config/environment.hpp"
#include "ss/core/config/option_set.hpp"
#include "ss/core/random.hpp"

using ss::config::environment;
using ss::config::option_set;
using ss::config::value_source;

namespace {

struct train_options {
  std::int64_t batch_size = 256;
  double lr = 0.01;
  int threads = 4;
  std::uint64_t seed = 1;
  bool verbose = false;
  std::string optimizer = "adagrad";
  std::vector<std::string> hosts = {"a", "b"};
};

option_set make_options(train_options& o) {
  option_set s("train", "Trains a DLRM model on CTR data with several trainer threads.");
  s.add("batch-size", &o.batch_size, "Examples per minibatch.").range(1, 65536);
  s.add("lr", &o.lr, "Learning rate.").min(0.0);
  s.add("threads", &o.threads, "Worker threads.").min(1);
  s.add("seed", &o.seed, "Random seed.");
  s.add("verbose", &o.verbose, "Print more.");
  s.add("optimizer", &o.optimizer, "Optimizer.").choices({"sgd", "adagrad"});
  s.add("hosts", &o.hosts, "Parameter-server hosts.");
  return s;
}

// Writes a config file in the test's working directory; each test uses its own name because
// CTest may run test cases in parallel.
std::string write_file(const std::string& name, const std::string& text) {
  std::ofstream out(name, std::ios::binary | std::ios::trunc);
  out << text;
  return name;
}

// Parses `args` with a fresh option set; returns the status message ("" when ok).
std::string parse_message(std::vector<std::string> args, environment env = {}) {
  train_options o;
  option_set s = make_options(o);
  ss::status st = s.parse(args, env);
  return st.message();
}

}  // namespace

TEST_CASE("config: defaults stay when nothing is given", "[core][config]") {
  train_options o;
  option_set s = make_options(o);
  REQUIRE(s.parse(std::vector<std::string>{}, environment{}).is_ok());
  CHECK(o.batch_size == 256);
  CHECK(o.lr == 0.01);
  CHECK(o.hosts == std::vector<std::string>{"a", "b"});
  CHECK(s.source("batch-size") == value_source::default_value);
  CHECK(!s.source("nope").has_value());
  CHECK(!s.help_requested());
  CHECK(s.config_path().empty());
}

TEST_CASE("config: precedence is default < file < environment < flag", "[core][config]") {
  const std::string path = write_file("precedence.ini",
                                      "[train]\n"
                                      "batch-size = 100\n"
                                      "lr = 0.5\n"
                                      "threads = 2\n");
  train_options o;
  option_set s = make_options(o);
  environment env = {{"SHADOWSYNC_LR", "0.25"}, {"SHADOWSYNC_THREADS", "3"}};
  REQUIRE(s.parse({"--config", path, "--threads=8"}, env).is_ok());
  CHECK(o.seed == 1);           // default
  CHECK(o.batch_size == 100);   // file
  CHECK(o.lr == 0.25);          // environment beats file
  CHECK(o.threads == 8);        // flag beats environment and file
  CHECK(s.source("seed") == value_source::default_value);
  CHECK(s.source("batch-size") == value_source::config_file);
  CHECK(s.source("lr") == value_source::environment_variable);
  CHECK(s.source("threads") == value_source::command_line);
  CHECK(s.config_path() == path);
  CHECK(std::string(ss::config::to_string(value_source::environment_variable)) == "environment");
}

TEST_CASE("config: the config path may come from the environment", "[core][config]") {
  const std::string env_path = write_file("from_env.ini", "batch-size = 7\n");
  const std::string flag_path = write_file("from_flag.ini", "batch-size = 9\n");
  {
    train_options o;
    option_set s = make_options(o);
    REQUIRE(s.parse({}, {{"SHADOWSYNC_CONFIG", env_path}}).is_ok());
    CHECK(o.batch_size == 7);
  }
  {
    train_options o;
    option_set s = make_options(o);
    REQUIRE(s.parse({"--config=" + flag_path}, {{"SHADOWSYNC_CONFIG", env_path}}).is_ok());
    CHECK(o.batch_size == 9);  // the flag names the file over the environment
  }
  {
    train_options o;
    option_set s = make_options(o);
    REQUIRE(s.parse({"--config="}, {{"SHADOWSYNC_CONFIG", env_path}}).is_ok());
    CHECK(o.batch_size == 256);  // an empty --config turns the file off
  }
}

TEST_CASE("config: flag forms", "[core][config]") {
  train_options o;
  option_set s = make_options(o);
  REQUIRE(s.parse({"--batch-size=32", "--lr", "0.5", "--seed", "18446744073709551615",
                   "--threads", "+3", "--optimizer=sgd", "--batch-size", "64"},
                  {})
              .is_ok());
  CHECK(o.batch_size == 64);  // a repeated scalar flag: the last wins
  CHECK(o.lr == 0.5);
  CHECK(o.seed == std::numeric_limits<std::uint64_t>::max());
  CHECK(o.threads == 3);
  CHECK(o.optimizer == "sgd");
}

TEST_CASE("config: negative values and values that look like flags", "[core][config]") {
  CHECK(parse_message({"--lr", "-1"}) == "--lr: '-1' is below the minimum 0");
  CHECK(parse_message({"--lr", "--verbose"}) == "--lr: missing value");
  CHECK(parse_message({"--lr"}) == "--lr: missing value");
  struct { std::string name = "x"; double offset = 0; } o;
  option_set s("gen-data", "Generates data.");
  s.add("name", &o.name, "A name.");
  s.add("offset", &o.offset, "An offset.");
  REQUIRE(s.parse({"--name=--odd", "--offset", "-2.5"}, {}).is_ok());
  CHECK(o.name == "--odd");
  CHECK(o.offset == -2.5);
}

TEST_CASE("config: bool forms", "[core][config]") {
  auto parse_verbose = [](std::vector<std::string> args, environment env = {}) {
    train_options o;
    option_set s = make_options(o);
    ss::status st = s.parse(args, env);
    REQUIRE(st.is_ok());
    return o.verbose;
  };
  CHECK(parse_verbose({"--verbose"}));
  CHECK(!parse_verbose({"--verbose", "--no-verbose"}));
  CHECK(!parse_verbose({"--verbose=false"}));
  CHECK(parse_verbose({"--verbose=YES"}));
  CHECK(parse_verbose({"--verbose=on"}));
  CHECK(parse_verbose({"--verbose=1"}));
  CHECK(!parse_verbose({"--verbose=Off"}));
  CHECK(parse_verbose({}, {{"SHADOWSYNC_VERBOSE", "true"}}));
  CHECK(!parse_verbose({"--no-verbose"}, {{"SHADOWSYNC_VERBOSE", "true"}}));

  CHECK(parse_message({"--verbose=maybe"}) ==
        "--verbose: 'maybe' is not a boolean (use true/false, yes/no, on/off or 1/0)");
  CHECK(parse_message({}, {{"SHADOWSYNC_VERBOSE", "maybe"}}) ==
        "SHADOWSYNC_VERBOSE: 'maybe' is not a boolean (use true/false, yes/no, on/off or 1/0)");
  CHECK(parse_message({"--no-verbose=true"}) ==
        "--no-verbose: takes no value (use --verbose=false)");
  // A bool never takes the next argument: it is positional.
  CHECK(parse_message({"--verbose", "false"}) ==
        "unexpected argument 'false' ('shadowsync train' takes no positional arguments)");
  // --no- only applies to bools.
  CHECK(parse_message({"--no-lr"}) ==
        "unknown flag '--no-lr' ('--lr' is not a bool, so it has no --no- form)");
}

TEST_CASE("config: lists", "[core][config]") {
  auto parse_hosts = [](std::vector<std::string> args, environment env = {},
                        std::string file = "") {
    train_options o;
    option_set s = make_options(o);
    if (!file.empty()) args.push_back("--config=" + write_file("lists.ini", file));
    ss::status st = s.parse(args, env);
    INFO(st.to_string());
    REQUIRE(st.is_ok());
    return o.hosts;
  };
  using list = std::vector<std::string>;
  CHECK(parse_hosts({"--hosts=x,y"}) == list{"x", "y"});
  CHECK(parse_hosts({"--hosts", " x , y "}) == list{"x", "y"});
  CHECK(parse_hosts({"--hosts=x", "--hosts", "y,z"}) == list{"x", "y", "z"});  // repeats append
  CHECK(parse_hosts({"--hosts="}) == list{});
  CHECK(parse_hosts({}, {{"SHADOWSYNC_HOSTS", "e1,e2"}}) == list{"e1", "e2"});  // replaces default
  CHECK(parse_hosts({"--hosts=f"}, {{"SHADOWSYNC_HOSTS", "e1,e2"}}) == list{"f"});  // flag replaces
  CHECK(parse_hosts({}, {}, "[train]\nhosts = p, q\nhosts = r\n") == list{"p", "q", "r"});
  CHECK(parse_hosts({}, {}, "[train]\nhosts = \"with,comma\"\nhosts = s\n") ==
        list{"with,comma", "s"});
  CHECK(parse_hosts({}, {}, "[train]\nhosts = t\n[common]\nhosts = c\n") == list{"t"});
  CHECK(parse_hosts({}, {{"SHADOWSYNC_HOSTS", "e"}}, "hosts = p\n") == list{"e"});
  CHECK(parse_message({"--hosts=a,,b"}) == "--hosts: 'a,,b' has an empty item");

  std::vector<std::string> optimizers;
  option_set s("train", "");
  s.add("optimizers", &optimizers, "Optimizers to compare.").choices({"sgd", "adagrad"});
  ss::status st = s.parse({"--optimizers=sgd,adam"}, {});
  CHECK(st.message() == "--optimizers: 'adam' is not one of: sgd, adagrad");
}

TEST_CASE("config: positional arguments", "[core][config]") {
  train_options o;
  option_set s = make_options(o);
  s.allow_positionals("FILE...", "Input files.");
  REQUIRE(s.parse({"a.tsv", "--verbose", "-", "b.tsv", "--", "--lr=3", "-h"}, {}).is_ok());
  CHECK(s.positionals() == std::vector<std::string>{"a.tsv", "-", "b.tsv", "--lr=3", "-h"});
  CHECK(o.verbose);
  CHECK(o.lr == 0.01);  // after "--" nothing is a flag
  CHECK(!s.help_requested());

  CHECK(parse_message({"stray"}) ==
        "unexpected argument 'stray' ('shadowsync train' takes no positional arguments)");
}

TEST_CASE("config: argc/argv skips the program name", "[core][config]") {
  train_options o;
  option_set s = make_options(o);
  const char* argv[] = {"train", "--batch-size", "12", nullptr};
  REQUIRE(s.parse(3, argv, {}).is_ok());
  CHECK(o.batch_size == 12);
}

TEST_CASE("config: flag errors are precise", "[core][config]") {
  CHECK(parse_message({"--bach-size=3"}) ==
        "unknown flag '--bach-size' (did you mean '--batch-size'?)");
  CHECK(parse_message({"--no-verbos"}) == "unknown flag '--no-verbos' (did you mean '--no-verbose'?)");
  CHECK(parse_message({"--zzzzzzzz"}) == "unknown flag '--zzzzzzzz'");
  CHECK(parse_message({"-lr", "3"}) == "unknown flag '-lr' (did you mean '--lr'?)");
  CHECK(parse_message({"--batch-size", "abc"}) == "--batch-size: 'abc' is not an integer");
  CHECK(parse_message({"--batch-size=1.5"}) == "--batch-size: '1.5' is not an integer");
  CHECK(parse_message({"--batch-size="}) == "--batch-size: '' is not an integer");
  CHECK(parse_message({"--batch-size=0"}) == "--batch-size: '0' is below the minimum 1");
  CHECK(parse_message({"--batch-size=65537"}) ==
        "--batch-size: '65537' is above the maximum 65536");
  CHECK(parse_message({"--lr=fast"}) == "--lr: 'fast' is not a number");
  CHECK(parse_message({"--lr=nan"}) == "--lr: 'nan' is not a number");
  CHECK(parse_message({"--lr=1e999"}) == "--lr: '1e999' is out of range for a double");
  CHECK(parse_message({"--optimizer=adam"}) ==
        "--optimizer: 'adam' is not one of: sgd, adagrad");
  CHECK(parse_message({"--config"}) == "--config: missing value");

  train_options o;
  option_set s = make_options(o);
  ss::status st = s.parse({"--threads=x"}, {});
  CHECK(st.code() == ss::errc::invalid_argument);
  CHECK(st.to_string() == "invalid_argument: --threads: 'x' is not an integer");
}

TEST_CASE("config: integer overflow is detected", "[core][config]") {
  CHECK(parse_message({"--batch-size=99999999999999999999"}) ==
        "--batch-size: '99999999999999999999' is out of range "
        "(-9223372036854775808 to 9223372036854775807)");
  CHECK(parse_message({"--batch-size=-9223372036854775809"}) ==
        "--batch-size: '-9223372036854775809' is out of range "
        "(-9223372036854775808 to 9223372036854775807)");
  CHECK(parse_message({"--threads=2147483648"}) ==
        "--threads: '2147483648' is out of range (-2147483648 to 2147483647)");
  CHECK(parse_message({"--seed=18446744073709551616"}) ==
        "--seed: '18446744073709551616' is out of range (0 to 18446744073709551615)");
  CHECK(parse_message({"--seed=-1"}) == "--seed: '-1' is not a non-negative integer");

  std::int64_t big = 0;
  option_set s("train", "");
  s.add("big", &big, "A big number.");
  REQUIRE(s.parse({"--big=-9223372036854775808"}, {}).is_ok());
  CHECK(big == std::numeric_limits<std::int64_t>::min());

  train_options o;
  option_set t = make_options(o);
  CHECK(t.parse({"--threads=99999999999"}, {}).code() == ss::errc::out_of_range);
}

TEST_CASE("config: environment variables", "[core][config]") {
  CHECK(ss::config::environment_name("batch-size") == "SHADOWSYNC_BATCH_SIZE");
  CHECK(parse_message({}, {{"SHADOWSYNC_THREADS", "0"}}) ==
        "SHADOWSYNC_THREADS: '0' is below the minimum 1");
  CHECK(parse_message({}, {{"SHADOWSYNC_BATCH_SIZE", "abc"}}) ==
        "SHADOWSYNC_BATCH_SIZE: 'abc' is not an integer");

  train_options o;
  option_set s = make_options(o);
  environment env = {{"SHADOWSYNC_BATCH_SIZE", "512"},
                     {"SHADOWSYNC_SOMETHING_ELSE", "1"},  // another command's option, presumably
                     {"batch-size", "3"},                 // not our prefix
                     {"PATH", "/bin"}};
  REQUIRE(s.parse({}, env).is_ok());
  CHECK(o.batch_size == 512);
  CHECK(o.lr == 0.01);
  CHECK(s.ignored_environment() == std::vector<std::string>{"SHADOWSYNC_SOMETHING_ELSE"});
  CHECK(s.names() == std::vector<std::string>{"batch-size", "lr", "threads", "seed", "verbose", "optimizer", "hosts"});

  // Set but empty (ours or not), and a near miss of one of ours (a misspelling), are refused.
  CHECK(parse_message({}, {{"SHADOWSYNC_LR", ""}}) == "SHADOWSYNC_LR is set but empty: unset it, or give it a value");
  CHECK(parse_message({}, {{"SHADOWSYNC_ELSEWHERE", ""}}) ==
        "SHADOWSYNC_ELSEWHERE is set but empty: unset it, or give it a value");
  CHECK(parse_message({}, {{"SHADOWSYNC_BATCH_SIZ", "8"}}) ==
        "unknown variable SHADOWSYNC_BATCH_SIZ for 'shadowsync train' (did you mean SHADOWSYNC_BATCH_SIZE?)");
  CHECK(parse_message({}, {{"SHADOWSYNC_TREADS", "8"}}) ==
        "unknown variable SHADOWSYNC_TREADS for 'shadowsync train' (did you mean SHADOWSYNC_THREADS?)");
  // SHADOWSYNC_CONFIG is no option, and not a misspelling of one.
  CHECK(parse_message({}, {{"SHADOWSYNC_CONFIG", ""}}).empty());
}

TEST_CASE("config: environment adapter", "[core][config]") {
  const char* envp[] = {"A=1", "B=x=y", "NOEQUALS", "=bad", "A=2", "EMPTY=", nullptr};
  environment env = ss::config::environment_from(envp);
  CHECK(env.size() == 3);
  CHECK(env["A"] == "1");
  CHECK(env["B"] == "x=y");
  CHECK(env["EMPTY"].empty());
  CHECK(ss::config::environment_from(nullptr).empty());
  (void)ss::config::process_environment();  // must not crash; contents depend on the runner
}

TEST_CASE("config: sections, comments and unknown keys", "[core][config]") {
  const std::string path = write_file("sections.ini",
                                      "# shared settings\n"
                                      "seed = 5          ; unsectioned applies to all\n"
                                      "[train]\n"
                                      "lr = 0.125        # this command overrides [common]\n"
                                      "[common]\n"
                                      "lr = 0.5\n"
                                      "threads = 6\n"
                                      "rows = 1000       # another command's key: skipped\n"
                                      "[gen-data]\n"
                                      "rows = 10\n"
                                      "lr2 = whatever    # other sections are not checked\n"
                                      "[train]\n"
                                      "optimizer = \"sgd\"\n"
                                      "verbose = yes\n");
  train_options o;
  option_set s = make_options(o);
  ss::status st = s.parse({"--config", path}, {});
  INFO(st.to_string());
  REQUIRE(st.is_ok());
  CHECK(o.seed == 5);
  CHECK(o.lr == 0.125);
  CHECK(o.threads == 6);
  CHECK(o.optimizer == "sgd");
  CHECK(o.verbose);
}

TEST_CASE("config: config file errors name file and line", "[core][config]") {
  auto file_message = [](const std::string& name, const std::string& text) {
    return parse_message({"--config", write_file(name, text)});
  };
  CHECK(file_message("unknown_key.ini", "[train]\nlr = 0.1\n\n# x\n\n\nlr2 = 3\n") ==
        "unknown_key.ini:7: unknown key 'lr2' (did you mean 'lr'?)");
  CHECK(file_message("unknown_top.ini", "bogus-key = 3\n") ==
        "unknown_top.ini:1: unknown key 'bogus-key'");
  CHECK(file_message("bad_value.ini", "[train]\n\nbatch-size = abc\n") ==
        "bad_value.ini:3: batch-size: 'abc' is not an integer");
  CHECK(file_message("below_min.ini", "threads = 0\n") ==
        "below_min.ini:1: threads: '0' is below the minimum 1");
  CHECK(file_message("duplicate.ini", "[train]\nlr = 1\nseed = 2\nlr = 3\n") ==
        "duplicate.ini:4: duplicate key 'lr' (first set on line 2)");
  CHECK(file_message("config_key.ini", "config = other.ini\n") ==
        "config_key.ini:1: 'config' cannot be set inside a config file");
  CHECK(file_message("syntax.ini", "[train]\nlr 0.1\n") ==
        "syntax.ini:2: expected 'key = value', '[section]' or a comment, found 'lr 0.1'");

  train_options o;
  option_set s = make_options(o);
  ss::status st = s.parse({"--config", "does_not_exist.ini"}, {});
  CHECK(st.code() == ss::errc::not_found);
  CHECK(st.message() == "cannot open config file 'does_not_exist.ini': No such file or directory");

  train_options o2;
  option_set s2 = make_options(o2);
  CHECK(s2.parse({"--config", "."}, {}).code() == ss::errc::io_error);  // a directory
}

TEST_CASE("config: help is generated from the declarations", "[core][config]") {
  train_options o;
  option_set s = make_options(o);
  s.allow_positionals("[FILE...]", "Extra input files.");
  REQUIRE(s.parse({"--bogus", "--help"}, {}).is_ok());  // --help wins over other errors
  CHECK(s.help_requested());
  CHECK(o.batch_size == 256);  // nothing applied
  const std::string help = s.help();
  INFO(help);
  CHECK(help.rfind("Usage: shadowsync train [options] [FILE...]\n", 0) == 0);
  CHECK(help.find("Trains a DLRM model on CTR data") != std::string::npos);
  CHECK(help.find("--batch-size <int>") != std::string::npos);
  CHECK(help.find("Examples per minibatch. Default: 256. Allowed: 1 to 65536.") !=
        std::string::npos);
  CHECK(help.find("--lr <number>") != std::string::npos);
  CHECK(help.find("Default: 0.01. Allowed: at least 0.") != std::string::npos);
  CHECK(help.find("--seed <uint>") != std::string::npos);
  CHECK(help.find("--[no-]verbose") != std::string::npos);
  CHECK(help.find("Default: false.") != std::string::npos);
  CHECK(help.find("Default: \"adagrad\". Allowed: one of: sgd, adagrad.") != std::string::npos);
  CHECK(help.find("--hosts <list>") != std::string::npos);
  CHECK(help.find("Default: a,b.") != std::string::npos);
  CHECK(help.find("--config <path>") != std::string::npos);
  CHECK(help.find("-h, --help") != std::string::npos);
  CHECK(help.find("Extra input files.") != std::string::npos);
  CHECK(help.find("[train]") != std::string::npos);
  CHECK(help.find("SHADOWSYNC_BATCH_SIZE") != std::string::npos);
  CHECK(help.find("Precedence: defaults < config file < environment < command-line flags.") !=
        std::string::npos);
  // Wrapped for an 80-column terminal.
  std::size_t start = 0;
  while (start < help.size()) {
    std::size_t end = help.find('\n', start);
    if (end == std::string::npos) end = help.size();
    CHECK(end - start <= 80);
    start = end + 1;
  }
}

TEST_CASE("config: -h asks for help too", "[core][config]") {
  train_options o;
  option_set s = make_options(o);
  REQUIRE(s.parse({"-h"}, {}).is_ok());
  CHECK(s.help_requested());
}

TEST_CASE("config: validators", "[core][config]") {
  std::int64_t batch = 64;
  std::vector<std::string> hosts;
  option_set s("train", "");
  s.add("batch-size", &batch, "Examples per batch.")
      .min(1)
      .check([](const std::int64_t& v) { return (v & (v - 1)) == 0; }, "must be a power of two");
  s.add("hosts", &hosts, "Hosts.").check([](const std::vector<std::string>& v) {
    return v.size() <= 2;
  }, "must name at most 2 hosts");
  CHECK(s.parse({"--batch-size=12"}, {}).message() ==
        "--batch-size: '12' must be a power of two");
  option_set t("train", "");
  t.add("hosts", &hosts, "Hosts.").check(
      [](const std::vector<std::string>& v) { return v.size() <= 2; }, "must name at most 2 hosts");
  CHECK(t.parse({"--hosts=a,b", "--hosts=c"}, {}).message() ==
        "--hosts: 'c' must name at most 2 hosts");
  // Word wrapping may split the phrase; compare with whitespace runs collapsed.
  std::string help;
  for (char c : s.help()) {
    const bool space = c == ' ' || c == '\n';
    if (!space || (!help.empty() && help.back() != ' ')) help += space ? ' ' : c;
  }
  CHECK(help.find("Allowed: at least 1; must be a power of two.") != std::string::npos);
}

TEST_CASE("config: effective_config round-trips through the file parser", "[core][config]") {
  struct all_types {
    bool flag = false;
    int small = 0;
    std::int64_t big = 0;
    std::uint64_t count = 0;
    double rate = 0.0;
    std::string text = "plain";
    std::string empty_text = "x";
    std::vector<std::string> items;
    std::vector<std::string> tricky_items;
    std::vector<std::string> no_items = {"z"};
  };
  auto declare = [](option_set& s, all_types& v) {
    s.add("flag", &v.flag, "A bool.");
    s.add("small", &v.small, "An int.");
    s.add("big", &v.big, "An int64.");
    s.add("count", &v.count, "A uint64.");
    s.add("rate", &v.rate, "A double.");
    s.add("text", &v.text, "A string.");
    s.add("empty-text", &v.empty_text, "A string.");
    s.add("items", &v.items, "A list.");
    s.add("tricky-items", &v.tricky_items, "A list.");
    s.add("no-items", &v.no_items, "A list.");
  };
  all_types a;
  option_set first("train", "");
  declare(first, a);
  REQUIRE(first
              .parse({"--flag", "--small=-7", "--big=-9223372036854775808",
                      "--count=18446744073709551615", "--rate=0.1", "--text= a # b ; \"c\"\\ \t",
                      "--empty-text=", "--items=x,y", "--tricky-items=with space",
                      "--tricky-items=#hash", "--no-items="},
                     {})
              .is_ok());
  a.tricky_items.push_back("comma,inside");
  a.tricky_items.push_back("");
  a.tricky_items.push_back("line\nbreak");
  a.rate = 0.1 + 0.2;  // needs all 17 digits

  const std::string dumped = first.effective_config();
  INFO(dumped);
  CHECK(dumped.find("[train]\n") != std::string::npos);
  CHECK(dumped.find("small = -7\n") != std::string::npos);
  CHECK(dumped.find("items = x, y\n") != std::string::npos);
  CHECK(dumped.find("no-items =\n") != std::string::npos);

  all_types b;
  b.items = {"default"};
  option_set second("train", "");
  declare(second, b);
  ss::status st = second.parse({"--config", write_file("roundtrip.ini", dumped)}, {});
  INFO(st.to_string());
  REQUIRE(st.is_ok());
  CHECK(b.flag == a.flag);
  CHECK(b.small == a.small);
  CHECK(b.big == a.big);
  CHECK(b.count == a.count);
  CHECK(b.rate == a.rate);
  CHECK(b.text == a.text);
  CHECK(b.empty_text.empty());
  CHECK(b.items == a.items);
  CHECK(b.tricky_items == a.tricky_items);
  CHECK(b.no_items.empty());
  CHECK(second.effective_config() == dumped);
}

TEST_CASE("config: bad declarations fail parse", "[core][config]") {
  int x = 0;
  auto declaration_error = [&](const std::string& name, int* target) {
    option_set s("train", "");
    s.add("ok", &x, "Fine.");
    s.add(name, target, "Bad.");
    ss::status st = s.parse({}, {});
    CHECK(st.code() == ss::errc::internal);
    return st.message();
  };
  CHECK(declaration_error("Batch_Size", &x) ==
        "option_set 'train': option name 'Batch_Size' is not kebab-case");
  CHECK(declaration_error("ok", &x) == "option_set 'train': option 'ok' is declared twice");
  CHECK(declaration_error("help", &x) == "option_set 'train': option name 'help' is built in");
  CHECK(declaration_error("null", nullptr) == "option_set 'train': option 'null' has no target");
  CHECK(declaration_error("-x", &x) == "option_set 'train': option name '-x' is not kebab-case");

  option_set bad_command("Train", "");
  CHECK(bad_command.parse({}, {}).code() == ss::errc::internal);

  option_set twice("train", "");
  REQUIRE(twice.parse({}, {}).is_ok());
  CHECK(twice.parse({}, {}).code() == ss::errc::internal);
}

TEST_CASE("config: arbitrary arguments never crash the parser", "[core][config]") {
  const std::vector<std::string> pieces = {
      "--", "-", "-h", "--batch-size", "--lr", "--verbose", "--no-verbose", "--hosts", "--seed",
      "=", "=1", "abc", "-1", "1e999", "99999999999999999999", ",", "--config", "--no-",
      "--=", "\xff", std::string(1, '\0'), " ", "true", "maybe", "--threads=0"};
  ss::rng rng(99);
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::string> args;
    const std::size_t count = rng.below(6);
    for (std::size_t i = 0; i < count; ++i) {
      std::string arg;
      const std::size_t parts = 1 + rng.below(3);
      for (std::size_t p = 0; p < parts; ++p) arg += pieces[rng.below(pieces.size())];
      if (arg == "--config" || arg.rfind("--config=", 0) == 0) continue;  // no real files
      args.push_back(arg);
    }
    environment env;
    if (rng.bernoulli(0.3)) env["SHADOWSYNC_LR"] = pieces[rng.below(pieces.size())];
    train_options o;
    option_set s = make_options(o);
    s.allow_positionals("ARGS", "");
    ss::status st = s.parse(args, env);
    if (!st.is_ok()) CHECK(!st.message().empty());
  }
}
