#!/usr/bin/env bash
# build.sh -- configure (once) and build pgnfs into ./build (or $PGNFS_BUILD).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${PGNFS_BUILD:-$top/build}
if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S "$top" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" -j "$(nproc)"
