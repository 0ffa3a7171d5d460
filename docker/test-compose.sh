#!/usr/bin/env bash
# docker/test-compose.sh -- the container path, for real: build the image,
# bring the compose project (docker-compose.yml + docker/compose.host.yml)
# up on a private Docker engine, reach pgnfsd through libnfs (write a
# file, read it back, compare), check the admin tool inside the container,
# and bring everything down again (volumes included). docker-compose.yml
# itself is parse-checked first (docker-compose config -q).
#
#   docker/test-compose.sh            prints the time each step took; exit 0 = passed,
#                                     77 = no engine to test on
#
# Needs: root, shared/docker/local-engine.sh (beside the checkout, or
# /work/shared, or PGNFS_LOCAL_ENGINE; it starts the engine with
# local base images; or DOCKER_HOST pointing at an engine that has
# debian:bookworm-slim and postgres:15), docker-compose, libnfs-utils,
# python3 with PyYAML (docker-compose v1 brings it).
# The engine has no bridge network, so the image is built with
# --network host and the services share the host's network on free ports.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
t0=$(date +%s)
step() { echo "test-compose: [$(( $(date +%s) - t0 ))s] $*"; }

step "starting the local engine (unless one answers)"
. "$top/docker/engine.sh"
engine_up test-compose
for tool in docker docker-compose nfs-cp python3; do
  command -v "$tool" >/dev/null || { echo "test-compose: $tool is missing" >&2; exit 1; }
done

# Free ports unless given (PGNFS_TEST_NFS_PORT=2049 checks that the
# unprivileged server may bind a privileged port).
export PGNFS_TEST_DB_PORT=${PGNFS_TEST_DB_PORT:-$(free_port)}
export PGNFS_TEST_NFS_PORT=${PGNFS_TEST_NFS_PORT:-$(free_port)}
export PGNFS_TEST_METRICS_PORT=${PGNFS_TEST_METRICS_PORT:-$(free_port)}
compose_project pgnfstest 60

step "checking that docker-compose.yml parses (docker-compose config -q)"
(cd "$top" && docker-compose -f docker-compose.yml config -q)

step "building the image (docker build --network host)"
docker build -q --network host -t pgnfs:latest "$top" >/dev/null

step "rendering docker-compose.yml + docker/compose.host.yml (host network: no published ports)"
(cd "$top" && docker-compose -p "$project" -f docker-compose.yml -f docker/compose.host.yml config) \
  | python3 -c '
import sys, yaml
c = yaml.safe_load(sys.stdin)
for s in c["services"].values():
    s.pop("ports", None)
    s.pop("build", None)   # built above, with --network host
yaml.safe_dump(c, sys.stdout)
' >"$work/compose.yml"

step "docker-compose up (db healthy first, then pgnfsd)"
"${compose[@]}" up -d >/dev/null 2>&1 || { "${compose[@]}" up -d; exit 1; }

url_opts="nfsport=$PGNFS_TEST_NFS_PORT&mountport=$PGNFS_TEST_NFS_PORT&version=3"
for i in $(seq 1 120); do
  nfs-ls "nfs://127.0.0.1/?$url_opts" >/dev/null 2>&1 && break
  [[ $i -eq 120 ]] && { echo "test-compose: pgnfsd did not answer within 120 s" >&2; exit 1; }
  sleep 1
done
step "pgnfsd answers on 127.0.0.1:$PGNFS_TEST_NFS_PORT"

head -c 3000000 /dev/urandom >"$work/in"
nfs-cp "$work/in" "nfs://127.0.0.1//compose-test.bin?$url_opts" >/dev/null
nfs-cp "nfs://127.0.0.1//compose-test.bin?$url_opts" "$work/out" >/dev/null
cmp "$work/in" "$work/out"
step "wrote 3000000 bytes through libnfs and read back the same"

# The admin commands as the README gives them (no --config: the
# service's environment names the database and the metrics port).
du=$("${compose[@]}" exec -T pgnfsd pgnfs du -s -b / | tr -d '\r')
[[ "$du" == 3000000$'\t'/ ]] \
  || { echo "test-compose: pgnfs du in the container says '$du', not 3000000" >&2; exit 1; }
"${compose[@]}" exec -T pgnfsd pgnfs stats --once >"$work/stats"
grep -q '^nfs3   WRITE ' "$work/stats" && grep -q '^database     connected' "$work/stats" \
  || { cat "$work/stats" >&2; echo "test-compose: pgnfs stats in the container shows no WRITE" >&2; exit 1; }
"${compose[@]}" exec -T pgnfsd pgnfs fsck \
  || { echo "test-compose: pgnfs fsck in the container exited $?" >&2; exit 1; }
[[ $("${compose[@]}" exec -T pgnfsd id -un | tr -d '\r') == pgnfs ]] \
  || { echo "test-compose: pgnfsd does not run as user pgnfs" >&2; exit 1; }
step "pgnfs du, stats and fsck work inside the container; the server runs as user pgnfs"

"${compose[@]}" down -v >/dev/null 2>&1
step "passed"
