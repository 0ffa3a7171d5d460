#!/bin/sh
# pgaf-entrypoint -- one pg_auto_failover role per container, made on the
# first start (its data directory empty) and run in the foreground after:
#
#   PGAF_ROLE=monitor   the monitor (the formation's state), on PGAF_PORT
#   PGAF_ROLE=node      a PostgreSQL node: the first to register becomes
#                       the primary, the next its synchronous standby;
#                       PGAF_MONITOR is the monitor's URI, PGAF_DBNAME the
#                       database made on the primary (pgnfs)
#
#   PGAF_HOSTNAME       the name the other nodes and the monitor reach this
#                       one by (default: the container's host name)
#   PGAF_NAME           the node's name in the formation (default: the
#                       host name)
#   PGAF_PORT           PostgreSQL's port (default 5432)
#   PGAF_AUTH           pg_hba method for the nodes and clients on the
#                       same network (default trust: a private compose
#                       network; use scram-sha-256 and a password file
#                       anywhere else)
#
# The monitor checks the nodes every second and promotes the standby of
# a dead primary after 3 s (pg_auto_failover's defaults are 20 s and
# 30 s), as tests/fault/failover.sh does.
set -eu
role=${PGAF_ROLE:?set PGAF_ROLE to monitor or node}
host=${PGAF_HOSTNAME:-$(hostname)}
name=${PGAF_NAME:-$host}
port=${PGAF_PORT:-5432}
auth=${PGAF_AUTH:-trust}

if [ ! -f "$PGDATA/PG_VERSION" ]; then
  case "$role" in
    monitor)
      pg_autoctl create monitor --pgdata "$PGDATA" --pgport "$port" --hostname "$host" \
        --auth "$auth" --no-ssl
      if pg_ctl -D "$PGDATA" status >/dev/null 2>&1; then pg_ctl -D "$PGDATA" stop -m fast; fi
      cat >>"$PGDATA/postgresql.conf" <<CONF
pgautofailover.health_check_period = 1000
pgautofailover.health_check_retry_delay = 500
pgautofailover.health_check_max_retries = 1
pgautofailover.node_considered_unhealthy_timeout = 3000
pgautofailover.primary_demote_timeout = 3000
CONF
      ;;
    node)
      # A standby copies the primary here, then the keeper runs on.
      exec pg_autoctl create postgres --pgdata "$PGDATA" --pgport "$port" --hostname "$host" \
        --name "$name" --dbname "${PGAF_DBNAME:-pgnfs}" --auth "$auth" --no-ssl --pg-hba-lan \
        --monitor "${PGAF_MONITOR:?set PGAF_MONITOR to the monitor's URI}" --run
      ;;
    *)
      echo "pgaf-entrypoint: PGAF_ROLE must be monitor or node, not '$role'" >&2
      exit 2
      ;;
  esac
fi
exec pg_autoctl run --pgdata "$PGDATA"
