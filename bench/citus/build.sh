#!/usr/bin/env bash
# bench/citus/build.sh -- build Citus from its public source and install it
# into a private copy of Debian's PostgreSQL 15 (the system's stays as it
# is), for tests/citus/citus.sh. Citus is not packaged by Debian.
#
#   bench/citus/build.sh --src DIR [--ref REF] [--work DIR]
#
# DIR is a Citus source tree, or the git directory of a clone of
# https://github.com/citusdata/citus, of which REF is built (default
# v13.2.2: Citus 12.x and 13.x support PostgreSQL 15, later ones do not).
# --work (default /tmp/pgnfs-citus-build) gets deb/ (Debian's
# postgresql-15, -client-15 and -server-dev-15, downloaded with apt),
# pg/ (those packages unpacked: a relocatable PostgreSQL), citus/ (the
# source, configured and built there) and build.log. The build tools,
# the Kerberos headers that the server's headers include and libpq (which
# Citus links dynamically, the system's) are installed with apt when
# missing, never upgraded (a newer postgresql-15 package under running
# servers breaks them: their plpgsql.so no longer matches). Citus is
# configured without libcurl (it only reports statistics with it).
#
# Last line printed: the bin directory to give tests/citus/citus.sh as
# --pg-bin. Exit status 0 = built and installed.
set -euo pipefail
src= ref=v13.2.2 work=/tmp/pgnfs-citus-build
while [[ $# -gt 0 ]]; do
  case $1 in
    --src) src=${2:?--src needs a directory}; shift 2 ;;
    --ref) ref=${2:?--ref needs a tag, branch or commit}; shift 2 ;;
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
apt_get install -y -qq --no-upgrade build-essential liblz4-dev libzstd-dev libssl-dev libicu-dev \
  zlib1g-dev libkrb5-dev libpq-dev >/dev/null

rm -rf "$work/deb" "$work/pg" "$work/citus"
mkdir -p "$work/deb" "$work/pg" "$work/citus"
log "downloading PostgreSQL 15 and its server headers into $work/deb"
(cd "$work/deb" && apt-get -o DPkg::Lock::Timeout=600 download -qq postgresql-15 \
  postgresql-client-15 postgresql-server-dev-15)
for d in "$work"/deb/*.deb; do dpkg-deb -x "$d" "$work/pg"; done
bin=$work/pg/usr/lib/postgresql/15/bin
[[ -x "$bin/pg_config" ]] || { echo "build.sh: no pg_config in $bin" >&2; exit 1; }
# Citus links the system's libpq (a copy linked in statically would
# resolve to the server's own functions): its headers and library there.
cp -a /usr/include/postgresql/. "$("$bin/pg_config" --includedir)/"
mkdir -p "$("$bin/pg_config" --libdir)"
ln -sf "$(pkg-config --variable=libdir libpq)/libpq.so" "$("$bin/pg_config" --libdir)/libpq.so"

log "copying the source from $src"
if git --git-dir="$src" rev-parse --verify -q HEAD >/dev/null 2>&1 && [[ ! -f "$src/configure" ]]; then
  git --git-dir="$src" archive "$ref" | tar -x -C "$work/citus"
  log "Citus at $ref ($(git --git-dir="$src" rev-parse --short "$ref^{commit}"))"
else
  cp -a "$src/." "$work/citus"
fi
cd "$work/citus"
# PostgreSQL 15.14 and later declare have_createdb_privilege() in
# commands/dbcommands.h, which Citus 13 defines again, static, for 15:
# its copy is renamed (the one change made to the source).
n=$(grep -n '^have_createdb_privilege(void)' src/include/pg_version_compat.h | cut -d: -f1 || true)
if [[ -n "$n" ]] && grep -q have_createdb_privilege \
  "$work/pg/usr/include/postgresql/15/server/commands/dbcommands.h"; then
  sed -i "$((n - 1))i #define have_createdb_privilege citus_compat_have_createdb_privilege" \
    src/include/pg_version_compat.h
  log "renamed Citus's own have_createdb_privilege (this PostgreSQL declares one)"
fi
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
