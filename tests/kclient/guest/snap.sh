#!/bin/bash
# snap.sh -- kclient/snap in the full guest (a plain mount, `-O defaults`:
# mount.nfs negotiates): snapshots read through the real Linux client.
# Makes a tree, has the host take snapshot kc1 (KC_SYNC: the host-side
# checker, which runs `pgnfs snapshot create`), changes and removes things
# through the mount, then checks /.snapshots: listings, old contents
# (before and after drop_caches), a device of its own per snapshot (the
# client mounts each apart), `find` over the whole snapshot against the
# tree as it was, `cp -a` back out, every change refused, a second
# snapshot, and a deleted one gone. Also what the client sends: `ls -la
# /.snapshots` must need no LOOKUP (READDIRPLUS brings each snapshot's
# attributes and handle), and the deletion of a snapshot that is not the
# newest must show in the listing at once (the directory's times move).
# Every check prints "KCSNAP ok: ..." or "KCSNAP FAIL: ..."; the script
# goes on after a failure and exits 1 if any check failed.
# The harness runs it with sh (dash): bash, for /dev/tcp and [[ ]].
[ -n "${BASH_VERSION:-}" ] || exec /bin/bash "$0" "$@"
set -u
S="$MNT/.snapshots"
D=kcsnap                   # the tree, under $MNT
ORIG=/tmp/orig             # a copy of it as it was when kc1 was taken
fails=0
ok() { echo "KCSNAP ok: $*"; }
fail() { echo "KCSNAP FAIL: $*"; fails=$((fails + 1)); }
check() { # WHAT CMD... : ok when CMD succeeds
    local what=$1
    shift
    if "$@"; then ok "$what"; else fail "$what"; fi
}
uncache() { sync; echo 3 > /proc/sys/vm/drop_caches; }
# Show how two listings differ (no /dev/fd here for <(...)).
show_diff() {
    echo "$1" > /tmp/want
    echo "$2" > /tmp/got
    diff /tmp/want /tmp/got | head -n 20 | sed 's/^/KCSNAP   /'
}
# The count of NFS procedure $2 the client sent on the mount at $1.
nops() {
    awk -v m="$1" -v op="$2:" '$1 == "device" { on = ($5 == m); next }
        on && $1 == op { print $2; exit }' /proc/self/mountstats
}

# Ask the host (kc_host.py listen) for REQUEST; print its answer line.
host() {
    local ans="" h=${KC_SYNC%:*} p=${KC_SYNC#*:}
    exec 3<>"/dev/tcp/$h/$p" || { echo "FAIL cannot reach $KC_SYNC"; return; }
    echo "$*" >&3
    read -r ans <&3
    exec 3>&-
    echo "$ans"
}

# Every entry under $1 with what a snapshot must keep of it, by path
# (atime left out: reading changes it). Fields: path, type, size, mode,
# uid, gid, links, inode, blocks, mtime, link target.
listing() {
    (cd "$1" && find . -printf '%P|%y|%s|%m|%U|%G|%n|%i|%b|%T@|%l\n' | sort)
}

# `CMD...` must fail with EROFS ("Read-only file system").
refused() { # WHAT CMD...
    local what=$1 out
    shift
    if out=$("$@" 2>&1); then
        fail "$what: succeeded in a snapshot"
    elif [[ $out == *"Read-only file system"* ]]; then
        ok "$what: EROFS"
    else
        fail "$what: not EROFS: $out"
    fi
}

echo "KCSNAP mount: $(awk -v m="$MNT" '$2==m{print $1, $4}' /proc/mounts)"

# --- the tree ---------------------------------------------------------------
mkdir -p "$MNT/$D/tree/sub/deep" "$MNT/$D/tree/empty" "$MNT/$D/many" || exit 1
cd "$MNT/$D" || exit 1
echo "first version" > tree/a.txt
head -c 3000000 /dev/urandom > tree/big.bin
head -c 70000 /dev/urandom > tree/sub/b.bin
echo deep > tree/sub/deep/c.txt
printf 'secret\n' > tree/private.txt && chmod 600 tree/private.txt
ln -s a.txt tree/link
ln tree/a.txt tree/sub/hard
chown 1000:1000 tree/sub/b.bin && chmod 640 tree/sub/b.bin
touch -d '2001-02-03 04:05:06.789' tree/sub/deep/c.txt
: > tree/gone.txt
for i in $(seq 1 150); do echo "file $i" > "many/f$i"; done
sync
cp -a "$MNT/$D" "$ORIG" || exit 1
before=$(listing "$MNT")
live_dev=$(stat -c %d "$MNT")

ans=$(host SNAPSHOT kc1)
echo "KCSNAP host: $ans"
[[ $ans == OK* ]] || { fail "the host did not take snapshot kc1"; exit 1; }

# --- changes after it -------------------------------------------------------
echo "second version" > tree/a.txt
head -c 100000 /dev/urandom >> tree/big.bin
rm tree/gone.txt
rm -r tree/sub/deep
mv tree/sub/b.bin tree/b-moved.bin
chmod 700 tree/empty
rm many/f1 many/f2
echo new > tree/new.txt
sync

# --- /.snapshots ------------------------------------------------------------
ls_s=$(ls -la "$S" 2>&1)
echo "$ls_s" | sed 's/^/KCSNAP   /'
[[ $ls_s == *" kc1"* ]] && ok "ls -la $S lists kc1" || fail "ls -la $S: no kc1"
# READDIRPLUS gave each snapshot's attributes and handle: no LOOKUP.
n=$(nops "$S" LOOKUP)
[ "$n" = 0 ] && ok "ls -la $S sent no LOOKUP (READDIRPLUS: $(nops "$S" READDIRPLUS))" ||
    fail "ls -la $S sent $n LOOKUPs"
ls -a "$MNT" | grep -qx .snapshots && fail ".snapshots is listed in the root" ||
    ok ".snapshots is not listed in the root ([snapshot] visible = false)"
ls_t=$(ls -la "$S/kc1/$D/tree" 2>&1)
echo "$ls_t" | sed 's/^/KCSNAP   /'
[[ $ls_t == *gone.txt* && $ls_t != *new.txt* && $ls_t == *"link -> a.txt"* ]] &&
    ok "ls -la of the tree in kc1: gone.txt there, new.txt not, the link" ||
    fail "ls -la of the tree in kc1"
cmp -s tree/a.txt "$ORIG/tree/a.txt" && fail "the live a.txt did not change"
check "cat of a.txt in kc1 is the first version" \
    test "$(cat "$S/kc1/$D/tree/a.txt")" = "first version"
for f in tree/a.txt tree/big.bin tree/sub/b.bin tree/sub/deep/c.txt tree/private.txt many/f1; do
    check "cmp $f in kc1 with its copy" cmp "$S/kc1/$D/$f" "$ORIG/$f"
done
check "readlink in kc1" test "$(readlink "$S/kc1/$D/tree/link")" = a.txt

# --- devices: each snapshot is a file system of its own -----------------------
sdev=$(stat -c %d "$S")
kdev=$(stat -c %d "$S/kc1")
fdev=$(stat -c %d "$S/kc1/$D/tree/a.txt")
echo "KCSNAP st_dev: live $live_dev, .snapshots $sdev, kc1 $kdev, a file in kc1 $fdev"
[ "$kdev" != "$live_dev" ] && [ "$fdev" = "$kdev" ] && [ "$sdev" != "$kdev" ] &&
    ok "kc1 has a st_dev of its own (live $live_dev, kc1 $kdev)" || fail "st_dev"
check "kc1's inode numbers are the live ones" \
    test "$(stat -c %i "$S/kc1/$D/tree/a.txt")" = "$(stat -c %i tree/a.txt)"
grep ' nfs ' /proc/mounts | sed 's/^/KCSNAP   mount: /'
check "the client mounted kc1 apart (/proc/mounts)" grep -q " $S/kc1 nfs " /proc/mounts
check "df of kc1 (FSSTAT on a snapshot's handle)" df "$S/kc1"
check "stat -f of kc1" stat -f "$S/kc1"
check "cd into kc1 and .. back to .snapshots" \
    test "$(cd "$S/kc1/$D/tree" && cd ../../.. && pwd -P)" = "$S"
check "ls of kc1/.. is .snapshots" test "$(ls "$S/kc1/..")" = "$(ls "$S")"

# --- find over the whole snapshot --------------------------------------------
after=$(listing "$S/kc1")
if [ "$before" = "$after" ]; then
    ok "find over kc1: $(echo "$after" | wc -l) entries, each as it was (type, size, mode," \
        "owner, links, inode, mtime, target)"
else
    fail "find over kc1 differs from the tree when it was taken:"
    show_diff "$before" "$after"
fi

# --- the same snapshot from the root of another export ---------------------------
# /kcsnap/tree is exported too (kclient.sh): there, kc1 is that tree.
. /kclient.env
X=/mnt/sub
mkdir -p "$X"
if mount -t nfs -o "$KC_OPTS" "10.0.2.2:/$D/tree" "$X"; then
    check "export /$D/tree: kc1 lists in its .snapshots" test "$(ls "$X/.snapshots")" = kc1
    check "export /$D/tree: kc1 is the tree as it was" diff -r "$X/.snapshots/kc1" "$ORIG/tree"
    check "export /$D/tree: its a.txt is the first version" \
        test "$(cat "$X/.snapshots/kc1/a.txt")" = "first version"
    check "export /$D/tree: kc1 on a st_dev of its own" \
        test "$(stat -c %d "$X/.snapshots/kc1")" != "$(stat -c %d "$X")"
    check "export /$D/tree: .. of kc1 is its .snapshots" \
        test "$(cd "$X/.snapshots/kc1/sub" && cd ../.. && pwd -P)" = "$X/.snapshots"
    refused "export /$D/tree: create in kc1" touch "$X/.snapshots/kc1/x"
    awk -v m="$X" 'index($2, m) == 1 {print $2}' /proc/mounts | sort -r |
        xargs -r -n 1 umount -l 2>/dev/null
else
    fail "mount of the export /$D/tree"
fi

# --- again from the server ------------------------------------------------------
uncache
after=$(listing "$S/kc1")
[ "$before" = "$after" ] && ok "find over kc1 after drop_caches" ||
    fail "find over kc1 after drop_caches differs"
check "cmp -r of the tree in kc1 after drop_caches" diff -r "$S/kc1/$D" "$ORIG"

# --- restore by copy ----------------------------------------------------------
check "cp -a a tree out of kc1" cp -a "$S/kc1/$D/tree" restored
check "the copy has the old contents" diff -r restored "$ORIG/tree"
a=$(listing restored | cut -d'|' -f1-6,10,11)
b=$(listing "$S/kc1/$D/tree" | cut -d'|' -f1-6,10,11)
if [ "$a" = "$b" ]; then
    ok "the copy has the old modes, owners, times and link"
else
    fail "cp -a lost attributes:"
    show_diff "$b" "$a"
fi
check "cp -a of a single file" cp -a "$S/kc1/$D/tree/a.txt" a.restored
check "it is the first version" test "$(cat a.restored)" = "first version"

# --- every change refused -----------------------------------------------------
T="$S/kc1/$D/tree"
refused "create" touch "$T/x"
refused "create (O_EXCL)" bash -c "set -o noclobber; echo > '$T/y'"
refused "mkdir" mkdir "$T/newdir"
refused "mknod (fifo)" mkfifo "$T/fifo"
refused "symlink" ln -s a "$T/sl"
refused "link" ln "$T/a.txt" "$T/a2"
refused "unlink" rm -f "$T/a.txt"
refused "rmdir" rmdir "$T/empty"
refused "rename" mv "$T/a.txt" "$T/a3"
refused "chmod" chmod 777 "$T/a.txt"
refused "chown" chown 1000 "$T/a.txt"
refused "utimes" touch -c -m -d @1000000000 "$T/a.txt"
refused "rm -rf of the snapshot" rm -rf "$S/kc1/$D"
refused "mkdir in .snapshots" mkdir "$S/new"
refused "copy into a snapshot" cp tree/new.txt "$T/"
# A snapshot in use is a mount point of the client's, which refuses first.
out=$(rmdir "$S/kc1" 2>&1) && fail "rmdir of a snapshot succeeded" ||
    { [[ $out == *"Read-only file system"* || $out == *busy* ]] &&
        ok "rmdir of a snapshot refused: ${out##*: }" || fail "rmdir of a snapshot: $out"; }
# Opening a file for writing: the client asks ACCESS first, which grants
# no change in a snapshot, so the kernel itself says EACCES (as for any
# read-only export of Linux nfsd); nothing reaches the server.
for how in '>>' '>'; do
    out=$(bash -c "echo more $how '$T/a.txt'" 2>&1)
    if [ $? = 0 ]; then
        fail "open $how succeeded in a snapshot"
    elif [[ $out == *"Permission denied"* || $out == *"Read-only file system"* ]]; then
        ok "open for writing ($how) refused: ${out##*: }"
    else
        fail "open $how: $out"
    fi
done
out=$(truncate -s 0 "$T/big.bin" 2>&1) && fail "truncate succeeded in a snapshot" ||
    ok "truncate refused: ${out##*: }"
# --- another user: the snapshot's own modes and owners decide -------------------
as_kc() { setpriv --reuid=1000 --regid=1000 --clear-groups -- "$@"; }
check "kc reads a.txt (0644) in kc1" as_kc cat "$T/a.txt"
check "kc reads sub/b.bin (its own, 0640) in kc1" as_kc cmp "$T/sub/b.bin" "$ORIG/tree/sub/b.bin"
out=$(as_kc cat "$T/private.txt" 2>&1) && fail "kc read private.txt (0600, root's) in kc1" ||
    { [[ $out == *"Permission denied"* ]] && ok "kc may not read private.txt (0600, root's)" ||
        fail "kc reading private.txt: $out"; }

mv "$T/a.txt" tree/moved-out 2>/dev/null
check "mv out of a snapshot left it there" test -e "$T/a.txt"
rm -f tree/moved-out
uncache
check "kc1 unchanged after all that" diff -r "$S/kc1/$D" "$ORIG"

# --- a second snapshot, and a deleted one ---------------------------------------
ans=$(host SNAPSHOT kc2)
[[ $ans == OK* ]] || fail "the host did not take snapshot kc2: $ans"
check "kc2 has the second version" test "$(cat "$S/kc2/$D/tree/a.txt")" = "second version"
check "kc1 still has the first" test "$(cat "$S/kc1/$D/tree/a.txt")" = "first version"
k2dev=$(stat -c %d "$S/kc2")
[ "$k2dev" != "$kdev" ] && [ "$k2dev" != "$live_dev" ] && ok "kc2 has a st_dev of its own" ||
    fail "kc2's st_dev $k2dev (kc1 $kdev, live $live_dev)"
ans=$(host SNAPSHOT kc3)
[[ $ans == OK* ]] || fail "the host did not take snapshot kc3: $ans"
check "kc3 reads" test "$(cat "$S/kc3/$D/tree/a.txt")" = "second version"
check "ls $S lists all three" test "$(ls "$S" | tr '\n' ' ')" = "kc1 kc2 kc3 "
# Delete the middle one: the newest snapshot's time stays, yet the client
# must see .snapshots change (a LOOKUP brings its new attributes).
ans=$(host DELETE kc2)
[[ $ans == OK* ]] || fail "the host did not delete kc2: $ans"
start=$SECONDS
while stat "$S/probe-$SECONDS-$RANDOM" >/dev/null 2>&1 || true; ls "$S" | grep -qx kc2; do
    [ $((SECONDS - start)) -lt 90 ] || break
    sleep 1
done
check "kc2 gone from ls $S after its deletion (in $((SECONDS - start)) s)" \
    test "$(ls "$S" | tr '\n' ' ')" = "kc1 kc3 "
uncache
out=$(cat "$S/kc2/$D/tree/a.txt" 2>&1) && fail "a deleted snapshot still reads" ||
    ok "a deleted snapshot no longer reads: ${out##*: }"
check "kc1 still reads" cmp "$S/kc1/$D/tree/big.bin" "$ORIG/tree/big.bin"

cd /
# the snapshots' submounts, innermost first, before the harness unmounts $MNT
# (lazily: a deleted snapshot's mount point no longer resolves)
awk -v m="$MNT/" 'index($2, m) == 1 {print $2}' /proc/mounts | sort -r |
    xargs -r -n 1 umount -l 2>/dev/null
echo "KCSNAP done: $fails failed"
[ "$fails" = 0 ]
