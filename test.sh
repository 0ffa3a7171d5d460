#!/usr/bin/env bash
# test.sh -- the whole test suite: installs what is missing, builds, and runs
# every test (unit, dbfs against a private PostgreSQL, protocol through
# libnfs, Connectathon basic, style) with ctest, then the container path
# (docker/test-compose.sh: image build and docker-compose on a private
# engine, about 2 minutes; docker/test-compose-ha.sh: the same for
# docker-compose.ha.yml, with a failover), then the ctest tests once more built with ASan
# and UBSan (tests/sanitize.sh, build tree build-san; any sanitizer report
# fails). The container and sanitizer passes run when no arguments are
# given (the container pass only where a Docker engine can be had: see
# docker/test-compose.sh); PGNFS_TEST_DOCKER and PGNFS_TEST_SANITIZE (1 or
# 0) force each on or off. Exit status 0 = all passed.
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
"$top/scripts/deps.sh" --test
"$top/scripts/build.sh"
cd "${PGNFS_BUILD:-$top/build}"
status=0
ctest --output-on-failure -j 2 "$@" || status=$?
docker=${PGNFS_TEST_DOCKER:-$(($# == 0 ? 2 : 0))} # 2: when an engine is at hand
if [[ $docker != 0 ]]; then
  for t in test-compose.sh test-compose-ha.sh; do
    rc=0
    "$top/docker/$t" || rc=$?
    if [[ $rc == 77 && $docker == 2 ]]; then
      echo "test.sh: container test $t skipped: no Docker engine here (PGNFS_TEST_DOCKER=1 requires it)"
    elif [[ $rc != 0 ]]; then
      status=$rc
    fi
  done
fi
if [[ ${PGNFS_TEST_SANITIZE:-$(($# == 0))} == 1 ]]; then
  "$top/tests/sanitize.sh" "$@" || status=$?
fi
exit $status
