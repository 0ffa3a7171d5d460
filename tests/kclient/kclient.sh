#!/usr/bin/env bash
# kclient.sh -- tests of a server through the REAL Linux NFS client: a stock
# Debian kernel booted under qemu (the shared harness run.sh) mounts the
# server running on this host and runs a test in the guest.
#
#   tests/kclient/kclient.sh [options] TEST [-- GUEST-ARGS...]
#
# TEST:
#   prepare      install what is missing (apt-get) and build the kernel,
#                initramfs and full guest images when they are missing
#   smoke        busybox guest, the README's mount (vers=3,nolock through
#                the portmapper): data with checksums, names, and programs
#                that kc (uid 1000) may execute but not read (mode 001/010)
#   locks        full guest, plain mount (locks go to the server): flock,
#                fcntl ranges, conflicts, a blocked lock granted after the
#                unlock (timed), and the server's own lock table, checked
#                from the host while the guest holds the lock
#   cthon-basic  busybox guest, README mount: the Connectathon basic tests
#                (static cthon-path) through the kernel client
#   cthon-lock   full guest, plain mount: the Connectathon lock tests
#                (static cthon-lock), one mount and two mounts
#   snap         full guest, plain mount: snapshots under /.snapshots (taken
#                and deleted on the host when the guest asks), read, listed,
#                walked, copied out, every change refused; also in the root
#                of a second export, /kcsnap/tree (pgnfs only)
#   run          boot a guest against the server with the payload of
#                GUEST-ARGS: --payload DIR [--full|--lock] [--opts O]
#                (for scripts; see bench/connectathon/run-lock)
#
# Options:
#   --server pgnfs|ganesha  the server (default pgnfs): `pgnfs serve` of the
#                build on a fresh embedded cluster in a network namespace of
#                its own, with its built-in portmapper on port 111; or a
#                private nfs-ganesha with NLM (the shared ganesha.sh --nlm)
#   --build DIR     build tree (default $PGNFS_BUILD, else ./build of the repo)
#   --set K=V       extra `pgnfs serve --set` (repeatable)
#   --log DIR       keep the guest's logs and the server's log in DIR
#   --keep          keep the work directory (/tmp/kclient-test.PID.*)
#   -e NAME=VALUE   pass to the guest (run.sh -e), e.g. -e CL_ARGS=--quick
#   -v              stream the guest's console
#
# Environment: KCLIENT_HARNESS (the shared harness; default the first
# shared/kclient found beside the repository, one level further up, or in
# the machine's shared directory /work/shared),
# KCLIENT_DIR (its images, default /tmp/kclient), PGNFS_BUILD.
#
# Exit status: 0 passed; 1 failed; 2 harness or usage error; 77 skipped
# (not root, or the server does not serve what the test needs, e.g. no
# NLM registered with its portmapper: the lock tests skip until it is).
#
# Every process this script starts (the server, its PostgreSQL, qemu, the
# host-side checker) runs in a network namespace made for this run and is
# stopped, and the namespace deleted, on every way out (trap).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
D=${KCLIENT_DIR:-/tmp/kclient}
export KCLIENT_DIR=$D

SERVER=pgnfs
BUILD=${PGNFS_BUILD:-$TOP/build}
SETS=()
EXPORTS=()   # more `pgnfs serve --export` lines than "/" (a test's own)
GUEST_ENV=()
LOGDIR=""
KEEP=0
VERBOSE=0
SYNC_PORT=7111   # the host-side checker, inside the private namespace
GUEST_MNT=/mnt/nfs

log() { echo "kclient: $*" >&2; }
die() { log "$*"; exit 2; }
skip() { echo "kclient: SKIP: $*"; exit 77; }

usage() { sed -n '2,/^set -uo/p' "$0" | sed 's/^# \{0,1\}//; /^set -uo/d' >&2; exit 2; }

# --------------------------------------------------------------- the harness
find_harness() {
    local d
    if [ -n "${KCLIENT_HARNESS:-}" ]; then
        [ -x "$KCLIENT_HARNESS/run.sh" ] || die "KCLIENT_HARNESS=$KCLIENT_HARNESS has no run.sh"
        KC=$(cd "$KCLIENT_HARNESS" && pwd)
        return
    fi
    for d in "$TOP/../shared/kclient" "$TOP/../../shared/kclient" /work/shared/kclient; do
        if [ -x "$d/run.sh" ]; then KC=$(cd "$d" && pwd); return; fi
    done
    die "the kernel-client harness (shared/kclient/run.sh) is not beside the repository;" \
        "set KCLIENT_HARNESS"
}

# ---------------------------------------------------------------- cleanup
WORK=""
NS=""
SERVER_PID=""
SYNC_PID=""
RUN_PID=""
GANESHA_UP=0

# Stop a process we started: SIGTERM, then SIGKILL after `secs`.
stop_pid() {
    local pid=$1 secs=${2:-60} i
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < secs * 10; i++)); do
        kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
        sleep 0.1
    done
    log "pid $pid did not stop within $secs s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}

# Delete network namespace $1 after ending what still runs in it (only
# processes of this harness ever run there).
drop_netns() {
    local ns=$1 pids i
    [ -e "/run/netns/$ns" ] || return 0
    for i in 1 2; do
        pids=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')
        [ -n "${pids// /}" ] || break
        log "ending what still runs in namespace $ns: $pids"
        # shellcheck disable=SC2086
        kill -"$([ $i = 1 ] && echo TERM || echo KILL)" $pids 2>/dev/null
        sleep 2
    done
    ip netns del "$ns" 2>/dev/null || log "cannot delete network namespace $ns"
}

cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    if [ -n "$RUN_PID" ] && kill -0 "$RUN_PID" 2>/dev/null; then
        # interrupted while a guest runs: end its qemu (in our namespace), then run.sh
        local q
        for q in $(ip netns pids "$NS" 2>/dev/null); do
            [ "$(cat "/proc/$q/comm" 2>/dev/null)" = qemu-system-x86 ] && kill -TERM "$q"
        done
        stop_pid "$RUN_PID" 30
    fi
    [ -n "$SYNC_PID" ] && stop_pid "$SYNC_PID" 10
    if [ -n "$SERVER_PID" ]; then
        stop_pid "$SERVER_PID" 60
        # A server that was killed may leave its PostgreSQL behind.
        if [ -n "${DATA:-}" ] && [ -f "$DATA/pg/postmaster.pid" ]; then
            local pm
            pm=$(head -n1 "$DATA/pg/postmaster.pid")
            if [ -n "$pm" ] && kill -0 "$pm" 2>/dev/null; then
                log "stopping the server's PostgreSQL (pid $pm)"
                stop_pid "$pm" 60
            fi
        fi
    fi
    if [ "$GANESHA_UP" = 1 ]; then
        "$KC/ganesha.sh" stop >/dev/null 2>&1 || log "ganesha.sh stop failed"
        local w
        w=$(cat "$GANESHA_DIR/wrapper.pid" 2>/dev/null)
        [ -n "$w" ] && stop_pid "$w" 30
    fi
    [ -n "$NS" ] && drop_netns "$NS"
    if [ -n "$WORK" ] && [ -d "$WORK" ]; then
        if [ -n "$LOGDIR" ]; then
            mkdir -p "$LOGDIR"
            cp -r "$WORK/run" "$LOGDIR/" 2>/dev/null
            for f in "$WORK"/server.log "$WORK"/sync.log "$WORK"/ganesha/ganesha.log; do
                [ -f "$f" ] && cp "$f" "$LOGDIR/"
            done
        fi
        if [ "$KEEP" = 1 ]; then log "kept $WORK"; else rm -rf "$WORK"; fi
    fi
    exit "$rc"
}

# What a run of this script that was killed (SIGKILL, a ctest timeout)
# left: namespaces and work directories named after a pid that is gone.
clean_stale() {
    local ns pid dir
    for ns in /run/netns/kcpg-* /run/netns/kcg-*; do
        [ -e "$ns" ] || continue
        pid=${ns##*-}
        [[ $pid =~ ^[0-9]+$ ]] || continue
        kill -0 "$pid" 2>/dev/null && continue
        log "removing the namespace $(basename "$ns") of an earlier run (pid $pid is gone)"
        drop_netns "$(basename "$ns")"
    done
    for dir in /tmp/kclient-test.*; do
        [ -d "$dir" ] || continue
        pid=${dir#/tmp/kclient-test.}
        pid=${pid%%.*}
        [[ $pid =~ ^[0-9]+$ ]] || continue
        kill -0 "$pid" 2>/dev/null || rm -rf "$dir"
    done
}

# ---------------------------------------------------------------- prepare
apt_install() {
    [ $# -gt 0 ] || return 0
    log "installing: $*"
    apt-get -o DPkg::Lock::Timeout=600 update -qq || return 1
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
        --no-install-recommends "$@"
}

# Host tools the images and the tests need (build.sh and build-rootfs.sh
# would install them without waiting for the dpkg lock).
host_packages() {
    local p=()
    command -v qemu-system-x86_64 >/dev/null || p+=(qemu-system-x86)
    file -L /bin/busybox 2>/dev/null | grep -q 'statically linked' || p+=(busybox-static)
    command -v file >/dev/null || p+=(file)
    command -v cpio >/dev/null || p+=(cpio)
    command -v depmod >/dev/null || p+=(kmod)
    command -v debootstrap >/dev/null || p+=(debootstrap)
    command -v mkfs.ext4 >/dev/null || p+=(e2fsprogs)
    command -v ip >/dev/null || p+=(iproute2)
    command -v unshare >/dev/null || p+=(util-linux)
    command -v python3 >/dev/null || p+=(python3)
    apt_install "${p[@]}"
}

ganesha_packages() {
    local p=()
    command -v ganesha.nfsd >/dev/null || p+=(nfs-ganesha)
    [ -e /usr/lib/x86_64-linux-gnu/ganesha/libfsalvfs.so ] || p+=(nfs-ganesha-vfs)
    command -v rpcbind >/dev/null || p+=(rpcbind)
    command -v rpc.statd >/dev/null || p+=(nfs-common)
    apt_install "${p[@]}"
}

images_ready() {
    [ -s "$D/vmlinuz" ] && [ -s "$D/base.cpio.gz" ] && [ -s "$D/rootfs.img" ] &&
        [ -s "$D/full-stage1.cpio.gz" ]
}

do_prepare() {
    [ "$(id -u)" = 0 ] || skip "needs root (packages, network namespaces, qemu images)"
    mkdir -p "$D"
    exec 9>"$D/.kclient-prepare.lock"
    flock 9
    host_packages || die "installing the host packages failed"
    if [ ! -s "$D/vmlinuz" ] || [ ! -s "$D/base.cpio.gz" ]; then
        log "building the kernel and the busybox initramfs ($KC/build.sh)"
        KCLIENT_NO_APT=1 "$KC/build.sh" || die "build.sh failed"
    fi
    if [ ! -s "$D/rootfs.img" ] || [ ! -s "$D/full-stage1.cpio.gz" ]; then
        log "building the full guest ($KC/build-rootfs.sh)"
        KCLIENT_NO_APT=1 "$KC/build-rootfs.sh" || die "build-rootfs.sh failed"
    fi
    images_ready || die "the images are still missing in $D"
    log "images ready in $D: $(cat "$D/kernel-version" 2>/dev/null)"
}

# ---------------------------------------------------------------- servers
# After start_server: NS, NFS_PORT, MNT_PORT, EXPORT (the path the guest
# mounts), and for pgnfs DATA, for ganesha EXPORT_DIR.
start_pgnfs() {
    local bin="$BUILD/server/pgnfs" i
    [ -x "$bin" ] || die "$bin is missing: build first (scripts/build.sh)"
    NS=kcpg-$$
    ip netns add "$NS" || die "ip netns add $NS failed"
    ip -n "$NS" link set lo up
    DATA=$WORK/data
    NFS_PORT=2049 MNT_PORT=2049 EXPORT=/
    local cmd=("$bin" serve --data "$DATA" --port "$NFS_PORT"
               --export "/ 127.0.0.1(rw,no_root_squash)" --set server.portmap=on)
    for i in "${SETS[@]}"; do cmd+=(--set "$i"); done
    for i in "${EXPORTS[@]}"; do cmd+=(--export "$i"); done
    log "pgnfs: ${cmd[*]} (netns $NS)"
    # A private /run as well: nothing the server does can reach the host's
    # rpcbind socket.
    ip netns exec "$NS" unshare --mount --propagation private -- \
        sh -c 'mount -t tmpfs -o mode=755 kclient-run /run && exec "$@"' sh "${cmd[@]}" \
        >"$WORK/server.log" 2>&1 </dev/null &
    SERVER_PID=$!
    # Ready: the "serving fsid" line (after the portmapper's).
    for ((i = 0; i < 1800; i++)); do
        grep -q 'serving fsid' "$WORK/server.log" 2>/dev/null && break
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            tail -n 30 "$WORK/server.log" >&2
            die "pgnfs exited before serving (log above)"
        fi
        sleep 0.1
    done
    grep -q 'serving fsid' "$WORK/server.log" || { tail -n 30 "$WORK/server.log" >&2;
        die "pgnfs did not start serving within 180 s"; }
    log "pgnfs serving (pid $SERVER_PID)"
}

start_ganesha() {
    ganesha_packages || die "installing nfs-ganesha failed"
    NS=kcg-$$
    export GANESHA_DIR=$WORK/ganesha GANESHA_NETNS=$NS GANESHA_EXPORT=$WORK/export
    mkdir -p "$GANESHA_EXPORT"
    chmod 777 "$GANESHA_EXPORT"
    GANESHA_UP=1
    "$KC/ganesha.sh" --nlm start >&2 || die "ganesha.sh --nlm start failed"
    NFS_PORT=12049 MNT_PORT=12048 EXPORT=$GANESHA_EXPORT EXPORT_DIR=$GANESHA_EXPORT
}

start_server() {
    case $SERVER in
        pgnfs) start_pgnfs ;;
        ganesha) start_ganesha ;;
    esac
}

# The port NLM v4 over TCP is registered at with the server's portmapper
# (0: not registered).
nlm_port() {
    ip netns exec "$NS" python3 "$HERE/kc_host.py" getport 100021 4 tcp
}

need_nlm() {
    local port
    port=$(nlm_port) || die "the portmapper in namespace $NS did not answer"
    if [ "$port" = 0 ]; then
        skip "$SERVER does not register NLM (program 100021 v4, tcp) with its portmapper:" \
            "file locking is not served, so the lock tests cannot run (a plain mount's first" \
            "lock would hang)"
    fi
    log "$SERVER serves NLM v4 on port $port"
}

# --------------------------------------------------------------- the check
# `kclient.sh --_lock-table WHAT path=P fileid=N start=S len=L type=T`:
# what the server's own lock table says about the guest's file, for the
# host-side checker (kc_host.py listen). Prints "OK ..." or "FAIL ...".
# Called with the run's settings in the environment (KC_SERVER, ...).
server_locks() {   # FILEID RELPATH -> lines "TYPE START END" (END inclusive or "eof")
    local fileid=$1 rel=$2
    case $KC_SERVER in
        ganesha)
            # ganesha holds the locks it grants as OFD locks on the backing file
            local f="$KC_EXPORT_DIR/$rel" ino dev maj min
            ino=$(stat -c %i "$f") || return 1
            dev=$(stat -c %d "$f")
            maj=$(( (dev >> 8) & 0xfff )); min=$(( (dev & 0xff) | ((dev >> 12) & 0xfff00) ))
            awk -v id="$(printf '%02x:%02x:%s' "$maj" "$min" "$ino")" '$2 != "->" && $6 == id {
                    end = ($8 == "EOF") ? "eof" : $8
                    print tolower($4), $7, end }' /proc/locks ;;
        pgnfs)
            # `pgnfs locks`: one line per lock with key=value words: fileid=N
            # (or path=P) type=read|write start=N and end=N|eof or len=N (0: to
            # the end); a line with state=... other than granted (a waiting
            # request) is not a lock held, nor is a "#" line
            local out
            out=$("$KC_BUILD/server/pgnfs" locks --data "$KC_DATA" 2>&1) || {
                echo "ERROR pgnfs locks --data $KC_DATA failed: $(echo "$out" | tail -n 1)"
                return 1; }
            echo "$out" | awk -v fid="$fileid" -v p="/$rel" '
                /^[ \t]*#/ { next }
                { delete kv; for (i = 1; i <= NF; i++) { n = index($i, "=");
                      if (n) kv[substr($i, 1, n - 1)] = substr($i, n + 1) } }
                !(("fileid" in kv && kv["fileid"] == fid) ||
                  ("path" in kv && (kv["path"] == p || "/" kv["path"] == p))) { next }
                ("state" in kv && tolower(kv["state"]) != "granted") { next }
                { end = "eof"
                  if ("end" in kv) end = tolower(kv["end"])
                  else if ("len" in kv && kv["len"] + 0 > 0) end = kv["start"] + kv["len"] - 1
                  print tolower(kv["type"]), kv["start"] + 0, end }' ;;
    esac
}

lock_table_check() {
    local what=$1 path="" fileid="" start="" len="" type="" w rel lines
    shift
    for w in "$@"; do
        case $w in
            path=*) path=${w#path=} ;; fileid=*) fileid=${w#fileid=} ;;
            start=*) start=${w#start=} ;; len=*) len=${w#len=} ;; type=*) type=${w#type=} ;;
        esac
    done
    rel=${path#"$GUEST_MNT"/}
    if ! lines=$(server_locks "$fileid" "$rel"); then
        echo "FAIL cannot read $KC_SERVER's lock table: $lines"
        return 0
    fi
    case $what in
        HELD)
            if echo "$lines" | grep -qx "$type $start $((start + len - 1))"; then
                echo "OK $KC_SERVER holds $type $start..$((start + len - 1)) of $rel:" \
                    "$(echo "$lines" | tr '\n' ';')"
            else
                echo "FAIL $KC_SERVER's lock table has no $type lock on $start..$((start + len - 1))" \
                    "of $rel (fileid $fileid): [$(echo "$lines" | tr '\n' ';')]"
            fi ;;
        RELEASED)
            if [ -z "$lines" ]; then
                echo "OK no lock left on $rel"
            else
                echo "FAIL $KC_SERVER still holds locks on $rel: [$(echo "$lines" | tr '\n' ';')]"
            fi ;;
        *) echo "FAIL unknown request $what" ;;
    esac
}

# start_checker [HANDLER-OPTION]: the host side the guest reaches as
# KC_SYNC; each line it sends runs `kclient.sh HANDLER-OPTION WORDS...`
# (default --_lock-table).
start_checker() {
    export KC_SERVER=$SERVER KC_BUILD=$BUILD KC_DATA=${DATA:-} KC_EXPORT_DIR=${EXPORT_DIR:-}
    ip netns exec "$NS" python3 "$HERE/kc_host.py" listen "$SYNC_PORT" "$WORK/sync.log" \
        "$HERE/kclient.sh" "${1:---_lock-table}" </dev/null >>"$WORK/sync.log" 2>&1 &
    SYNC_PID=$!
    local i
    for ((i = 0; i < 300; i++)); do
        grep -q listening "$WORK/sync.log" 2>/dev/null && return 0
        kill -0 "$SYNC_PID" 2>/dev/null || break
        sleep 0.1
    done
    cat "$WORK/sync.log" >&2
    die "the host-side checker did not start"
}

# `kclient.sh --_snapshot SNAPSHOT|DELETE NAME`: take or delete snapshot
# NAME of the server's file system, for the guest of t_snap (through the
# host-side checker). Prints "OK ..." or "FAIL ...".
snapshot_request() {
    local out
    case ${1:-} in
        SNAPSHOT) out=$("$KC_BUILD/server/pgnfs" snapshot create --data "$KC_DATA" "$2" 2>&1) ;;
        DELETE) out=$("$KC_BUILD/server/pgnfs" snapshot delete --data "$KC_DATA" "$2" 2>&1) ;;
        *) echo "FAIL unknown request ${1:-}"; return 0 ;;
    esac
    if [ $? = 0 ]; then
        echo "OK $1 $2: $(echo "$out" | tail -n 1)"
    else
        echo "FAIL $1 $2: $(echo "$out" | tail -n 1)"
    fi
}

# ---------------------------------------------------------------- guests
# boot MODE PAYLOAD TLIMIT -- MODE busybox|full|lock|plain; the README's
# mount for busybox (vers=3,nolock through the portmapper), a plain mount
# (defaults: mount.nfs negotiates) for the full guest in lock mode and in
# plain mode (the full guest without run.sh's lock mode).
boot() {
    local mode=$1 payload=$2 tlimit=$3 args=() e
    case $mode in
        busybox) args=(-O vers=3,nolock) ;;
        full) args=(-F -O vers=3,nolock) ;;
        lock) args=(-L -O defaults) ;;
        plain) args=(-F -O defaults) ;;
    esac
    [ "$VERBOSE" = 1 ] || args+=(-q)
    for e in "${GUEST_ENV[@]}"; do args+=(-e "$e"); done
    mkdir -p "$WORK/run"
    # In the background, so that a signal to this script is handled at once
    # (bash runs a trap only after a foreground child has exited).
    "$KC/run.sh" "${args[@]}" -n "$NS" -t "$tlimit" -T $((tlimit - 60)) -l "$WORK/run" \
        "$NFS_PORT" "$MNT_PORT" "$EXPORT" "$payload" &
    RUN_PID=$!
    wait "$RUN_PID"
    local rc=$?
    RUN_PID=""
    return $rc
}

# The end of the guest's console, after a failure.
show_console() {
    echo "---- guest console (end of $WORK/run/console.log) ----"
    grep -av '^\[ *[0-9.]*\] ' "$WORK/run/console.log" 2>/dev/null | tail -n "${1:-60}"
    echo "----"
}

payload() {   # DIR SCRIPT BINARY... -> DIR with run.sh and the static binaries
    local dir=$1 script=$2 b
    shift 2
    mkdir -p "$dir"
    cp "$HERE/guest/$script" "$dir/run.sh"
    for b in "$@"; do
        [ -x "$b" ] || die "$b is missing: build first (scripts/build.sh builds the static payloads)"
        cp "$b" "$dir/"
    done
}

result() {   # RC WHAT
    local rc=$1
    if [ "$rc" = 0 ]; then
        echo "kclient: $TEST against $SERVER: PASS"
        return 0
    fi
    [ "$VERBOSE" = 1 ] || show_console
    echo "kclient: $TEST against $SERVER: FAIL (guest status $rc; logs in $WORK/run$(
        [ -n "$LOGDIR" ] && echo " and $LOGDIR"))"
    return 1
}

# ---------------------------------------------------------------- tests
t_smoke() {
    payload "$WORK/payload" smoke.sh
    boot busybox "$WORK/payload" 420
    result $?
}

t_cthon_basic() {
    payload "$WORK/payload" cthon-basic.sh "$BUILD/bench/connectathon/cthon-path"
    boot busybox "$WORK/payload" 600
    local rc=$?
    grep -a '^test ' "$WORK/run/console.log"
    result $rc
}

t_locks() {
    need_nlm
    start_checker
    payload "$WORK/payload" locks.sh "$BUILD/tests/kclient/kc_locks"
    GUEST_ENV+=("KC_SYNC=10.0.2.2:$SYNC_PORT")
    boot lock "$WORK/payload" 600
    local rc=$?
    grep -a '^KCLOCK' "$WORK/run/console.log"
    echo "host-side checks:"
    sed 's/^/  /' "$WORK/sync.log"
    result $rc
}

t_cthon_lock() {
    need_nlm
    payload "$WORK/payload" cthon-lock.sh "$BUILD/bench/connectathon/cthon-lock"
    boot lock "$WORK/payload" 900
    local rc=$?
    grep -a -E '^(test |CTHON-LOCK|METRIC)' "$WORK/run/console.log"
    result $rc
}

t_snap() {
    [ "$SERVER" = pgnfs ] || skip "snap tests pgnfs's snapshots"
    start_checker --_snapshot
    payload "$WORK/payload" snap.sh
    GUEST_ENV+=("KC_SYNC=10.0.2.2:$SYNC_PORT")
    boot plain "$WORK/payload" 540
    local rc=$?
    grep -a '^KCSNAP' "$WORK/run/console.log"
    echo "host-side requests:"
    sed 's/^/  /' "$WORK/sync.log"
    result $rc
}

# run --payload DIR [--busybox|--full|--lock] [--nlm] [-t SECS]: for scripts.
t_run() {
    local dir="" mode=busybox tlimit=900 nlm=0
    while [ $# -gt 0 ]; do
        case $1 in
            --payload) dir=$2; shift 2 ;;
            --busybox) mode=busybox; shift ;;
            --full) mode=full; shift ;;
            --lock) mode=lock; shift ;;
            --nlm) nlm=1; shift ;;
            -t) tlimit=$2; shift 2 ;;
            *) die "run: unknown argument $1" ;;
        esac
    done
    [ -n "$dir" ] && [ -d "$dir" ] || die "run: --payload DIR is required"
    [ "$nlm" = 1 ] && need_nlm
    boot "$mode" "$dir" "$tlimit"
}

# ---------------------------------------------------------------- main
if [ "${1:-}" = --_lock-table ]; then
    shift
    lock_table_check "$@"
    exit 0
fi
if [ "${1:-}" = --_snapshot ]; then
    shift
    snapshot_request "$@"
    exit 0
fi

while [ $# -gt 0 ]; do
    case $1 in
        --server) SERVER=$2; shift 2 ;;
        --build) BUILD=$2; shift 2 ;;
        --set) SETS+=("$2"); shift 2 ;;
        --log) LOGDIR=$2; shift 2 ;;
        --keep) KEEP=1; shift ;;
        -e) GUEST_ENV+=("$2"); shift 2 ;;
        -v) VERBOSE=1; shift ;;
        -h|--help) usage ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || usage
TEST=$1
shift
[ "${1:-}" = -- ] && shift
case $SERVER in pgnfs|ganesha) ;; *) die "--server: pgnfs or ganesha, not $SERVER" ;; esac
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || die "no build directory $BUILD"
find_harness

case $TEST in
    prepare) do_prepare; exit 0 ;;
    smoke|locks|cthon-basic|cthon-lock|snap|run) ;;
    *) die "unknown test $TEST (see --help)" ;;
esac
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces for the server and port 111)"
images_ready || die "the guest images are missing in $D: run $0 prepare (ctest: kclient/prepare)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing: run $0 prepare"

clean_stale
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
WORK=$(mktemp -d "/tmp/kclient-test.$$.XXXXXX") || die "mktemp failed"
chmod 755 "$WORK"   # the embedded PostgreSQL runs as another user
# snap: .snapshots in the root of an export other than "/" too (the
# guest makes the directory before it mounts it)
[ "$TEST" = snap ] && EXPORTS+=("/kcsnap/tree 127.0.0.1(rw,no_root_squash)")
start_server
case $TEST in
    smoke) t_smoke ;;
    locks) t_locks ;;
    cthon-basic) t_cthon_basic ;;
    cthon-lock) t_cthon_lock ;;
    snap) t_snap ;;
    run) t_run "$@" ;;
esac
