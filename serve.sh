#!/usr/bin/env bash
# serve.sh -- from a fresh Debian 12 machine to a served NFS export:
# installs what is missing, builds, and runs `pgnfs serve` on an embedded
# private PostgreSQL, with the metrics endpoint on (for `pgnfs stats`).
# Extra arguments go to `pgnfs serve` (see `pgnfs serve --help`).
#
# The data directory is pgnfs's default, the one every pgnfs command uses
# without --data: /var/lib/pgnfs as root, else $XDG_DATA_HOME/pgnfs
# (~/.local/share/pgnfs). A new file system's root is mode 1777, so the
# default export's root-squashed local clients can write at once.
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
"$top/scripts/deps.sh"
"$top/scripts/build.sh"
pgnfs=${PGNFS_BUILD:-$top/build}/server/pgnfs

args=("$@")
have() { for a in "${args[@]}"; do [[ "$a" == "$1" || "$a" == "$1="* ]] && return 0; done; return 1; }
set_key() { printf '%s\n' "${args[@]}" | grep -q "^$1"; }
if ! have --data && ! have --conninfo && ! have --config && ! set_key embedded.data_dir &&
  [[ $(id -u) -ne 0 && -d "$top/pgnfs-data/pg" ]]; then
  # Earlier versions kept a user's cluster in the checkout: keep serving
  # it, and say how to move it where the admin commands look by default.
  default=$("$pgnfs" --help | sed -n 's/^ *(default here: \(.*\))$/\1/p')
  echo "pgnfs: serving the existing $top/pgnfs-data; the default data directory is now" \
    "$default (move it there with: mv '$top/pgnfs-data' '$default')" >&2
  args+=(--data "$top/pgnfs-data")
fi
# The metrics endpoint (127.0.0.1:9466, where `pgnfs stats` looks).
if ! have --config && ! set_key metrics.; then
  args+=(--set metrics.enable=true)
fi
if [[ $(id -u) -ne 0 ]] && ! have --port; then
  echo "pgnfs: not root, so serving on port 20490 instead of 2049" >&2
  args+=(--port 20490)
fi
exec "$pgnfs" serve "${args[@]}"
