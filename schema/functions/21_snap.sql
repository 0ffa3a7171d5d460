-- 21_snap.sql -- snapshots (008_snapshots.sql): copy-on-write triggers,
-- taking, deleting and reclaiming snapshots, per-file tables kept for
-- them, and reading the file system as a snapshot saw it.
--
-- Invariants (E = pgnfs_snap_state.epoch, N = its newest live snapshot,
-- S = the last value of pgnfs_snap_epoch_seq, 011_snap_cheap.sql):
--   0. N <= E <= S, and a snapshot taken next gets an id above S.
--   1. Every live row has coalesce(born, 0) <= S; a row version written
--      while snapshots exist has N <= born <= S (its DEFAULT, or the
--      triggers, stamp it with S; one the triggers skip keeps its born,
--      which is >= N already).
--   2. A row version that a live snapshot k sees is, at any moment, the
--      live row (born < k), a kept row (born < k <= died) or a row of a kept
--      table of its file (born < k <= died of the table); never two.
--   3. The triggers of fileatt, naming and allfiles (pgnfs_snap_keep,
--      BEFORE UPDATE OR DELETE WHEN coalesce(OLD.born, 0) < S, and
--      pgnfs_snap_born, BEFORE INSERT WHEN NEW.born IS NULL) are enabled
--      exactly while a snapshot exists (N > 0); per-file tables' always,
--      returning at once while N = 0.
--   4. Every writer locks a row of fileatt (FOR UPDATE, or by changing it)
--      before it writes anything (20_data.sql: "every writer of a file's
--      chunks holds the file's fileatt row lock"; the metadata functions
--      lock the directory first). So the EXCLUSIVE lock on fileatt that
--      pgnfs_snap_create takes while it bumps the epoch orders every
--      writing transaction wholly before or wholly after the snapshot: its
--      rows carry one epoch.
--   5. Snapshot administration (create, delete, reclaim, the schedule)
--      holds pgnfs_snap_lock_key() as a transaction advisory lock.

CREATE OR REPLACE FUNCTION pgnfs_snap_lock_key() RETURNS bigint LANGUAGE sql IMMUTABLE
AS $$ SELECT 8101805617128370288::bigint $$;  -- "pgnfsnap" in ASCII

-- Does a live snapshot (ids: all of them) see a row version [born, died)?
CREATE OR REPLACE FUNCTION pgnfs_snap_needed(ids bigint[], born bigint, died bigint)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT EXISTS (SELECT 1 FROM unnest(ids) AS k WHERE k > coalesce(born, 0) AND k <= died) $$;

-- What a row version written now is stamped with (born): S, invariant 1.
-- pg_sequence_last_value is built in (no query); inlined.
CREATE OR REPLACE FUNCTION pgnfs_snap_stamp() RETURNS bigint LANGUAGE sql VOLATILE
AS $$ SELECT pg_sequence_last_value('pgnfs_snap_epoch_seq'::regclass) $$;

-- Stamp a row inserted with born NULL given (the DEFAULT stamps the others).
CREATE OR REPLACE FUNCTION pgnfs_snap_born() RETURNS trigger LANGUAGE plpgsql
AS $$
BEGIN
    NEW.born := pgnfs_snap_stamp();
    RETURN NEW;
END
$$;

-- The copy-on-write triggers of fileatt, naming and allfiles (BEFORE
-- UPDATE OR DELETE, per row, entered only for rows born before S), and of
-- the per-file tables (BEFORE INSERT OR UPDATE OR DELETE, every row).
CREATE OR REPLACE FUNCTION pgnfs_snap_keep_fileatt() RETURNS trigger LANGUAGE plpgsql
AS $$
DECLARE
    e  bigint;
    nw bigint;
BEGIN
    SELECT s.epoch, s.newest INTO e, nw FROM pgnfs_snap_state s;
    IF TG_OP <> 'INSERT' AND coalesce(OLD.born, 0) < nw THEN
        INSERT INTO pgnfs_snap_fileatt (inode, generation, type, mode, nlink, uid, gid, size,
                                        rdev_major, rdev_minor, atime, mtime, ctime, change, used,
                                        createverf, target, chain, born, died)
        VALUES (OLD.inode, OLD.generation, OLD.type, OLD.mode, OLD.nlink, OLD.uid, OLD.gid,
                OLD.size, OLD.rdev_major, OLD.rdev_minor, OLD.atime, OLD.mtime, OLD.ctime,
                OLD.change, OLD.used, OLD.createverf, OLD.target, OLD.chain, OLD.born, e);
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    NEW.born := pgnfs_snap_stamp();
    RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION pgnfs_snap_keep_naming() RETURNS trigger LANGUAGE plpgsql
AS $$
DECLARE
    e  bigint;
    nw bigint;
BEGIN
    SELECT s.epoch, s.newest INTO e, nw FROM pgnfs_snap_state s;
    IF TG_OP <> 'INSERT' AND coalesce(OLD.born, 0) < nw THEN
        INSERT INTO pgnfs_snap_naming (parent, name, inode, cookie, born, died)
        VALUES (OLD.parent, OLD.name, OLD.inode, OLD.cookie, OLD.born, e);
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    NEW.born := pgnfs_snap_stamp();
    RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION pgnfs_snap_keep_allfiles() RETURNS trigger LANGUAGE plpgsql
AS $$
DECLARE
    e  bigint;
    nw bigint;
BEGIN
    SELECT s.epoch, s.newest INTO e, nw FROM pgnfs_snap_state s;
    IF TG_OP <> 'INSERT' AND coalesce(OLD.born, 0) < nw THEN
        INSERT INTO pgnfs_snap_chunks (inode, chunk, data, born, died)
        VALUES (OLD.inode, OLD.chunk, OLD.data, OLD.born, e);
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    NEW.born := pgnfs_snap_stamp();
    RETURN NEW;
END
$$;

-- A file's own table (TG_ARGV[0]: its inode). Always enabled; nothing to
-- do while no snapshot exists.
CREATE OR REPLACE FUNCTION pgnfs_snap_keep_inv() RETURNS trigger LANGUAGE plpgsql
AS $$
DECLARE
    e  bigint;
    nw bigint;
BEGIN
    SELECT s.epoch, s.newest INTO e, nw FROM pgnfs_snap_state s;
    IF nw = 0 THEN
        IF TG_OP = 'DELETE' THEN
            RETURN OLD;
        END IF;
        RETURN NEW;
    END IF;
    IF TG_OP <> 'INSERT' AND coalesce(OLD.born, 0) < nw THEN
        INSERT INTO pgnfs_snap_chunks (inode, chunk, data, born, died)
        VALUES (TG_ARGV[0]::bigint, OLD.chunk, OLD.data, OLD.born, e);
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    NEW.born := pgnfs_snap_stamp();
    RETURN NEW;
END
$$;

-- Enable (p_on) or disable the triggers of fileatt, naming and allfiles
-- where they are not so already. The caller holds fileatt in EXCLUSIVE
-- mode (every writer is done, none starts), so the ALTERs' locks on
-- naming and allfiles wait for no writer.
CREATE OR REPLACE FUNCTION pgnfs_snap_triggers(p_on boolean) RETURNS void LANGUAGE plpgsql
AS $$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT g.tgrelid::regclass AS rel, g.tgname::text AS tgname FROM pg_trigger g
              WHERE g.tgname IN ('pgnfs_snap_keep', 'pgnfs_snap_born')
                AND g.tgrelid IN ('fileatt'::regclass, 'naming'::regclass, 'allfiles'::regclass)
                AND (g.tgenabled = 'D') = p_on
              ORDER BY 1, g.tgname LOOP
        EXECUTE format('ALTER TABLE %s %s TRIGGER %I', t.rel,
                       CASE WHEN p_on THEN 'ENABLE' ELSE 'DISABLE' END, t.tgname);
    END LOOP;
END
$$;

-- Is p a name a snapshot may have (a file name: 1 to 255 bytes, no '/',
-- not "." or "..")? The table's CHECK says the same.
CREATE OR REPLACE FUNCTION pgnfs_snap_name_ok(p text) RETURNS boolean LANGUAGE sql IMMUTABLE
AS $$ SELECT p IS NOT NULL AND octet_length(p) BETWEEN 1 AND 255 AND strpos(p, '/') = 0
             AND p NOT IN ('.', '..') $$;

-- Take snapshot p_name of the whole file system: O(1) (no row is read or
-- copied), consistent to a transaction boundary (invariant 4). Raises
-- PN022 (EINVAL) for a bad name, PN017 (EEXIST) for a name in use.
CREATE OR REPLACE FUNCTION pgnfs_snap_create(p_name text, p_scheduled boolean)
RETURNS TABLE (id bigint, created timestamptz) LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    k bigint;
    t timestamptz;
BEGIN
    IF NOT pgnfs_snap_name_ok(p_name) THEN
        RAISE EXCEPTION 'snapshot: "%" is not a name a snapshot may have (1 to 255 bytes, no "/",'
                        ' not "." or "..")', p_name USING ERRCODE = pgnfs_errcode(pgnfs_einval());
    END IF;
    PERFORM pg_advisory_xact_lock(pgnfs_snap_lock_key());
    IF EXISTS (SELECT 1 FROM pgnfs_snapshots s WHERE s.name = p_name) THEN
        RAISE EXCEPTION 'snapshot: % exists', p_name
              USING ERRCODE = pgnfs_errcode(pgnfs_eexist());
    END IF;
    LOCK TABLE fileatt IN EXCLUSIVE MODE;
    -- The id: above S (invariant 0), from the sequence after the lock, so
    -- that no writer stamps a row with it before the snapshot is taken.
    k := nextval('pgnfs_snap_epoch_seq');
    IF k <= (SELECT s.epoch FROM pgnfs_snap_state s) THEN
        k := (SELECT s.epoch + 1 FROM pgnfs_snap_state s);
        PERFORM setval('pgnfs_snap_epoch_seq', k, true);
    END IF;
    UPDATE pgnfs_snap_state s SET epoch = k, newest = k;
    t := clock_timestamp();
    INSERT INTO pgnfs_snapshots (id, name, created, scheduled) VALUES (k, p_name, t, p_scheduled);
    PERFORM pgnfs_snap_triggers(true);
    id := k;
    created := t;
    RETURN NEXT;
END
$$;

-- Delete snapshot p_name: gone at once (no reader finds it); the rows only
-- it needed are reclaimed later (pgnfs_snap_reclaim). The last snapshot
-- takes the triggers with it. Returns its id; raises PN002 (ENOENT).
CREATE OR REPLACE FUNCTION pgnfs_snap_delete(p_name text)
RETURNS bigint LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    k  bigint;
    nw bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(pgnfs_snap_lock_key());
    DELETE FROM pgnfs_snapshots s WHERE s.name = p_name RETURNING s.id INTO k;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'snapshot: no snapshot named %', p_name
              USING ERRCODE = pgnfs_errcode(pgnfs_enoent());
    END IF;
    nw := coalesce((SELECT max(s.id) FROM pgnfs_snapshots s), 0);
    UPDATE pgnfs_snap_state s SET newest = nw, reclaim_from = 0;
    IF nw = 0 THEN
        LOCK TABLE fileatt IN EXCLUSIVE MODE;
        PERFORM pgnfs_snap_triggers(false);
    END IF;
    RETURN k;
END
$$;

-- One step of the reclaim of deleted snapshots' rows: the kept rows and
-- tables of inodes [reclaim_from, reclaim_from + p_step) that no live
-- snapshot sees go; with no snapshot left, all of them at once. One
-- transaction (the caller's); running it again after a crash goes on from
-- where the last committed step ended. Returns the next inode (NULL: done,
-- or nothing to do), the inode it ends at, and the rows and tables removed.
CREATE OR REPLACE FUNCTION pgnfs_snap_reclaim(p_step bigint)
RETURNS TABLE (pos bigint, upto bigint, removed bigint) LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    st  pgnfs_snap_state;
    ids bigint[];
    lo  bigint;
    hi  bigint;
    n   bigint := 0;
    m   bigint;
    r   record;
BEGIN
    PERFORM pg_advisory_xact_lock(pgnfs_snap_lock_key());
    SELECT * INTO st FROM pgnfs_snap_state s FOR UPDATE;
    removed := 0;
    upto := greatest((SELECT max(h.inode) FROM pgnfs_snap_fileatt h),
                     (SELECT max(h.inode) FROM pgnfs_snap_naming h),
                     (SELECT max(h.inode) FROM pgnfs_snap_chunks h),
                     (SELECT max(t.inode) FROM pgnfs_snap_tab t), 0) + 1;
    IF st.reclaim_from IS NULL THEN
        pos := NULL;
        RETURN NEXT;
        RETURN;
    END IF;
    SELECT coalesce(array_agg(s.id ORDER BY s.id), '{}') INTO ids FROM pgnfs_snapshots s;
    IF cardinality(ids) = 0 THEN
        -- Nothing is needed: empty the tables in O(1).
        SELECT (SELECT count(*) FROM pgnfs_snap_fileatt) + (SELECT count(*) FROM pgnfs_snap_naming)
               + (SELECT count(*) FROM pgnfs_snap_chunks) INTO n;
        TRUNCATE pgnfs_snap_fileatt, pgnfs_snap_naming, pgnfs_snap_chunks;
        FOR r IN SELECT t.tab FROM pgnfs_snap_tab t ORDER BY t.tab LOOP
            PERFORM pgnfs_snap_drop_tab(r.tab);
            n := n + 1;
        END LOOP;
        UPDATE pgnfs_snap_state s SET reclaim_from = NULL;
        pos := NULL;
        removed := n;
        RETURN NEXT;
        RETURN;
    END IF;
    lo := st.reclaim_from;
    hi := lo + greatest(p_step, 1);
    WITH d AS (DELETE FROM pgnfs_snap_fileatt h WHERE h.inode >= lo AND h.inode < hi
                 AND NOT pgnfs_snap_needed(ids, h.born, h.died) RETURNING 1)
    SELECT count(*) INTO m FROM d;
    n := n + m;
    WITH d AS (DELETE FROM pgnfs_snap_naming h WHERE h.inode >= lo AND h.inode < hi
                 AND NOT pgnfs_snap_needed(ids, h.born, h.died) RETURNING 1)
    SELECT count(*) INTO m FROM d;
    n := n + m;
    WITH d AS (DELETE FROM pgnfs_snap_chunks h WHERE h.inode >= lo AND h.inode < hi
                 AND NOT pgnfs_snap_needed(ids, h.born, h.died) RETURNING 1)
    SELECT count(*) INTO m FROM d;
    n := n + m;
    FOR r IN SELECT t.tab, t.made, t.died FROM pgnfs_snap_tab t
              WHERE t.inode >= lo AND t.inode < hi ORDER BY t.tab LOOP
        IF NOT pgnfs_snap_needed(ids, r.made, r.died) THEN
            PERFORM pgnfs_snap_drop_tab(r.tab);
            n := n + 1;
        ELSE
            EXECUTE format('WITH d AS (DELETE FROM %s x WHERE NOT pgnfs_snap_needed($1, x.born, $2)'
                           ' RETURNING 1) SELECT count(*) FROM d', r.tab::regclass)
                INTO m USING ids, r.died;
            n := n + m;
        END IF;
    END LOOP;
    pos := CASE WHEN hi >= upto THEN NULL ELSE hi END;
    UPDATE pgnfs_snap_state s SET reclaim_from = pos;
    removed := n;
    RETURN NEXT;
END
$$;

-- Drop kept table t (if it is still there) and its listing.
CREATE OR REPLACE FUNCTION pgnfs_snap_drop_tab(t oid) RETURNS void LANGUAGE plpgsql
AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = t) THEN
        EXECUTE format('DROP TABLE %s', t::regclass);
    END IF;
    DELETE FROM pgnfs_snap_tab s WHERE s.tab = t;
END
$$;

-- File ino's own table is going (the file is removed, or a hybrid file
-- moves back to allfiles): when a live snapshot may see its rows, keep it
-- (renamed, trigger off, listed in pgnfs_snap_tab) and unlist it from
-- pgnfs_filetab; returns true. Else returns false and the caller drops
-- it. The caller holds the file's fileatt row lock.
CREATE OR REPLACE FUNCTION pgnfs_snap_retire(ino bigint) RETURNS boolean LANGUAGE plpgsql
AS $$
DECLARE
    st   pgnfs_snap_state;
    tab  oid;
    made bigint;
    nm   text;
BEGIN
    SELECT * INTO st FROM pgnfs_snap_state s;
    IF st.newest = 0 THEN
        RETURN false;
    END IF;
    SELECT t.tab, coalesce(t.made, 0) INTO tab, made FROM pgnfs_filetab t WHERE t.inode = ino;
    IF NOT FOUND OR made >= st.newest OR NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = tab)
    THEN
        RETURN false;
    END IF;
    nm := 'pgnfs_snapinv' || ino || '_' || st.epoch;
    EXECUTE format('ALTER TABLE %s RENAME TO %I', tab::regclass, nm);
    EXECUTE format('ALTER TABLE %I DISABLE TRIGGER pgnfs_snap_keep', nm);
    INSERT INTO pgnfs_snap_tab (tab, inode, made, died) VALUES (tab, ino, made, st.epoch);
    DELETE FROM pgnfs_filetab t WHERE t.inode = ino;
    RETURN true;
END
$$;

-- The epoch now (what a table made now records as made).
CREATE OR REPLACE FUNCTION pgnfs_snap_epoch() RETURNS bigint LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN (SELECT s.epoch FROM pgnfs_snap_state s);
END
$$;

-- --- reading a snapshot --------------------------------------------------

-- The attributes of inode ino as snapshot k saw them (no row: it did not
-- exist then). Plain SQL: inlined into the statements that use it.
CREATE OR REPLACE FUNCTION pgnfs_snap_attr(k bigint, ino bigint)
RETURNS TABLE (inode bigint, generation int, type smallint, mode int, nlink int, uid bigint,
               gid bigint, size bigint, rdev_major int, rdev_minor int, atime bigint,
               mtime bigint, ctime bigint, change bigint, used bigint, target bytea,
               chain bigint)
LANGUAGE sql STABLE
AS $$
SELECT f.inode, f.generation, f.type, f.mode, f.nlink, f.uid, f.gid, f.size, f.rdev_major,
       f.rdev_minor, f.atime, f.mtime, f.ctime, f.change, f.used, f.target, f.chain
  FROM fileatt f WHERE f.inode = ino AND coalesce(f.born, 0) < k
UNION ALL
SELECT h.inode, h.generation, h.type, h.mode, h.nlink, h.uid, h.gid, h.size, h.rdev_major,
       h.rdev_minor, h.atime, h.mtime, h.ctime, h.change, h.used, h.target, h.chain
  FROM pgnfs_snap_fileatt h WHERE h.inode = ino AND h.died >= k AND coalesce(h.born, 0) < k
$$;

-- The entries of directory dir as snapshot k saw them.
CREATE OR REPLACE FUNCTION pgnfs_snap_names(k bigint, dir bigint)
RETURNS TABLE (parent bigint, name bytea, inode bigint, cookie bigint)
LANGUAGE sql STABLE
AS $$
SELECT n.parent, n.name, n.inode, n.cookie FROM naming n
 WHERE n.parent = dir AND coalesce(n.born, 0) < k
UNION ALL
SELECT h.parent, h.name, h.inode, h.cookie FROM pgnfs_snap_naming h
 WHERE h.parent = dir AND h.died >= k AND coalesce(h.born, 0) < k
$$;

-- The entry nm of directory dir as snapshot k saw it.
CREATE OR REPLACE FUNCTION pgnfs_snap_name(k bigint, dir bigint, nm bytea)
RETURNS TABLE (inode bigint, cookie bigint)
LANGUAGE sql STABLE
AS $$
SELECT n.inode, n.cookie FROM naming n
 WHERE n.parent = dir AND n.name = nm AND coalesce(n.born, 0) < k
UNION ALL
SELECT h.inode, h.cookie FROM pgnfs_snap_naming h
 WHERE h.parent = dir AND h.name = nm AND h.died >= k AND coalesce(h.born, 0) < k
$$;

-- The names of inode ino as snapshot k saw them (a directory has one).
CREATE OR REPLACE FUNCTION pgnfs_snap_names_of(k bigint, ino bigint)
RETURNS TABLE (parent bigint, name bytea)
LANGUAGE sql STABLE
AS $$
SELECT n.parent, n.name FROM naming n WHERE n.inode = ino AND coalesce(n.born, 0) < k
UNION ALL
SELECT h.parent, h.name FROM pgnfs_snap_naming h
 WHERE h.inode = ino AND h.died >= k AND coalesce(h.born, 0) < k
$$;

-- Chunks first .. last of file ino as snapshot k saw them, unordered:
-- from allfiles, the kept chunks, the file's own table and its kept
-- tables. A table that goes while this runs (reclaimed with its snapshot)
-- raises a serialization failure: dbfs reads again, and finds the
-- snapshot gone.
CREATE OR REPLACE FUNCTION pgnfs_snap_data(k bigint, ino bigint, first bigint, last bigint)
RETURNS TABLE (chunk bigint, data bytea) LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
    t oid;
BEGIN
    IF first > last THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT a.chunk, a.data FROM allfiles a
                  WHERE a.inode = ino AND a.chunk BETWEEN first AND last
                    AND coalesce(a.born, 0) < k
                 UNION ALL
                 SELECT h.chunk, h.data FROM pgnfs_snap_chunks h
                  WHERE h.inode = ino AND h.chunk BETWEEN first AND last
                    AND h.died >= k AND coalesce(h.born, 0) < k;
    FOR t IN SELECT ft.tab FROM pgnfs_filetab ft WHERE ft.inode = ino
             UNION ALL
             SELECT st.tab FROM pgnfs_snap_tab st
              WHERE st.inode = ino AND st.died >= k AND st.made < k LOOP
        BEGIN
            RETURN QUERY EXECUTE format('SELECT x.chunk, x.data FROM %s x'
                                        ' WHERE x.chunk BETWEEN $1 AND $2'
                                        '   AND coalesce(x.born, 0) < $3', t::regclass)
                         USING first, last, k;
        EXCEPTION WHEN undefined_table THEN
            RAISE EXCEPTION 'snapshot read: a table of file % went away; read again', ino
                  USING ERRCODE = 'serialization_failure';
        END;
    END LOOP;
END
$$;

-- --- the schedule and the listing -----------------------------------------

-- The server's schedule ([snapshot] every, keep): when the newest
-- scheduled snapshot is p_every_s seconds old (or there is none), take one
-- named p_prefix and the time; then delete the oldest scheduled ones past
-- p_keep (0: keep all). Several servers may run it: the advisory lock and
-- the age test make one snapshot per period. Returns the names taken and
-- deleted (taken: true).
CREATE OR REPLACE FUNCTION pgnfs_snap_tick(p_every_s bigint, p_keep int, p_prefix text)
RETURNS TABLE (name text, taken boolean) LANGUAGE plpgsql VOLATILE
AS $$
#variable_conflict use_column
DECLARE
    last timestamptz;
    nm   text;
    r    record;
BEGIN
    PERFORM pg_advisory_xact_lock(pgnfs_snap_lock_key());
    SELECT max(s.created) INTO last FROM pgnfs_snapshots s WHERE s.scheduled;
    IF p_every_s > 0
       AND (last IS NULL OR clock_timestamp() - last >= make_interval(secs => p_every_s)) THEN
        nm := p_prefix || to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYYMMDD"T"HH24MISS"Z"');
        IF NOT EXISTS (SELECT 1 FROM pgnfs_snapshots s WHERE s.name = nm) THEN
            PERFORM pgnfs_snap_create(nm, true);
            name := nm;
            taken := true;
            RETURN NEXT;
        END IF;
    END IF;
    IF p_keep > 0 THEN
        FOR r IN SELECT s.name FROM pgnfs_snapshots s WHERE s.scheduled
                  ORDER BY s.id DESC OFFSET p_keep LOOP
            PERFORM pgnfs_snap_delete(r.name);
            name := r.name;
            taken := false;
            RETURN NEXT;
        END LOOP;
    END IF;
END
$$;

-- Every live snapshot with the bytes it alone holds: the kept rows and
-- tables that no other live snapshot sees (what deleting it frees). Reads
-- every kept row.
CREATE OR REPLACE FUNCTION pgnfs_snap_list()
RETURNS TABLE (id bigint, name text, created timestamptz, scheduled boolean, holds bigint)
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH ids AS (SELECT coalesce(array_agg(s.id ORDER BY s.id), '{}') AS a FROM pgnfs_snapshots s),
    kept AS (SELECT h.born, h.died, pg_column_size(h.*)::bigint AS sz FROM pgnfs_snap_fileatt h
             UNION ALL
             SELECT h.born, h.died, pg_column_size(h.*)::bigint FROM pgnfs_snap_naming h
             UNION ALL
             SELECT h.born, h.died, pg_column_size(h.*)::bigint FROM pgnfs_snap_chunks h
             UNION ALL
             SELECT t.made, t.died, pg_total_relation_size(t.tab) FROM pgnfs_snap_tab t),
    own AS (SELECT u.only, sum(kept.sz)::bigint AS sz
              FROM kept, ids,
                   LATERAL (SELECT CASE WHEN count(*) = 1 THEN min(k) END AS only
                              FROM unnest(ids.a) AS k
                             WHERE k > coalesce(kept.born, 0) AND k <= kept.died) u
             WHERE u.only IS NOT NULL GROUP BY u.only)
    SELECT s.id, s.name, s.created, s.scheduled, coalesce(own.sz, 0)::bigint
      FROM pgnfs_snapshots s LEFT JOIN own ON own.only = s.id
     ORDER BY s.id;
END
$$;
