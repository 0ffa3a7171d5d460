#!/bin/sh
# pgnfs-entrypoint -- the container's entry point.
#
#   serve (default)  create the file system if the database has none
#                    (pgnfs mkfs, with the [storage] settings), then run
#                    pgnfsd in the foreground
#   pgnfs ARGS...    any admin command (stats, du, find, sql, mkfs ...)
#   pgnfsd ARGS...   the bare daemon
#   anything else    run as it is (a shell, ...)
#
# The configuration is /etc/pgnfs/pgnfs.conf (PGNFS_CONFIG overrides the
# path) plus PGNFS_<GROUP>_<KEY> variables; the database must be set
# ([database] conninfo or PGNFS_DATABASE_CONNINFO): a container does not
# run the embedded cluster. The database may still be starting: mkfs is
# retried for up to PGNFS_WAIT_S seconds (default 60).
set -eu
conf=${PGNFS_CONFIG:-/etc/pgnfs/pgnfs.conf}
cmd=${1:-serve}

case "$cmd" in
  serve)
    shift || true
    wait_s=${PGNFS_WAIT_S:-60}
    start=$(date +%s)
    while :; do
      # Exit 0: created; "already holds" on stderr: nothing to do.
      if out=$(pgnfs mkfs --config "$conf" 2>&1); then
        echo "$out"
        break
      fi
      case "$out" in
        *"already holds a pgnfs file system"*) break ;;
      esac
      if [ $(( $(date +%s) - start )) -ge "$wait_s" ]; then
        echo "$out" >&2
        echo "pgnfs-entrypoint: the database is not usable after ${wait_s}s" >&2
        exit 1
      fi
      sleep 1
    done
    exec pgnfsd --config "$conf" "$@"
    ;;
  pgnfs)
    shift
    exec pgnfs "$@" --config "$conf"
    ;;
  pgnfsd)
    shift
    exec pgnfsd --config "$conf" "$@"
    ;;
  *)
    exec "$@"
    ;;
esac
