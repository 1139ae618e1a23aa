#!/usr/bin/env bash
# Builds the gRPC peer (grpc_tls_server, grpc_tls_client) into DIR with protoc and pkg-config.
#   bench/grpc_tls/build.sh DIR
# Exits 3, saying so, where Debian's libgrpc++-dev and protobuf-compiler-grpc are not installed;
# rebuilds only when a source is newer than the programs.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out=${1:?usage: build.sh DIR}
if ! pkg-config --exists grpc++ protobuf 2>/dev/null || ! command -v protoc >/dev/null ||
  ! command -v grpc_cpp_plugin >/dev/null; then
  echo "the gRPC peer needs libgrpc++-dev and protobuf-compiler-grpc (apt-get install them)" >&2
  exit 3
fi
sources=("$here/arith.proto" "$here/credentials.hpp" "$here/server.cpp" "$here/client.cpp" "$here/../harness.hpp")
if [ -x "$out/grpc_tls_server" ] && [ -x "$out/grpc_tls_client" ] &&
  [ -z "$(find "${sources[@]}" -newer "$out/grpc_tls_client")" ] &&
  [ -z "$(find "${sources[@]}" -newer "$out/grpc_tls_server")" ]; then
  exit 0
fi
mkdir -p "$out/gen"
protoc -I"$here" --cpp_out="$out/gen" --grpc_out="$out/gen" \
  --plugin=protoc-gen-grpc="$(command -v grpc_cpp_plugin)" "$here/arith.proto"
read -r -a flags <<<"-std=c++20 -O2 -pthread -Wall -Wextra -I$out/gen $(pkg-config --cflags grpc++ protobuf)"
read -r -a libs <<<"$(pkg-config --libs grpc++ protobuf)"
compile() { "${CXX:-g++}" "${flags[@]}" "$@"; }
# Two compiles at a time (-j2), each pair finished before the next starts.
compile -c "$out/gen/arith.pb.cc" -o "$out/arith.pb.o" &
first=$!
compile -c "$out/gen/arith.grpc.pb.cc" -o "$out/arith.grpc.pb.o"
wait "$first"
objects=("$out/arith.pb.o" "$out/arith.grpc.pb.o" "${libs[@]}")
compile "$here/server.cpp" "${objects[@]}" -o "$out/grpc_tls_server" &
first=$!
compile "$here/client.cpp" "${objects[@]}" -o "$out/grpc_tls_client"
wait "$first"
