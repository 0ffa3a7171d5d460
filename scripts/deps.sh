#!/usr/bin/env bash
# deps.sh -- install the Debian packages pgnfs needs to build, serve and test,
# skipping those already installed. Run as root or with sudo available.
#   scripts/deps.sh          build + serve
#   scripts/deps.sh --test   also what the test suite needs
#   scripts/deps.sh --bench  also the benchmarks' baseline (nfs-ganesha), clang (fuzzing),
#                            perf (profiles) and valgrind (instruction counts)
set -euo pipefail

pkgs=(
  build-essential cmake ninja-build pkg-config
  libpq-dev libtirpc-dev rpcsvc-proto libglib2.0-dev libssl-dev
  libmicrohttpd-dev libzstd-dev liblz4-dev
  postgresql-15 postgresql-client-15
  libnfs-dev libnfs-utils
)
if [[ "${1:-}" == "--test" || "${1:-}" == "--bench" ]]; then
  pkgs+=(clang-format gnuplot-nox iproute2 procps)
  # proto/portmap: a private rpcbind for the "register with rpcbind" case
  pkgs+=(rpcbind)
  # fault/failover: a primary and a synchronous standby under pg_auto_failover
  pkgs+=(pg-auto-failover-cli postgresql-15-auto-failover)
fi
if [[ "${1:-}" == "--bench" ]]; then
  pkgs+=(nfs-ganesha nfs-ganesha-vfs rpcbind python3 clang libclang-rt-14-dev linux-perf valgrind)
fi

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "pgnfs: installing ${missing[*]}" >&2
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "pgnfs: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
# Wait up to 10 minutes for the package lock instead of failing when
# another install (unattended-upgrades, a second shell) holds it.
apt_wait=(-o DPkg::Lock::Timeout=600)
# Debian's postgresql packages start a system cluster on port 5432; pgnfs
# does not use it (it runs its own cluster on a private Unix socket).
$sudo apt-get "${apt_wait[@]}" update -qq
$sudo apt-get "${apt_wait[@]}" install -y -qq --no-install-recommends "${missing[@]}"
