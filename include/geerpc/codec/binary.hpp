// geerpc: the binary codec. Fields in declaration order, no names or tags: fixed-size little-endian
// scalars, LEB128 varint counts, one-byte tags. The format is specified in docs/protocol.md.
//
// Decoding trusts nothing: every read is bounds-checked, every count is checked against what the
// remaining bytes could hold before anything is allocated, every allocation is charged against a
// memory budget proportional to the input before it is made, and trailing bytes are an error.
#pragma once

#include <bit>
#include <boost/pfr/core.hpp>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "../config.hpp"
#include "../detail/byte_order.hpp"
#include "../detail/integer_cast.hpp"
#include "fingerprint.hpp"
#include "serializable.hpp"
#include "type_kind.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {

// Appends encoded bytes to a caller-owned buffer, so buffers can be reused across calls.
class writer {
 public:
  explicit writer(std::vector<std::byte>& out) noexcept : out_(out) {}

  static constexpr std::size_t small_write = 8;

  // A string or block is appended by insert, not resize and copy: a resize would first zero-fill
  // the bytes the copy then overwrites, a second pass over every string and byte array encoded. A
  // few bytes (a number, a count) go one by one: push_back's inline path is a store while the
  // buffer has room, where insert and resize are calls that cost more than the bytes.
  void raw(const void* data, std::size_t size) {
    const auto* bytes = static_cast<const std::byte*>(data);
    if (size <= small_write) {
      for (std::size_t i = 0; i < size; ++i) out_.push_back(bytes[i]);
      return;
    }
    out_.insert(out_.end(), bytes, bytes + size);
  }
  template <class U>
  void fixed(U value) {
    std::byte bytes[sizeof(U)];
    geerpc::detail::store_le(bytes, value);
    for (const std::byte b : bytes) out_.push_back(b);
  }
  void varint(std::uint64_t value) {
    std::byte bytes[10];
    std::size_t n = 0;
    while (value >= 0x80) {
      bytes[n++] = static_cast<std::byte>((value & 0x7f) | 0x80);
      value >>= 7;
    }
    bytes[n++] = static_cast<std::byte>(value);
    raw(bytes, n);
  }

 private:
  std::vector<std::byte>& out_;
};

// The memory a decode may allocate, unless its caller sets another limit: 16 bytes for each byte of
// input, plus 64 KiB (docs/protocol.md, 5.6). A value costs more in memory than on the wire: an
// empty string or vector is one byte there but 24 or 32 here, a map entry carries a node of 16 to
// 32 bytes besides its key and value, and an empty optional<array<char, 4096>> in a vector is one
// byte that costs 4097. Ordinary values cost 1x (bytes, numbers, long strings) to about 12x (maps
// with short keys, lists of short words) their encoding; 16x lets them through while refusing bulk
// empties, the shape of an attack, whose cost would otherwise have no bound but the count check's
// (a 64 KiB body took about 480 MiB). The 64 KiB lets a small body through whatever its shape.
inline constexpr std::size_t memory_per_input_byte = 16;
inline constexpr std::size_t memory_base = std::size_t{64} << 10;

constexpr std::size_t default_memory_limit(std::size_t input_size) noexcept {
  constexpr std::size_t most = std::numeric_limits<std::size_t>::max();
  return input_size > (most - memory_base) / memory_per_input_byte ? most
                                                                   : input_size * memory_per_input_byte + memory_base;
}

// The reason a decode fails when the value would pass its memory limit. decode_status::message()
// gives the numbers.
inline constexpr char memory_limit_reason[] = "decoded value would need more memory than its limit";

// Reads from a span; the first failure records why and where (the first byte of the value that
// could not be decoded), and every later read fails too, so a decoder can run on and check once.
// It also keeps the decode's memory budget: what the decoder may still allocate.
class reader {
 public:
  explicit reader(std::span<const std::byte> in) noexcept : reader(in, default_memory_limit(in.size())) {}
  reader(std::span<const std::byte> in, std::size_t memory_limit) noexcept
      : begin_(in.data()),
        pos_(in.data()),
        end_(in.data() + in.size()),
        memory_left_(memory_limit),
        memory_limit_(memory_limit) {}

  std::size_t remaining() const noexcept { return static_cast<std::size_t>(end_ - pos_); }
  bool ok() const noexcept { return error_ == nullptr; }
  const char* error() const noexcept { return error_; }
  std::size_t error_offset() const noexcept { return error_offset_; }
  std::size_t memory_limit() const noexcept { return memory_limit_; }
  std::size_t memory_left() const noexcept { return memory_left_; }

  bool fail(const char* why) noexcept { return fail_at(why, pos_); }
  // Fails naming `at`, the first byte of the value found bad.
  bool fail_at(const char* why, const std::byte* at) noexcept {
    if (error_ == nullptr) {
      error_ = why;
      error_offset_ = static_cast<std::size_t>(at - begin_);
    }
    pos_ = end_;
    return false;
  }
  const std::byte* position() const noexcept { return pos_; }
  bool raw(void* out, std::size_t size) noexcept {
    if (size > remaining()) return fail("truncated input");
    if (size != 0) std::memcpy(out, pos_, size);
    pos_ += size;
    return true;
  }
  // A view of the next `size` bytes, consumed.
  const std::byte* take(std::size_t size) noexcept {
    if (size > remaining()) {
      fail("truncated input");
      return nullptr;
    }
    const std::byte* at = pos_;
    pos_ += size;
    return at;
  }
  template <class U>
  bool fixed(U& value) noexcept {
    const std::byte* at = take(sizeof(U));
    if (at == nullptr) return false;
    value = geerpc::detail::load_le<U>(at);
    return true;
  }
  bool varint(std::uint64_t& value) noexcept {
    const std::byte* start = pos_;
    value = 0;
    for (unsigned shift = 0;; shift += 7) {
      if (pos_ == end_) return fail_at("truncated varint", start);
      const auto byte = static_cast<std::uint8_t>(*pos_++);
      // The 10th byte holds bit 63 only: anything more is an overflow (or an 11th byte).
      if (shift == 63 && byte > 1) return fail_at("varint overflows 64 bits", start);
      value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
  }
  // A count of elements that each take at least `min_element_size` bytes: refused when the rest of
  // the input could not hold that many, so no peer can claim more elements than it sent.
  bool count(std::size_t& n, std::size_t min_element_size) noexcept {
    const std::byte* start = pos_;
    std::uint64_t value = 0;
    if (!varint(value)) return false;
    if (value > remaining() / min_element_size) return fail_at("element count exceeds the remaining bytes", start);
    n = geerpc::detail::integer_cast<std::size_t>(value);
    return true;
  }

  // Charges `bytes` the decoder is about to allocate for the value starting at `at`; fails naming
  // `at` when the budget cannot pay. A subtraction and a compare: this runs on every allocation.
  bool charge(std::size_t bytes, const std::byte* at) noexcept {
    if (bytes > memory_left_) return fail_at(memory_limit_reason, at);
    memory_left_ -= bytes;
    return true;
  }
  // Charges `n` elements of `size` bytes each (size > 0), without overflowing the product.
  bool charge(std::size_t n, std::size_t size, const std::byte* at) noexcept {
    if (n > memory_left_ / size) return fail_at(memory_limit_reason, at);
    memory_left_ -= n * size;
    return true;
  }

 private:
  const std::byte* begin_;
  const std::byte* pos_;
  const std::byte* end_;
  const char* error_ = nullptr;
  std::size_t error_offset_ = 0;
  std::size_t memory_left_;
  std::size_t memory_limit_;
};

template <class T>
void encode_value(writer& out, const T& value);
template <class T>
bool decode_value(reader& in, T& value);

namespace detail {
template <class T>
constexpr bool is_bool_like() {
  if constexpr (std::is_enum_v<T>)
    return std::is_same_v<std::underlying_type_t<T>, bool>;
  else
    return std::is_same_v<T, bool>;
}

// Elements whose every bit pattern is a valid value: a vector of them is copied as one block.
template <class T>
inline constexpr bool is_memcpy_array_element = (std::is_integral_v<T> || std::is_same_v<T, float> ||
                                                 std::is_same_v<T, double> || std::is_enum_v<T>)&&!is_bool_like<T>();

// Whether decoding a T costs about what copying its encoding does: numbers, strings, vectors copied
// as one block, and optionals, arrays, tuples and aggregates of those. Anything else (a map, a
// vector of strings or of structs) works and may allocate per element, and can take many times
// longer than a copy of its bytes.
template <class T>
constexpr bool decodes_like_copy();

template <class Tuple, std::size_t... I>
constexpr bool all_decode_like_copy(std::index_sequence<I...>) {
  return (true && ... && decodes_like_copy<std::tuple_element_t<I, Tuple>>());
}
template <class T, std::size_t... I>
constexpr bool all_fields_decode_like_copy(std::index_sequence<I...>) {
  return (true && ... && decodes_like_copy<boost::pfr::tuple_element_t<I, T>>());
}

template <class T>
constexpr bool decodes_like_copy() {
  constexpr type_kind kind = kind_of<T>();
  if constexpr (kind == type_kind::boolean || kind == type_kind::integer || kind == type_kind::floating ||
                kind == type_kind::enumeration || kind == type_kind::string || kind == type_kind::duration ||
                kind == type_kind::time_point || kind == type_kind::bitset)
    return true;
  else if constexpr (kind == type_kind::vector)
    return is_memcpy_array_element<typename T::value_type>;
  else if constexpr (kind == type_kind::array || kind == type_kind::optional)
    return decodes_like_copy<typename T::value_type>();
  else if constexpr (kind == type_kind::tuple)
    return all_decode_like_copy<T>(std::make_index_sequence<std::tuple_size_v<T>>{});
  else if constexpr (kind == type_kind::aggregate)
    return all_fields_decode_like_copy<T>(std::make_index_sequence<boost::pfr::tuple_size_v<T>>{});
  else
    return false;
}

// What the decoder charges for each allocation, an upper bound of what libstdc++ and libc++ ask of
// the allocator (the fuzzer checks it by counting): the budget must pay for the memory really taken.

// A string's buffer for `size` characters: size + 1 rounded up to 16 (libc++), or at least 31
// (libstdc++, which doubles its 15-character inline capacity on the first growth).
constexpr std::size_t string_allocation(std::size_t size) noexcept { return size + 16; }

// A vector's buffer is sizeof(T) for each element, reserved exactly; vector<bool>'s packs bits into
// words.
constexpr std::size_t bool_vector_allocation(std::size_t size) noexcept {
  constexpr std::size_t word_bits = CHAR_BIT * sizeof(std::size_t);
  return (size + word_bits - 1) / word_bits * sizeof(std::size_t);
}

constexpr std::size_t round_up(std::size_t size, std::size_t alignment) noexcept {
  return (size + alignment - 1) / alignment * alignment;
}

// One node of a std::map (three links and a colour) or std::unordered_map (a link and perhaps a
// cached hash): four pointers' room besides the key and value covers both.
template <class Value>
constexpr std::size_t map_node_allocation() noexcept {
  return round_up(4 * sizeof(void*), alignof(Value)) + round_up(sizeof(Value), alignof(void*));
}

// A node of a std::list (two links) or std::set (three links and a colour): as a map's.
template <class Value>
constexpr std::size_t list_node_allocation() noexcept {
  return map_node_allocation<Value>();
}

// What a std::deque of `size` elements made at once takes: its blocks and its map of block
// pointers. libstdc++ makes blocks of 512 bytes (or one element, if larger) and a map of at least 8
// pointers, 2 more than the blocks; libc++ makes blocks of 4096 bytes (or 16 elements, if those
// are larger than 256 bytes each).
template <class Value>
constexpr std::size_t deque_allocation(std::size_t size) noexcept {
#if defined(_LIBCPP_VERSION)
  constexpr std::size_t per_block = sizeof(Value) < 256 ? 4096 / sizeof(Value) : 16;
  const std::size_t blocks = size / per_block + 1;
  return blocks * per_block * sizeof(Value) + 2 * (blocks + 8) * sizeof(void*);
#else
  constexpr std::size_t per_block = sizeof(Value) < 512 ? 512 / sizeof(Value) : 1;
  const std::size_t blocks = size / per_block + 1;
  return blocks * per_block * sizeof(Value) + (blocks + 8) * sizeof(void*);
#endif
}

// What default-constructing a T allocates: nothing, except where a std::deque is made (libstdc++
// gives a new deque a map and one block; a variant is made holding its first alternative). Whoever
// makes values to decode into (a container its elements, a variant its alternative, a unique_ptr
// what it owns) charges for that too, so that a body of empty deques costs what it takes.
template <class T>
constexpr std::size_t default_allocation() noexcept;

template <class Tuple, std::size_t... I>
constexpr std::size_t elements_default_allocation(std::index_sequence<I...>) noexcept {
  return (std::size_t{0} + ... + default_allocation<std::tuple_element_t<I, Tuple>>());
}
template <class T, std::size_t... I>
constexpr std::size_t fields_default_allocation(std::index_sequence<I...>) noexcept {
  return (std::size_t{0} + ... + default_allocation<boost::pfr::tuple_element_t<I, T>>());
}

template <class T>
constexpr std::size_t default_allocation() noexcept {
  constexpr type_kind kind = kind_of<T>();
  if constexpr (kind == type_kind::sequence && requires(T & d) { d.shrink_to_fit(); })
    return deque_allocation<typename T::value_type>(0);
  else if constexpr (kind == type_kind::array)
    return std::tuple_size_v<T> * default_allocation<typename T::value_type>();
  else if constexpr (kind == type_kind::tuple)
    return elements_default_allocation<T>(std::make_index_sequence<std::tuple_size_v<T>>{});
  else if constexpr (kind == type_kind::aggregate)
    return fields_default_allocation<T>(std::make_index_sequence<boost::pfr::tuple_size_v<T>>{});
  else if constexpr (kind == type_kind::variant)
    return default_allocation<std::variant_alternative_t<0, T>>();
  else
    return 0;
}

// Charges what making `count` of each of Made allocates by default (nothing, for most types).
template <class... Made>
bool charge_made(reader& in, std::size_t count, const std::byte* at) noexcept {
  constexpr std::size_t each = (std::size_t{0} + ... + default_allocation<Made>());
  if constexpr (each == 0)
    return true;
  else
    return in.charge(count, each, at);
}

// A deque's elements are charged with its blocks: the count check bounds `size` by the input, so
// this cannot overflow for a body that fits in memory; it is still checked.
template <class Value>
constexpr std::size_t deque_limit() noexcept {
  return std::numeric_limits<std::size_t>::max() / 2 / (sizeof(Value) + sizeof(void*));
}

// An unordered_map's bucket array after reserve(size): a pointer per bucket, and the bucket count
// is the next prime at or above `size` (from libstdc++'s table, or exactly), at most 2 * size + 2.
constexpr std::size_t bucket_allocation(std::size_t size) noexcept { return (2 * size + 2) * sizeof(void*); }
}  // namespace detail

namespace detail {
// Makes alternative `index` of the variant and decodes into it.
template <class V, std::size_t... I>
bool decode_alternative(reader& in, V& value, std::size_t index, std::index_sequence<I...>) {
  bool decoded = false;
  (void)((index == I && (decoded = charge_made<std::variant_alternative_t<I, V>>(in, 1, in.position()) &&
                                   decode_value(in, value.template emplace<I>()),
                         true)) ||
         ...);
  return decoded;
}
}  // namespace detail

template <class T>
void encode_value(writer& out, const T& value) {
  constexpr type_kind kind = kind_of<T>();
  if constexpr (kind == type_kind::boolean) {
    out.fixed(static_cast<std::uint8_t>(value ? 1 : 0));
  } else if constexpr (kind == type_kind::integer || kind == type_kind::floating || kind == type_kind::enumeration) {
    out.fixed(std::bit_cast<geerpc::detail::bits_of<T>>(value));
  } else if constexpr (kind == type_kind::string) {
    out.varint(value.size());
    out.raw(value.data(), value.size());
  } else if constexpr (kind == type_kind::vector || kind == type_kind::array) {
    using element = typename T::value_type;
    if constexpr (kind == type_kind::vector) out.varint(value.size());
    if constexpr (detail::is_memcpy_array_element<element> && std::endian::native == std::endian::little &&
                  kind == type_kind::vector && !std::is_same_v<element, bool>) {
      out.raw(value.data(), value.size() * sizeof(element));
    } else {
      for (const auto& item : value) encode_value(out, static_cast<const element&>(item));
    }
  } else if constexpr (kind == type_kind::optional) {
    out.fixed(static_cast<std::uint8_t>(value.has_value() ? 1 : 0));
    if (value) encode_value(out, *value);
  } else if constexpr (kind == type_kind::map) {
    out.varint(value.size());
    for (const auto& [key, mapped] : value) {
      encode_value(out, key);
      encode_value(out, mapped);
    }
  } else if constexpr (kind == type_kind::tuple) {
    std::apply([&](const auto&... items) { (encode_value(out, items), ...); }, value);
  } else if constexpr (kind == type_kind::aggregate) {
    boost::pfr::for_each_field(value, [&](const auto& field) { encode_value(out, field); });
  } else if constexpr (kind == type_kind::duration) {
    encode_value(out, value.count());
  } else if constexpr (kind == type_kind::time_point) {
    encode_value(out, value.time_since_epoch().count());
  } else if constexpr (kind == type_kind::variant) {
    // A variant left valueless by an exception has no value to send.
    if (value.valueless_by_exception()) throw std::bad_variant_access();
    out.varint(value.index());
    std::visit([&](const auto& alternative) { encode_value(out, alternative); }, value);
  } else if constexpr (kind == type_kind::set || kind == type_kind::sequence) {
    out.varint(value.size());
    for (const auto& item : value) encode_value(out, item);
  } else if constexpr (kind == type_kind::pointer) {
    out.fixed(static_cast<std::uint8_t>(value ? 1 : 0));
    if (value) encode_value(out, *value);
  } else if constexpr (kind == type_kind::bitset) {
    // Bit i in byte i / 8, at bit i % 8: the low bits first.
    for (std::size_t at = 0; at < value.size(); at += 8) {
      unsigned byte = 0;
      for (std::size_t bit = 0; bit < 8 && at + bit < value.size(); ++bit)
        if (value.test(at + bit)) byte |= 1u << bit;
      out.fixed(static_cast<std::uint8_t>(byte));
    }
  } else if constexpr (kind == type_kind::view) {
    if constexpr (std::is_same_v<T, std::string_view>) {
      out.varint(value.size());
      out.raw(value.data(), value.size());
    } else {  // a span, as the vector it views
      using element = std::remove_const_t<typename T::element_type>;
      out.varint(value.size());
      if constexpr (detail::is_memcpy_array_element<element> && std::endian::native == std::endian::little)
        out.raw(value.data(), value.size() * sizeof(element));
      else
        for (const auto& item : value) encode_value(out, static_cast<const element&>(item));
    }
  } else if constexpr (kind == type_kind::custom) {
    encode_value(out, serializer<T>::to_wire(value));
  }
  // Anything else was refused by require_serializable where T entered geerpc.
}

template <class T>
bool decode_value(reader& in, T& value) {
  constexpr type_kind kind = kind_of<T>();
  if constexpr (kind == type_kind::boolean || (kind == type_kind::enumeration && detail::is_bool_like<T>())) {
    const std::byte* at = in.position();
    std::uint8_t byte = 0;
    if (!in.fixed(byte)) return false;
    if (byte > 1) return in.fail_at("bool is neither 0 nor 1", at);
    value = static_cast<T>(byte == 1);
    return true;
  } else if constexpr (kind == type_kind::integer || kind == type_kind::floating || kind == type_kind::enumeration) {
    geerpc::detail::bits_of<T> bits{};
    if (!in.fixed(bits)) return false;
    value = std::bit_cast<T>(bits);
    return true;
  } else if constexpr (kind == type_kind::string) {
    const std::byte* start = in.position();
    std::size_t size = 0;
    if (!in.count(size, 1)) return false;
    if (size > value.capacity()) {
      if (!in.charge(detail::string_allocation(size), start)) return false;
      // Grown from a buffer of its own, a string may take twice that buffer; from the inline one,
      // what was charged. So a heap buffer is let go first (swapped away: move-assigning an empty
      // string would keep it).
      T empty(value.get_allocator());
      if (value.capacity() > empty.capacity()) value.swap(empty);
    }
    const std::byte* at = in.take(size);
    if (at == nullptr) return false;
    value.assign(reinterpret_cast<const char*>(at), size);
    return true;
  } else if constexpr (kind == type_kind::vector) {
    using element = typename T::value_type;
    const std::byte* start = in.position();
    std::size_t size = 0;
    if (!in.count(size, min_encoded_size<element>())) return false;
    // A buffer is charged, then reserved exactly, so that growth never takes more than was charged.
    if constexpr (std::is_same_v<element, bool>) {
      value.clear();
      if (size > value.capacity()) {
        if (!in.charge(detail::bool_vector_allocation(size), start)) return false;
        value.reserve(size);
      }
      for (std::size_t i = 0; i < size; ++i) {
        bool item = false;
        if (!decode_value(in, item)) return false;
        value.push_back(item);
      }
      return true;
    } else {
      constexpr bool bulk = detail::is_memcpy_array_element<element> && std::endian::native == std::endian::little;
      if (size > value.capacity()) {
        if (!in.charge(size, sizeof(element), start)) return false;
        value.clear();
        value.reserve(size);  // exactly `size` elements (growth by resize could take more)
      }
      if constexpr (bulk) {
        value.resize(size);
        return in.raw(value.data(), size * sizeof(element));
      } else {
        if (!detail::charge_made<element>(in, size, start)) return false;
        value.clear();
        // Each element is decoded where it will stay: a large one is never copied.
        for (std::size_t i = 0; i < size; ++i)
          if (!decode_value(in, value.emplace_back())) return false;
        return true;
      }
    }
  } else if constexpr (kind == type_kind::array) {
    for (auto& item : value)
      if (!decode_value(in, item)) return false;
    return true;
  } else if constexpr (kind == type_kind::optional) {
    const std::byte* at = in.position();
    std::uint8_t tag = 0;
    if (!in.fixed(tag)) return false;
    if (tag > 1) return in.fail_at("optional tag is neither 0 nor 1", at);
    if (tag == 0) {
      value.reset();
      return true;
    }
    if (!detail::charge_made<typename T::value_type>(in, 1, at)) return false;
    return decode_value(in, value.emplace());
  } else if constexpr (kind == type_kind::map) {
    using key_type = typename T::key_type;
    using mapped_type = typename T::mapped_type;
    const std::byte* start = in.position();
    std::size_t size = 0;
    if (!in.count(size, min_encoded_size<key_type>() + min_encoded_size<mapped_type>())) return false;
    // Every node is charged before the first is made (a duplicate key's node is made, then freed).
    if (!in.charge(size, detail::map_node_allocation<typename T::value_type>(), start) ||
        !detail::charge_made<key_type, mapped_type>(in, size, start))
      return false;
    value.clear();
    if constexpr (requires { value.reserve(size); }) {
      // Reserved once, so that the table never grows (and holds two bucket arrays) while filling.
      if (size != 0) {
        if (!in.charge(detail::bucket_allocation(size), start)) return false;
        value.reserve(size);
      }
    }
    for (std::size_t i = 0; i < size; ++i) {
      const std::byte* at = in.position();
      key_type key{};
      mapped_type mapped{};
      if (!decode_value(in, key) || !decode_value(in, mapped)) return false;
      if (!value.emplace(std::move(key), std::move(mapped)).second) return in.fail_at("duplicate map key", at);
    }
    return true;
  } else if constexpr (kind == type_kind::tuple) {
    return std::apply([&](auto&... items) { return (decode_value(in, items) && ...); }, value);
  } else if constexpr (kind == type_kind::aggregate) {
    bool ok = true;
    boost::pfr::for_each_field(value, [&](auto& field) { ok = ok && decode_value(in, field); });
    return ok;
  } else if constexpr (kind == type_kind::duration) {
    typename T::rep count{};
    if (!decode_value(in, count)) return false;
    value = T(count);
    return true;
  } else if constexpr (kind == type_kind::time_point) {
    typename T::rep count{};
    if (!decode_value(in, count)) return false;
    value = T(typename T::duration(count));
    return true;
  } else if constexpr (kind == type_kind::variant) {
    const std::byte* at = in.position();
    std::uint64_t index = 0;
    if (!in.varint(index)) return false;
    if (index >= std::variant_size_v<T>) return in.fail_at("variant index out of range", at);
    return detail::decode_alternative(in, value, geerpc::detail::integer_cast<std::size_t>(index),
                                      std::make_index_sequence<std::variant_size_v<T>>{});
  } else if constexpr (kind == type_kind::set) {
    using key_type = typename T::value_type;
    const std::byte* start = in.position();
    std::size_t size = 0;
    if (!in.count(size, min_encoded_size<key_type>())) return false;
    if (!in.charge(size, detail::map_node_allocation<key_type>(), start) ||
        !detail::charge_made<key_type>(in, size, start))
      return false;
    value.clear();
    if constexpr (requires { value.reserve(size); }) {
      if (size != 0) {
        if (!in.charge(detail::bucket_allocation(size), start)) return false;
        value.reserve(size);
      }
    }
    constexpr bool unique = requires { value.emplace(std::declval<key_type>()).second; };
    for (std::size_t i = 0; i < size; ++i) {
      const std::byte* at = in.position();
      key_type key{};
      if (!decode_value(in, key)) return false;
      if constexpr (unique) {
        if (!value.emplace(std::move(key)).second) return in.fail_at("duplicate set element", at);
      } else {
        value.emplace(std::move(key));
      }
    }
    return true;
  } else if constexpr (kind == type_kind::sequence) {
    using element = typename T::value_type;
    const std::byte* start = in.position();
    std::size_t size = 0;
    if (!in.count(size, min_encoded_size<element>())) return false;
    if constexpr (requires {
                    value.push_front(std::declval<element>());
                    value.shrink_to_fit();
                  }) {  // a deque
      if (size > detail::deque_limit<element>() || !in.charge(detail::deque_allocation<element>(size), start) ||
          !detail::charge_made<element>(in, size, start))
        return in.fail_at(memory_limit_reason, start);
      // Made at its size in one go, so that it never grows block by block and map by map.
      T filled(size, value.get_allocator());
      for (auto& item : filled)
        if (!decode_value(in, item)) return false;
      value.swap(filled);
      return true;
    } else {  // a list: a node per element
      if (!in.charge(size, detail::list_node_allocation<element>(), start) ||
          !detail::charge_made<element>(in, size, start))
        return false;
      value.clear();
      for (std::size_t i = 0; i < size; ++i)
        if (!decode_value(in, value.emplace_back())) return false;
      return true;
    }
  } else if constexpr (kind == type_kind::pointer) {
    using element = typename T::element_type;
    const std::byte* at = in.position();
    std::uint8_t tag = 0;
    if (!in.fixed(tag)) return false;
    if (tag > 1) return in.fail_at("unique_ptr tag is neither 0 nor 1", at);
    if (tag == 0) {
      value.reset();
      return true;
    }
    if (!value) {
      if (!in.charge(detail::round_up(sizeof(element), alignof(std::max_align_t)), at) ||
          !detail::charge_made<element>(in, 1, at))
        return false;
      value = std::make_unique<element>();
    }
    return decode_value(in, *value);
  } else if constexpr (kind == type_kind::bitset) {
    constexpr std::size_t bits = T{}.size();
    const std::byte* at = in.take((bits + 7) / 8);
    if (at == nullptr) return false;
    value.reset();
    for (std::size_t i = 0; i < (bits + 7) / 8; ++i) {
      const auto byte = static_cast<unsigned>(at[i]);
      for (std::size_t bit = 0; bit < 8; ++bit) {
        if ((byte & (1u << bit)) == 0) continue;
        if (i * 8 + bit >= bits) return in.fail_at("bitset has a bit set beyond its size", at + i);
        value.set(i * 8 + bit);
      }
    }
    return true;
  } else if constexpr (kind == type_kind::view) {
    return view_cannot_be_decoded<T>::value;
  } else if constexpr (kind == type_kind::custom) {
    const std::byte* at = in.position();
    if (!detail::charge_made<typename serializer<T>::wire_type>(in, 1, at)) return false;
    typename serializer<T>::wire_type wire{};
    if (!decode_value(in, wire)) return false;
    try {
      value = serializer<T>::from_wire(std::move(wire));
    } catch (const std::exception&) {
      return in.fail_at("value refused by its geerpc::codec::serializer", at);
    }
    return true;
  } else {
    return false;  // refused at compile time by require_serializable
  }
}

// Why a decode failed: a static description and the byte offset where it was noticed; and the
// memory limit the decode ran under, for the message of a value that would have passed it.
struct decode_status {
  const char* error = nullptr;
  std::size_t offset = 0;
  std::size_t memory_limit = 0;
  std::size_t input_size = 0;

  explicit operator bool() const noexcept { return error == nullptr; }
  std::string message() const {
    if (error == nullptr) return "ok";
    if (error != memory_limit_reason) return std::string(error) + " at byte " + std::to_string(offset);
    const std::string limit = memory_limit == default_memory_limit(input_size)
                                  ? "limit: " + std::to_string(memory_per_input_byte) + " x " +
                                        std::to_string(input_size) + " input bytes + " + std::to_string(memory_base)
                                  : std::string("limit set by the caller");
    return "decoded value would need more than " + std::to_string(memory_limit) + " bytes of memory (" + limit +
           ") at byte " + std::to_string(offset);
  }
};

}  // namespace codec

// The codec policy geerpc uses by default; its id travels in the handshake so that a server can
// refuse a codec it does not speak. A codec is any type with this shape.
struct binary_codec {
  static constexpr std::uint8_t id = 1;
  static constexpr const char* name = "binary";

  template <class T>
  static void encode(const T& value, std::vector<std::byte>& out) {
    codec::require_serializable<T>();
    if constexpr (codec::is_serializable_v<T>) {
      codec::writer w(out);
      codec::encode_value(w, value);
    }
  }

  // The type fingerprint of a call taking Arguments (a std::tuple) and returning Result, sent with
  // each request so that the server refuses a call whose types are not its handler's
  // (codec/fingerprint.hpp). A codec without this member sends none, and no check is made.
  template <class Arguments, class Result>
  static constexpr std::uint32_t fingerprint = codec::fingerprint<Arguments, Result>();

  // Whether a T decodes about as fast as its bytes copy (codec::detail::decodes_like_copy): a client
  // then decodes a reply straight from its receive buffer, instead of copying it out for the caller.
  template <class T>
  static constexpr bool cheap_to_decode = codec::detail::decodes_like_copy<T>();

  // Decodes exactly `bytes` into `value`: a short input, a bad value or bytes left over all fail,
  // and so does a value whose decoding would allocate more than codec::default_memory_limit of
  // the input's size (16 bytes per input byte + 64 KiB).
  template <class T>
  static codec::decode_status decode(std::span<const std::byte> bytes, T& value) {
    return decode(bytes, value, codec::default_memory_limit(bytes.size()));
  }

  // The same, allocating at most `max_memory` bytes (the heap memory the value holds; the object
  // `value` itself is the caller's).
  template <class T>
  static codec::decode_status decode(std::span<const std::byte> bytes, T& value, std::size_t max_memory) {
    codec::require_serializable<T>();
    codec::reader r(bytes, max_memory);
    if (codec::decode_value(r, value) && r.remaining() != 0) r.fail("trailing bytes after the value");
    return {r.error(), r.error_offset(), r.memory_limit(), bytes.size()};
  }
};

GEERPC_END_NAMESPACE
