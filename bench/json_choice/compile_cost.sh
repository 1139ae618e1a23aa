#!/bin/sh
# Seconds to compile each ct/*.cpp with g++ -std=c++20 -O2 -c, least of 3 (sequential: -j1).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
for f in "$here"/ct/*.cpp; do
  best=
  for i in 1 2 3; do
    t0=$(date +%s.%N)
    ${CXX:-g++} -std=c++20 -O2 -I/usr/include/jsoncpp -c "$f" -o "$tmp/x.o"
    t=$(echo "$(date +%s.%N) - $t0" | bc)
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
  done
  printf '%-22s %6.2f s  %5d KiB .o\n' "$(basename "$f" .cpp)" "$best" $(( $(stat -c %s "$tmp/x.o") / 1024 ))
done
rm -rf "$tmp"
