// geerpc: the JSON decoder's containers (docs/protocol.md 8.1, 8.2): vectors, arrays, deques and
// lists from arrays; optionals and unique_ptrs from null or the value; variants from [index, value];
// maps from objects or arrays of pairs (json/map_keys.hpp), sets from arrays; tuples from arrays of
// exactly their elements. Each charges what it makes before making it.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include "../codec/allocation.hpp"
#include "../codec/serializable.hpp"
#include "../codec/type_kind.hpp"
#include "../config.hpp"
#include "cursor.hpp"
#include "decode_scalars.hpp"
#include "decode_status.hpp"
#include "map_keys.hpp"

GEERPC_BEGIN_NAMESPACE
namespace json {

// ============================================================================ sequences

namespace detail {
inline std::string elements(std::size_t count) {
  return std::to_string(count) + (count == 1 ? " element" : " elements");
}

// Fails unless `at` opens an array of exactly `size` elements; `expected` says what is wanted
// ("an array of <size> elements" when empty: the text is made only for a failure).
inline bool expect_array(cursor& in, const token& at, std::size_t size, std::string_view expected = {}) {
  if (at.kind == token_kind::array_begin && at.count() == size) return true;
  const std::string wanted = expected.empty() ? "an array of " + elements(size) : std::string(expected);
  if (at.kind != token_kind::array_begin) return in.fail_expected(wanted, at);
  return in.fail("expected " + wanted + ", got an array of " + elements(at.count()), at);
}

// Charged, then reserved exactly, so that growth never takes more than was charged; each element
// made where it stays and decoded there (codec/sequences.hpp says why by index, and resize).
template <class T>
struct vector_decoder {
  using element = typename T::value_type;
  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind != token_kind::array_begin) return in.fail_expected("an array", at);
    const std::size_t size = at.count();
    if (size > value.capacity()) {
      if (!in.charge(size, sizeof(element), at)) return false;
      value.clear();
      value.reserve(size);
    }
    if (!in.charge_made<element>(size, at)) return false;
    value.clear();
    value.resize(size);
    in.next();
    for (std::size_t i = 0; i < size; ++i)
      if (!kind_decoder<element>::decode(in, value[i])) return false;
    in.next();
    return true;
  }
};

template <class T>
struct bool_vector_decoder {
  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind != token_kind::array_begin) return in.fail_expected("an array", at);
    const std::size_t size = at.count();
    value.clear();
    if (size > value.capacity()) {
      if (!in.charge(codec::detail::bool_vector_allocation(size), at)) return false;
      value.reserve(size);
    }
    in.next();
    for (std::size_t i = 0; i < size; ++i) {
      bool item = false;
      if (!kind_decoder<bool>::decode(in, item)) return false;
      value.push_back(item);
    }
    in.next();
    return true;
  }
};
}  // namespace detail

template <class T>
struct kind_decoder<T, codec::type_kind::vector>
    : std::conditional_t<detail::is_byte_element<typename T::value_type>, detail::byte_string_decoder<T>,
                         std::conditional_t<std::is_same_v<typename T::value_type, bool>,
                                            detail::bool_vector_decoder<T>, detail::vector_decoder<T>>> {};

// Exactly N elements.
template <class T>
struct kind_decoder<T, codec::type_kind::array> {
  using element = typename T::value_type;
  static constexpr std::size_t size = std::tuple_size_v<T>;

  static bool decode(cursor& in, T& value) {
    if (!detail::expect_array(in, in.peek(), size)) return false;
    in.next();
    for (std::size_t i = 0; i < size; ++i)
      if (!kind_decoder<element>::decode(in, value[i])) return false;
    in.next();
    return true;
  }
};

// A deque or a list, from an array, as codec/sequences.hpp makes them.
template <class T>
struct kind_decoder<T, codec::type_kind::sequence> {
  using element = typename T::value_type;
  static constexpr bool is_deque = requires(T & d) {
    d.push_front(std::declval<element>());
    d.shrink_to_fit();
  };

  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind != token_kind::array_begin) return in.fail_expected("an array", at);
    if constexpr (is_deque)
      return decode_deque(in, value, at);
    else
      return decode_list(in, value, at);
  }

 private:
  static bool decode_deque(cursor& in, T& value, const token& at) {
    const std::size_t size = at.count();
    if (size > codec::detail::deque_limit<element>()) return in.fail_memory(at);
    if (!in.charge(codec::detail::deque_allocation<element>(size), at) || !in.charge_made<element>(size, at))
      return false;
    T filled(size, value.get_allocator());  // made at its size in one go
    in.next();
    for (std::size_t i = 0; i < size; ++i)
      if (!kind_decoder<element>::decode(in, filled[i])) return false;
    in.next();
    value.swap(filled);
    return true;
  }
  static bool decode_list(cursor& in, T& value, const token& at) {
    const std::size_t size = at.count();
    if (!in.charge(size, codec::detail::list_node_allocation<element>(), at) || !in.charge_made<element>(size, at))
      return false;
    value.clear();
    in.next();
    for (std::size_t i = 0; i < size; ++i)
      if (!kind_decoder<element>::decode(in, value.emplace_back())) return false;
    in.next();
    return true;
  }
};

// ============================================================================ alternatives

template <class T>
struct kind_decoder<T, codec::type_kind::optional> {
  using element = typename T::value_type;
  // null is the outer one empty, for an optional of an optional.
  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind == token_kind::null) {
      value.reset();
      in.next();
      return true;
    }
    if (!in.charge_made<element>(1, at)) return false;
    return kind_decoder<element>::decode(in, value.emplace());
  }
};

template <class T>
struct kind_decoder<T, codec::type_kind::pointer> {
  using element = typename T::element_type;
  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind == token_kind::null) {
      value.reset();
      in.next();
      return true;
    }
    if (!value) {
      if (!in.charge(codec::detail::round_up(sizeof(element), alignof(std::max_align_t)), at) ||
          !in.charge_made<element>(1, at))
        return false;
      value = std::make_unique<element>();
    }
    return kind_decoder<element>::decode(in, *value);
  }
};

// [index, value].
template <class T>
struct kind_decoder<T, codec::type_kind::variant> {
  static constexpr std::size_t alternatives = std::variant_size_v<T>;

  static bool decode(cursor& in, T& value) {
    if (!detail::expect_array(in, in.peek(), 2, "an array [index, value]")) return false;
    in.next();
    const token& index = in.peek();
    if (index.kind == token_kind::int64 && index.int64() >= 0 &&
        static_cast<std::uint64_t>(index.int64()) < alternatives) {
      in.next();
      if (!decode_alternative(in, value, static_cast<std::size_t>(index.int64()),
                              std::make_index_sequence<alternatives>{}))
        return false;
      in.next();
      return true;
    }
    if (index.kind == token_kind::int64 || index.kind == token_kind::uint64 || index.kind == token_kind::floating)
      return in.fail("variant index out of range", index);
    return in.fail_expected("a variant index", index);
  }

 private:
  // Makes alternative `chosen` and decodes into it.
  template <std::size_t... I>
  static bool decode_alternative(cursor& in, T& value, std::size_t chosen, std::index_sequence<I...>) {
    bool decoded = false;
    (void)((chosen == I &&
            (decoded = in.charge_made<std::variant_alternative_t<I, T>>(1, in.peek()) &&
                       kind_decoder<std::variant_alternative_t<I, T>>::decode(in, value.template emplace<I>()),
             true)) ||
           ...);
    return decoded;
  }
};

// ============================================================================ maps and sets

namespace detail {
// An object's key as a map's key.
template <class K, map_keys Form = map_keys_of<K>()>
struct object_key_decoder {
  static bool decode(cursor& in, const token& at, K& key) {
    if constexpr (codec::kind_of<K>() == codec::type_kind::view)
      return kind_decoder<K>::decode(in, key);  // a view's keys are only ever written: the build fails, saying so
    else
      return assign_string(in, at, in.chars(at), key);
  }
};
// Strictly decimal: no '+', no sign for an unsigned type, no spaces, within the type's range.
template <class K>
struct object_key_decoder<K, map_keys::integer> {
  using number = typename std::conditional_t<std::is_enum_v<K>, std::underlying_type<K>, std::type_identity<K>>::type;
  using wide = std::conditional_t<std::is_signed_v<number>, std::int64_t, std::uint64_t>;

  static bool decode(cursor& in, const token& at, K& key) {
    const std::string_view text = in.chars(at);
    wide parsed = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
    if (error != std::errc{} || end != text.data() + text.size() || !fits<number>(parsed))
      return in.fail("map key " + quoted(text) + ": expected an integer from " + integer_range<number>(), at);
    key = static_cast<K>(parsed);
    return true;
  }
};

// An unordered container's buckets reserved once, charged (codec/associative.hpp).
template <class T>
bool reserve_buckets(cursor& in, T& value, std::size_t size, const token& at) {
  if constexpr (requires { value.reserve(size); }) {
    if (size != 0) {
      if (!in.charge(codec::detail::bucket_allocation(size), at)) return false;
      value.reserve(size);
    }
  }
  return true;
}
}  // namespace detail

// An object, or an array of [key, value] pairs (detail::map_keys_of); a key twice is an error.
template <class T>
struct kind_decoder<T, codec::type_kind::map> {
  using key_type = typename T::key_type;
  using mapped_type = typename T::mapped_type;
  static constexpr bool as_object = detail::map_keys_of<key_type>() != detail::map_keys::pair;

  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind != (as_object ? token_kind::object_begin : token_kind::array_begin))
      return in.fail_expected(as_object ? "an object" : "an array of [key, value] pairs", at);
    const std::size_t size = at.count();
    // Every node is charged before the first is made, as codec/associative.hpp does.
    if (!in.charge(size, codec::detail::map_node_allocation<typename T::value_type>(), at) ||
        !in.charge_made<key_type, mapped_type>(size, at))
      return false;
    value.clear();
    if (!detail::reserve_buckets(in, value, size, at)) return false;
    in.next();
    for (std::size_t i = 0; i < size; ++i)
      if (!decode_entry(in, value)) return false;
    in.next();
    return true;
  }

 private:
  static bool decode_entry(cursor& in, T& value) {
    const token& at = in.peek();
    key_type key{};
    mapped_type mapped{};
    if constexpr (as_object) {
      if (!detail::object_key_decoder<key_type>::decode(in, at, key)) return false;
      in.next();
      if (!kind_decoder<mapped_type>::decode(in, mapped)) return false;
    } else {
      if (!detail::expect_array(in, at, 2, "a [key, value] pair")) return false;
      in.next();
      if (!kind_decoder<key_type>::decode(in, key) || !kind_decoder<mapped_type>::decode(in, mapped)) return false;
      in.next();
    }
    if (!value.emplace(std::move(key), std::move(mapped)).second) return in.fail("duplicate map key", at);
    return true;
  }
};

// An array; an element twice is an error, except in a multiset.
template <class T>
struct kind_decoder<T, codec::type_kind::set> {
  using key_type = typename T::value_type;
  static constexpr bool unique = requires(T & value) { value.emplace(std::declval<key_type>()).second; };

  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind != token_kind::array_begin) return in.fail_expected("an array", at);
    const std::size_t size = at.count();
    if (!in.charge(size, codec::detail::map_node_allocation<key_type>(), at) || !in.charge_made<key_type>(size, at))
      return false;
    value.clear();
    if (!detail::reserve_buckets(in, value, size, at)) return false;
    in.next();
    for (std::size_t i = 0; i < size; ++i) {
      const token& element = in.peek();
      key_type key{};
      if (!kind_decoder<key_type>::decode(in, key)) return false;
      if constexpr (unique) {
        if (!value.emplace(std::move(key)).second) return in.fail("duplicate set element", element);
      } else {
        value.emplace(std::move(key));
      }
    }
    in.next();
    return true;
  }
};

// ============================================================================ members

// [first, second, ...], exactly its elements.
template <class T>
struct kind_decoder<T, codec::type_kind::tuple> {
  static constexpr std::size_t size = std::tuple_size_v<T>;

  static bool decode(cursor& in, T& value) {
    if (!detail::expect_array(in, in.peek(), size)) return false;
    in.next();
    if (!decode_elements(in, value, std::make_index_sequence<size>{})) return false;
    in.next();
    return true;
  }

 private:
  template <std::size_t... I>
  static bool decode_elements([[maybe_unused]] cursor& in, [[maybe_unused]] T& value, std::index_sequence<I...>) {
    return (kind_decoder<std::tuple_element_t<I, T>>::decode(in, std::get<I>(value)) && ...);
  }
};

}  // namespace json
GEERPC_END_NAMESPACE
