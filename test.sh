#!/usr/bin/env bash
# test.sh -- the whole test suite: installs what is missing, builds, and runs
# every test (unit, dbfs against a private PostgreSQL, protocol through
# libnfs, Connectathon basic, style) with ctest. Exit status 0 = all passed.
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
"$top/scripts/deps.sh" --test
"$top/scripts/build.sh"
cd "${PGNFS_BUILD:-$top/build}"
ctest --output-on-failure -j 2 "$@"
