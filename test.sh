#!/usr/bin/env bash
# test.sh -- the whole test suite: installs what is missing, builds, and runs
# every test (unit, dbfs against a private PostgreSQL, protocol through
# libnfs, Connectathon basic, style) with ctest, then the container path
# (docker/test-compose.sh: image build and docker-compose on a private
# engine, about 2 minutes), then the ctest tests once more built with ASan
# and UBSan (tests/sanitize.sh, build tree build-san; any sanitizer report
# fails). The container and sanitizer passes run when no arguments are
# given; PGNFS_TEST_DOCKER and PGNFS_TEST_SANITIZE (1 or 0) force each on
# or off. Exit status 0 = all passed.
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
"$top/scripts/deps.sh" --test
"$top/scripts/build.sh"
cd "${PGNFS_BUILD:-$top/build}"
status=0
ctest --output-on-failure -j 2 "$@" || status=$?
if [[ ${PGNFS_TEST_DOCKER:-$(($# == 0))} == 1 ]]; then
  "$top/docker/test-compose.sh" || status=$?
fi
if [[ ${PGNFS_TEST_SANITIZE:-$(($# == 0))} == 1 ]]; then
  "$top/tests/sanitize.sh" "$@" || status=$?
fi
exit $status
