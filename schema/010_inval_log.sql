-- 010_inval_log.sql -- invalidations as rows of a log instead of NOTIFYs,
-- so that changing transactions keep group commit (PostgreSQL serialises
-- every commit that notifies: one cluster-wide lock from pre-commit through
-- the WAL flush), and a frontend alone on a file system that answers from
-- its caches without asking the database.
--
-- pgnfs_inval_log: the same triggers as in 005 (on fileatt and naming,
-- enabled only while two or more frontends share the file system) insert
-- one row per invalidation in the changing transaction, tagged with that
-- transaction's top-level id (xid8, never wraps). Rows become visible when
-- (and only if) their transaction commits, all at once. A frontend reads
-- the rows that became visible since its last read by snapshot, not by
-- sequence: it keeps the last read's snapshot (xmax and the transactions
-- in progress, xip) and reads `xid >= xmax OR xid = ANY(xip)` under a new
-- snapshot (dbfs_coh.c: the argument, and why a counter would miss rows).
-- Kinds:
--   i  ino = an inode whose attributes changed, or that is gone
--   n  ino = a directory, name = a name in it that changed
--   *  too much in one transaction (past 256 rows): everything
-- origin: the frontend whose session made the change (pgnfs.frontend, set
-- by its workers; NULL for any other session), which skips its own.
--
-- UNLOGGED: the rows matter only to sessions that are connected now, and
-- whatever empties an unlogged table (a crash restart, a failover to a
-- standby) also ends every session, after which each frontend empties its
-- caches and starts reading afresh. So the log writes no WAL: an
-- invalidation costs the changing transaction one heap and one index
-- insert, and nothing at its commit.
--
-- pgnfs_inval_trim: the log is trimmed below the oldest horizon of the
-- live frontends that read it (every heartbeat); `below` is raised in the
-- trimming transaction, so a frontend whose horizon it passes (one taken
-- for dead) sees that in the same snapshot as the rows and resets its
-- caches instead of missing an invalidation.
--
-- pgnfs_frontends gains: inval_horizon (the snapshot xmin of the
-- frontend's last read, written at its heartbeat; NULL: none yet) and solo
-- (a shared frontend that registered alone: it answers from its caches
-- without reading the log until another frontend joins and it has
-- acknowledged, by setting solo to false, that it reads the log now) and
-- pidns (the server's process namespace: servers in containers on one host
-- share its name and may share a process id, so a row is taken for one of
-- this host's dead processes only within the same namespace).

CREATE UNLOGGED TABLE pgnfs_inval_log (
    xid    xid8 NOT NULL DEFAULT pg_current_xact_id(),
    origin int8,
    kind   "char" NOT NULL CHECK (kind IN ('i', 'n', '*')),
    ino    int8,
    name   bytea
);
CREATE INDEX pgnfs_inval_log_xid ON pgnfs_inval_log (xid);

CREATE UNLOGGED TABLE pgnfs_inval_trim (
    id    int PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    below xid8 NOT NULL
);

ALTER TABLE pgnfs_frontends
    ADD COLUMN inval_horizon xid8,
    ADD COLUMN solo bool NOT NULL DEFAULT false,
    ADD COLUMN pidns text;

-- One row of the log; past 256 in one transaction a single '*'.
CREATE FUNCTION pgnfs_inval_add(k "char", i int8, nm bytea) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    n int := coalesce(nullif(current_setting('pgnfs.inval_n', true), ''), '0')::int;
BEGIN
    IF n > 256 THEN
        RETURN;
    END IF;
    PERFORM set_config('pgnfs.inval_n', (n + 1)::text, true);
    IF n = 256 THEN
        k := '*';
    END IF;
    INSERT INTO pgnfs_inval_log (origin, kind, ino, name)
    VALUES (nullif(current_setting('pgnfs.frontend', true), '')::int8, k, i, nm);
END $$;

CREATE OR REPLACE FUNCTION pgnfs_inval_fileatt() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pgnfs_inval_add('i', OLD.inode, NULL);
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION pgnfs_inval_naming() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM pgnfs_inval_add('n', OLD.parent, OLD.name);
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND (NEW.parent, NEW.name) <> (OLD.parent, OLD.name))
    THEN
        PERFORM pgnfs_inval_add('n', NEW.parent, NEW.name);
    END IF;
    RETURN NULL;
END $$;

DROP FUNCTION pgnfs_inval_send(text);
