#!/usr/bin/env bash
# bench/citus/build.sh -- build Citus from its public source and install it
# into a private copy of Debian's PostgreSQL 15 (the system's stays as it
# is), for tests/citus/citus.sh. Citus is not packaged by Debian.
#
#   bench/citus/build.sh --src DIR [--work DIR]
#
# DIR is a Citus source tree, or the git directory of a clone of
# https://github.com/citusdata/citus (its HEAD is built; 12.x and 13.x
# work with PostgreSQL 15). --work (default /tmp/pgnfs-citus-build) gets
# deb/ (Debian's postgresql-15 and postgresql-server-dev-15, and the
# Kerberos headers the server's headers include, downloaded with apt),
# pg/ (those packages unpacked: a relocatable PostgreSQL), citus/ (the
# source, configured and built there) and build.log. Citus is configured
# without libcurl (it only reports statistics with it).
#
# Last line printed: the bin directory to give tests/citus/citus.sh as
# --pg-bin. Exit status 0 = built and installed.
set -euo pipefail
src= work=/tmp/pgnfs-citus-build
while [[ $# -gt 0 ]]; do
  case $1 in
    --src) src=${2:?--src needs a directory}; shift 2 ;;
    --work) work=${2:?--work needs a directory}; shift 2 ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed 's/^# \{0,1\}//; /^set -e/d'; exit 0 ;;
    *) echo "build.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -d "$src" ]] || { echo "build.sh: --src DIR: a Citus source tree or git directory" >&2; exit 2; }
src=$(cd "$src" && pwd)
log() { echo "citus-build: $*"; }

apt_get() { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 "$@"; }
log "installing the build tools (Debian packages)"
apt_get install -y -qq build-essential liblz4-dev libzstd-dev libssl-dev libicu-dev \
  zlib1g-dev >/dev/null

rm -rf "$work/deb" "$work/pg" "$work/citus"
mkdir -p "$work/deb" "$work/pg" "$work/citus"
log "downloading PostgreSQL 15 and its server headers into $work/deb"
(cd "$work/deb" && apt-get -o DPkg::Lock::Timeout=600 download -qq postgresql-15 \
  postgresql-server-dev-15 libkrb5-dev krb5-multidev)
for d in "$work"/deb/*.deb; do dpkg-deb -x "$d" "$work/pg"; done
bin=$work/pg/usr/lib/postgresql/15/bin
[[ -x "$bin/pg_config" ]] || { echo "build.sh: no pg_config in $bin" >&2; exit 1; }

log "copying the source from $src"
if git --git-dir="$src" rev-parse --verify -q HEAD >/dev/null 2>&1 && [[ ! -f "$src/configure" ]]; then
  git --git-dir="$src" archive HEAD | tar -x -C "$work/citus"
  log "Citus at $(git --git-dir="$src" rev-parse --short HEAD)"
else
  cp -a "$src/." "$work/citus"
fi
cd "$work/citus"
log "configure, make, make install (log: $work/build.log)"
{
  ./configure --without-libcurl PG_CONFIG="$bin/pg_config"
  make -j"$(nproc)"
  make install
} >"$work/build.log" 2>&1 || { tail -20 "$work/build.log" >&2; exit 1; }
[[ -f "$("$bin/pg_config" --pkglibdir)/citus.so" ]] ||
  { echo "build.sh: citus.so was not installed" >&2; exit 1; }
log "installed Citus $(sed -n "s/^PACKAGE_VERSION='\(.*\)'/\1/p" configure) into $work/pg"
echo "$bin"
