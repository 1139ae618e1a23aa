// geerpc: a server that speaks several codecs. `basic_server<Transport, codecs<binary_codec,
// json_codec>>` registers each handler once per codec, and each connection's hello chooses one
// (its codec_id, docs/protocol.md 2.1); a single codec (the default, binary_codec) is a set of one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "config.hpp"

GEERPC_BEGIN_NAMESPACE

template <class... Codecs>
struct codecs {
  static_assert(sizeof...(Codecs) >= 1, "geerpc::codecs: name at least one codec");
  static constexpr std::size_t size = sizeof...(Codecs);
};

namespace detail {

// At most this many codecs in one server: a handler's table of invokers has this many slots.
inline constexpr std::size_t max_codecs = 4;

template <class Codec>
struct codec_list {
  using type = codecs<Codec>;
};
template <class... Codecs>
struct codec_list<codecs<Codecs...>> {
  using type = codecs<Codecs...>;
};
// The codecs a server's Codec argument names, as a codecs<...>.
template <class Codec>
using codec_list_t = typename codec_list<Codec>::type;

template <class... Codecs>
constexpr bool distinct_ids() noexcept {
  constexpr std::uint8_t ids[] = {Codecs::id...};
  for (std::size_t i = 0; i < sizeof...(Codecs); ++i)
    for (std::size_t j = i + 1; j < sizeof...(Codecs); ++j)
      if (ids[i] == ids[j]) return false;
  return true;
}

// The ids and names of a server's codecs, in its order: what a hello's codec_id is looked up in.
struct codec_ids {
  std::array<std::uint8_t, max_codecs> ids{};
  std::array<const char*, max_codecs> names{};
  std::size_t size = 0;

  template <class... Codecs>
  static codec_ids of(codecs<Codecs...>) noexcept {
    static_assert(sizeof...(Codecs) <= max_codecs, "geerpc::codecs: at most 4 codecs in one server");
    static_assert(distinct_ids<Codecs...>(), "geerpc::codecs: two codecs with one id (a hello could reach one only)");
    codec_ids out;
    ((out.ids[out.size] = Codecs::id, out.names[out.size++] = Codecs::name), ...);
    return out;
  }
  // The slot of the codec with this id, or -1 when the server does not speak it.
  int slot_of(std::uint8_t id) const noexcept {
    for (std::size_t i = 0; i < size; ++i)
      if (ids[i] == id) return static_cast<int>(i);
    return -1;
  }
  // "binary (1), json (2)": what a refused hello is told the server speaks.
  std::string text() const {
    std::string out;
    for (std::size_t i = 0; i < size; ++i)
      out += (i ? ", " : "") + std::string(names[i]) + " (" + std::to_string(ids[i]) + ")";
    return out;
  }
};

}  // namespace detail
GEERPC_END_NAMESPACE
