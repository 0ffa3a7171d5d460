#!/bin/sh
# cthon-lock.sh -- kclient/cthon-lock in the full guest (lock mode): the
# Connectathon lock tests (cthon-lock, static) on the mounted export, in
# the modes of CL_MODES (default "one two"):
#   one  parent and child on the one mount, as the classic suite runs
#   two  the child on a second mount (nosharecache), so that the server
#        alone decides every conflict between them
# Env: CL_ARGS (arguments for cthon-lock, e.g. --quick -t 1,2,7).
set -u
opts=$(awk -v m="$MNT" '$2==m{print $4}' /proc/mounts)
src=$(awk -v m="$MNT" '$2==m{print $1}' /proc/mounts)
case ",$opts," in
    *,local_lock=none,*) ;;
    *) echo "CTHON-LOCK FAIL: locks are local to the client (local_lock is not none): $opts"; exit 1 ;;
esac
. /kclient.env
D="$MNT/cthon-lock.$$"
mkdir -p "$D" /mnt/peer || exit 1
status=0
for mode in ${CL_MODES:-one two}; do
    echo "CTHON-LOCK-MODE $mode"
    case $mode in
        one)
            # shellcheck disable=SC2086
            "$PAYLOAD/cthon-lock" ${CL_ARGS:-} "$D" || status=1 ;;
        two)
            if ! mount -t nfs -o "nosharecache,$KC_OPTS" "$src" /mnt/peer; then
                echo "CTHON-LOCK FAIL: second mount (nosharecache) of $src"; status=1; continue
            fi
            # shellcheck disable=SC2086
            "$PAYLOAD/cthon-lock" ${CL_ARGS:-} --peer-dir "/mnt/peer/${D#"$MNT"/}" "$D" || status=1
            umount /mnt/peer ;;
        *) echo "CTHON-LOCK FAIL: unknown mode $mode"; status=1 ;;
    esac
done
rm -rf "$D"
echo "CTHON-LOCK-END status=$status"
exit $status
