#!/usr/bin/env bash
# Runs clang-tidy (with the repository's .clang-tidy) over the examples and the behavioural tests,
# which between them include every header. The codec and wire tests are left out: they add no
# header and their thousands of assertions take clang-tidy minutes each. Needs a build directory
# configured with CMAKE_EXPORT_COMPILE_COMMANDS.
#   tools/check_tidy.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: tools/check_tidy.sh BUILD_DIR}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tidy=$(command -v clang-tidy-14 || command -v clang-tidy)
sources=(examples/*.cpp $(ls tests/*_test.cpp | grep -v -e codec_test -e wire_test))
# -Wno-unknown-warning-option: the database may come from a GCC build with GCC-only flags.
printf '%s\n' "${sources[@]}" |
  xargs -P "$(nproc)" -I{} "$tidy" -p "$build" --quiet --extra-arg=-Wno-unknown-warning-option {} 2>&1 |
  grep -v "warnings generated" || true
# xargs hides clang-tidy's status behind grep; run once more for a verdict on any failure.
printf '%s\n' "${sources[@]}" | xargs -P "$(nproc)" -I{} "$tidy" -p "$build" --quiet \
  --extra-arg=-Wno-unknown-warning-option {} >/dev/null 2>&1
