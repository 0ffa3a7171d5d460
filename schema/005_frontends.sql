-- 005_frontends.sql -- several pgnfsd frontends on one file system: who is
-- serving it, and the invalidations that keep their caches coherent.
--
-- pgnfs_frontends: one row per running server (dbfs_front.c). A server
-- inserts its row at start, refreshes `heartbeat` (with its call count and
-- cache figures) every few seconds and deletes the row at a clean stop. A
-- row whose heartbeat is older than the staleness limit, or whose session
-- (backend_pid) is no longer connected, belongs to a server that died: it
-- is ignored, and removed by the next start.
--
-- Invalidations: in `shared` coherence every change of fileatt or naming
-- queues a notification on the channel pgnfs_inval, delivered when (and
-- only if) its transaction commits, in commit order, to every server's
-- listening connection (dbfs_coh.c). A database holds one file system, so
-- the channel (scoped to the database by PostgreSQL) is per file system.
-- Payloads, each followed by @<id>: the frontend whose session made the
-- change (pgnfs.frontend, set by its workers), empty for any other session;
-- a frontend skips its own (its caches follow its own changes exactly):
--   i<inode>               the inode's attributes changed or it is gone
--   n<parent>:<hex name>   the name in that directory changed
--   *                      too much changed in one transaction: everything
-- The triggers cover every path that changes rows, whatever runs it (the
-- server's functions, pgnfs sql, fsck --repair). They are created disabled:
-- the second `shared` server to register enables them before it serves,
-- and a server that registers alone (any mode) disables them, so a lone
-- server pays nothing for them.

CREATE TABLE pgnfs_frontends (
    id          bigserial PRIMARY KEY,
    host        text NOT NULL,
    address     text NOT NULL,
    port        int NOT NULL,
    pid         int NOT NULL,
    coherence   text NOT NULL CHECK (coherence IN ('single', 'shared')),
    -- The server's own session (pg_backend_pid()): a row whose session is
    -- gone belongs to a server that died, however fresh its heartbeat.
    backend_pid int NOT NULL,
    started     timestamptz NOT NULL DEFAULT now(),
    heartbeat   timestamptz NOT NULL DEFAULT now(),
    calls       bigint NOT NULL DEFAULT 0,
    stat_entries   bigint NOT NULL DEFAULT 0,
    naming_entries bigint NOT NULL DEFAULT 0,
    buffer_bytes   bigint NOT NULL DEFAULT 0,
    small_bytes    bigint NOT NULL DEFAULT 0,
    writeback_bytes bigint NOT NULL DEFAULT 0,
    invalidations  bigint NOT NULL DEFAULT 0
);

-- At most this many notifications per transaction; past it one '*'.
CREATE FUNCTION pgnfs_inval_send(payload text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    n int := coalesce(nullif(current_setting('pgnfs.inval_n', true), ''), '0')::int;
BEGIN
    IF n > 256 THEN
        RETURN;
    END IF;
    PERFORM set_config('pgnfs.inval_n', (n + 1)::text, true);
    PERFORM pg_notify('pgnfs_inval', CASE WHEN n = 256 THEN '*' ELSE payload END
                      || '@' || coalesce(current_setting('pgnfs.frontend', true), ''));
END $$;

CREATE FUNCTION pgnfs_inval_fileatt() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pgnfs_inval_send('i' || OLD.inode);
    RETURN NULL;
END $$;

CREATE FUNCTION pgnfs_inval_naming() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM pgnfs_inval_send('n' || OLD.parent || ':' || encode(OLD.name, 'hex'));
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        PERFORM pgnfs_inval_send('n' || NEW.parent || ':' || encode(NEW.name, 'hex'));
    END IF;
    RETURN NULL;
END $$;

-- A new inode needs no notification: nobody can have cached it.
CREATE TRIGGER pgnfs_inval_fileatt AFTER UPDATE OR DELETE ON fileatt
    FOR EACH ROW EXECUTE FUNCTION pgnfs_inval_fileatt();
CREATE TRIGGER pgnfs_inval_naming AFTER INSERT OR UPDATE OR DELETE ON naming
    FOR EACH ROW EXECUTE FUNCTION pgnfs_inval_naming();
ALTER TABLE fileatt DISABLE TRIGGER pgnfs_inval_fileatt;
ALTER TABLE naming DISABLE TRIGGER pgnfs_inval_naming;
