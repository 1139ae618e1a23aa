#!/usr/bin/env bash
# Least CPU s of 5 compiles (-std=c++20 -O0 -c) each: geerpc's client-only and one-service sources,
# header-only and separate, against the standard and Boost.PFR headers they need, alone.
cd /work/main
cat > /tmp/std_floor.cpp <<'X'
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>
#include <boost/pfr.hpp>
int main() {}
X
run() {
  local label=$1; shift
  local best=999
  for i in 1 2 3 4 5; do
    /usr/bin/time -o /tmp/floor.time -f "%U %S" g++ -std=c++20 -O0 -c "$@" -o /tmp/floor.o >/dev/null 2>&1; t=$(awk "{print \$1+\$2}" /tmp/floor.time)
    best=$(echo "$t $best" | awk '{print ($1<$2)?$1:$2}')
  done
  echo "$label cpu_min_s=$best"
}
run std_and_pfr_only /tmp/std_floor.cpp
run client_only_header_only -Iinclude bench/build_cost/client_only.cpp
run client_only_separate -Iinclude -DGEERPC_SEPARATE_COMPILATION bench/build_cost/client_only.cpp
run one_service_header_only -Iinclude bench/build_cost/one_service.cpp
run one_service_separate -Iinclude -DGEERPC_SEPARATE_COMPILATION bench/build_cost/one_service.cpp
