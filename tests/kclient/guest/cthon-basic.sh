#!/bin/sh
# cthon-basic.sh -- kclient/cthon-basic in the guest: the Connectathon
# basic tests (cthon-path, the POSIX front end, static) on the mounted
# export. Env: CB_ARGS (arguments for cthon-path, e.g. --quick).
# shellcheck disable=SC2086
exec "$PAYLOAD/cthon-path" ${CB_ARGS:-} "$MNT"
