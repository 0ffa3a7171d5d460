#!/usr/bin/env bash
# failover.sh -- the database fails over under a writer, and nothing that
# pgnfsd acknowledged is lost (issue 19).
#
#   tests/fault/failover.sh BUILD_DIR
#
# On this machine, in a temporary directory: a pg_auto_failover monitor,
# a primary and a synchronous standby (pg_autoctl; Debian packages
# pg-auto-failover-cli and postgresql-15-auto-failover), a file system made
# on the formation, and pgnfsd connected with a libpq multi-host conninfo
# and target_session_attrs=read-write. fault_fowrite writes files through
# pgnfsd (FILE_SYNC, and UNSTABLE + COMMIT) and records each acknowledged
# one; once some are acknowledged, the primary node dies (kill -9 of its
# keeper and of its postmaster); the monitor promotes the standby, pgnfsd
# answers JUKEBOX meanwhile and reconnects to the new primary, and the
# writer goes on. When it has had more files acknowledged after the kill,
# it stops, and every acknowledged file must hold its bytes (read through
# pgnfsd from the new primary). Prints the time from the kill to the
# first acknowledged write after it.
#
# Exits 77 (skipped) when not root or pg_autoctl is missing. Nothing waits
# on time alone: each step polls for the state it needs, with a generous
# deadline. Everything started is stopped (by its process id) at exit.
set -euo pipefail

build=${1:?usage: failover.sh BUILD_DIR}
build=$(cd "$build" && pwd)
pgbin=/usr/lib/postgresql/15/bin
if [[ $(id -u) -ne 0 ]] || ! command -v pg_autoctl >/dev/null || [[ ! -x $pgbin/pg_ctl ]]; then
  echo "SKIP: needs root and pg_autoctl (apt-get install pg-auto-failover-cli" \
       "postgresql-15-auto-failover)"
  exit 77
fi

tmp=$(mktemp -d /tmp/pgnfs-failover.XXXXXX)
chown postgres: "$tmp"
pids=()
as_pg() { runuser -u postgres -- env PATH="$pgbin:$PATH" PG_CONFIG="$pgbin/pg_config" "$@"; }
cleanup() {
  local st=$?
  # pg_autoctl stop ends a keeper and its PostgreSQL (a keeper still
  # running would start PostgreSQL again); then our own processes.
  for n in node1 node2 monitor; do
    if [[ -d $tmp/$n ]]; then
      as_pg pg_autoctl stop --pgdata "$tmp/$n" --immediate >/dev/null 2>&1 || true
    fi
  done
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for n in node1 node2 monitor; do
    if [[ -f $tmp/$n/postmaster.pid ]]; then
      runuser -u postgres -- "$pgbin/pg_ctl" -D "$tmp/$n" stop -m immediate >/dev/null 2>&1 || true
    fi
  done
  if [[ $st -ne 0 ]]; then
    echo "--- logs (failed with $st) ---"
    tail -n 30 "$tmp"/*.log 2>/dev/null || true
  fi
  [[ -n ${PGNFS_TEST_KEEP:-} ]] || rm -rf "$tmp" || true
  exit "$st"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# wait_for SECONDS WHAT COMMAND...: poll until COMMAND succeeds.
wait_for() {
  local limit=$1 what=$2
  shift 2
  local end=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS > end)); then echo "FAIL: no $what within ${limit}s"; exit 1; fi
    sleep 0.2
  done
}

pm=$(free_port); p1=$(free_port); p2=$(free_port); nfsport=$(free_port)
export PGCONNECT_TIMEOUT=5

echo "monitor on $pm, nodes on $p1 and $p2"
as_pg pg_autoctl create monitor --pgdata "$tmp/monitor" --pgport "$pm" --hostname localhost \
  --auth trust --no-ssl >"$tmp/monitor-create.log" 2>&1
as_pg pg_autoctl run --pgdata "$tmp/monitor" >"$tmp/monitor.log" 2>&1 &
pids+=($!)
mon="postgres://autoctl_node@localhost:$pm/pg_auto_failover?sslmode=disable"
wait_for 120 "monitor" as_pg "$pgbin/pg_isready" -h localhost -p "$pm"
# Find a dead node within seconds, not the default 20 s, and promote its
# standby without waiting 30 s for it to demote itself (it is dead).
as_pg "$pgbin/psql" -h localhost -p "$pm" -d pg_auto_failover -qAt -c \
  "ALTER SYSTEM SET pgautofailover.health_check_period = 1000" -c \
  "ALTER SYSTEM SET pgautofailover.health_check_retry_delay = 500" -c \
  "ALTER SYSTEM SET pgautofailover.health_check_max_retries = 1" -c \
  "ALTER SYSTEM SET pgautofailover.node_considered_unhealthy_timeout = 3000" -c \
  "ALTER SYSTEM SET pgautofailover.primary_demote_timeout = 3000" -c \
  "SELECT pg_reload_conf()" >/dev/null

start_node() {
  local n=$1 port=$2
  as_pg pg_autoctl create postgres --pgdata "$tmp/$n" --pgport "$port" --hostname localhost \
    --name "$n" --dbname pgnfs --auth trust --no-ssl --monitor "$mon" --run \
    >"$tmp/$n.log" 2>&1 &
  pids+=($!)
}
states() { as_pg pg_autoctl show state --pgdata "$tmp/monitor" 2>/dev/null; }
# reports NAME STATE: node NAME reports a state matching STATE (a regex).
reports() { states | awk -F'|' -v n="$1" -v s="$2" '{ gsub(/ /, "") } $1 == n && $6 ~ s { ok = 1 } END { exit !ok }'; }
start_node node1 "$p1"
wait_for 180 "node1 single" reports node1 '^single$'
start_node node2 "$p2"
both() { reports node1 '^primary$' && reports node2 '^secondary$'; }
wait_for 300 "node1 primary and node2 secondary" both
states

ci="host=localhost,localhost port=$p1,$p2 dbname=pgnfs user=postgres target_session_attrs=read-write connect_timeout=5"
sync=$(as_pg "$pgbin/psql" "$ci" -qAt -c "SHOW synchronous_standby_names")
echo "synchronous_standby_names: $sync"
[[ -n $sync ]] || { echo "FAIL: the standby is not synchronous"; exit 1; }

"$build/server/pgnfs" mkfs --conninfo "$ci" >"$tmp/mkfs.log" 2>&1
"$build/server/pgnfsd" --conninfo "$ci" --port "$nfsport" --listen 127.0.0.1 \
  --set server.portmap=off --set server.rpcbind=false \
  --export "/ 127.0.0.1(rw,no_root_squash)" >"$tmp/pgnfsd.log" 2>&1 &
pids+=($!)
wait_for 60 "pgnfsd" grep -q "serving fsid" "$tmp/pgnfsd.log"

acks=$tmp/acks
: >"$acks"
"$build/tests/fault/fault_fowrite" write "$nfsport" fo "$acks" >"$tmp/fowrite.log" 2>&1 &
writer=$!
pids+=($writer)
acked() { [[ $(wc -l <"$acks") -ge $1 ]]; }
wait_for 120 "writes acknowledged" acked 200

primary=node1
before=$(wc -l <"$acks")
keeper=$(pgrep -u postgres -f "pg_autoctl create postgres --pgdata $tmp/$primary " | head -n1 || true)
postmaster=$(head -n1 "$tmp/$primary/postmaster.pid")
echo "killing $primary (keeper ${keeper:-?}, postmaster $postmaster) after $before acknowledged files"
t0=$(date +%s.%N)
# The node dies whole: its keeper and its services, then PostgreSQL and
# every backend (an orphaned backend would go on serving its connection).
[[ -z $keeper ]] || kill -9 $(pgrep -P "$keeper") "$keeper" 2>/dev/null || true
kill -9 $(pgrep -P "$postmaster") "$postmaster" 2>/dev/null || true
other=node1
[[ $primary == node1 ]] && other=node2
# Promoted: primary, or wait_primary (a primary whose standby is gone).
promoted() { reports "$other" '^(wait_)?primary$'; }
wait_for 240 "$other promoted" promoted
states
# The first file acknowledged after the kill (one may have been in flight).
wait_for 240 "write acknowledged after the kill" acked $((before + 2))
t1=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "failover: writes acknowledged again %.1f s after the kill\n", b - a }'
wait_for 240 "more writes acknowledged" acked $((before + 200))
kill -TERM "$writer"
wait "$writer" || { echo "FAIL: the writer failed"; cat "$tmp/fowrite.log"; exit 1; }
echo "acknowledged: $(wc -l <"$acks") files ($before before the kill)"
"$build/tests/fault/fault_fowrite" verify "$nfsport" fo "$acks"
"$build/server/pgnfs" fsck --conninfo "$ci" -q
echo "PASS"
