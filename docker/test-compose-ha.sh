#!/usr/bin/env bash
# docker/test-compose-ha.sh -- docker-compose.ha.yml, for real: build the
# two images (pgnfs, and docker/pgaf: PostgreSQL under pg_auto_failover),
# bring the project up on a private Docker engine with
# docker/compose-ha.host.yml (host network, free ports), write a file
# through one frontend and read it through the other, kill the primary
# database node's container, write through the other frontend once a
# write is acknowledged again (the standby promoted), read both files back
# whole through the first, and bring everything down (volumes included).
#
#   docker/test-compose-ha.sh         prints the time each step took; exit 0 = passed,
#                                     77 = no engine to test on
#
# Needs what docker/test-compose.sh needs (root, the local engine script
# or DOCKER_HOST, docker-compose, libnfs-utils, python3 with PyYAML); the
# pgaf image's build installs Debian's postgresql-15-auto-failover and
# pg-auto-failover-cli inside the image (apt, through the host network).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
t0=$(date +%s)
step() { echo "test-compose-ha: [$(( $(date +%s) - t0 ))s] $*"; }

step "starting the local engine (unless one answers)"
. "$top/docker/engine.sh"
engine_up test-compose-ha
for tool in docker docker-compose nfs-cp python3; do
  command -v "$tool" >/dev/null || { echo "test-compose-ha: $tool is missing" >&2; exit 1; }
done

for v in MON DB1 DB2 NFS1 NFS2 METRICS1 METRICS2; do
  export "PGNFS_TEST_${v}_PORT=$(free_port)"
done
compose_project pgnfsha 40

step "checking that docker-compose.ha.yml parses (docker-compose config -q)"
(cd "$top" && docker-compose -f docker-compose.ha.yml config -q)

step "building the images (docker build --network host): pgnfs, pgnfs-pgaf"
docker build -q --network host -t pgnfs:latest "$top" >/dev/null
docker build -q --network host -t pgnfs-pgaf:latest "$top/docker/pgaf" >/dev/null

step "rendering docker-compose.ha.yml + docker/compose-ha.host.yml (host network)"
(cd "$top" && docker-compose -p "$project" -f docker-compose.ha.yml -f docker/compose-ha.host.yml \
  config) | python3 -c '
import sys, yaml
c = yaml.safe_load(sys.stdin)
for s in c["services"].values():
    s.pop("ports", None)
    s.pop("build", None)   # built above, with --network host
yaml.safe_dump(c, sys.stdout)
' >"$work/compose.yml"

step "docker-compose up (monitor, db1, db2 healthy in turn, then both frontends)"
"${compose[@]}" up -d >/dev/null 2>&1 || { "${compose[@]}" up -d; exit 1; }

url() { echo "nfs://127.0.0.1/$2?nfsport=$1&mountport=$1&version=3"; }
answers() { nfs-ls "$(url "$1" "")" >/dev/null 2>&1; }
for p in "$PGNFS_TEST_NFS1_PORT" "$PGNFS_TEST_NFS2_PORT"; do
  for i in $(seq 1 300); do
    answers "$p" && break
    [[ $i -eq 300 ]] && { echo "test-compose-ha: the frontend on $p did not answer within 300 s" >&2; exit 1; }
    sleep 1
  done
done
step "both frontends answer ($PGNFS_TEST_NFS1_PORT, $PGNFS_TEST_NFS2_PORT)"

state=$("${compose[@]}" exec -T monitor pg_autoctl show state | tr -d '\r')
echo "$state"
primary=$(echo "$state" | awk -F'|' '{ gsub(/ /, "") } $6 == "primary" { print $1 }')
[[ $primary == db1 || $primary == db2 ]] \
  || { echo "test-compose-ha: no primary in the formation" >&2; exit 1; }
fronts=$("${compose[@]}" exec -T pgnfsd1 pgnfs frontends | tr -d '\r')
[[ $(grep -c 'coherence=shared solo=no state=live' <<<"$fronts") == 2 ]] \
  || { echo "$fronts" >&2; echo "test-compose-ha: not two live shared frontends" >&2; exit 1; }
step "primary $primary with a standby; two shared frontends registered"

head -c 2000000 /dev/urandom >"$work/a"
head -c 2000000 /dev/urandom >"$work/b"
nfs-cp "$work/a" "$(url "$PGNFS_TEST_NFS1_PORT" /a.bin)" >/dev/null
nfs-cp "$(url "$PGNFS_TEST_NFS2_PORT" /a.bin)" "$work/a.out" >/dev/null
cmp "$work/a" "$work/a.out"
step "a file written through frontend 1 reads back whole through frontend 2"

"${compose[@]}" kill -s KILL "$primary" >/dev/null 2>&1
tk=$(date +%s.%N)
step "killed $primary (SIGKILL to its container)"
# Each attempt is bounded: while no primary answers, a MOUNT call gets no
# reply (the client is to ask again), and nfs-cp over TCP would wait for
# it forever.
for i in $(seq 1 120); do
  timeout 15 nfs-cp "$work/b" "$(url "$PGNFS_TEST_NFS2_PORT" /b.bin)" >/dev/null 2>&1 && break
  [[ $i -eq 120 ]] && { echo "test-compose-ha: no write acknowledged within 120 tries after the kill" >&2; exit 1; }
  sleep 0.5
done
tw=$(date +%s.%N)
awk -v a="$tk" -v b="$tw" 'BEGIN { printf "test-compose-ha: a write acknowledged again %.1f s after the kill\n", b - a }'
for f in a b; do
  nfs-cp "$(url "$PGNFS_TEST_NFS1_PORT" /$f.bin)" "$work/$f.back" >/dev/null
  cmp "$work/$f" "$work/$f.back"
done
"${compose[@]}" exec -T pgnfsd1 pgnfs fsck -q \
  || { echo "test-compose-ha: pgnfs fsck after the failover exited $?" >&2; exit 1; }
step "both files whole through frontend 1 on the promoted standby; fsck clean"

"${compose[@]}" down -v >/dev/null 2>&1
step "passed"
