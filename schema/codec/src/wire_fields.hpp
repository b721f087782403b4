// The pieces the codec table is built from (table.hpp, entries/*.hpp): how one field of a C++
// message is sized, written into its Cap'n Proto struct and read back. An entry lists its fields
// once, in the order they are written; its exact encoded size, its writer and its reader all
// follow from that list, so they cannot disagree.
//
// Included only by ss_wire's own sources (it includes generated Cap'n Proto code).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <capnp/any.h>
#include <capnp/list.h>

#include "ss/core/status.hpp"
#include "ss/wire/messages.hpp"
#include "ss/wire/schema/envelope.capnp.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "ss_wire copies list bytes as they are: it needs a little-endian host, like the wire"
#endif

namespace ss::wire::detail {

using Body = schema::Envelope::Body;

// ---- errors -----------------------------------------------------------------------------------

inline std::string num(std::uint64_t v) { return std::to_string(v); }
inline status parse_error(std::string message) { return status(errc::parse_error, std::move(message)); }

// ---- raw list bytes ---------------------------------------------------------------------------

template <class T>
constexpr capnp::ElementSize element_size() {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);
  if constexpr (sizeof(T) == 2) return capnp::ElementSize::TWO_BYTES;
  return sizeof(T) == 4 ? capnp::ElementSize::FOUR_BYTES : capnp::ElementSize::EIGHT_BYTES;
}

// capnp lists hold at most 2^29 - 1 elements.
inline capnp::uint list_size(std::size_t n) {
  if (n > (std::size_t{1} << 29) - 1) {
    throw std::length_error("ss::wire::encode: a list of " + std::to_string(n) +
                            " elements is over Cap'n Proto's limit of 2^29 - 1");
  }
  return static_cast<capnp::uint>(n);
}

// Writes `v` with one memcpy into the list that init(v.size()) creates. An empty vector is left
// a null pointer, which reads back as an empty list and costs no words (list_words counts the
// same way).
template <class T, class Init>
void put_list(const std::vector<T>& v, Init init) {
  if (v.empty()) return;
  typename capnp::List<T>::Builder list = init(list_size(v.size()));
  auto raw = capnp::AnyList::Reader(list.asReader()).getRawBytes();
  // The builder's memory is writable; the reader view is only how capnp 0.9 exposes it.
  std::memcpy(const_cast<kj::byte*>(raw.begin()), v.data(), v.size() * sizeof(T));
}

// Reads a primitive list with one memcpy. Its length is bounded by the frame (capnp checks the
// list lies inside its segment), so the allocation is too.
template <class T>
void get_list(typename capnp::List<T>::Reader list, std::vector<T>& out) {
  const std::size_t n = list.size();
  out.resize(n);
  if (n == 0) return;
  capnp::AnyList::Reader any(list);
  auto raw = any.getRawBytes();
  if (any.getElementSize() == element_size<T>() && raw.size() == n * sizeof(T)) {
    std::memcpy(out.data(), raw.begin(), n * sizeof(T));
  } else {
    // Wider elements or structs (a newer sender's upgrade): legal Cap'n Proto, never written
    // by our encoder.
    for (std::size_t i = 0; i < n; ++i) out[i] = list[i];
  }
}

inline capnp::Text::Reader text(const std::string& s) { return capnp::Text::Reader(s.data(), s.size()); }
inline std::string get_text(capnp::Text::Reader t) { return std::string(t.begin(), t.size()); }

// Like put_list; empty strings are null elements.
template <class Init>
void put_texts(const std::vector<std::string>& v, Init init) {
  if (v.empty()) return;
  capnp::List<capnp::Text>::Builder list = init(list_size(v.size()));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].empty()) list.set(static_cast<capnp::uint>(i), text(v[i]));
  }
}

inline void get_texts(capnp::List<capnp::Text>::Reader list, std::vector<std::string>& out) {
  out.clear();
  out.reserve(list.size());  // bounded: one pointer word per element in the frame
  for (auto t : list) out.push_back(get_text(t));
}

// ---- sizes in words, as the encoder lays them out ------------------------------------------

template <class Struct>
constexpr std::size_t struct_words() {
  return Struct::_capnpPrivate::dataWordSize + Struct::_capnpPrivate::pointerCount;
}
inline std::size_t text_words(const std::string& s) { return s.empty() ? 0 : s.size() / 8 + 1; }
template <class T>
std::size_t list_words(const std::vector<T>& v) {
  return (v.size() * sizeof(T) + 7) / 8;
}
inline std::size_t texts_words(const std::vector<std::string>& v) {
  std::size_t n = v.size();
  for (const auto& s : v) n += text_words(s);
  return n;
}

// ---- the entry of a C++ type: see table.hpp --------------------------------------------------

template <class T>
struct codec {
  static_assert(sizeof(T) == 0,
                "this message (or nested struct) has no codec entry: add `template <> struct "
                "codec<...>` to the entries of its schema area (schema/codec/src/entries/)");
};

// ---- field kinds --------------------------------------------------------------------------------
// Each names the C++ member and the generated accessors of its Cap'n Proto field, and gives
//   words(m)          the words the field adds beyond its struct's own (texts, lists, structs)
//   put(m, builder)   writing, in list order: the order in which pointers are allocated is the
//                     byte layout, so it must not change
//   get(reader, m, what)  reading: void, or a status when a value can be refused (`what` is the
//                     message's name, for the error).

template <class MemberPointer>
struct member_of;
template <class Class, class Member>
struct member_of<Member Class::*> {
  using type = Member;
};

template <class Setter>
struct setter_argument;
template <class Class, class Arg>
struct setter_argument<void (Class::*)(Arg)> {
  using type = Arg;
};

// A number or a bool (in the struct's data section), or a std::string (a Text; an empty one is
// left a null pointer).
template <auto Member, auto Set, auto Get>
struct field {
  static constexpr bool is_text = std::is_same_v<typename member_of<decltype(Member)>::type, std::string>;

  template <class T>
  static const auto& of(const T& m) { return m.*Member; }
  template <class T>
  static std::size_t words(const T& m) {
    if constexpr (is_text) {
      return text_words(m.*Member);
    } else {
      return 0;
    }
  }
  template <class T, class Builder>
  static void put(const T& m, Builder& b) {
    if constexpr (is_text) {
      if (!(m.*Member).empty()) (b.*Set)(text(m.*Member));
    } else {
      (b.*Set)(m.*Member);
    }
  }
  template <class Reader, class T>
  static void get(const Reader& r, T& m, const char*) {
    if constexpr (is_text) {
      m.*Member = get_text((r.*Get)());
    } else {
      m.*Member = (r.*Get)();
    }
  }
};

// A C++ enumeration whose values are the wire enumerant's; `Check(value, what)` refuses values
// outside the C++ type.
template <auto Member, auto Set, auto Get, status (*Check)(std::uint16_t, const char*)>
struct enumeration {
  using type = typename member_of<decltype(Member)>::type;

  template <class T>
  static std::size_t words(const T&) { return 0; }
  template <class T, class Builder>
  static void put(const T& m, Builder& b) {
    (b.*Set)(static_cast<typename setter_argument<decltype(Set)>::type>(m.*Member));
  }
  template <class Reader, class T>
  static status get(const Reader& r, T& m, const char* what) {
    const auto v = static_cast<std::uint16_t>((r.*Get)());
    SS_RETURN_IF_ERROR(Check(v, what));
    m.*Member = static_cast<type>(v);
    return status::ok();
  }
};

// A std::vector of 4- or 8-byte numbers (copied with one memcpy each way) or of std::strings.
template <auto Member, auto Init, auto Get>
struct list {
  static constexpr bool of_texts =
      std::is_same_v<typename member_of<decltype(Member)>::type, std::vector<std::string>>;

  template <class T>
  static std::size_t words(const T& m) {
    if constexpr (of_texts) {
      return texts_words(m.*Member);
    } else {
      return list_words(m.*Member);
    }
  }
  template <class T, class Builder>
  static void put(const T& m, Builder& b) {
    auto init = [&](capnp::uint n) { return (b.*Init)(n); };
    if constexpr (of_texts) {
      put_texts(m.*Member, init);
    } else {
      put_list(m.*Member, init);
    }
  }
  template <class Reader, class T>
  static void get(const Reader& r, T& m, const char*) {
    if constexpr (of_texts) {
      get_texts((r.*Get)(), m.*Member);
    } else {
      get_list((r.*Get)(), m.*Member);
    }
  }
};

// A std::vector<std::int8_t> as Data (copied with one memcpy each way); an empty one is left a
// null pointer.
template <auto Member, auto Init, auto Get>
struct bytes {
  template <class T>
  static std::size_t words(const T& m) { return list_words(m.*Member); }
  template <class T, class Builder>
  static void put(const T& m, Builder& b) {
    const auto& v = m.*Member;
    if (v.empty()) return;
    auto data = (b.*Init)(list_size(v.size()));
    std::memcpy(data.begin(), v.data(), v.size());
  }
  template <class Reader, class T>
  static void get(const Reader& r, T& m, const char*) {
    const auto data = (r.*Get)();
    auto& v = m.*Member;
    v.resize(data.size());
    if (!v.empty()) std::memcpy(v.data(), data.begin(), v.size());
  }
};

// A std::vector<float> of embedding values that travels at the row precision in member
// `Precision` (an enumeration<> read before it): FP32 in the Float32 list, bf16 and fp16 as 16-bit
// words in the UInt16 list (half the bytes), converted each way. The list of the other kind must
// be empty: values in both, or in the wrong one, are refused.
template <auto Member, auto Precision, auto InitFloats, auto GetFloats, auto InitHalves, auto GetHalves>
struct precise_values {
  template <class T>
  static bool wide(const T& m) { return m.*Precision == embedding::row_precision::fp32; }
  template <class T>
  static std::size_t words(const T& m) {
    return wide(m) ? list_words(m.*Member) : ((m.*Member).size() * 2 + 7) / 8;
  }
  template <class T, class Builder>
  static void put(const T& m, Builder& b) {
    const auto& v = m.*Member;
    if (wide(m)) {
      put_list(v, [&](capnp::uint n) { return (b.*InitFloats)(n); });
      return;
    }
    thread_local std::vector<std::uint16_t> halves;
    halves.resize(v.size());
    embedding::to_halves(v.data(), v.size(), m.*Precision, halves.data());
    put_list(halves, [&](capnp::uint n) { return (b.*InitHalves)(n); });
  }
  template <class Reader, class T>
  static status get(const Reader& r, T& m, const char* what) {
    const auto floats = (r.*GetFloats)();
    const auto halves = (r.*GetHalves)();
    const char* precision = embedding::to_string(m.*Precision);
    if (wide(m)) {
      if (halves.size() > 0)
        return parse_error(std::string(what) + ": " + num(halves.size()) + " 16-bit values at row precision fp32");
      get_list(floats, m.*Member);
      return status::ok();
    }
    if (floats.size() > 0)
      return parse_error(std::string(what) + ": " + num(floats.size()) + " fp32 values at row precision " + precision);
    thread_local std::vector<std::uint16_t> words;
    get_list(halves, words);
    auto& v = m.*Member;
    v.resize(words.size());
    embedding::from_halves(words.data(), words.size(), m.*Precision, v.data());
    return status::ok();
  }
};

// A nested struct with an entry of its own (codec<member type>), always written.
template <auto Member, auto Init, auto Get>
struct nested {
  using fields = typename codec<typename member_of<decltype(Member)>::type>::fields;

  template <class T>
  static std::size_t words(const T& m) { return fields::words(m.*Member); }
  template <class T, class Builder>
  static void put(const T& m, Builder& b) { fields::put(m.*Member, (b.*Init)()); }
  template <class Reader, class T>
  static status get(const Reader& r, T& m, const char* what) {
    return fields::get((r.*Get)(), m.*Member, what);
  }
};

// A std::vector of structs with an entry of their own (codec<element type>), as a List(Struct);
// an empty one is left a null pointer. Each element is checked as its fields are.
template <auto Member, auto Init, auto Get>
struct struct_list {
  using element = typename member_of<decltype(Member)>::type::value_type;
  using fields = typename codec<element>::fields;

  template <class T>
  static std::size_t words(const T& m) {
    const auto& v = m.*Member;
    if (v.empty()) return 0;
    std::size_t n = 1;  // the list's tag word
    for (const auto& e : v) n += fields::words(e);
    return n;
  }
  template <class T, class Builder>
  static void put(const T& m, Builder& b) {
    const auto& v = m.*Member;
    if (v.empty()) return;
    auto list = (b.*Init)(list_size(v.size()));
    for (std::size_t i = 0; i < v.size(); ++i) fields::put(v[i], list[static_cast<capnp::uint>(i)]);
  }
  template <class Reader, class T>
  static status get(const Reader& r, T& m, const char* what) {
    const auto list = (r.*Get)();
    auto& v = m.*Member;
    v.clear();
    v.resize(list.size());  // bounded: every element takes words of the frame
    for (std::size_t i = 0; i < v.size(); ++i)
      SS_RETURN_IF_ERROR(fields::get(list[static_cast<capnp::uint>(i)], v[i], what));
    return status::ok();
  }
};

// Reads one field: false, with `error` set, when it refuses its value.
template <class Field, class Reader, class T>
bool read_field(const Reader& r, T& m, const char* what, status& error) {
  if constexpr (std::is_void_v<decltype(Field::get(r, m, what))>) {
    Field::get(r, m, what);
    return true;
  } else {
    error = Field::get(r, m, what);
    return error.is_ok();
  }
}

// `Field`, written only when the bool `Flag` (a field<>) is set.
template <class Flag, class Field>
struct optional {
  template <class T>
  static std::size_t words(const T& m) { return Flag::of(m) ? Field::words(m) : 0; }
  template <class T, class Builder>
  static void put(const T& m, Builder& b) {
    if (!Flag::of(m)) return;
    Field::put(m, b);
    Flag::put(m, b);
  }
  template <class Reader, class T>
  static status get(const Reader& r, T& m, const char* what) {
    Flag::get(r, m, what);
    status error;
    if (Flag::of(m)) static_cast<void>(read_field<Field>(r, m, what, error));
    return error;
  }
};

// The fields of `Struct` (a generated Cap'n Proto struct), in the order they are written.
template <class Struct, class... Fields>
struct field_list {
  template <class T>
  static std::size_t words(const T& m) {
    return struct_words<Struct>() + (Fields::words(m) + ... + std::size_t{0});
  }
  // [[maybe_unused]]: the empty structs (dense_request, ack, ...) have no fields.
  template <class T>
  static void put(const T& m, [[maybe_unused]] typename Struct::Builder b) {
    (Fields::put(m, b), ...);
  }
  template <class T>
  static status get([[maybe_unused]] typename Struct::Reader r, T& m, [[maybe_unused]] const char* what) {
    status error;
    static_cast<void>((read_field<Fields>(r, m, what, error) && ...));  // stops at the first refusal
    return error;
  }
};

// What every message's entry has beyond its fields: its member of the envelope's body union,
// and a check of the message as a whole (lengths one list implies for another), none by default.
template <Body::Which Tag, auto Init, auto Read>
struct union_member {
  using Wire = typename decltype((std::declval<Body::Builder&>().*Init)())::Builds;  // its struct
  static constexpr Body::Which tag = Tag;
  static auto init(Body::Builder& b) { return (b.*Init)(); }
  static auto read(const Body::Reader& r) { return (r.*Read)(); }
  template <class T>
  static status check(const T&) { return status::ok(); }
};

}  // namespace ss::wire::detail
