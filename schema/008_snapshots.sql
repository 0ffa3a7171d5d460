-- 008_snapshots.sql -- snapshots (after Inversion): read-only images of the
-- whole file system, taken in O(1), kept by copy-on-write in the database.
--
-- Epochs. pgnfs_snap_state.epoch counts the snapshots ever taken; taking one
-- bumps it, and the snapshot's id is the new value. Every live row of
-- fileatt, naming, allfiles and of every per-file table inv<inode> carries
-- `born`, the epoch it was written in (NULL reads as 0: rows written while
-- no snapshot existed, when nothing stamps them). Snapshot k sees
--   the live rows with coalesce(born, 0) < k, and
--   the kept rows (pgnfs_snap_fileatt, _naming, _chunks) with
--   coalesce(born, 0) < k <= died,
--   the rows of the kept tables (pgnfs_snap_tab) of its file with
--   coalesce(born, 0) < k <= died.
-- A row version is in exactly one of those places, so the union holds each
-- key once.
--
-- Copy-on-write. Row triggers (functions/21_snap.sql) stamp NEW.born with
-- the epoch and, on the first UPDATE or DELETE of a row that some live
-- snapshot sees (coalesce(OLD.born, 0) < newest, the newest live
-- snapshot), copy the old row to its pgnfs_snap_* table with died = the
-- epoch. The triggers of fileatt, naming and allfiles exist disabled and
-- are enabled by the first snapshot and disabled when the last one goes
-- (pgnfs_snap_create, pgnfs_snap_delete), so a file system without
-- snapshots pays nothing. Per-file tables are made all the time
-- (inversion): their trigger is always enabled and returns at once while
-- no snapshot exists. A per-file table that goes (its file removed, or a
-- hybrid file moved back to allfiles) while a snapshot needs its rows is
-- kept under another name and listed in pgnfs_snap_tab.
--
-- The kept tables list the columns of fileatt as of this version: a later
-- migration that adds a column snapshots must show adds it there too (and
-- to the triggers of 21_snap.sql).

-- One row: the epoch (the id of the newest snapshot ever taken), the
-- newest live snapshot (0: none), and where the reclaim of deleted
-- snapshots' rows stands (NULL: nothing to reclaim; else the next inode).
CREATE TABLE pgnfs_snap_state (
    id           int PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    epoch        bigint NOT NULL DEFAULT 0 CHECK (epoch >= 0),
    newest       bigint NOT NULL DEFAULT 0 CHECK (newest >= 0 AND newest <= epoch),
    reclaim_from bigint
);
INSERT INTO pgnfs_snap_state DEFAULT VALUES;

-- The live snapshots. A name is a file name (what /.snapshots lists).
CREATE TABLE pgnfs_snapshots (
    id        bigint PRIMARY KEY CHECK (id > 0),
    name      text NOT NULL UNIQUE
              CHECK (octet_length(name) BETWEEN 1 AND 255 AND strpos(name, '/') = 0
                     AND name NOT IN ('.', '..')),
    created   timestamptz NOT NULL,
    -- Made by the server's schedule ([snapshot] every, keep).
    scheduled boolean NOT NULL DEFAULT false
);

ALTER TABLE fileatt ADD COLUMN born bigint;
ALTER TABLE naming ADD COLUMN born bigint;
ALTER TABLE allfiles ADD COLUMN born bigint;
-- When a file's own table was made (NULL: before this version).
ALTER TABLE pgnfs_filetab ADD COLUMN made bigint;

-- Kept row versions: [born, died) in epochs.
CREATE TABLE pgnfs_snap_fileatt (
    inode      bigint NOT NULL,
    generation int NOT NULL,
    type       smallint NOT NULL,
    mode       int NOT NULL,
    nlink      int NOT NULL,
    uid        bigint NOT NULL,
    gid        bigint NOT NULL,
    size       bigint NOT NULL,
    rdev_major int NOT NULL,
    rdev_minor int NOT NULL,
    atime      bigint NOT NULL,
    mtime      bigint NOT NULL,
    ctime      bigint NOT NULL,
    change     bigint NOT NULL,
    used       bigint NOT NULL,
    createverf bigint,
    target     bytea,
    chain      bigint,
    born       bigint,
    died       bigint NOT NULL,
    PRIMARY KEY (inode, died)
);
CREATE INDEX pgnfs_snap_fileatt_dirs ON pgnfs_snap_fileatt (inode) WHERE type = 2;

CREATE TABLE pgnfs_snap_naming (
    parent bigint NOT NULL,
    name   bytea NOT NULL,
    inode  bigint NOT NULL,
    cookie bigint NOT NULL,
    born   bigint,
    died   bigint NOT NULL,
    PRIMARY KEY (parent, name, died)
);
CREATE INDEX pgnfs_snap_naming_cookie ON pgnfs_snap_naming (parent, cookie);
CREATE INDEX pgnfs_snap_naming_inode ON pgnfs_snap_naming (inode);

CREATE TABLE pgnfs_snap_chunks (
    inode bigint NOT NULL,
    chunk bigint NOT NULL,
    data  bytea NOT NULL,
    born  bigint,
    died  bigint NOT NULL,
    PRIMARY KEY (inode, chunk, died)
);
ALTER TABLE pgnfs_snap_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

-- Per-file tables kept for snapshots: the table (renamed
-- pgnfs_snapinv<inode>_<died>, its trigger disabled), its file, the epoch
-- it was made in and the one it went in.
CREATE TABLE pgnfs_snap_tab (
    tab   oid PRIMARY KEY,
    inode bigint NOT NULL,
    made  bigint NOT NULL,
    died  bigint NOT NULL
);
CREATE INDEX pgnfs_snap_tab_inode ON pgnfs_snap_tab (inode);

-- The trigger functions; functions/21_snap.sql (applied in this same
-- transaction, after the migrations) gives them their bodies.
CREATE FUNCTION pgnfs_snap_keep_fileatt() RETURNS trigger LANGUAGE plpgsql
AS $$ BEGIN RAISE EXCEPTION 'pgnfs: functions/21_snap.sql is missing'; END $$;
CREATE FUNCTION pgnfs_snap_keep_naming() RETURNS trigger LANGUAGE plpgsql
AS $$ BEGIN RAISE EXCEPTION 'pgnfs: functions/21_snap.sql is missing'; END $$;
CREATE FUNCTION pgnfs_snap_keep_allfiles() RETURNS trigger LANGUAGE plpgsql
AS $$ BEGIN RAISE EXCEPTION 'pgnfs: functions/21_snap.sql is missing'; END $$;
CREATE FUNCTION pgnfs_snap_keep_inv() RETURNS trigger LANGUAGE plpgsql
AS $$ BEGIN RAISE EXCEPTION 'pgnfs: functions/21_snap.sql is missing'; END $$;

CREATE TRIGGER pgnfs_snap_keep BEFORE INSERT OR UPDATE OR DELETE ON fileatt
    FOR EACH ROW EXECUTE FUNCTION pgnfs_snap_keep_fileatt();
CREATE TRIGGER pgnfs_snap_keep BEFORE INSERT OR UPDATE OR DELETE ON naming
    FOR EACH ROW EXECUTE FUNCTION pgnfs_snap_keep_naming();
CREATE TRIGGER pgnfs_snap_keep BEFORE INSERT OR UPDATE OR DELETE ON allfiles
    FOR EACH ROW EXECUTE FUNCTION pgnfs_snap_keep_allfiles();
ALTER TABLE fileatt DISABLE TRIGGER pgnfs_snap_keep;
ALTER TABLE naming DISABLE TRIGGER pgnfs_snap_keep;
ALTER TABLE allfiles DISABLE TRIGGER pgnfs_snap_keep;

-- The per-file tables there are get the column and their trigger.
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT t.inode, t.tab::regclass AS rel FROM pgnfs_filetab t ORDER BY t.inode LOOP
        EXECUTE format('ALTER TABLE %s ADD COLUMN IF NOT EXISTS born bigint', r.rel);
        EXECUTE format('CREATE TRIGGER pgnfs_snap_keep BEFORE INSERT OR UPDATE OR DELETE ON %s'
                       ' FOR EACH ROW EXECUTE FUNCTION pgnfs_snap_keep_inv(%L)',
                       r.rel, r.inode::text);
    END LOOP;
END
$$;
