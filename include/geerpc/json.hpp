// geerpc: the JSON codec (docs/protocol.md section 8), for programs that link geerpc::json (CMake)
// or Boost.JSON's compiled library. A server that speaks it beside the binary codec:
//
//   geerpc::basic_server<geerpc::threaded, geerpc::codecs<geerpc::binary_codec, geerpc::json_codec>> server;
//
// and a client that calls through it:
//
//   auto client = geerpc::dial<geerpc::threaded, geerpc::json_codec>(address);
#pragma once

#include "geerpc.hpp"
#include "json/codec.hpp"
