-- 003_locks.sql -- file locks (NLM) and host status (NSM) kept in the
-- database, so that every server on one file system shares them and
-- conflicts are decided in one place. The functions that read and change
-- these tables are in functions/85_lock.sql; nothing else writes them.
--
-- Words used below
--   server  one pgnfsd (its [nlm] server_name), as the clients see it: it
--           has an NSM state number, goes through a grace period after a
--           restart, and calls its own clients back.
--   host    a client machine, by the caller_name its lock manager sends.
--   owner   who holds a lock: a host, plus the svid and owner handle (oh)
--           its lock manager sends (a process on that host). A DOS share
--           reservation's owner has no svid: svid -1.
--   epoch   the server's NSM state when a lock was granted or reclaimed;
--           a lock whose epoch is older than its server's state is from
--           before that server's last restart ("old"): it still conflicts,
--           its owner may reclaim it during the grace period, and it is
--           dropped when the grace period ends.
--
-- Ranges are int8range [start, end): bytes start .. end-1. A lock "to the
-- end of the file" (NLM length 0), or one that reaches the last byte a
-- 64-bit signed offset can name, has no upper bound.

-- Exclusion constraints over (inode, range, owner, mode) need the btree
-- operator classes for GiST (a trusted extension: the database owner may
-- create it).
CREATE EXTENSION IF NOT EXISTS btree_gist;

CREATE TABLE pgnfs_nlm_server (
    id          serial PRIMARY KEY,
    name        text NOT NULL UNIQUE,
    -- NSM state number: odd while the server runs, 2 more at every start.
    state       int NOT NULL DEFAULT 1,
    -- The end of the current grace period (NULL: none).
    grace_until timestamptz,
    started     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE pgnfs_nlm_host (
    id        bigserial PRIMARY KEY,
    name      bytea NOT NULL UNIQUE CHECK (length(name) <= 1024),
    -- Where it last called from, the server it called and the address it
    -- reached that server on: where the server's SM_NOTIFY goes after a
    -- restart, and the name the host monitors the server by.
    addr      inet,
    srv       int REFERENCES pgnfs_nlm_server (id),
    local     inet,
    -- Holds or held locks through a monitored call (not NM_LOCK): the
    -- server notifies it after a restart.
    monitored boolean NOT NULL DEFAULT false,
    -- Its NSM state as its last SM_NOTIFY or FREE_ALL said.
    state     int
);

CREATE TABLE pgnfs_nlm_owner (
    id   bigserial PRIMARY KEY,
    host bigint NOT NULL REFERENCES pgnfs_nlm_host (id) ON DELETE CASCADE,
    svid bigint NOT NULL CHECK (svid BETWEEN -1 AND 4294967295),
    oh   bytea NOT NULL CHECK (length(oh) <= 1024),
    UNIQUE (host, svid, oh)
);

-- Granted byte-range locks. Two locks conflict when they are on the same
-- file, their ranges overlap, their owners differ and one is exclusive:
-- mode is (,) for an exclusive lock, which overlaps every mode, and
-- [owner, owner+1) for a shared one, which overlaps no other owner's
-- shared mode. The functions decide conflicts themselves (serialized per
-- file); the constraint makes sure nothing else ever stores one.
CREATE TABLE pgnfs_nlm_lock (
    inode  bigint NOT NULL REFERENCES fileatt (inode) ON DELETE CASCADE,
    owner  bigint NOT NULL REFERENCES pgnfs_nlm_owner (id) ON DELETE CASCADE,
    range  int8range NOT NULL CHECK (NOT isempty(range) AND lower(range) >= 0),
    excl   boolean NOT NULL,
    mode   int8range NOT NULL GENERATED ALWAYS AS
               (CASE WHEN excl THEN '(,)'::int8range ELSE int8range(owner, owner + 1) END) STORED,
    srv    int NOT NULL REFERENCES pgnfs_nlm_server (id),
    epoch  int NOT NULL,
    -- The owner's NSM state when it took the lock: an SM_NOTIFY with
    -- another state frees the lock.
    cstate int NOT NULL,
    since  timestamptz NOT NULL DEFAULT now(),
    EXCLUDE USING gist (inode WITH =, range WITH &&, owner WITH <>, mode WITH &&)
);
CREATE INDEX pgnfs_nlm_lock_owner ON pgnfs_nlm_lock (owner);
CREATE INDEX pgnfs_nlm_lock_epoch ON pgnfs_nlm_lock (srv, epoch);

-- Blocked lock requests, granted in arrival order (id) when they no longer
-- conflict. notify is the server's description of the callback to make
-- (opaque here). A request granted by another server's transaction is
-- marked granted until its own server takes it (NOTIFY pgnfs_nlm).
CREATE TABLE pgnfs_nlm_wait (
    id      bigserial PRIMARY KEY,
    inode   bigint NOT NULL REFERENCES fileatt (inode) ON DELETE CASCADE,
    owner   bigint NOT NULL REFERENCES pgnfs_nlm_owner (id) ON DELETE CASCADE,
    range   int8range NOT NULL CHECK (NOT isempty(range) AND lower(range) >= 0),
    excl    boolean NOT NULL,
    srv     int NOT NULL REFERENCES pgnfs_nlm_server (id),
    cstate  int NOT NULL,
    granted boolean NOT NULL DEFAULT false,
    notify  bytea NOT NULL CHECK (length(notify) <= 8192),
    since   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (owner, inode, range, excl)
);
CREATE INDEX pgnfs_nlm_wait_inode ON pgnfs_nlm_wait (inode, id);
CREATE INDEX pgnfs_nlm_wait_granted ON pgnfs_nlm_wait (srv) WHERE granted;

-- DOS share reservations (NLM SHARE): access and deny mode, bits 1 read,
-- 2 write. One per owner and file.
CREATE TABLE pgnfs_nlm_share (
    inode  bigint NOT NULL REFERENCES fileatt (inode) ON DELETE CASCADE,
    owner  bigint NOT NULL REFERENCES pgnfs_nlm_owner (id) ON DELETE CASCADE,
    access smallint NOT NULL CHECK (access BETWEEN 0 AND 3),
    deny   smallint NOT NULL CHECK (deny BETWEEN 0 AND 3),
    srv    int NOT NULL REFERENCES pgnfs_nlm_server (id),
    epoch  int NOT NULL,
    PRIMARY KEY (inode, owner)
);
CREATE INDEX pgnfs_nlm_share_owner ON pgnfs_nlm_share (owner);

-- Every LOCK inserts a row and every UNLOCK deletes one (a few thousand a
-- second under a busy client): vacuum these tables after a fixed number
-- of dead rows rather than a fraction of a table that is mostly empty,
-- and without cost-based sleeping, so that they and their indexes stay
-- small.
ALTER TABLE pgnfs_nlm_lock SET (autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 5000, autovacuum_vacuum_insert_scale_factor = 0,
    autovacuum_vacuum_insert_threshold = 20000, autovacuum_vacuum_cost_delay = 0);
ALTER TABLE pgnfs_nlm_wait SET (autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 2000, autovacuum_vacuum_cost_delay = 0);
ALTER TABLE pgnfs_nlm_owner SET (autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 2000, autovacuum_vacuum_cost_delay = 0);

-- What the lock functions return, one row each:
--   kind 0  the outcome: status (0 or a Linux errno), outcome (granted,
--           denied, blocked, grace, nolocks, deadlock: 05_const.sql of
--           85_lock.sql names them), grace (the calling server is still in
--           its grace period after the call)
--   kind 1  the lock in the way (TEST, a denied LOCK): excl, svid, oh,
--           lo, hi (hi NULL: to the end of the file)
--   kind 2  a blocked request of the calling server, granted by this
--           call: notify is what the server stored with it
CREATE TYPE pgnfs_nlm_res AS (
    kind    smallint,
    status  int,
    outcome smallint,
    grace   boolean,
    excl    boolean,
    svid    bigint,
    oh      bytea,
    lo      bigint,
    hi      bigint,
    notify  bytea
);
