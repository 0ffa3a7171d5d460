"""benchlib -- what the benchmark runners share (bench/connectathon/run,
bench/perf/run, bench/paper/run): starting and stopping the servers they
compare, reading pgnfs's statistics, and undoing everything at exit.

  Cleanup         actions registered as things start, run in reverse order
  Pgnfs           `pgnfs serve` of a build on a fresh embedded PostgreSQL on a
                  free port (restartable on the same data and port)
  Ganesha         nfs-ganesha (VFS) exporting a local directory over NFSv3,
                  isolated in a network namespace of its own with a private
                  rpcbind and a private /run (see /work/shared/BASELINES.md)
  PgCluster       a PostgreSQL cluster directory driven with pg_ctl
  psql, psql_value
                  one SQL command: its rows, or its first value
  parse_stats, stats_delta, snapshot
                  pgnfs's per-procedure counters (SIGUSR1 dumps in its log)
  median, spread  a repeated measurement summed up (median; "min-max")
  load_runner     another runner (bench/NAME/run) imported as a module
  git_describe    the checkout's version, for results
  RunEnv          what a run ran on, recorded beside its figures: the machine
                  (cores, CPU, memory, kernel), the load average and a
                  measured fdatasync latency of the data's disk before and
                  after, the exact command (machine, fdatasync_us)
  block_device, diskstats
                  the block device holding a directory and its request
                  counters (/proc/diskstats)
  commit_ceiling  PostgreSQL's one-commit ceiling (bench/perf/pgcommit) on
                  the embedded cluster of a running pgnfs

NOTES
  Every process started here is started in a session of its own and
  registered with the Cleanup given to its constructor, so an exception or
  a signal (the runners turn SIGINT/SIGTERM/SIGHUP into SystemExit) still
  stops it. Nothing here kills by name: only pids we started (or that run
  inside the network namespace we created).

Python 3 standard library only.
"""

import importlib.machinery
import importlib.util
import os
import platform
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GANESHA_NFS_PORT = 2049
GANESHA_MNT_PORT = 20048  # MOUNT on the NFS port does not answer in ganesha 4.3
PG_BINDIRS = ["/usr/lib/postgresql/%d/bin" % v for v in range(20, 11, -1)]


def log(msg):
    print("run: " + msg, file=sys.stderr, flush=True)


class RunError(Exception):
    """A failure that ends the run with a message (and cleanup)."""


# ---------------------------------------------------------------------------
# Cleanup: everything started is registered here and undone in reverse order.

class Cleanup:
    def __init__(self):
        self.actions = []

    def push(self, what, fn):
        self.actions.append((what, fn))

    def run(self):
        while self.actions:
            what, fn = self.actions.pop()
            try:
                fn()
            except Exception as e:  # keep cleaning up
                log("cleanup of %s failed: %s" % (what, e))


def stop_process(proc, sig=signal.SIGTERM, timeout=30):
    """Signal a Popen and wait for it; SIGKILL after timeout seconds."""
    if proc.poll() is not None:
        return
    try:
        proc.send_signal(sig)
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def kill_pid(pid, timeout=10):
    """SIGTERM a pid we started (not a child), then SIGKILL."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def wait_for_log(path, pattern, proc, timeout, what, offset=0):
    """Wait until the file at path contains pattern (a regex) past byte
    offset, while proc runs."""
    deadline = time.time() + timeout
    rx = re.compile(pattern)
    while time.time() < deadline:
        try:
            with open(path, "rb") as f:
                f.seek(offset)
                if rx.search(f.read().decode(errors="replace")):
                    return
        except FileNotFoundError:
            pass
        if proc.poll() is not None:
            raise RunError("%s exited (status %s) before it was ready; the end of %s:\n%s"
                           % (what, proc.returncode, path, tail(path)))
        time.sleep(0.1)
    raise RunError("%s not ready after %d s; the end of %s:\n%s" % (what, timeout, path, tail(path)))


def tail(path, n=20):
    """The last n lines of a log, statistics dumps left out."""
    try:
        with open(path, errors="replace") as f:
            return "".join([l for l in f if "stats: " not in l][-n:])
    except OSError as e:
        return "(cannot read: %s)" % e


def free_port():
    """A TCP port free on 127.0.0.1 right now (also tried for UDP)."""
    for _ in range(50):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            u.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            u.close()
        return port
    raise RunError("no free port found")


def has_pngcairo():
    r = subprocess.run(["gnuplot", "-e", "set terminal"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return "pngcairo" in r.stdout


def libnfs_version():
    r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libnfs-dev"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return r.stdout.strip() or "(version unknown)"


def git_describe():
    """`git describe --always --dirty` of the checkout, or "unknown"."""
    r = subprocess.run(["git", "-C", TOP, "describe", "--always", "--dirty"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return r.stdout.strip() or "unknown"


def load_runner(name):
    """bench/NAME/run imported as a module (its __main__ guard keeps it
    idle), so that a runner can use another's functions."""
    path = os.path.join(TOP, "bench", name, "run")
    loader = importlib.machinery.SourceFileLoader("%s_run" % name, path)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


# ---------------------------------------------------------------------------
# Repeated measurements.

def median(xs):
    """The median of the numbers xs (at least one)."""
    return statistics.median(xs)


def spread(xs):
    """"min-max" of the numbers xs, three significant digits each."""
    return "%.3g-%.3g" % (min(xs), max(xs))


# ---------------------------------------------------------------------------
# Server statistics (pgnfs): per NFS procedure, calls and database round trips.
#
# The server logs them at shutdown and on SIGUSR1, in the format described in
# server/srv_stats.c's header comment:
#
#   stats: begin reason=REASON uptime_s=SECONDS
#   stats: proc prog=PROG proc=NAME calls=N errors=N drc_hits=N total_us=N ... round_trips=N
#   stats: rpc bad_call=N ...
#   stats: end
#
# Counters are cumulative, so a test's cost is the difference between the
# dump taken before it and the one taken after it.

STATS_PROC = re.compile(r"stats: proc (.*)$")
STATS_END = re.compile(r"stats: end\b")


def parse_stats(text):
    """{"nfs3.GETATTR": {"calls": N, "round_trips": N, "total_us": N, ...}} from the
    last complete dump in text."""
    out, cur = {}, None
    for line in text.splitlines():
        if "stats: begin" in line:
            cur = {}
        elif cur is not None and STATS_PROC.search(line):
            kv = dict(f.split("=", 1) for f in STATS_PROC.search(line).group(1).split()
                      if "=" in f)
            key = "%s.%s" % (kv.get("prog", "?"), kv.get("proc", "?"))
            cur[key] = {k: int(v) for k, v in kv.items() if v.isdigit()}
        elif cur is not None and STATS_END.search(line):
            out, cur = cur, None
    return out


def stats_delta(before, after):
    """(NFS calls, database round trips, {proc: (calls, round_trips, server_us)})
    between two dumps; calls count NFS procedures only, round trips every
    program's."""
    per = {}
    for proc, a in after.items():
        b = before.get(proc, {})
        d = [a.get(k, 0) - b.get(k, 0) for k in ("calls", "round_trips", "total_us")]
        if d[0] or d[1]:
            per[proc.split(".", 1)[1] if proc.startswith("nfs3.") else proc] = tuple(d)
    calls = sum(v[0] for p, v in per.items() if "." not in p)
    return calls, sum(v[1] for v in per.values()), per


def snapshot_text(pid, logpath, timeout=20.0):
    """Signal the server (SIGUSR1) and return the statistics dump its log
    gains (from "stats: begin reason=SIGUSR1" to "stats: end")."""
    size = os.path.getsize(logpath)
    os.kill(pid, signal.SIGUSR1)
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(logpath, "rb") as f:
            f.seek(size)
            text = f.read().decode(errors="replace")
        i = text.find("stats: begin reason=SIGUSR1")
        if i >= 0:
            m = STATS_END.search(text, i)
            if m:
                start = text.rfind("\n", 0, i) + 1
                return text[start:m.end()] + "\n"
        time.sleep(0.01)
    raise RunError("the server logged no complete statistics within %.0f s of SIGUSR1" % timeout)


def snapshot(pid, logpath, out, timeout=20.0):
    """snapshot_text, saved into the file out."""
    text = snapshot_text(pid, logpath, timeout)
    with open(out, "w") as f:
        f.write(text)


# ---------------------------------------------------------------------------
# pgnfs

class Pgnfs:
    """`pgnfs serve` of the build in `build` on a fresh embedded cluster in
    tmp/pgnfs-INDEX, configured by the file conf (None: the defaults) and
    the GROUP.KEY=VALUE strings in sets. stats: log at INFO, so that the
    SIGUSR1 statistics reach the log. label: the name in messages and
    results (default pgnfs, or pgnfs[CONF]). data: serve this embedded
    cluster directory (made by an earlier server) instead of a fresh one;
    db: serve this conninfo instead of the embedded cluster; export_opts:
    more options of the export line (e.g. "async"), after
    rw,no_root_squash; env: more environment variables for the server
    ({NAME: VALUE})."""

    def __init__(self, build, tmp, cleanup, conf=None, index=0, sets=(), stats=True,
                 label=None, data=None, db=None, export_opts="", env=None):
        self.build, self.tmp, self.cleanup = build, tmp, cleanup
        self.conf = conf
        self.sets = list(sets)
        self.export_opts = export_opts
        self.env = dict(env or {})
        self.label = label or ("pgnfs" if conf is None else "pgnfs[%s]" % os.path.basename(conf))
        self.dir = os.path.join(tmp, "pgnfs-%d" % index)
        os.makedirs(self.dir)
        os.chmod(self.dir, 0o755)
        self.data = data or os.path.join(self.dir, "data")
        self.db = db
        self.logpath = os.path.join(self.dir, "server.log")
        self.proc = None
        self.port = None
        self.prefix = []  # the client runs here, in our own namespaces
        self.stats = stats
        self.registered = False

    def start(self):
        """Start the server (on the port of an earlier start, if any) and wait
        until it serves. Raises RunError if it does not."""
        binary = os.path.join(self.build, "server", "pgnfs")
        if not os.access(binary, os.X_OK):
            raise RunError("%s is missing: build it first (ninja -C %s)" % (binary, self.build))
        if self.port is None:
            self.port = free_port()
        cmd = [binary, "serve", "--data", self.data,
               "--port", str(self.port), "--listen", "127.0.0.1",
               "--export", "/ 127.0.0.1(%s)" % ",".join(
                   ["rw", "no_root_squash"] + ([self.export_opts] if self.export_opts else [])),
               # Port 111 is the host's: neither register with a system
               # rpcbind (another server may own it) nor serve it.
               "--set", "server.rpcbind=false", "--set", "server.portmap=off"]
        if self.db:
            cmd += ["--conninfo", self.db]
        if self.conf:
            cmd += ["--config", self.conf]
        if self.stats and not any(s.startswith("log.level=") for s in self.sets):
            cmd += ["--set", "log.level=info"]  # the statistics are logged at INFO
        for s in self.sets:
            cmd += ["--set", s]
        self.cmd = cmd
        log("%s: %s" % (self.label, " ".join(shlex.quote(c) for c in cmd)))
        offset = os.path.getsize(self.logpath) if os.path.exists(self.logpath) else 0
        logf = open(self.logpath, "a")
        env = dict(os.environ, **self.env) if self.env else None
        self.proc = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True, env=env)
        logf.close()
        if not self.registered:
            self.cleanup.push(self.label, self.stop)
            self.registered = True
        # "serving fsid ... port N" once the listeners are up ("listening" in older builds).
        wait_for_log(self.logpath, r"listening|serving fsid", self.proc, 180, self.label, offset)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            stop_process(self.proc, signal.SIGTERM, timeout=60)
            if self.proc.returncode not in (0, -signal.SIGTERM):
                log("%s exited with status %s at shutdown" % (self.label, self.proc.returncode))

    def restart(self):
        """Stop the server (and with it its embedded cluster) and start it
        again on the same data and port."""
        self.stop()
        self.start()

    def pid(self):
        return self.proc.pid

    def url(self):
        return "nfs://127.0.0.1/?nfsport=%d&mountport=%d" % (self.port, self.port)

    def conninfo(self):
        """The database served: db if given, else the embedded cluster's (its
        Unix socket; reachable while the server runs)."""
        if self.db:
            return self.db
        user = "postgres" if os.geteuid() == 0 else os.environ.get("USER", "postgres")
        return "host=%s port=5432 dbname=pgnfs user=%s" % (
            os.path.join(self.data, "pg", "socket"), user)

    def settings(self):
        """The configuration the server logged at start: storage, chunk_size,
        encoding (when it made the file system: absent when it served an
        existing one), stat_entries and naming_entries (0 = that cache is
        off), buffer_bytes (0 = off), writeback_bytes (0 = off) and
        writeback_file_bytes. {} before the server has started. Needs the
        log at INFO (stats=True, or log.level=info in sets)."""
        try:
            with open(self.logpath, errors="replace") as f:
                text = f.read()
        except OSError:
            return {}
        if not re.search(r"listening|serving fsid", text):
            return {}
        out = {}
        m = re.search(r"created a file system \(storage (\S+), chunk size (\d+), "
                      r"encoding (\w+)\)", text)
        if m:
            out.update(storage=m.group(1), chunk_size=int(m.group(2)), encoding=m.group(3))
        m = re.search(r"metadata caches: stat (\w+) \((\d+) entries\), "
                      r"naming (\w+) \((\d+) entries\)", text)
        # No line: both off (as no buffer cache or write-back line means off).
        out["stat_entries"] = int(m.group(2)) if m and m.group(1) == "on" else 0
        out["naming_entries"] = int(m.group(4)) if m and m.group(3) == "on" else 0
        m = re.search(r"buffer cache: (\d+) bytes", text)
        out["buffer_bytes"] = int(m.group(1)) if m else 0
        m = re.search(r"write-back buffer: (\d+) bytes, files flushed past (\d+) bytes", text)
        out["writeback_bytes"] = int(m.group(1)) if m else 0
        out["writeback_file_bytes"] = int(m.group(2)) if m else 0
        return out

    def threads(self):
        """The worker threads the server logged at start (its database
        connections), or None."""
        try:
            with open(self.logpath, errors="replace") as f:
                m = re.search(r"(\d+) worker threads", f.read())
        except OSError:
            return None
        return int(m.group(1)) if m else None

    def complaints(self):
        """The ERROR and WARNING lines of the server's log."""
        try:
            with open(self.logpath, errors="replace") as f:
                return [l.rstrip("\n") for l in f if re.search(r"\b(ERROR|WARNING|CRITICAL)\b", l)]
        except OSError:
            return []


# ---------------------------------------------------------------------------
# nfs-ganesha, isolated as BASELINES.md describes.

GANESHA_CONF = """\
NFS_CORE_PARAM {{
    Protocols = 3;
    NFS_Port = {nfs_port};
    MNT_Port = {mnt_port};
    Enable_NLM = false;
    Enable_RQUOTA = false;
    mount_path_pseudo = false;
}}
NFSV4 {{
    Graceless = true;
    RecoveryBackend = fs;
    RecoveryRoot = {recov};
}}
NFS_KRB5 {{ Active_krb5 = false; }}
EXPORT {{
    Export_Id = 1;
    Path = {export};
    Pseudo = {export};
    Protocols = 3;
    Transports = TCP;
    Access_Type = RW;
    Squash = No_Root_Squash;
    SecType = sys;
    FSAL {{ Name = VFS; }}
}}
"""

# Runs inside the namespace, in a private mount namespace: a tmpfs /run, a
# private rpcbind first (its pid in $1/rpcbind.pid), then ganesha.
GANESHA_START = """\
set -e
d="$1"
mount -t tmpfs tmpfs /run
mkdir -p /run/rpcbind
rpcbind -f -w &
echo $! > "$d/rpcbind.pid"
for i in $(seq 1 100); do [ -S /run/rpcbind.sock ] && break; sleep 0.05; done
exec ganesha.nfsd -F -f "$d/ganesha.conf" -L "$d/ganesha.log" -p "$d/ganesha.pid"
"""


class Ganesha:
    """nfs-ganesha (VFS) exporting tmp/ganesha/export, in the network
    namespace NSPREFIX-PID (created by start, deleted by cleanup)."""

    def __init__(self, tmp, cleanup, ns_prefix="cthon"):
        self.cleanup = cleanup
        self.dir = os.path.join(tmp, "ganesha")
        self.export = os.path.join(self.dir, "export")
        os.makedirs(self.export)
        os.makedirs(os.path.join(self.dir, "recov"))
        os.chmod(self.export, 0o777)
        self.ns = "%s-%d" % (ns_prefix, os.getpid())
        self.ns_made = False
        self.proc = None
        self.label = "ganesha"
        self.prefix = ["ip", "netns", "exec", self.ns]  # the client runs in its namespace
        self.stats = False
        self.logpath = os.path.join(self.dir, "ganesha.log")
        self.port = GANESHA_NFS_PORT

    def start(self):
        """Start rpcbind and ganesha in the namespace (made on first use) and
        wait until both ports listen. Raises RunError if they do not."""
        for tool in ("ganesha.nfsd", "rpcbind", "ip", "unshare"):
            if not shutil.which(tool):
                raise RunError("%s not found: run scripts/deps.sh --bench (nfs-ganesha, "
                               "nfs-ganesha-vfs, rpcbind), or pass --no-ganesha" % tool)
        with open(os.path.join(self.dir, "ganesha.conf"), "w") as f:
            f.write(GANESHA_CONF.format(nfs_port=GANESHA_NFS_PORT, mnt_port=GANESHA_MNT_PORT,
                                        recov=os.path.join(self.dir, "recov"),
                                        export=self.export))
        start = os.path.join(self.dir, "start.sh")
        with open(start, "w") as f:
            f.write(GANESHA_START)
        if not self.ns_made:
            subprocess.run(["ip", "netns", "add", self.ns], check=True)
            self.ns_made = True
            self.cleanup.push("namespace " + self.ns, self.delete_ns)
            subprocess.run(["ip", "netns", "exec", self.ns, "ip", "link", "set", "lo", "up"],
                           check=True)
            self.cleanup.push("ganesha", self.stop)
        offset = os.path.getsize(self.logpath) if os.path.exists(self.logpath) else 0
        out = open(os.path.join(self.dir, "start.log"), "a")
        cmd = ["ip", "netns", "exec", self.ns, "unshare", "--mount", "--propagation", "private",
               "sh", start, self.dir]
        log("ganesha: %s" % " ".join(shlex.quote(c) for c in cmd))
        self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        out.close()
        wait_for_log(self.logpath, r"NFS SERVER INITIALIZED", self.proc, 60, "ganesha", offset)
        # Ready when both ports listen inside the namespace.
        deadline = time.time() + 30
        while time.time() < deadline:
            ss = subprocess.run(["ip", "netns", "exec", self.ns, "ss", "-ltnH"],
                                stdout=subprocess.PIPE, text=True).stdout
            if (":%d " % GANESHA_NFS_PORT) in ss and (":%d " % GANESHA_MNT_PORT) in ss:
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise RunError("ganesha does not listen on %d and %d; the end of %s:\n%s"
                       % (GANESHA_NFS_PORT, GANESHA_MNT_PORT, self.logpath, tail(self.logpath)))

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            stop_process(self.proc, signal.SIGTERM, timeout=30)
        pidfile = os.path.join(self.dir, "rpcbind.pid")
        if os.path.exists(pidfile):
            with open(pidfile) as f:
                txt = f.read().strip()
            if txt.isdigit():
                kill_pid(int(txt))
            os.unlink(pidfile)

    def restart(self):
        """Stop ganesha and its rpcbind and start them again (same
        namespace, same export: ganesha's own caches are emptied, the
        kernel's page cache is not)."""
        self.stop()
        # ganesha's exit leaves its ports in TIME_WAIT at most; it binds with
        # SO_REUSEADDR, so it can start again at once.
        self.start()

    def pid(self):
        """ganesha.nfsd's own pid (not the namespace wrapper's), or None."""
        try:
            with open(os.path.join(self.dir, "ganesha.pid")) as f:
                txt = f.read().strip()
            return int(txt) if txt.isdigit() else None
        except OSError:
            return None

    def delete_ns(self):
        """Stop what runs in the namespace and delete it (once; later calls
        do nothing)."""
        if not self.ns_made:
            return
        self.ns_made = False
        # Anything still running in our namespace is ours: stop it first.
        pids = subprocess.run(["ip", "netns", "pids", self.ns], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True).stdout.split()
        for pid in pids:
            if pid.isdigit():
                kill_pid(int(pid))
        subprocess.run(["ip", "netns", "del", self.ns], check=False)

    def url(self):
        return "nfs://127.0.0.1%s?nfsport=%d&mountport=%d" % (
            self.export, GANESHA_NFS_PORT, GANESHA_MNT_PORT)


# ---------------------------------------------------------------------------
# PostgreSQL clusters driven directly (the raw-PostgreSQL baseline).

def pg_bindir():
    """The directory of pg_ctl: the newest /usr/lib/postgresql/N/bin, else PATH's."""
    for d in PG_BINDIRS:
        if os.access(os.path.join(d, "pg_ctl"), os.X_OK):
            return d
    p = shutil.which("pg_ctl")
    if p:
        return os.path.dirname(os.path.realpath(p))
    raise RunError("cannot find PostgreSQL's pg_ctl")


def as_pg_user(argv):
    """Run PostgreSQL tools as postgres when root (initdb refuses root)."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--"] + argv
    return argv


class PgCluster:
    """An initialised cluster directory (e.g. DATA/pg of an embedded
    cluster made by `pgnfs mkfs --data DATA`), started and stopped with
    pg_ctl as the cluster's user. start() registers stop() for cleanup."""

    def __init__(self, pgdir, cleanup, label="cluster"):
        self.pgdir, self.cleanup, self.label = pgdir, cleanup, label
        self.bindir = pg_bindir()
        self.logpath = os.path.join(pgdir, "bench.log")
        self.running = False
        self.registered = False

    def _pg_ctl(self, *words):
        cmd = as_pg_user([os.path.join(self.bindir, "pg_ctl"), "-D", self.pgdir] + list(words))
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            raise RunError("%s: %s failed:\n%s\n%s" % (self.label, " ".join(cmd), r.stdout,
                                                     tail(self.logpath)))

    def start(self):
        if not self.registered:
            self.cleanup.push(self.label, self.stop)
            self.registered = True
        self._pg_ctl("-w", "-t", "120", "-l", self.logpath, "start")
        self.running = True

    def stop(self):
        if self.running:
            self.running = False
            self._pg_ctl("-m", "fast", "-w", "-t", "120", "stop")

    def restart(self):
        self.stop()
        self.start()


def psql(conninfo, sql, timeout=120):
    """Run one SQL command with psql; its output rows as lists of strings
    (unaligned, '|'-separated). Raises RunError on failure."""
    r = subprocess.run(["psql", "-X", "-qAt", "-v", "ON_ERROR_STOP=1", "-d", conninfo, "-c", sql],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RunError("psql %r: %s" % (sql, r.stderr.strip()))
    return [line.split("|") for line in r.stdout.splitlines() if line]


def psql_value(conninfo, sql, timeout=120):
    """Run one SQL command with psql; the first column of its first row as a
    string, or "" when it returns no row. Raises RunError on failure."""
    rows = psql(conninfo, sql, timeout)
    return rows[0][0] if rows else ""


# ---------------------------------------------------------------------------
# What a run ran on. The published figures of a loaded machine did not
# reproduce: every result records, beside its figures, the machine, the load
# average and the latency of one durable write of the disk holding the data
# (a durable metadata change cannot be faster than one of these).

FSYNC_BLOCK = 8192


def machine():
    """{"host", "cores", "cpu", "mem_bytes", "kernel"} of this machine."""
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.+)$", f.read(), re.M)
            if m:
                cpu = m.group(1).strip()
    except OSError:
        pass
    mem = 0
    try:
        with open("/proc/meminfo") as f:
            m = re.search(r"^MemTotal:\s+(\d+) kB", f.read(), re.M)
            if m:
                mem = int(m.group(1)) * 1024
    except OSError:
        pass
    return {"host": os.uname().nodename, "cores": os.cpu_count() or 0, "cpu": cpu,
            "mem_bytes": mem, "kernel": os.uname().release}


def fdatasync_us(directory, count=100, seconds=3.0):
    """Median latency in microseconds of pwrite + fdatasync of one 8 KiB
    block of a file in directory (as pg_test_fsync's "open_datasync /
    fdatasync" line measures it): `count` of them, or as many as fit in
    `seconds` (at least 5)."""
    path = os.path.join(directory, ".fdatasync-probe.%d" % os.getpid())
    block = os.urandom(FSYNC_BLOCK)
    lat = []
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.pwrite(fd, block, 0)  # the block exists: later writes overwrite it
        os.fsync(fd)
        end = time.monotonic() + seconds
        while len(lat) < count and (time.monotonic() < end or len(lat) < 5):
            t0 = time.monotonic()
            os.pwrite(fd, block, 0)
            os.fdatasync(fd)
            lat.append((time.monotonic() - t0) * 1e6)
    finally:
        os.close(fd)
        os.unlink(path)
    return statistics.median(lat)


def block_device(path):
    """(name, "MAJ:MIN") of the block device holding path (its st_dev), or
    (None, "MAJ:MIN") when /proc/diskstats has no such device (a tmpfs, an
    overlay)."""
    st = os.stat(path)
    key = (os.major(st.st_dev), os.minor(st.st_dev))
    try:
        with open("/proc/diskstats") as f:
            for line in f:
                w = line.split()
                if len(w) >= 14 and (int(w[0]), int(w[1])) == key:
                    return w[2], "%d:%d" % key
    except OSError:
        pass
    return None, "%d:%d" % key


def diskstats(name):
    """The request counters of block device name (/proc/diskstats; see the
    kernel's Documentation/admin-guide/iostats.rst): {"reads", "read_sectors",
    "read_ms", "writes", "write_sectors", "write_ms", "flushes", "flush_ms"}
    (completed requests, 512-byte sectors, milliseconds spent), or None."""
    if not name:
        return None
    try:
        with open("/proc/diskstats") as f:
            for line in f:
                w = line.split()
                if len(w) >= 14 and w[2] == name:
                    v = [int(x) for x in w[3:]]
                    out = {"reads": v[0], "read_sectors": v[2], "read_ms": v[3],
                           "writes": v[4], "write_sectors": v[6], "write_ms": v[7],
                           "flushes": 0, "flush_ms": 0}
                    if len(v) >= 17:
                        out["flushes"], out["flush_ms"] = v[15], v[16]
                    return out
    except OSError:
        pass
    return None


def diskstats_delta(before, after):
    """after - before, key by key (None if either is None)."""
    if before is None or after is None:
        return None
    return {k: after[k] - before[k] for k in before}


class RunEnv:
    """What one run (or one workload of a run) ran on: the machine, the exact
    command, and before/after samples of the load average and of the
    fdatasync latency of the disk holding directory (where the servers keep
    their data). start() and finish() take the samples; markdown() is the
    paragraph every result prints beside its figures."""

    def __init__(self, directory, command):
        self.directory = directory
        self.command = command
        self.machine = machine()
        self.device = block_device(directory)
        self.before = self.after = None

    def sample(self):
        return {"load": os.getloadavg(), "fsync_us": fdatasync_us(self.directory),
                "time": time.strftime("%Y-%m-%d %H:%M:%S")}

    def start(self):
        self.before = self.sample()
        log("machine: load %.2f, fdatasync %.0f us on %s" % (
            self.before["load"][0], self.before["fsync_us"], self.device[0] or self.device[1]))
        return self

    def finish(self):
        self.after = self.sample()
        return self

    def loads(self):
        """(1-minute load before, after)."""
        return (self.before["load"][0] if self.before else float("nan"),
                self.after["load"][0] if self.after else float("nan"))

    def fsyncs(self):
        """(fdatasync us before, after)."""
        return (self.before["fsync_us"] if self.before else float("nan"),
                self.after["fsync_us"] if self.after else float("nan"))

    def markdown(self):
        m = self.machine
        b, a = self.before, self.after or self.before

        def ld(x):
            return "%.2f / %.2f / %.2f" % x["load"]
        return (
            "Ran on: %s, %d cores (%s), %.1f GiB memory, Linux %s; data on %s (%s). "
            "Load average (1 / 5 / 15 min): %s before (%s), %s after (%s). "
            "fdatasync of one %d-byte block on the data's file system, median of up to 100: "
            "%.0f us before, %.0f us after. Build: %s.\n\nCommand (from the repository "
            "root, after building):\n\n    %s\n" % (
                m["host"], m["cores"], m["cpu"], m["mem_bytes"] / (1 << 30), m["kernel"],
                self.device[0] or "no block device", self.device[1], ld(b), b["time"], ld(a),
                a["time"], FSYNC_BLOCK, b["fsync_us"], a["fsync_us"], git_describe(),
                self.command))


def commit_ceiling(pgcommit, server, conns=(1,), seconds=2.0, timeout=120):
    """PostgreSQL's one-commit ceiling on the embedded cluster of the running
    pgnfs `server` (a Pgnfs): bench/perf/pgcommit in a database of its own
    (pgnfs_ceiling, made on first use), with each number of connections in
    conns. Returns {n: {"commits_s", "mean_us", "median_us"}}. Raises
    RunError if it cannot run."""
    if not os.access(pgcommit, os.X_OK):
        raise RunError("%s is missing: build it first" % pgcommit)
    base = server.conninfo()
    admin = re.sub(r"dbname=\S+", "dbname=postgres", base)
    ci = re.sub(r"dbname=\S+", "dbname=pgnfs_ceiling", base)
    if not psql_value(admin, "SELECT 1 FROM pg_database WHERE datname = 'pgnfs_ceiling'"):
        psql(admin, "CREATE DATABASE pgnfs_ceiling")
    out = {}
    for n in conns:
        cmd = [pgcommit, ci, "--conns", str(n), "--seconds", str(seconds)]
        log("commit ceiling: %s" % " ".join(shlex.quote(c) for c in cmd))
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout)
        if r.returncode != 0:
            raise RunError("pgcommit failed: %s" % r.stderr.strip())
        kv = {}
        for line in r.stdout.splitlines():
            w = line.split()
            if len(w) == 2:
                kv[w[0]] = float(w[1])
        out[n] = {k: kv.get(k) for k in ("commits_s", "mean_us", "median_us")}
    return out
