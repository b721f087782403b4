#include "ss/core/config/option_set.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <system_error>

#include "ss/core/config/ini.hpp"
#include "ss/core/config/suggest.hpp"
#include "text.hpp"

namespace ss::config {

const char* to_string(value_source source) noexcept {
  switch (source) {
    case value_source::default_value: return "default";
    case value_source::config_file: return "config file";
    case value_source::environment_variable: return "environment";
    case value_source::command_line: return "command line";
  }
  return "unknown";
}

std::string environment_name(std::string_view option_name) {
  std::string name = "SHADOWSYNC_";
  for (char c : option_name) {
    if (c == '-') {
      name += '_';
    } else if (c >= 'a' && c <= 'z') {
      name += static_cast<char>(c - 'a' + 'A');
    } else {
      name += c;
    }
  }
  return name;
}

namespace detail {

namespace {

using string_list = std::vector<std::string>;

std::string format_number(int v) { return std::to_string(v); }
std::string format_number(std::int64_t v) { return std::to_string(v); }
std::string format_number(std::uint64_t v) { return std::to_string(v); }
std::string format_number(double v) { return internal::format_double(v); }

// How --help shows a value.
template <class T>
std::string display(const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "false";
  } else if constexpr (is_number_v<T>) {
    return format_number(value);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return ini_quote(value);
  } else {
    if (value.empty()) return "(empty)";
    string_list items;
    for (const std::string& item : value) {
      items.push_back(ini_needs_quotes(item) || item.find(',') != std::string::npos
                          ? ini_quote(item)
                          : item);
    }
    return internal::join(items, ",");
  }
}

status bad_value(errc code, const std::string& where, std::string_view text,
                 const std::string& reason) {
  return status(code, where + ": " + internal::quote_for_message(text) + " " + reason);
}

}  // namespace

template <class T>
typed_option<T>::typed_option(std::string name, T* target, std::string help)
    : option_base(std::move(name), std::move(help)), target_(target) {
  if (target_ != nullptr) default_text_ = display(*target_);
}

template <class T>
const char* typed_option<T>::type_name() const noexcept {
  if constexpr (std::is_same_v<T, bool>) {
    return "bool";
  } else if constexpr (std::is_same_v<T, std::uint64_t>) {
    return "uint";
  } else if constexpr (std::is_same_v<T, double>) {
    return "number";
  } else if constexpr (is_number_v<T>) {
    return "int";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return "string";
  } else {
    return "list";
  }
}

template <class T>
status typed_option<T>::assign(const std::string& text, const std::string& where, layer from,
                               bool verbatim) {
  T value{};
  if constexpr (std::is_same_v<T, string_list>) {
    string_list items;
    if (verbatim) {
      items.push_back(text);
    } else {
      std::string problem = internal::split_list(text, items);
      if (!problem.empty()) return bad_value(errc::invalid_argument, where, text, problem);
    }
    if (!choices.empty()) {
      for (const std::string& item : items) {
        if (std::find(choices.begin(), choices.end(), item) == choices.end()) {
          return bad_value(errc::invalid_argument, where, item,
                           "is not one of: " + internal::join(choices, ", "));
        }
      }
    }
    // The first value from a source replaces what lower sources set; later ones add to it.
    if (from == layer_) value = *target_;
    value.insert(value.end(), items.begin(), items.end());
  } else if constexpr (std::is_same_v<T, std::string>) {
    value = text;
    if (!choices.empty() && std::find(choices.begin(), choices.end(), value) == choices.end()) {
      return bad_value(errc::invalid_argument, where, text,
                       "is not one of: " + internal::join(choices, ", "));
    }
  } else {
    std::string problem = internal::parse_value(text, value);
    if (!problem.empty()) {
      const bool range = problem.compare(0, 6, "is out") == 0;
      return bad_value(range ? errc::out_of_range : errc::invalid_argument, where, text, problem);
    }
    if constexpr (is_number_v<T>) {
      if (min && value < *min) {
        return bad_value(errc::out_of_range, where, text,
                         "is below the minimum " + format_number(*min));
      }
      if (max && value > *max) {
        return bad_value(errc::out_of_range, where, text,
                         "is above the maximum " + format_number(*max));
      }
    }
  }
  for (const auto& [ok, message] : checks) {
    if (!ok(value)) return bad_value(errc::invalid_argument, where, text, message);
  }
  *target_ = std::move(value);
  layer_ = from;
  return status::ok();
}

template <class T>
std::vector<std::string> typed_option<T>::config_values() const {
  if (target_ == nullptr) return {""};
  const T& value = *target_;
  if constexpr (std::is_same_v<T, std::string>) {
    return {ini_needs_quotes(value) ? ini_quote(value) : value};
  } else if constexpr (std::is_same_v<T, string_list>) {
    if (value.empty()) return {""};
    const bool bare = std::none_of(value.begin(), value.end(), [](const std::string& item) {
      return ini_needs_quotes(item) || item.find(',') != std::string::npos;
    });
    if (bare) return {internal::join(value, ", ")};
    // One quoted item per line: repeated list keys append, and quoted values are not split.
    string_list lines;
    for (const std::string& item : value) lines.push_back(ini_quote(item));
    return lines;
  } else {
    return {display(value)};
  }
}

template <class T>
std::string typed_option<T>::constraint_text() const {
  string_list parts;
  if constexpr (is_number_v<T>) {
    if (min && max) {
      parts.push_back(format_number(*min) + " to " + format_number(*max));
    } else if (min) {
      parts.push_back("at least " + format_number(*min));
    } else if (max) {
      parts.push_back("at most " + format_number(*max));
    }
  }
  if (!choices.empty()) parts.push_back("one of: " + internal::join(choices, ", "));
  for (const auto& check : checks) parts.push_back(check.second);
  return internal::join(parts, "; ");
}

template class typed_option<bool>;
template class typed_option<int>;
template class typed_option<std::int64_t>;
template class typed_option<std::uint64_t>;
template class typed_option<double>;
template class typed_option<std::string>;
template class typed_option<std::vector<std::string>>;

}  // namespace detail

namespace {

constexpr std::size_t max_config_bytes = 16u << 20;  // a config file, not a data file
constexpr std::size_t help_width = 80;

bool is_kebab_case(std::string_view name) {
  if (name.empty() || name.front() == '-' || name.back() == '-') return false;
  char previous = 0;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    if (!ok || (c == '-' && previous == '-')) return false;
    previous = c;
  }
  return true;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

result<std::string> read_config_file(const std::string& path) {
  errno = 0;
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    const int error = errno;
    return status(error == ENOENT ? errc::not_found : errc::io_error,
                  "cannot open config file '" + path + "': " +
                      std::generic_category().message(error));
  }
  std::string text;
  char buffer[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) {
    text.append(buffer, n);
    if (text.size() > max_config_bytes) {
      std::fclose(file);
      return status(errc::resource_exhausted,
                    "config file '" + path + "' is larger than 16 MiB");
    }
  }
  const bool failed = std::ferror(file) != 0;
  const int error = errno;
  std::fclose(file);
  if (failed) {
    return status(errc::io_error, "cannot read config file '" + path + "': " +
                                      std::generic_category().message(error));
  }
  return text;
}

// Appends `text` word-wrapped to `out`, every line starting with `indent` spaces.
void append_wrapped(std::string& out, std::string_view text, std::size_t indent) {
  std::size_t column = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && internal::is_space(text[i])) ++i;
    std::size_t end = i;
    while (end < text.size() && !internal::is_space(text[end])) ++end;
    if (end == i) break;
    const std::string_view word = text.substr(i, end - i);
    if (column > indent && column + 1 + word.size() > help_width) {
      out += '\n';
      column = 0;
    }
    if (column == 0) {
      out.append(indent, ' ');
      column = indent;
    } else {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    i = end;
  }
  if (column > 0) out += '\n';
}

}  // namespace

option_set::option_set(std::string command, std::string description)
    : command_(std::move(command)), description_(std::move(description)) {
  if (!is_kebab_case(command_) || command_ == "common") {
    declaration_error_ = status(errc::internal, "option_set: command name '" + command_ +
                                                    "' must be kebab-case and not 'common'");
  }
}

option_set::~option_set() = default;

void option_set::register_option(std::unique_ptr<detail::option_base> option) {
  const std::string& name = option->name();
  std::string problem;
  if (!is_kebab_case(name)) {
    problem = "option name '" + name + "' is not kebab-case";
  } else if (name == "help" || name == "config") {
    problem = "option name '" + name + "' is built in";
  } else if (find(name) != nullptr) {
    problem = "option '" + name + "' is declared twice";
  } else if (!option->has_target()) {
    problem = "option '" + name + "' has no target";
  }
  if (!problem.empty() && declaration_error_.is_ok()) {
    declaration_error_ = status(errc::internal, "option_set '" + command_ + "': " + problem);
  }
  // Kept even when bad, so the option_ref handed out stays valid.
  options_.push_back(std::move(option));
}

void option_set::allow_positionals(std::string usage_name, std::string help) {
  positionals_allowed_ = true;
  positional_usage_ = std::move(usage_name);
  positional_help_ = std::move(help);
}

detail::option_base* option_set::find(std::string_view name) const {
  for (const auto& option : options_) {
    if (option->name() == name) return option.get();
  }
  return nullptr;
}

std::vector<std::string> option_set::names() const {
  std::vector<std::string> out;
  for (const auto& option : options_) out.push_back(option->name());
  return out;
}

std::optional<value_source> option_set::source(std::string_view name) const {
  const detail::option_base* option = find(name);
  if (option == nullptr) return std::nullopt;
  switch (option->last_layer()) {
    case detail::layer::defaults: return value_source::default_value;
    case detail::layer::file_common:
    case detail::layer::file_command: return value_source::config_file;
    case detail::layer::env: return value_source::environment_variable;
    case detail::layer::command_line: return value_source::command_line;
  }
  return std::nullopt;
}

status option_set::parse(int argc, const char* const* argv, const environment& env) {
  std::vector<std::string> args;
  for (int i = 1; i < argc && argv != nullptr; ++i) {
    if (argv[i] != nullptr) args.emplace_back(argv[i]);
  }
  return parse(args, env);
}

status option_set::parse(const std::vector<std::string>& args, const environment& env) {
  SS_RETURN_IF_ERROR(declaration_error_);
  if (parsed_) return status(errc::internal, "option_set '" + command_ + "': parse called twice");
  parsed_ = true;

  std::vector<std::string> flag_names = {"help", "config"};
  for (const auto& option : options_) {
    flag_names.push_back(option->name());
    if (option->is_bool()) flag_names.push_back("no-" + option->name());
  }
  auto unknown_flag = [&](const std::string& spelled, std::string_view name) {
    std::string message = "unknown flag " + internal::quote_for_message(spelled);
    const std::string match = closest_match(name, flag_names);
    if (!match.empty()) message += " (did you mean '--" + match + "'?)";
    return status(errc::invalid_argument, message);
  };

  // Pass 1: read the arguments, applying nothing yet (the config file and the environment
  // come first). Keep scanning after an error, since --help anywhere wins.
  struct flag_value {
    detail::option_base* option;
    std::string spelled;
    std::string value;
  };
  std::vector<flag_value> flags;
  std::optional<std::string> config_flag;
  status first_error;
  auto fail = [&first_error](status s) {
    if (first_error.is_ok()) first_error = std::move(s);
  };
  bool options_ended = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (options_ended) {
      positionals_.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_ended = true;
      continue;
    }
    if (arg == "-h") {
      help_requested_ = true;
      continue;
    }
    if (starts_with(arg, "--")) {
      const std::size_t equals = arg.find('=');
      const bool has_value = equals != std::string::npos;
      const std::string name = arg.substr(2, has_value ? equals - 2 : std::string::npos);
      const std::string spelled = "--" + name;
      std::string value = has_value ? arg.substr(equals + 1) : std::string();
      auto take_value = [&]() {
        if (has_value) return true;
        if (i + 1 < args.size() && !starts_with(args[i + 1], "--")) {
          value = args[++i];
          return true;
        }
        fail(status(errc::invalid_argument, spelled + ": missing value"));
        return false;
      };
      if (name == "help") {
        help_requested_ = true;
        continue;
      }
      if (name == "config") {
        if (take_value()) config_flag = value;
        continue;
      }
      detail::option_base* option = find(name);
      bool negated = false;
      if (option == nullptr && starts_with(name, "no-")) {
        option = find(std::string_view(name).substr(3));
        if (option != nullptr && !option->is_bool()) {
          fail(status(errc::invalid_argument,
                      "unknown flag " + internal::quote_for_message(spelled) + " ('--" +
                          option->name() + "' is not a bool, so it has no --no- form)"));
          continue;
        }
        negated = option != nullptr;
      }
      if (option == nullptr) {
        fail(unknown_flag(spelled, name));
        continue;
      }
      if (option->is_bool()) {
        if (negated && has_value) {
          fail(status(errc::invalid_argument,
                      spelled + ": takes no value (use --" + option->name() + "=false)"));
          continue;
        }
        if (!has_value) value = negated ? "false" : "true";
      } else if (!take_value()) {
        continue;
      }
      flags.push_back({option, spelled, std::move(value)});
      continue;
    }
    if (arg.size() > 1 && arg[0] == '-') {
      const std::string name = arg.substr(1, arg.find('=') == std::string::npos
                                                 ? std::string::npos
                                                 : arg.find('=') - 1);
      fail(unknown_flag(arg.substr(0, 1 + name.size()), name));
      continue;
    }
    positionals_.push_back(arg);  // includes "-", the usual name for stdin
  }
  if (help_requested_) return status::ok();
  SS_RETURN_IF_ERROR(first_error);
  if (!positionals_.empty() && !positionals_allowed_) {
    return status(errc::invalid_argument,
                  "unexpected argument " + internal::quote_for_message(positionals_.front()) +
                      " ('shadowsync " + command_ + "' takes no positional arguments)");
  }

  // Pass 2: apply the sources, lowest precedence first.
  std::string path;
  if (config_flag) {
    path = *config_flag;  // --config= (empty) turns off SHADOWSYNC_CONFIG
  } else if (auto it = env.find("SHADOWSYNC_CONFIG"); it != env.end()) {
    path = it->second;
  }
  if (!path.empty()) SS_RETURN_IF_ERROR(apply_config_file(path));

  SS_RETURN_IF_ERROR(check_environment(env));
  for (const auto& option : options_) {
    auto it = env.find(environment_name(option->name()));
    if (it == env.end()) continue;
    SS_RETURN_IF_ERROR(option->assign(it->second, it->first, detail::layer::env, false));
  }

  for (const flag_value& flag : flags) {
    SS_RETURN_IF_ERROR(
        flag.option->assign(flag.value, flag.spelled, detail::layer::command_line, false));
  }
  return status::ok();
}

status option_set::check_environment(const environment& env) {
  const std::string prefix = "SHADOWSYNC_";
  const std::string config_variable = "SHADOWSYNC_CONFIG";
  std::vector<std::string> names;
  for (const auto& option : options_) names.push_back(environment_name(option->name()));
  names.push_back(config_variable);
  for (const auto& [name, value] : env) {
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const bool ours = std::find(names.begin(), names.end(), name) != names.end();
    if (value.empty() && name != config_variable)
      return status(errc::invalid_argument, name + " is set but empty: unset it, or give it a value");
    if (ours) continue;
    // A near miss of one of ours is a misspelling; anything further may be another command's
    // option (one environment can serve several commands). Typos are one or two edits.
    const std::string_view suffix = std::string_view(name).substr(prefix.size());
    for (const auto& candidate : names) {
      const std::size_t distance = edit_distance(suffix, std::string_view(candidate).substr(prefix.size()));
      if (distance <= (suffix.size() >= 8 ? 2u : 1u))
        return status(errc::invalid_argument, "unknown variable " + name + " for 'shadowsync " + command_ +
                                                  "' (did you mean " + candidate + "?)");
    }
    ignored_environment_.push_back(name);
  }
  return status::ok();
}

status option_set::apply_config_file(const std::string& path) {
  config_path_ = path;
  result<std::string> text = read_config_file(path);
  if (!text) return text.error();
  return apply_config_text(*text, path);
}

status option_set::parse_config_text(std::string_view text, const std::string& origin) {
  if (!declaration_error_.is_ok()) return declaration_error_;
  if (parsed_) return status(errc::internal, "option_set: parse called twice");
  parsed_ = true;
  return apply_config_text(text, origin);
}

status option_set::apply_config_text(std::string_view text, const std::string& path) {
  result<std::vector<ini_entry>> entries = parse_ini(text, path);
  if (!entries) return entries.error();

  std::vector<std::string> keys;
  for (const auto& option : options_) keys.push_back(option->name());

  // Shared entries first, so this command's section overrides them wherever they appear.
  for (detail::layer layer : {detail::layer::file_common, detail::layer::file_command}) {
    std::vector<std::pair<std::string, std::size_t>> seen;  // scalar key -> first line
    for (const ini_entry& entry : *entries) {
      const bool shared = entry.section.empty() || entry.section == "common";
      if (layer == detail::layer::file_common ? !shared : entry.section != command_) continue;
      const std::string at = path + ":" + std::to_string(entry.line);
      if (entry.key == "config") {
        return status(errc::invalid_argument,
                      at + ": 'config' cannot be set inside a config file");
      }
      detail::option_base* option = find(entry.key);
      if (option == nullptr) {
        if (entry.section == "common") continue;  // may belong to another command
        std::string message = at + ": unknown key " + internal::quote_for_message(entry.key);
        const std::string match = closest_match(entry.key, keys);
        if (!match.empty()) message += " (did you mean '" + match + "'?)";
        return status(errc::invalid_argument, message);
      }
      if (!option->is_list()) {
        auto it = std::find_if(seen.begin(), seen.end(),
                               [&](const auto& s) { return s.first == entry.key; });
        if (it != seen.end()) {
          return status(errc::invalid_argument, at + ": duplicate key '" + entry.key +
                                                    "' (first set on line " +
                                                    std::to_string(it->second) + ")");
        }
        seen.emplace_back(entry.key, entry.line);
      }
      SS_RETURN_IF_ERROR(option->assign(entry.value, at + ": " + entry.key, layer, entry.quoted));
    }
  }
  return status::ok();
}

std::string option_set::help() const {
  std::string out = "Usage: shadowsync " + command_ + " [options]";
  if (positionals_allowed_) out += " " + positional_usage_;
  out += "\n\n";
  if (!description_.empty()) {
    append_wrapped(out, description_, 0);
    out += '\n';
  }
  out += "Options:\n";
  for (const auto& option : options_) {
    if (option->is_bool()) {
      out += "  --[no-]" + option->name() + "\n";
    } else {
      out += "  --" + option->name() + " <" + option->type_name() + ">\n";
    }
    std::string text = option->help();
    if (!text.empty() && text.back() != '.') text += '.';
    if (option->is_list()) text += " Comma-separated; the flag may be repeated.";
    text += " Default: " + option->default_text() + ".";
    const std::string constraints = option->constraint_text();
    if (!constraints.empty()) text += " Allowed: " + constraints + ".";
    append_wrapped(out, text, 6);
  }
  out += "  --config <path>\n";
  append_wrapped(out, "Read options from this config file (or the one SHADOWSYNC_CONFIG names).",
                 6);
  out += "  -h, --help\n";
  append_wrapped(out, "Show this help and exit.", 6);

  if (positionals_allowed_) {
    out += "\nArguments:\n  " + positional_usage_ + "\n";
    append_wrapped(out, positional_help_, 6);
  }

  const std::string example = options_.empty() ? "batch-size" : options_.front()->name();
  const std::string example_value =
      options_.empty() ? "256" : options_.front()->config_values().front();
  out += '\n';
  append_wrapped(out,
                 "Config file: every option can also be set as 'name = value' (e.g. '" + example +
                     " = " + example_value + "') in an INI file given by --config PATH or "
                     "SHADOWSYNC_CONFIG, in its [" + command_ + "] section, its [common] "
                     "section or before any section header; '#' and ';' start comments.",
                 0);
  append_wrapped(out,
                 "Environment: SHADOWSYNC_<NAME> sets an option (upper case, '-' becomes '_'; "
                 "e.g. " + environment_name(example) + ").",
                 0);
  append_wrapped(out,
                 "Precedence: defaults < config file < environment < command-line flags.", 0);
  return out;
}

std::string option_set::effective_config() const {
  std::string out = "# Effective configuration of 'shadowsync " + command_ +
                    "'; reuse it with --config.\n[" + command_ + "]\n";
  for (const auto& option : options_) {
    for (const std::string& value : option->config_values()) {
      out += option->name() + " =";
      if (!value.empty()) out += " " + value;
      out += '\n';
    }
  }
  return out;
}

}  // namespace ss::config
