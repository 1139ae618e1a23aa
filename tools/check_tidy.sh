#!/usr/bin/env bash
# Runs clang-tidy (with the repository's .clang-tidy, whose HeaderFilterRegex is the library) over
# translation units that between them include every header and instantiate every transport: the
# examples (the threaded transport, the codec over most of its types, interceptors), src/geerpc.cpp
# (the engines of all three standard transports, as geerpc::compiled builds them) and one
# behavioural test that runs every transport through the front classes (lifecycle_test). The rest
# of the tests add Catch2's macro expansions, not library code: over all of them clang-tidy took
# 12 minutes of CI's 38. Needs a build directory configured with CMAKE_EXPORT_COMPILE_COMMANDS and,
# unless it is built, CMAKE_DISABLE_PRECOMPILE_HEADERS=ON (the tests' precompiled header is made by
# the build, and clang-tidy stops where it is missing).
#   tools/check_tidy.sh BUILD_DIR
set -uo pipefail
build=${1:?usage: tools/check_tidy.sh BUILD_DIR}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tidy=$(command -v clang-tidy-14 || command -v clang-tidy)
if grep -q -- "-include-pch" "$build/compile_commands.json" && ! ls "$build"/tests/CMakeFiles/geerpc_tests.dir/cmake_pch.hxx.pch >/dev/null 2>&1; then
  echo "tools/check_tidy.sh: $build uses a precompiled header it has not built; configure it with -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON" >&2
  exit 1
fi
sources=(examples/*.cpp src/geerpc.cpp tests/lifecycle_test.cpp)
# geerpc::etcd's headers, through the cluster example, where that target is built (libcurl, nlohmann-json).
[ -f "$build/examples/CMakeFiles/cluster_node.dir/flags.make" ] && sources+=(examples/cluster/*.cpp)
# geerpc::json's headers, through its calls test, and its compiled parse and JSON-RPC translator,
# where that target is built.
[ -d "$build/tests/json" ] && sources+=(tests/json/calls_test.cpp src/json_tape.cpp src/jsonrpc_scanner.cpp src/jsonrpc_stream.cpp
                                    src/jsonrpc_client.cpp src/jsonrpc_client_session.cpp src/http_rpc.cpp)
# geerpc-call, the command-line caller, where it is built (json/raw_value.hpp through its calls).
[ -d "$build/tools/geerpc_call" ] && sources+=(tools/geerpc_call/*.cpp)
log=$(mktemp)
# -Wno-unknown-warning-option: the database may come from a GCC build with GCC-only flags.
printf '%s\n' "${sources[@]}" |
  xargs -P "$(nproc)" -I{} "$tidy" -p "$build" --quiet --extra-arg=-Wno-unknown-warning-option {} >"$log" 2>&1
status=$?
grep -v "warnings generated" "$log"
rm -f "$log"
[ "$status" -eq 0 ] && echo "clang-tidy: ${#sources[@]} files clean"
exit "$status"
