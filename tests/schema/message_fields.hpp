// The fields of every wire message as its codec entry lists them (schema/codec/src/entries/),
// walked for the tests, so that a new message needs neither a comparison nor a sample written by
// hand:
//   fields_that_differ(a, b)   every field whose values differ, named by its path from the
//                              message ("heartbeat.progress.committed.epoch") with both values
//   fields_that_match(a, b)    every field whose values are the same (a sample against the defaults)
//   generated_sample<T>()      a T with every field set away from its default
//   generated_message(index)   the same for body's alternative `index`
//
// It reads the codec's private table (and with it the generated Cap'n Proto headers), which
// tests/schema/CMakeLists.txt lends to the tests alone (ss_wire_test_support).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <capnp/schema.h>

#include "ss/wire/messages.hpp"
#include "table.hpp"

namespace ss::wire::testing {

// ---- names ----------------------------------------------------------------------------------

// What the compiler's `pretty` function name (__PRETTY_FUNCTION__) says template parameter
// `parameter` stands for, after its last "::": GCC writes "[with auto Member =
// &ss::wire::leave::reason; ...]", clang "[Member = &ss::wire::leave::reason]". "" when it says it
// otherwise.
inline std::string last_name_of(std::string_view pretty, std::string_view parameter) {
  const std::string key = std::string(parameter) + " = ";
  auto at = pretty.find(key);
  if (at == std::string_view::npos) return "";
  at += key.size();
  const auto end = pretty.find_first_of(";]", at);
  if (end == std::string_view::npos) return "";
  std::string_view name = pretty.substr(at, end - at);
  if (const auto colons = name.rfind("::"); colons != std::string_view::npos) name.remove_prefix(colons + 2);
  return std::string(name);
}

// "reason" for &leave::reason: the entries name their members once, so their names come from there.
template <auto Member>
std::string member_name() {
  return last_name_of(__PRETTY_FUNCTION__, "Member");
}

// "leave" for wire::leave.
template <class Type>
std::string type_name() {
  return last_name_of(__PRETTY_FUNCTION__, "Type");
}

// ---- the field kinds of an entry (wire_fields.hpp) ------------------------------------------

template <class Field>
struct field_kind {
  static_assert(sizeof(Field) == 0,
                "a field kind of schema/codec/src/wire_fields.hpp that tests/schema/message_fields.hpp "
                "does not know: add a field_kind for it there");
};

template <auto Member>
struct member_field {
  static constexpr std::size_t extra_wire_fields = 0;  // Cap'n Proto fields beyond the member's one
  static constexpr bool is_optional = false;
  static constexpr bool is_enumeration = false;
  static constexpr auto member = Member;
  static std::string name() { return member_name<Member>(); }
};

template <auto M, auto S, auto G>
struct field_kind<detail::field<M, S, G>> : member_field<M> {};
template <auto M, auto I, auto G>
struct field_kind<detail::list<M, I, G>> : member_field<M> {};
template <auto M, auto I, auto G>
struct field_kind<detail::bytes<M, I, G>> : member_field<M> {};
template <auto M, auto I, auto G>
struct field_kind<detail::nested<M, I, G>> : member_field<M> {};
template <auto M, auto I, auto G>
struct field_kind<detail::struct_list<M, I, G>> : member_field<M> {};
// One member, two Cap'n Proto fields (the Float32 and the UInt16 list).
template <auto M, auto P, auto IF, auto GF, auto IH, auto GH>
struct field_kind<detail::precise_values<M, P, IF, GF, IH, GH>> : member_field<M> {
  static constexpr std::size_t extra_wire_fields = 1;
};
template <auto M, auto S, auto G, status (*Check)(std::uint16_t, const char*)>
struct field_kind<detail::enumeration<M, S, G, Check>> : member_field<M> {
  static constexpr bool is_enumeration = true;
  static constexpr auto check = Check;  // which values the reader accepts
};
template <class Flag, class Field>
struct field_kind<detail::optional<Flag, Field>> {
  static constexpr std::size_t extra_wire_fields = 0;
  static constexpr bool is_optional = true;
  static constexpr bool is_enumeration = false;
  using flag = field_kind<Flag>;
  using field = field_kind<Field>;
};

template <class Fields>
struct field_list_kinds {
  static constexpr bool is_field_list = false;
};
template <class Struct, class... Fields>
struct field_list_kinds<detail::field_list<Struct, Fields...>> {
  static constexpr bool is_field_list = true;
  using kinds = std::tuple<field_kind<Fields>...>;
};

template <class V>
struct is_vector : std::false_type {};
template <class E, class A>
struct is_vector<std::vector<E, A>> : std::true_type {};

// A struct whose entry is a field_list: messages and the nested structs they hold (cluster_view,
// read_position, ...). Others (numbers, texts, lists, example_batch) are values.
template <class V>
constexpr bool has_field_list() {
  if constexpr (std::is_class_v<V> && !std::is_same_v<V, std::string> && !is_vector<V>::value) {
    return field_list_kinds<typename detail::codec<V>::fields>::is_field_list;
  } else {
    return false;
  }
}

template <class Kinds, class Visit, std::size_t... I>
void visit_kinds([[maybe_unused]] Visit& visit, std::index_sequence<I...>) {  // the empty messages have none
  (visit(std::tuple_element_t<I, Kinds>{}, I), ...);
}

// Calls visit(field_kind<F>{}, i) for the i-th field F of T's entry, in the order it is written.
template <class T, class Visit>
void for_each_field(Visit&& visit) {
  using kinds = typename field_list_kinds<typename detail::codec<T>::fields>::kinds;
  visit_kinds<kinds>(visit, std::make_index_sequence<std::tuple_size_v<kinds>>{});
}

// Its member's name, or "field <index>" should the compiler not say it.
template <class Kind>
std::string name_of(std::size_t index) {
  std::string name = Kind::name();
  return name.empty() ? "field " + std::to_string(index) : name;
}

template <class T, class = void>
struct has_name : std::false_type {};
template <class T>
struct has_name<T, std::void_t<decltype(detail::codec<T>::name)>> : std::true_type {};

// A message's name ("heartbeat"), or a nested struct's ("member_progress").
template <class T>
std::string root_name() {
  if constexpr (has_name<T>::value) {
    return detail::codec<T>::name;
  } else {
    return type_name<T>();
  }
}

// ---- comparison -----------------------------------------------------------------------------

// Floats are compared bit for bit: the codec must not change a single bit (-0.0 and NaN
// included).
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}
inline bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

template <class V>
bool same_value(const V& a, const V& b) {
  if constexpr (std::is_floating_point_v<V>) {
    return std::memcmp(&a, &b, sizeof a) == 0;
  } else if constexpr (is_vector<V>::value) {
    if constexpr (std::is_arithmetic_v<typename V::value_type>) {
      return same_bits(a, b);
    } else {
      return a == b;
    }
  } else {
    return a == b;
  }
}

template <class V>
std::string shown(const V& v) {
  std::ostringstream out;
  if constexpr (std::is_same_v<V, bool>) {
    out << (v ? "true" : "false");
  } else if constexpr (std::is_enum_v<V>) {
    out << static_cast<long long>(v);
  } else if constexpr (std::is_integral_v<V>) {
    out << +v;  // an int8_t as a number
  } else if constexpr (std::is_floating_point_v<V>) {
    out.precision(17);
    out << v;
  } else if constexpr (std::is_same_v<V, std::string>) {
    out << '"' << (v.size() > 60 ? v.substr(0, 60) + "..." : v) << '"';
  } else if constexpr (is_vector<V>::value) {
    out << v.size() << " elements";
  } else {
    out << "a " << type_name<V>();
  }
  return out.str();
}

template <class V>
std::string both(const V& a, const V& b) {
  if constexpr (is_vector<V>::value) {
    if (a.size() != b.size()) return std::to_string(a.size()) + " elements vs " + std::to_string(b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!same_value(a[i], b[i])) return "element " + std::to_string(i) + ": " + shown(a[i]) + " vs " + shown(b[i]);
    }
    return "the same";
  } else {
    return shown(a) + " vs " + shown(b);
  }
}

// Appends the path of every field of `a` and `b` whose values differ (Differ) or are the same
// (!Differ) to `out`, with both values.
template <bool Differ, class V>
void compare_values(const V& a, const V& b, const std::string& path, std::vector<std::string>& out);

template <bool Differ, class T>
void compare_fields([[maybe_unused]] const T& a, [[maybe_unused]] const T& b, [[maybe_unused]] const std::string& path,
                    [[maybe_unused]] std::vector<std::string>& out) {  // the empty messages have no fields
  for_each_field<T>([&]([[maybe_unused]] auto kind, [[maybe_unused]] std::size_t index) {
    using Kind = decltype(kind);
    if constexpr (Kind::is_optional) {
      // The field is on the wire only when its flag is set.
      using flag = typename Kind::flag;
      using field = typename Kind::field;
      compare_values<Differ>(a.*(flag::member), b.*(flag::member), path + "." + name_of<flag>(index), out);
      if (a.*(flag::member) || b.*(flag::member)) {
        compare_values<Differ>(a.*(field::member), b.*(field::member), path + "." + name_of<field>(index), out);
      }
    } else {
      compare_values<Differ>(a.*(Kind::member), b.*(Kind::member), path + "." + name_of<Kind>(index), out);
    }
  });
}

// The batch's entry is written by hand (its example count is on the wire, not a member): so is
// its comparison.
template <bool Differ>
void compare_batches(const data::example_batch& a, const data::example_batch& b, const std::string& path,
                     std::vector<std::string>& out) {
  compare_values<Differ>(a.num_dense, b.num_dense, path + ".num_dense", out);
  compare_values<Differ>(a.num_sparse, b.num_sparse, path + ".num_sparse", out);
  compare_values<Differ>(a.labels, b.labels, path + ".labels", out);
  compare_values<Differ>(a.dense, b.dense, path + ".dense", out);
  compare_values<Differ>(a.ids, b.ids, path + ".ids", out);
  compare_values<Differ>(a.offsets, b.offsets, path + ".offsets", out);
}

// A list of structs with entries of their own (struct_list): its length, then each element's fields.
template <class V>
constexpr bool is_struct_list() {
  if constexpr (is_vector<V>::value) {
    return has_field_list<typename V::value_type>();
  } else {
    return false;
  }
}

template <bool Differ, class V>
void compare_values(const V& a, const V& b, const std::string& path, std::vector<std::string>& out) {
  if constexpr (std::is_same_v<V, data::example_batch>) {
    compare_batches<Differ>(a, b, path, out);
  } else if constexpr (is_struct_list<V>()) {
    compare_values<Differ>(a.size(), b.size(), path + ".size", out);
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
      compare_fields<Differ>(a[i], b[i], path + "[" + std::to_string(i) + "]", out);
  } else if constexpr (has_field_list<V>()) {
    compare_fields<Differ>(a, b, path, out);
  } else {
    static_assert(!std::is_class_v<V> || std::is_same_v<V, std::string> || is_vector<V>::value,
                  "a struct whose codec entry is written by hand: compare it like compare_batches");
    if (same_value(a, b) != Differ) out.push_back(path + (Differ ? ": " + both(a, b) : ": " + shown(a)));
  }
}

// Every field (leaf) of two messages, or nested structs, whose values differ: "register_reply.
// view.shards: 3 elements vs 2". Empty when they are the same field by field.
template <class T>
std::vector<std::string> fields_that_differ(const T& a, const T& b) {
  std::vector<std::string> out;
  compare_values<true>(a, b, root_name<T>(), out);
  return out;
}

// Every field whose values are the same: "warm_reply.tiered: true".
template <class T>
std::vector<std::string> fields_that_match(const T& a, const T& b) {
  std::vector<std::string> out;
  compare_values<false>(a, b, root_name<T>(), out);
  return out;
}

inline std::vector<std::string> fields_that_differ(const envelope& a, const envelope& b) {
  std::vector<std::string> out;
  if (a.version != b.version) out.push_back("envelope.version: " + both(a.version, b.version));
  if (a.request_id != b.request_id) out.push_back("envelope.request_id: " + both(a.request_id, b.request_id));
  if (a.message.index() != b.message.index()) {
    out.push_back(std::string("envelope.message: ") + message_name(a.message) + " vs " + message_name(b.message));
    return out;
  }
  std::visit(
      [&](const auto& x) {
        for (auto& d : fields_that_differ(x, std::get<std::decay_t<decltype(x)>>(b.message))) out.push_back(std::move(d));
      },
      a.message);
  return out;
}

// ---- what an entry leaves out ------------------------------------------------------------------
// A walk over an entry cannot see a member the entry does not name: it is neither generated nor
// compared. So each entry is counted against its C++ struct's members and its Cap'n Proto
// struct's fields.

// Converts to anything: T{any_value{}, ...} compiles for up to as many values as T has members.
struct any_value {
  template <class U>
  operator U() const;  // only ever named in unevaluated expressions
};

template <class T, class Values, class = void>
struct brace_initializable : std::false_type {};
template <class T, std::size_t... I>
struct brace_initializable<T, std::index_sequence<I...>,
                           std::void_t<decltype(T{(static_cast<void>(I), any_value{})...})>> : std::true_type {};

// The members of the aggregate T.
template <class T, std::size_t N = 0>
constexpr std::size_t member_count() {
  if constexpr (brace_initializable<T, std::make_index_sequence<N + 1>>::value) {
    return member_count<T, N + 1>();
  } else {
    return N;
  }
}

template <class Kinds>
struct named_members;
template <class... Kinds>
struct named_members<std::tuple<Kinds...>> {
  static constexpr std::size_t count = ((Kinds::is_optional ? 2 : 1) + ... + std::size_t{0});
  static constexpr std::size_t wire_count = count + (Kinds::extra_wire_fields + ... + std::size_t{0});
};

template <class Fields>
struct wire_struct;
template <class Struct, class... Fields>
struct wire_struct<detail::field_list<Struct, Fields...>> {
  using type = Struct;
};

// Appends a line for T (a struct with a field_list entry), and each struct it nests, whose entry
// names fewer members than T has, or fewer fields than its Cap'n Proto struct has.
template <class T>
void check_entry_covers(std::vector<std::string>& problems) {
  using fields = typename detail::codec<T>::fields;
  constexpr std::size_t named = named_members<typename field_list_kinds<fields>::kinds>::count;
  constexpr std::size_t named_on_wire = named_members<typename field_list_kinds<fields>::kinds>::wire_count;
  constexpr std::size_t members = member_count<T>();
  const std::size_t wire_fields = capnp::Schema::from<typename wire_struct<fields>::type>().getFields().size();
  if (named != members || named_on_wire != wire_fields) {
    problems.push_back(root_name<T>() + ": its codec entry names " + std::to_string(named) + " members, its C++ struct has " +
                       std::to_string(members) + " and its Cap'n Proto struct " + std::to_string(wire_fields) +
                       " fields: a field left out of its entry (schema/codec/src/entries/) is never sent");
  }
  for_each_field<T>([&]([[maybe_unused]] auto kind, std::size_t) {
    using Kind = decltype(kind);
    if constexpr (Kind::is_optional) {
      using nested = std::decay_t<decltype(std::declval<T&>().*(Kind::field::member))>;
      if constexpr (has_field_list<nested>()) check_entry_covers<nested>(problems);
    } else {
      using nested = std::decay_t<decltype(std::declval<T&>().*(Kind::member))>;
      if constexpr (has_field_list<nested>()) check_entry_covers<nested>(problems);
      if constexpr (is_struct_list<nested>()) check_entry_covers<typename nested::value_type>(problems);
    }
  });
}

template <std::size_t... I>
std::vector<std::string> entry_coverage_problems(std::index_sequence<I...>) {
  std::vector<std::string> problems;
  (check_entry_covers<detail::message_at<I>>(problems), ...);
  return problems;
}

// For every message of body: what check_entry_covers finds, one line each ("" none).
inline std::vector<std::string> entry_coverage_problems() {
  return entry_coverage_problems(std::make_index_sequence<detail::message_count>{});
}

// ---- generated samples ----------------------------------------------------------------------

// A small valid batch (2 examples, 2 dense features, 1 id each), its numbers from `n`.
inline data::example_batch generated_batch(std::uint64_t n) {
  data::example_batch b;
  b.reset(2, 1);
  for (std::uint64_t e = 0; e < 2; ++e) {
    b.begin_example(e == 0 ? 1.0f : 0.0f);
    b.add_dense(0.25f * static_cast<float>(n + e + 1));
    b.add_dense(-1.5f);
    b.add_id(n + e + 1);
    b.end_feature();
  }
  return b;
}

// Sets `v`, which holds its default, to a value other than it; `n` counts the fields set so far
// (no two numbers alike), `name` is the field's.
template <class V>
void generate_value(V& v, std::uint64_t& n, const std::string& name);

template <class T>
void generate_fields([[maybe_unused]] T& m, [[maybe_unused]] std::uint64_t& n) {
  for_each_field<T>([&]([[maybe_unused]] auto kind, [[maybe_unused]] std::size_t index) {
    using Kind = decltype(kind);
    if constexpr (Kind::is_optional) {
      using flag = typename Kind::flag;
      using field = typename Kind::field;
      m.*(flag::member) = true;  // present
      generate_value(m.*(field::member), n, name_of<field>(index));
    } else if constexpr (Kind::is_enumeration) {
      // The first value its reader accepts other than the default.
      auto& v = m.*(Kind::member);
      using E = std::decay_t<decltype(v)>;
      const auto old = static_cast<std::uint16_t>(v);
      for (std::uint32_t c = 0; c <= 0xffff; ++c) {
        const auto value = static_cast<std::uint16_t>(c);
        if (value != old && Kind::check(value, "").is_ok()) {
          v = static_cast<E>(value);
          break;
        }
      }
      ++n;
    } else {
      generate_value(m.*(Kind::member), n, name_of<Kind>(index));
    }
  });
}

template <class V>
void generate_value(V& v, std::uint64_t& n, const std::string& name) {
  if constexpr (std::is_same_v<V, data::example_batch>) {
    v = generated_batch(n++);
  } else if constexpr (has_field_list<V>()) {
    generate_fields(v, n);
  } else if constexpr (std::is_same_v<V, bool>) {
    v = !v;
    ++n;
  } else if constexpr (std::is_enum_v<V>) {
    v = static_cast<V>(static_cast<std::underlying_type_t<V>>(v) + 1);
    ++n;
  } else if constexpr (std::is_integral_v<V>) {
    v = static_cast<V>(static_cast<std::uint64_t>(v) + ++n);  // wraps for signed and narrow types
  } else if constexpr (std::is_floating_point_v<V>) {
    // Half the default, or a fraction when it is 0: a scale in [0, 1] stays in it.
    v = v != 0 ? v / 2 : V(1) / static_cast<V>(++n + 1);
  } else if constexpr (std::is_same_v<V, std::string>) {
    v = name + " " + std::to_string(++n);
  } else if constexpr (std::is_same_v<V, std::vector<std::string>>) {
    const std::string first = name + " " + std::to_string(++n);
    v = {first, "", name + " " + std::to_string(++n)};  // an empty text is a null element
  } else if constexpr (is_vector<V>::value) {
    // Three elements: lists that must be as long as each other (ids, tables) are.
    v.clear();
    for (int i = 0; i < 3; ++i) {
      typename V::value_type e{};
      generate_value(e, n, name);
      v.push_back(e);
    }
  } else {
    static_assert(sizeof(V) == 0, "a struct whose codec entry is written by hand: generate it like generated_batch");
  }
}

// Where an entry's check ties fields together beyond list lengths, the generated values are made
// to agree (each field still away from its default).
template <class T>
void make_consistent(T&) {}
inline void make_consistent(dump_request& m) { m.placement_index = m.placement_shards - 1; }
// Values at a 16-bit precision: those it represents exactly, as the wire carries them.
inline void round_to_precision(std::vector<float>& values, ss::embedding::row_precision p) {
  ss::embedding::round_to_nearest(values.data(), values.size(), p);
}
inline void make_consistent(lookup_reply& m) { round_to_precision(m.values, m.precision); }
inline void make_consistent(push_request& m) { round_to_precision(m.grads, m.precision); }
inline void make_consistent(dump_reply& m) {
  m.row_floats = static_cast<std::uint32_t>(m.values.size() / m.ids.size());
  m.gone_tables.resize(m.gone_ids.size());
  m.crc32c = dump_page_crc(m);
}

// A T (a message, or a struct with an entry) whose every field differs from its default: numbers,
// texts, lists of three, nested structs, optional fields present, enumerations set to a value
// their reader accepts. Deterministic: its frame is pinned in golden_frames.txt.
template <class T>
T generated_sample() {
  T m{};
  std::uint64_t n = 0;
  generate_fields(m, n);
  make_consistent(m);
  return m;
}

template <std::size_t I>
body generated_message_at() {
  return body(std::in_place_index<I>, generated_sample<detail::message_at<I>>());
}

template <std::size_t... I>
body generated_message(std::size_t index, std::index_sequence<I...>) {
  using maker = body (*)();
  static constexpr maker makers[] = {&generated_message_at<I>...};
  return makers[index]();
}

// generated_sample of body's alternative `index` (< detail::message_count).
inline body generated_message(std::size_t index) {
  return generated_message(index, std::make_index_sequence<detail::message_count>{});
}

template <std::size_t... I>
std::vector<std::string> table_names(std::index_sequence<I...>) {
  return {detail::codec<detail::message_at<I>>::name...};
}
template <std::size_t... I>
std::vector<std::string> type_names(std::index_sequence<I...>) {
  return {type_name<detail::message_at<I>>()...};
}

// The names of body's alternatives from the table (codec<T>::name), and of their C++ types.
inline std::vector<std::string> table_names() { return table_names(std::make_index_sequence<detail::message_count>{}); }
inline std::vector<std::string> type_names() { return type_names(std::make_index_sequence<detail::message_count>{}); }

}  // namespace ss::wire::testing
