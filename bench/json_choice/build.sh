#!/bin/sh
# Builds the JSON library comparison (not part of geerpc's CMake build).
# Needs Debian 12: libboost1.81-dev nlohmann-json3-dev rapidjson-dev libsimdjson-dev libjsoncpp-dev.
#   sh bench/json_choice/build.sh [outdir]      then  $outdir/json_choice bench | hostile
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-"${TMPDIR:-/tmp}/geerpc_json_choice"}
mkdir -p "$out"
CXX=${CXX:-g++}
FLAGS="-std=c++20 -O2 -Wall -Wextra -I/usr/include/jsoncpp"
$CXX $FLAGS -DJC_SIMD_NS=simd_generic -c "$here/simd_tu.cpp" -o "$out/simd_generic.o"
$CXX $FLAGS -march=haswell -DJC_SIMD_NS=simd_haswell -c "$here/simd_tu.cpp" -o "$out/simd_haswell.o"
$CXX $FLAGS -Wno-mismatched-new-delete -c "$here/json_choice.cpp" -o "$out/json_choice.o"
$CXX -o "$out/json_choice" "$out/json_choice.o" "$out/simd_generic.o" "$out/simd_haswell.o" -lsimdjson -ljsoncpp
echo "built $out/json_choice"
