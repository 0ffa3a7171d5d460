#!/usr/bin/env bash
# citus.sh -- a pgnfs file system distributed over Citus (a coordinator and
# two workers on this machine), checked with the integrity suite and the
# Connectathon basic suite.
#
#   tests/citus/citus.sh --pg-bin DIR [--build DIR] [--keep]
#
# Needs a PostgreSQL 15 whose server has Citus installed (12.x or 13.x:
# citus.so in `DIR/pg_config --pkglibdir`, citus.control in its share
# directory); Citus is not packaged by Debian: bench/citus/build.sh builds
# it from its source and prints such a DIR. DIR is that PostgreSQL's bin
# directory (initdb, pg_ctl, postgres, pg_config). --build is pgnfs's build tree (default
# ./build: server/pgnfs, server/pgnfsd, tests/proto/proto_integrity,
# tests/proto/proto_procs, bench/connectathon/cthon).
#
# In a temporary directory: three clusters (shared_preload_libraries =
# citus), the workers added to the coordinator, `pgnfs mkfs` on the
# coordinator, tests/citus/distribute.sql (fileatt and allfiles by inode,
# naming by parent, co-located), pgnfsd on the coordinator (it finds Citus
# and uses the statements dbfs_sql.c gives for it); then, through libnfs,
# proto_integrity (random I/O against a model, sparse files), the
# cross-directory rename cases of proto_procs, and cthon (all nine basic
# tests). pgnfs fsck and du are not run: their recursive queries over
# naming are ones Citus cannot distribute (ARCHITECTURE.md, "Storage on
# Citus").
#
# Exit status: 0 passed, 1 failed, 2 usage, 77 Citus (or a tool) missing.
# Everything started is stopped at exit (by process id); --keep leaves the
# directory.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
pgbin= build=$top/build keep=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --pg-bin) pgbin=${2:?--pg-bin needs a directory}; shift 2 ;;
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed 's/^# \{0,1\}//; /^set -e/d'; exit 0 ;;
    *) echo "citus.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -n $pgbin ]] || { echo "citus.sh: --pg-bin DIR is required: the bin directory of a PostgreSQL 15 with Citus installed" >&2; exit 2; }
for t in initdb pg_ctl postgres pg_config psql; do
  [[ -x $pgbin/$t || $t == psql ]] || { echo "citus.sh: $pgbin/$t is missing: --pg-bin must be PostgreSQL's bin directory" >&2; exit 77; }
done
psql=$(command -v psql || true)
[[ -x $pgbin/psql ]] && psql=$pgbin/psql
[[ -n $psql ]] || { echo "citus.sh: psql is missing (postgresql-client-15)" >&2; exit 77; }
libdir=$("$pgbin/pg_config" --pkglibdir)
sharedir=$("$pgbin/pg_config" --sharedir)
if [[ ! -f $libdir/citus.so || ! -f $sharedir/extension/citus.control ]]; then
  echo "citus.sh: Citus is not installed in this PostgreSQL (no $libdir/citus.so or" \
    "$sharedir/extension/citus.control): install Citus 12 or 13 built for PostgreSQL" \
    "$("$pgbin/postgres" --version | awk '{print $3}') into it, then run this again" >&2
  exit 77
fi
for b in server/pgnfs server/pgnfsd tests/proto/proto_integrity tests/proto/proto_procs \
  bench/connectathon/cthon; do
  [[ -x $build/$b ]] || { echo "citus.sh: $build/$b is missing: build pgnfs first (scripts/build.sh)" >&2; exit 77; }
done

t0=$(date +%s)
step() { echo "citus: [$(( $(date +%s) - t0 ))s] $*"; }
tmp=$(mktemp -d /tmp/pgnfs-citus.XXXXXX)
chmod 755 "$tmp"
run_pg() { "$@"; }
if [[ $(id -u) -eq 0 ]]; then
  chown postgres: "$tmp"
  run_pg() { runuser -u postgres -- "$@"; }
fi
pids=()
cleanup() {
  local st=$?
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for n in coord w1 w2; do
    [[ -f $tmp/$n/postmaster.pid ]] && run_pg "$pgbin/pg_ctl" -D "$tmp/$n" stop -m fast >/dev/null 2>&1 || true
  done
  if [[ $st -ne 0 ]]; then
    echo "--- logs (failed with $st) ---"
    tail -n 20 "$tmp"/*.log 2>/dev/null || true
  fi
  [[ $keep == 1 ]] && echo "citus: kept $tmp" || rm -rf "$tmp"
  exit "$st"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

declare -A port
for n in coord w1 w2; do
  port[$n]=$(free_port)
  run_pg "$pgbin/initdb" -D "$tmp/$n" -A trust -U postgres --locale=C -E UTF8 >"$tmp/initdb-$n.log"
  cat >>"$tmp/$n/postgresql.conf" <<CONF
port = ${port[$n]}
listen_addresses = '127.0.0.1'
unix_socket_directories = '$tmp'
shared_preload_libraries = 'citus'
max_prepared_transactions = 100
max_connections = 200
citus.shard_count = 8
CONF
  run_pg "$pgbin/pg_ctl" -D "$tmp/$n" -l "$tmp/$n.log" -w start >/dev/null
done
sql() { local p=$1; shift; "$psql" -X -q -v ON_ERROR_STOP=1 -h "$tmp" -p "$p" -U postgres "$@"; }
for n in coord w1 w2; do
  sql "${port[$n]}" -d postgres -c "CREATE DATABASE pgnfs"
  sql "${port[$n]}" -d pgnfs -c "CREATE EXTENSION citus"
done
sql "${port[coord]}" -d pgnfs -At \
  -c "SELECT citus_set_coordinator_host('127.0.0.1', ${port[coord]})" \
  -c "SELECT citus_add_node('127.0.0.1', ${port[w1]})" \
  -c "SELECT citus_add_node('127.0.0.1', ${port[w2]})" >/dev/null
step "$(sql "${port[coord]}" -d pgnfs -At -c "SELECT citus_version()" | cut -d, -f1): coordinator on ${port[coord]}, workers on ${port[w1]} and ${port[w2]}"

ci="host=$tmp port=${port[coord]} dbname=pgnfs user=postgres"
"$build/server/pgnfs" mkfs --conninfo "$ci" --set storage.root_mode=0777 >"$tmp/mkfs.log" 2>&1
sql "${port[coord]}" -d pgnfs -f "$top/tests/citus/distribute.sql"
step "pgnfs mkfs on the coordinator, the schema distributed"

nfsport=$(free_port)
"$build/server/pgnfsd" --conninfo "$ci" --port "$nfsport" --listen 127.0.0.1 \
  --set server.portmap=off --set server.rpcbind=false \
  --export "/ 127.0.0.1(rw,no_root_squash)" >"$tmp/pgnfsd.log" 2>&1 &
pids+=($!)
for i in $(seq 1 120); do
  grep -q "serving fsid" "$tmp/pgnfsd.log" && break
  [[ $i -eq 120 ]] && { echo "citus: pgnfsd did not start"; exit 1; }
  sleep 0.5
done
step "pgnfsd serves the distributed file system on $nfsport"

status=0
export PGNFS_TEST_NFS_PORT=$nfsport
(cd "$build" && ./tests/proto/proto_integrity) >"$tmp/integrity.log" 2>&1 || status=1
grep -E '^(not )?ok' "$tmp/integrity.log" || true
step "integrity suite: $([[ $status == 0 ]] && echo passed || echo FAILED)"
rc=0
(cd "$build" && ./tests/proto/proto_procs -p /procs/rename_same_dir -p /procs/rename_cross_dir -p /wcc/rename) \
  >"$tmp/rename.log" 2>&1 || rc=1
grep -E '^(not )?ok' "$tmp/rename.log" || true
step "renames, also across directories: $([[ $rc == 0 ]] && echo passed || echo FAILED)"
[[ $rc == 0 ]] || status=1
rc=0
"$build/bench/connectathon/cthon" "nfs://127.0.0.1/?nfsport=$nfsport&mountport=$nfsport" \
  >"$tmp/cthon.log" 2>&1 || rc=1
grep -E '^test|RESULT total' "$tmp/cthon.log" || true
step "Connectathon basic: $([[ $rc == 0 ]] && echo passed || echo FAILED)"
[[ $rc == 0 ]] || status=1
if grep -q "SQLSTATE" "$tmp/pgnfsd.log"; then
  echo "citus: statements the database refused:"
  grep -o "pgnfs_[a-z_]* failed: SQLSTATE.*" "$tmp/pgnfsd.log" | sort | uniq -c
fi
[[ $status == 0 ]] && echo "PASS" || echo "FAIL"
exit "$status"
