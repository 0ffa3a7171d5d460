# docker/engine.sh -- sourced by the container tests (test-compose.sh,
# test-compose-ha.sh): find a Docker engine, start the private one when
# none answers, and stop it again when this test started it; free ports;
# a compose project taken down however the test ends.
#
#   engine_up NAME     sets DOCKER_HOST and started_engine (1: ours to
#                      stop); exits 77 when there is no engine to test on
#   engine_down        stops the engine if engine_up started it, and waits
#                      until its daemon has exited
#   free_port          prints a free TCP port of 127.0.0.1
#   compose_project P N  sets project (P + this shell's pid), work (a
#                      temporary directory) and compose (docker-compose on
#                      $work/compose.yml), and traps EXIT: on failure the
#                      last N lines of the services' logs, then the project
#                      down (volumes too), work removed, engine_down
#
# The engine script is PGNFS_LOCAL_ENGINE, else shared/docker/local-engine.sh
# beside this checkout, else the machine's shared directory (/work/shared).
# Its daemon keeps a pid file while it runs and refuses to start while
# another one's process is alive, so a test that follows another waits
# for the previous daemon to be gone before starting its own.

engine_root=${DOCKER_LOCAL_ROOT:-/tmp/docker-local}
started_engine=0

# Wait up to 120 s for daemon pid $1 (default: the one in the engine's pid
# file) to exit; nothing to wait for without one.
engine_wait_gone() {
  local pid=${1:-}
  [[ -n "$pid" ]] || pid=$(cat "$engine_root/dockerd.pid" 2>/dev/null || true)
  [[ -n "$pid" ]] || return 0
  for _ in $(seq 1 240); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.5
  done
  echo "$engine_name: the previous Docker daemon (pid $pid) did not exit within 120 s" >&2
  return 1
}

engine_up() {
  engine_name=$1
  local top e
  top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  engine=${PGNFS_LOCAL_ENGINE:-}
  if [[ -z "$engine" ]]; then
    for e in "$top/../shared/docker/local-engine.sh" /work/shared/docker/local-engine.sh; do
      [[ -x "$e" ]] && { engine=$e; break; }
    done
  fi
  [[ -n "${DOCKER_HOST:-}" ]] && return 0
  if [[ ! -x "$engine" ]]; then
    echo "$engine_name: no Docker engine: set DOCKER_HOST, or PGNFS_LOCAL_ENGINE to" \
      "shared/docker/local-engine.sh" >&2
    exit 77
  fi
  if ! DOCKER_HOST=unix://$engine_root/docker.sock docker info >/dev/null 2>&1; then
    started_engine=1
    engine_wait_gone
  fi
  eval "$("$engine" start)"
}

engine_down() {
  [[ $started_engine == 1 ]] || return 0
  local pid
  pid=$(cat "$engine_root/dockerd.pid" 2>/dev/null || true)
  "$engine" stop || true
  engine_wait_gone "$pid"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

compose_project() {
  project=$1$$
  compose_log_lines=$2
  work=$(mktemp -d)
  compose=(docker-compose -p "$project" -f "$work/compose.yml")
  trap compose_cleanup EXIT
}

compose_cleanup() {
  local rc=$?
  if [[ $rc -ne 0 && -f "$work/compose.yml" ]]; then
    "${compose[@]}" logs --no-color --tail "$compose_log_lines" >&2 || true
  fi
  [[ -f "$work/compose.yml" ]] && "${compose[@]}" down -v --remove-orphans >/dev/null 2>&1 || true
  rm -rf "$work"
  # An engine this test started is stopped again (its images stay).
  engine_down || true
  step "done (exit $rc)"
}
