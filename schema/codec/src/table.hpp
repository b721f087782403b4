// The codec table: one entry per message, `codec<T>`, in the unit of its schema area
// (entries/<area>.hpp), and the dispatch over `wire::body` generated from those entries.
//
// A message's entry holds, together:
//   name                  what message_name() returns ("lookup_request")
//   union_member<...>     its member of the envelope's body union: tag, init and get accessors,
//                         and `Wire`, the Cap'n Proto struct that member holds
//   fields                field_list<Wire, its fields in writing order...>
//                         (wire_fields.hpp); the exact size, the writer and the reader follow
//   check(m)              optional: what the message as a whole must satisfy once read (a list
//                         length another field implies); its errors name the message
// Nested structs (cluster_view, read_position, ...) have entries with `fields` only.
//
// The dispatch below walks the alternatives of `wire::body`: a message without an entry, or whose
// union member has another ordinal than its position in `body`, does not compile.
#pragma once

#include <cstddef>
#include <utility>
#include <variant>

#include "entries/common.hpp"
#include "entries/control.hpp"
#include "entries/data.hpp"
#include "entries/embedding.hpp"
#include "entries/membership.hpp"
#include "entries/model.hpp"
#include "wire_fields.hpp"

namespace ss::wire::detail {

template <std::size_t I>
using message_at = std::variant_alternative_t<I, body>;

template <class T>
using entry_of = codec<std::decay_t<T>>;

constexpr std::size_t message_count = std::variant_size_v<body>;

// Words of the body struct and all it points to, as put_body lays them out.
inline std::size_t body_words(const body& b) {
  return std::visit([](const auto& m) { return entry_of<decltype(m)>::fields::words(m); }, b);
}

inline void put_body(const body& b, Body::Builder out) {
  std::visit(
      [&out](const auto& m) {
        using entry = entry_of<decltype(m)>;
        entry::fields::put(m, entry::init(out));
      },
      b);
}

template <std::size_t I>
status get_message(Body::Reader r, body& out) {
  using entry = codec<message_at<I>>;
  static_assert(static_cast<std::size_t>(entry::tag) == I,
                "the union tag of a message is its index in wire::body: give its member of "
                "Envelope.body (schema/envelope.capnp) the position it has in `body`");
  auto& m = out.emplace<I>();
  SS_RETURN_IF_ERROR(entry::fields::get(entry::read(r), m, entry::name));
  return entry::check(m);
}

template <std::size_t... I>
status get_body(Body::Reader r, body& out, std::index_sequence<I...>) {
  using reader = status (*)(Body::Reader, body&);
  static constexpr reader readers[] = {&get_message<I>...};
  const auto which = static_cast<std::uint16_t>(r.which());
  if (which >= message_count) {
    return parse_error("unknown message type " + num(which) + " (sent by a newer peer?)");
  }
  return readers[which](r, out);
}

inline status get_body(Body::Reader r, body& out) {
  return get_body(r, out, std::make_index_sequence<message_count>{});
}

template <std::size_t... I>
const char* name_at(std::size_t index, std::index_sequence<I...>) {
  static constexpr const char* names[] = {codec<message_at<I>>::name...};
  return names[index];
}

// The name of body's alternative `index` (< message_count).
inline const char* name_at(std::size_t index) {
  return name_at(index, std::make_index_sequence<message_count>{});
}

}  // namespace ss::wire::detail
