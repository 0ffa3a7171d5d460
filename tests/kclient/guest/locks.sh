#!/bin/sh
# locks.sh -- kclient/locks in the full guest (run.sh -L: no nolock, so
# locks go to the server's NLM). Checks that the mount really sends locks
# to the server, mounts the export a second time (nosharecache: a client
# view that shares no inode, so no lock state, with the first) and runs
# kc_locks on both. Env: KC_SYNC (HOST:PORT of the host's lock-table check,
# optional).
set -u
opts=$(awk -v m="$MNT" '$2==m{print $4}' /proc/mounts)
src=$(awk -v m="$MNT" '$2==m{print $1}' /proc/mounts)
echo "KCLOCK mount: $src $opts"
case ",$opts," in
    *,local_lock=none,*) ;;
    *) echo "KCLOCK FAIL: locks are local to the client (local_lock is not none)"; exit 1 ;;
esac
. /kclient.env
mkdir -p "$MNT/kclocks" /mnt/peer || exit 1
if ! mount -t nfs -o "nosharecache,$KC_OPTS" "$src" /mnt/peer; then
    echo "KCLOCK FAIL: second mount (nosharecache) of $src"; exit 1
fi
echo "KCLOCK second mount: $(awk '$2=="/mnt/peer"{print $4}' /proc/mounts)"
"$PAYLOAD/kc_locks" "$MNT/kclocks" /mnt/peer/kclocks ${KC_SYNC:-}
rc=$?
umount /mnt/peer
rm -rf "$MNT/kclocks"
exit $rc
