// A command's options, declared once: from the declarations come the command-line flags, the
// config-file keys, the environment variables, --help and the effective-config dump.
//
//   train_options o;                                  // defaults live in the struct
//   ss::config::option_set opts("train", "Trains a DLRM model on CTR data.");
//   opts.add("batch-size", &o.batch_size, "Examples per minibatch.").range(1, 65536);
//   opts.add("optimizer", &o.optimizer, "Optimizer.").choices({"sgd", "adagrad"});
//   SS_RETURN_IF_ERROR(opts.parse(argc, argv, env));
//   if (opts.help_requested()) { print(opts.help()); return 0; }
//
// Precedence, lowest first: the target's value when add() is called (the default shown in
// --help) < config file < environment < command-line flags.
//   config file   --config PATH (flag) or SHADOWSYNC_CONFIG; keys are option names. Keys before
//                 any [section] header and in [common] apply to every command, [<command>]
//                 overrides them, other sections are ignored. An unknown key is an error, except
//                 in [common] (shared by commands with different options). A scalar key given
//                 twice in one section is an error; a list key given twice appends.
//   environment   SHADOWSYNC_BATCH_SIZE sets batch-size. A set but empty variable is an error
//                 (a deployment that meant to give a value and gave none). A SHADOWSYNC_* name
//                 that matches no option of this command is an error when it is a near miss of
//                 one (a misspelling: "did you mean"), else it is taken for another command's
//                 (one environment may serve several) and listed by ignored_environment().
//   flags         --name=value, --name value (a value may not start with "--"; use = for that),
//                 --flag / --no-flag for bools (a bool takes a value only as --flag=value),
//                 -h / --help, and "--" ends the options. Other arguments are positional, and
//                 are an error unless allow_positionals() was called. A repeated scalar flag:
//                 the last wins; a repeated list flag appends.
// Values: bools accept true/false, yes/no, on/off, 1/0 (any case); integers are decimal with an
// optional sign and are checked for overflow; doubles may not be NaN; lists are comma-separated
// (items trimmed, empty items are an error; an empty value is the empty list) and a list given
// again at a higher-precedence source replaces the lower one.
//
// Errors name their source: "--batch-size: 'abc' is not an integer", "SHADOWSYNC_THREADS: '0' is
// below the minimum 1", "train.ini:7: unknown key 'lr2' (did you mean 'lr'?)". When parse() fails
// some targets may already hold new values; report the error and exit.
//
// Thread-safety: not thread-safe; declare, parse and read on one thread (main()).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "ss/core/config/environment.hpp"
#include "ss/core/status.hpp"

namespace ss::config {

// Where an option's final value came from.
enum class value_source { default_value, config_file, environment_variable, command_line };
const char* to_string(value_source source) noexcept;

namespace detail {

template <class T>
inline constexpr bool is_number_v = std::is_same_v<T, int> || std::is_same_v<T, std::int64_t> ||
                                    std::is_same_v<T, std::uint64_t> || std::is_same_v<T, double>;
template <class T>
inline constexpr bool is_text_v =
    std::is_same_v<T, std::string> || std::is_same_v<T, std::vector<std::string>>;
template <class T>
inline constexpr bool is_supported_v = is_number_v<T> || is_text_v<T> || std::is_same_v<T, bool>;

// Sources in precedence order. A list set again from a higher layer starts afresh; set again
// from the same layer (a repeated flag) it grows.
enum class layer { defaults, file_common, file_command, env, command_line };

// What parse() needs from an option, whatever its type.
class option_base {
 public:
  option_base(std::string name, std::string help) : name_(std::move(name)), help_(std::move(help)) {}
  virtual ~option_base() = default;
  option_base(const option_base&) = delete;
  option_base& operator=(const option_base&) = delete;

  const std::string& name() const noexcept { return name_; }
  const std::string& help() const noexcept { return help_; }
  const std::string& default_text() const noexcept { return default_text_; }
  layer last_layer() const noexcept { return layer_; }

  virtual bool has_target() const noexcept = 0;
  virtual const char* type_name() const noexcept = 0;  // "bool", "int", "number", "string", "list"
  virtual bool is_bool() const noexcept = 0;
  virtual bool is_list() const noexcept = 0;
  // Parses, validates and stores `text`. `where` names the source in messages ("--lr",
  // "SHADOWSYNC_LR", "a.ini:3: lr"); `verbatim` makes a list take the text as one item.
  virtual status assign(const std::string& text, const std::string& where, layer from,
                        bool verbatim) = 0;
  // The current value as config-file values, one per line (several only for a list whose
  // items need quoting); "" is an empty value.
  virtual std::vector<std::string> config_values() const = 0;
  // "1 to 65536", "at least 0", "one of: sgd, adagrad"; "" when unconstrained.
  virtual std::string constraint_text() const = 0;

 protected:
  std::string default_text_;
  layer layer_ = layer::defaults;

 private:
  std::string name_;
  std::string help_;
};

template <class T>
class typed_option final : public option_base {
 public:
  typed_option(std::string name, T* target, std::string help);

  bool has_target() const noexcept override { return target_ != nullptr; }
  const char* type_name() const noexcept override;
  bool is_bool() const noexcept override { return std::is_same_v<T, bool>; }
  bool is_list() const noexcept override { return std::is_same_v<T, std::vector<std::string>>; }
  status assign(const std::string& text, const std::string& where, layer from,
                bool verbatim) override;
  std::vector<std::string> config_values() const override;
  std::string constraint_text() const override;

  std::optional<T> min;
  std::optional<T> max;
  std::vector<std::string> choices;  // strings and list items only
  std::vector<std::pair<std::function<bool(const T&)>, std::string>> checks;

 private:
  T* target_;
};

extern template class typed_option<bool>;
extern template class typed_option<int>;
extern template class typed_option<std::int64_t>;
extern template class typed_option<std::uint64_t>;
extern template class typed_option<double>;
extern template class typed_option<std::string>;
extern template class typed_option<std::vector<std::string>>;

}  // namespace detail

// Returned by option_set::add to attach validators; valid as long as the option_set lives.
// Validators run on every value from a file, the environment or a flag, never on the default.
template <class T>
class option_ref {
 public:
  explicit option_ref(detail::typed_option<T>* option) : option_(option) {}

  option_ref& min(T lowest) {
    static_assert(detail::is_number_v<T>, "min() applies to numeric options");
    option_->min = lowest;
    return *this;
  }
  option_ref& max(T highest) {
    static_assert(detail::is_number_v<T>, "max() applies to numeric options");
    option_->max = highest;
    return *this;
  }
  option_ref& range(T lowest, T highest) { return min(lowest).max(highest); }

  // The accepted values of a string option, or of each item of a list option.
  option_ref& choices(std::vector<std::string> allowed) {
    static_assert(detail::is_text_v<T>, "choices() applies to string and list options");
    option_->choices = std::move(allowed);
    return *this;
  }

  // A general rule. `message` completes "--name: 'value' ...", so phrase it like
  // "must be a power of two". For lists the predicate sees the whole list.
  option_ref& check(std::function<bool(const T&)> ok, std::string message) {
    option_->checks.emplace_back(std::move(ok), std::move(message));
    return *this;
  }

 private:
  detail::typed_option<T>* option_;
};

class option_set {
 public:
  // `command` is the word after "shadowsync" in the usage line and the config-file section
  // name; `description` is the paragraph --help shows under the usage line.
  option_set(std::string command, std::string description);
  option_set(option_set&&) noexcept = default;
  option_set& operator=(option_set&&) noexcept = default;
  option_set(const option_set&) = delete;
  option_set& operator=(const option_set&) = delete;
  ~option_set();

  // Declares option `name` (kebab-case: "batch-size") writing to *target, whose current value is
  // the default. T is bool, int, std::int64_t, std::uint64_t, double, std::string or
  // std::vector<std::string>. A bad declaration (bad or duplicate name, null target, the
  // reserved "help" and "config") makes parse() fail with errc::internal.
  template <class T>
  option_ref<T> add(std::string name, T* target, std::string help) {
    static_assert(detail::is_supported_v<T>,
                  "options are bool, int, std::int64_t, std::uint64_t, double, std::string or "
                  "std::vector<std::string>");
    auto option = std::make_unique<detail::typed_option<T>>(std::move(name), target, std::move(help));
    detail::typed_option<T>* raw = option.get();
    register_option(std::move(option));
    return option_ref<T>(raw);
  }

  // Accepts positional arguments, shown in --help as `usage_name` (e.g. "FILE...").
  void allow_positionals(std::string usage_name, std::string help);

  // `args` are the arguments after the command name. Applies the config file, the environment
  // and the flags to the targets. When -h/--help appears, nothing is applied, other errors in
  // the arguments are ignored, help_requested() becomes true and ok is returned. Call once.
  status parse(const std::vector<std::string>& args, const environment& env);

  // The SHADOWSYNC_* variables parse() left alone: no option of this command, nor a near miss
  // of one (another command's, presumably; callers say so in their log).
  const std::vector<std::string>& ignored_environment() const { return ignored_environment_; }
  // argv[0] (the program or command name) is skipped.
  status parse(int argc, const char* const* argv, const environment& env);

  // Applies config-file text (as a file given with --config would be, without flags or the
  // environment): how a service reads the job configuration the coordinator sends it. `origin`
  // names the text in messages. Call instead of parse(), once.
  status parse_config_text(std::string_view text, const std::string& origin);

  // The caller should print help() to stdout and exit 0.
  bool help_requested() const noexcept { return help_requested_; }
  std::string help() const;

  // Positional arguments, in order.
  const std::vector<std::string>& positionals() const noexcept { return positionals_; }

  // Every option's current value in config-file format, under a [<command>] header: log it, or
  // save it and pass it back with --config to rerun with the same settings.
  std::string effective_config() const;

  // The declared options' names, in declaration order.
  std::vector<std::string> names() const;

  // Where `name`'s value came from; nullopt for an undeclared name.
  std::optional<value_source> source(std::string_view name) const;

  // The config file that was read; "" when none.
  const std::string& config_path() const noexcept { return config_path_; }
  const std::string& command() const noexcept { return command_; }

 private:
  void register_option(std::unique_ptr<detail::option_base> option);
  detail::option_base* find(std::string_view name) const;
  status check_environment(const environment& env);
  status apply_config_file(const std::string& path);
  status apply_config_text(std::string_view text, const std::string& origin);

  std::string command_;
  std::string description_;
  std::vector<std::unique_ptr<detail::option_base>> options_;
  status declaration_error_;
  bool positionals_allowed_ = false;
  std::string positional_usage_;
  std::string positional_help_;
  std::vector<std::string> positionals_;
  std::vector<std::string> ignored_environment_;
  bool help_requested_ = false;
  bool parsed_ = false;
  std::string config_path_;
};

// "batch-size" -> "SHADOWSYNC_BATCH_SIZE".
std::string environment_name(std::string_view option_name);

}  // namespace ss::config
