#!/usr/bin/env bash
# Runs clang-tidy (with the repository's .clang-tidy) over the examples and the behavioural tests,
# which between them include every header. The codec, wire and std_types tests are left out: they need no
# header the others miss, and their thousands of assertions take clang-tidy minutes each. Needs a build directory
# configured with CMAKE_EXPORT_COMPILE_COMMANDS.
#   tools/check_tidy.sh BUILD_DIR
set -uo pipefail
build=${1:?usage: tools/check_tidy.sh BUILD_DIR}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tidy=$(command -v clang-tidy-14 || command -v clang-tidy)
mapfile -t sources < <(ls examples/*.cpp tests/*_test.cpp | grep -v -e codec_test -e wire_test -e std_types_test)
log=$(mktemp)
# -Wno-unknown-warning-option: the database may come from a GCC build with GCC-only flags.
printf '%s\n' "${sources[@]}" |
  xargs -P "$(nproc)" -I{} "$tidy" -p "$build" --quiet --extra-arg=-Wno-unknown-warning-option {} >"$log" 2>&1
status=$?
grep -v "warnings generated" "$log"
rm -f "$log"
[ "$status" -eq 0 ] && echo "clang-tidy: ${#sources[@]} files clean"
exit "$status"
