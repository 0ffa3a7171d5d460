#!/bin/sh
# smoke.sh -- kclient/smoke in the guest (busybox sh, run as root with the
# export mounted at $MNT as the project's README says). Every check prints
# "SMOKE ok: ..." or "SMOKE FAIL: ..."; the script goes on after a failure
# and exits 1 if any check failed, so one run shows everything that is
# wrong. Env: SMOKE_MB (size of the checksum file, default 8).
#
# The exec-only checks: a static ELF (a copy of this guest's busybox) with
# mode 001 (others may execute) or 010 (the group may execute), owned by
# another user, run by user kc (uid 1000). The client reads the program's
# pages with kc's credentials, so the server must allow READ to a caller
# that may execute the file (as knfsd does); mode 000 must stay refused.
MB=${SMOKE_MB:-8}
D="$MNT/smoke.$$"
fails=0
ok() { echo "SMOKE ok: $*"; }
fail() { echo "SMOKE FAIL: $*"; fails=$((fails + 1)); }
# drop the guest's page, dentry and inode caches: the next reads go to the server
uncache() { sync; echo 3 > /proc/sys/vm/drop_caches; }

mkdir "$D" || { echo "SMOKE FAIL: mkdir $D"; exit 1; }
cd "$D" || exit 1

# --- data: write, checksum, read back from the server -------------------
if dd if=/dev/urandom of=big.bin bs=1M count="$MB" conv=fsync 2>/dev/null; then
    sum1=$(sha256sum big.bin | cut -d' ' -f1)
    uncache
    sum2=$(sha256sum big.bin | cut -d' ' -f1)
    size=$(stat -c %s big.bin)
    if [ "$sum1" = "$sum2" ] && [ "$size" = $((MB * 1048576)) ]; then
        ok "$MB MiB written and read back after drop_caches, sha256 $sum1"
    else
        fail "checksum after drop_caches: $sum1 then $sum2, size $size"
    fi
    echo "SMOKE-SHA256 $sum1"
else
    fail "dd write of $MB MiB"
fi
# a write in the middle of a file, read back from the server
printf 'hello, server' | dd of=big.bin bs=1 seek=1000 conv=notrunc 2>/dev/null
uncache
got=$(dd if=big.bin bs=1 skip=1000 count=13 2>/dev/null)
[ "$got" = "hello, server" ] && ok "write at offset 1000 read back" || fail "offset write read back '$got'"

# --- names ------------------------------------------------------------------
mkdir -p a/b/c && [ -d a/b/c ] && ok "mkdir -p a/b/c" || fail "mkdir -p a/b/c"
echo one > a/b/c/f1
mv a/b/c/f1 a/f2 && [ ! -e a/b/c/f1 ] && [ "$(cat a/f2)" = one ] && ok "rename of a file across directories" \
    || fail "rename of a file"
mv a/b a/bb && [ -d a/bb/c ] && [ ! -e a/b ] && ok "rename of a directory" || fail "rename of a directory"
ln -s ../f2 a/bb/sl && [ "$(readlink a/bb/sl)" = ../f2 ] && [ "$(cat a/bb/sl)" = one ] \
    && ok "symlink and readlink" || fail "symlink: $(readlink a/bb/sl)"
ln a/f2 a/hard && n=$(stat -c %h a/f2) && i1=$(stat -c %i a/f2) && i2=$(stat -c %i a/hard) \
    && [ "$n" = 2 ] && [ "$i1" = "$i2" ] && ok "hard link (nlink 2, one inode)" \
    || fail "hard link: nlink $(stat -c %h a/f2), inodes $(stat -c %i a/f2) $(stat -c %i a/hard)"
chmod 640 a/f2 && uncache && [ "$(stat -c %a a/f2)" = 640 ] && ok "chmod 640 seen by the server" \
    || fail "chmod: mode $(stat -c %a a/f2)"
truncate -s 100000 a/f2 && uncache && [ "$(stat -c %s a/f2)" = 100000 ] && ok "truncate up to 100000" \
    || fail "truncate up: $(stat -c %s a/f2)"
truncate -s 2 a/f2 && uncache && [ "$(stat -c %s a/f2)" = 2 ] && [ "$(cat a/f2)" = on ] \
    && ok "truncate down to 2" || fail "truncate down: size $(stat -c %s a/f2)"
mkdir many
for i in $(seq 1 300); do : > "many/file-$i"; done
uncache
n=$(ls many | wc -l)
[ "$n" = 300 ] && ok "readdir of 300 entries" || fail "readdir: $n entries, expected 300"
n=$(find many -type f | wc -l)
[ "$n" = 300 ] && ok "find sees 300 files" || fail "find: $n"
rm -r many && [ ! -e many ] && ok "remove 300 files and their directory" || fail "rm -r many"

# --- exec-only programs, run by user kc ---------------------------------
# x001: owner 2000, group 2000, mode 001: kc may execute as "others".
# x010: owner 2000, group 1000 (kc's), mode 010: kc may execute as group.
# x000 (mode 000) must not run; x755 (mode 755) must.
for m in 001 010 000 755; do
    mkdir "x$m" && chmod 755 "x$m"
    cp /bin/busybox "x$m/busybox"
done
chown 2000:2000 x001/busybox x000/busybox x755/busybox && chown 2000:1000 x010/busybox
chmod 001 x001/busybox && chmod 010 x010/busybox && chmod 000 x000/busybox && chmod 755 x755/busybox
uncache
runs_as_kc() { su kc -c "$D/x$1/busybox true" 2>&1; }
if out=$(runs_as_kc 755); then ok "kc runs a mode 755 program of another user"
else fail "kc cannot run a mode 755 program of another user: $out"; fi
if out=$(runs_as_kc 000); then fail "kc ran a mode 000 program of another user"
else ok "kc cannot run a mode 000 program of another user ($out)"; fi
uncache
if out=$(runs_as_kc 001); then ok "EXEC-ONLY: kc runs a mode 001 program (others may execute, not read)"
else fail "EXEC-ONLY: kc cannot run a mode 001 program of another user: $out"; fi
uncache
if out=$(runs_as_kc 010); then ok "EXEC-ONLY: kc runs a mode 010 program (kc's group may execute, not read)"
else fail "EXEC-ONLY: kc cannot run a mode 010 program of kc's group: $out"; fi

# --- clean up ---------------------------------------------------------------
cd "$MNT" || exit 1
rm -rf "$D" && [ ! -e "$D" ] && ok "rm -rf of the test tree" || fail "rm -rf $D"
if [ "$fails" = 0 ]; then echo "SMOKE-OK"; exit 0; fi
echo "SMOKE-FAILED $fails check(s)"
exit 1
