#!/usr/bin/env bash
# serve.sh -- from a fresh Debian 12 machine to a served NFS export:
# installs what is missing, builds, and runs `pgnfs serve` on an embedded
# private PostgreSQL, with the metrics endpoint on (for `pgnfs stats`).
# Extra arguments go to `pgnfs serve` (see --help).
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
"$top/scripts/deps.sh"
"$top/scripts/build.sh"

args=("$@")
have() { for a in "${args[@]}"; do [[ "$a" == "$1" ]] && return 0; done; return 1; }
if ! have --data && ! have --conninfo && ! have --config; then
  # PostgreSQL runs as user postgres when we are root: keep its data where
  # that user can reach it.
  if [[ $(id -u) -eq 0 ]]; then args+=(--data /var/lib/pgnfs); else args+=(--data "$top/pgnfs-data"); fi
fi
# The metrics endpoint (127.0.0.1:9466), so that `pgnfs stats` works.
if ! have --config && ! printf '%s\n' "${args[@]}" | grep -q '^metrics\.'; then
  args+=(--set metrics.enable=true)
fi
if [[ $(id -u) -ne 0 ]] && ! have --port; then
  echo "pgnfs: not root, so serving on port 20490 instead of 2049" >&2
  args+=(--port 20490)
fi
exec "${PGNFS_BUILD:-$top/build}/server/pgnfs" serve "${args[@]}"
