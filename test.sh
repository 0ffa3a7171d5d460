#!/usr/bin/env bash
# test.sh -- the whole test suite: installs what is missing, builds, and runs
# every test (unit, dbfs against a private PostgreSQL, protocol through
# libnfs, Connectathon basic, style) with ctest, then the same tests once
# more built with ASan and UBSan (tests/sanitize.sh, build tree build-san;
# any sanitizer report fails). The second pass runs when no arguments are
# given, or always with PGNFS_TEST_SANITIZE=1 (same ctest arguments);
# PGNFS_TEST_SANITIZE=0 skips it. Exit status 0 = all passed.
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
"$top/scripts/deps.sh" --test
"$top/scripts/build.sh"
cd "${PGNFS_BUILD:-$top/build}"
status=0
ctest --output-on-failure -j 2 "$@" || status=$?
if [[ ${PGNFS_TEST_SANITIZE:-$(($# == 0))} == 1 ]]; then
  "$top/tests/sanitize.sh" "$@" || status=$?
fi
exit $status
