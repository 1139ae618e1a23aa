// geerpc: json_codec, the codec policy of the JSON codec (docs/protocol.md section 8), id 2 in the
// hello: what basic_server<Transport, codecs<binary_codec, json_codec>> also speaks, and what a
// basic_client<Transport, json_codec> speaks. Calls carry no type fingerprint: JSON matches a
// struct's fields by name, so two sides' types agree field by field as their values are read.
// A server that speaks it also serves JSON-RPC streams, as Go's net/rpc/jsonrpc writes them
// (docs/protocol.md section 9), through the translator make_frame_translator() makes; and a client
// of it calls Go's net/rpc/jsonrpc servers (jsonrpc@host:port) through make_jsonrpc_client_session().
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "../net/stream_session.hpp"
#include "../server/frame_translator.hpp"
#include "decode.hpp"
#include "encode.hpp"
#include "raw_value.hpp"
#include "writer.hpp"

GEERPC_BEGIN_NAMESPACE

struct json_codec {
  static constexpr std::uint8_t id = 2;
  static constexpr const char* name = "json";

  // Appends the JSON text of `value`; throws json::encode_error for a value JSON cannot carry.
  template <class T>
  static void encode(const T& value, std::vector<std::byte>& out) {
    json::encode(value, out);
  }

  // A call's arguments: one JSON array, `[a, b]` (one argument too: `[a]`, none: `[]`).
  template <class... A>
  static void encode_arguments(std::vector<std::byte>& out, const A&... arguments) {
    (codec::require_serializable<A>(), ...);
    json::writer w(out);
    w.begin_array();
    std::size_t written = 0;
    ((written++ != 0 ? w.comma() : void(), json::encode_value(w, arguments)), ...);
    w.end_array();
  }

  // A dynamic call's arguments (json/raw_value.hpp): the array they already are, checked, as it is.
  static void encode_arguments(std::vector<std::byte>& out, const json::raw_arguments& arguments) {
    json::writer w(out);
    json::encode_value(w, arguments);
  }

  template <class T>
  static json::decode_status decode(std::span<const std::byte> text, T& value) {
    return json::decode(text, value);
  }
  // A dynamic call's result: the value's text; empty for the empty body of a method that returns nothing.
  static json::decode_status decode(std::span<const std::byte> text, json::raw_value& value) {
    if (text.empty()) {
      value.text.clear();
      return {};
    }
    return json::decode(text, value);
  }

  // A handler's arguments from the array encode_arguments writes: a handler of one argument takes
  // its only element, one of several their tuple (whose JSON is that array), one of none `[]`.
  template <std::size_t Arity, class T>
  static json::decode_status decode_arguments(std::span<const std::byte> text, T& arguments) {
    if constexpr (Arity == 1)
      return json::decode_only_element(text, arguments);
    else
      return json::decode(text, arguments);
  }

  // A connection whose first byte is `{` speaks JSON-RPC: basic_server finds these members among its
  // codecs (server/frame_translator.hpp). The translator is compiled in geerpc::json
  // (src/jsonrpc_stream.cpp).
  static constexpr char stream_first_byte = '{';
  static std::unique_ptr<detail::frame_translator> make_frame_translator(const detail::frame_translator_terms& terms);

  // A client dialing jsonrpc@host:port speaks JSON-RPC 1.0 to a Go net/rpc server through this
  // session on its socket `fd` (json/jsonrpc_client.hpp; docs/protocol.md 9.6): try_dial finds it
  // here, so that only a client of this codec can. `where` begins its errors ("rpc client:
  // jsonrpc@host:port"). Compiled in geerpc::json (src/jsonrpc_client_session.cpp).
  static std::unique_ptr<net::stream_session> make_jsonrpc_client_session(int fd, std::string_view where);

  // A POST /rpc on the server's port (JSON-RPC 2.0 over HTTP, docs/protocol.md section 11): the
  // translator of its body (src/http_rpc.cpp), which the HTTP door hands the connection to.
  static std::unique_ptr<detail::frame_translator> make_http_rpc_translator(const detail::http_rpc_terms& terms);
};

GEERPC_END_NAMESPACE
