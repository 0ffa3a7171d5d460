-- 91_fsck_snap.sql -- the `snapshots` check of pgnfs fsck (90_fsck.sql runs
-- it by name; the invariants are 21_snap.sql's):
--
--   problem                                        repair
--   the triggers of fileatt, naming, allfiles are  enabled / disabled
--     not enabled exactly while a snapshot exists
--   pgnfs_snap_state.newest is not the newest      set
--     live snapshot
--   pgnfs_snap_epoch_seq is behind the epoch or    set to the largest
--     the born of a live row
--   kept rows or tables no live snapshot sees      removed (the reclaim run
--     (left by deleted snapshots)                  to its end)
--   a listed kept table is missing, or a table     unlisted / dropped
--     named like a kept one is not listed
--   a file's own table has no copy-on-write        made
--     trigger, or no column born
-- A reclaim under way (pgnfs snapshot delete, the server) leaves kept rows
-- no snapshot sees until it ends: the check names it.

CREATE OR REPLACE FUNCTION pgnfs_fsck_snapshots(p_repair boolean)
RETURNS TABLE (problem text, ino bigint, detail text, repaired boolean)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    st      pgnfs_snap_state;
    ids     bigint[];
    nw      bigint;
    n       bigint;
    r       record;
    pending text;
BEGIN
    PERFORM pgnfs_fsck_lock(p_repair);
    IF p_repair THEN
        PERFORM pg_advisory_xact_lock(pgnfs_snap_lock_key());
        LOCK TABLE fileatt IN EXCLUSIVE MODE;
    END IF;
    problem := 'snapshots';
    ino := 0;
    SELECT * INTO st FROM pgnfs_snap_state s;
    SELECT coalesce(array_agg(s.id ORDER BY s.id), '{}') INTO ids FROM pgnfs_snapshots s;
    nw := coalesce(ids[cardinality(ids)], 0);
    pending := CASE WHEN st.reclaim_from IS NOT NULL
                    THEN ' (a reclaim is under way: pgnfs snapshot reclaim ends it)' ELSE '' END;
    -- Triggers.
    FOR r IN SELECT g.tgrelid::regclass AS rel, g.tgname::text AS tgname, g.tgenabled <> 'D' AS on
               FROM pg_trigger g
              WHERE g.tgname IN ('pgnfs_snap_keep', 'pgnfs_snap_born')
                AND g.tgrelid IN ('fileatt'::regclass, 'naming'::regclass, 'allfiles'::regclass)
                AND (g.tgenabled <> 'D') <> (cardinality(ids) > 0)
              ORDER BY 1, g.tgname LOOP
        detail := format('the copy-on-write trigger %s of %s is %s while %s snapshots exist',
                         r.tgname, r.rel, CASE WHEN r.on THEN 'enabled' ELSE 'disabled' END,
                         cardinality(ids));
        repaired := p_repair;
        IF p_repair THEN
            PERFORM pgnfs_snap_triggers(cardinality(ids) > 0);
            detail := detail || ': ' || CASE WHEN r.on THEN 'disabled' ELSE 'enabled' END;
        END IF;
        RETURN NEXT;
    END LOOP;
    IF st.newest <> nw OR st.epoch < nw THEN
        detail := format('the newest live snapshot is %s, the state says %s (epoch %s)',
                         nw, st.newest, st.epoch);
        repaired := p_repair;
        IF p_repair THEN
            UPDATE pgnfs_snap_state s SET newest = nw, epoch = greatest(s.epoch, nw);
            detail := detail || ': set';
        END IF;
        RETURN NEXT;
    END IF;
    -- The sequence that stamps born and gives ids (invariants 0 and 1).
    SELECT greatest(st.epoch, nw, (SELECT max(f.born) FROM fileatt f),
                    (SELECT max(n.born) FROM naming n), (SELECT max(a.born) FROM allfiles a))
      INTO n;
    IF coalesce(pgnfs_snap_stamp(), -1) < n THEN
        detail := format('the epoch sequence is at %s, behind %s (the epoch or a row''s born)',
                         pgnfs_snap_stamp(), n);
        repaired := p_repair;
        IF p_repair THEN
            PERFORM setval('pgnfs_snap_epoch_seq', n, true);
            detail := detail || ': set';
        END IF;
        RETURN NEXT;
    END IF;
    -- Kept rows and tables nobody needs.
    SELECT (SELECT count(*) FROM pgnfs_snap_fileatt h WHERE NOT pgnfs_snap_needed(ids, h.born, h.died))
         + (SELECT count(*) FROM pgnfs_snap_naming h WHERE NOT pgnfs_snap_needed(ids, h.born, h.died))
         + (SELECT count(*) FROM pgnfs_snap_chunks h WHERE NOT pgnfs_snap_needed(ids, h.born, h.died))
         + (SELECT count(*) FROM pgnfs_snap_tab t WHERE NOT pgnfs_snap_needed(ids, t.made, t.died))
      INTO n;
    IF n > 0 THEN
        detail := format('%s kept rows and tables are seen by no live snapshot%s', n, pending);
        repaired := p_repair;
        IF p_repair THEN
            UPDATE pgnfs_snap_state s SET reclaim_from = 0;
            LOOP
                EXIT WHEN (SELECT c.pos FROM pgnfs_snap_reclaim(1000000000000000) c) IS NULL;
            END LOOP;
            detail := detail || ': removed';
        END IF;
        RETURN NEXT;
    END IF;
    -- Kept tables and their listing.
    FOR r IN SELECT t.tab, t.inode FROM pgnfs_snap_tab t
              WHERE NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = t.tab) ORDER BY t.tab LOOP
        ino := r.inode;
        detail := format('kept table %s of file %s is missing', r.tab, r.inode);
        repaired := p_repair;
        IF p_repair THEN
            DELETE FROM pgnfs_snap_tab t WHERE t.tab = r.tab;
            detail := detail || ': unlisted';
        END IF;
        RETURN NEXT;
    END LOOP;
    FOR r IN SELECT c.oid, c.relname::text AS nm FROM pg_class c
              WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'
                AND c.relname ~ '^pgnfs_snapinv[0-9]+_[0-9]+$'
                AND NOT EXISTS (SELECT 1 FROM pgnfs_snap_tab t WHERE t.tab = c.oid)
              ORDER BY 2 LOOP
        ino := 0;
        detail := format('table %s is not listed as kept for a snapshot', r.nm);
        repaired := p_repair;
        IF p_repair THEN
            EXECUTE format('DROP TABLE %I', r.nm);
            detail := detail || ': dropped';
        END IF;
        RETURN NEXT;
    END LOOP;
    -- Per-file tables without their trigger or column.
    FOR r IN SELECT t.inode, t.tab::regclass AS rel,
                    EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = t.tab
                             AND a.attname = 'born' AND NOT a.attisdropped) AS hascol
               FROM pgnfs_filetab t
              WHERE EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = t.tab)
                AND NOT EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = t.tab
                                 AND g.tgname = 'pgnfs_snap_keep' AND g.tgenabled <> 'D')
              ORDER BY t.inode LOOP
        ino := r.inode;
        detail := format('table %s of file %s keeps nothing for snapshots (no trigger)', r.rel,
                         r.inode);
        repaired := p_repair;
        IF p_repair THEN
            IF NOT r.hascol THEN
                EXECUTE format('ALTER TABLE %s ADD COLUMN born bigint', r.rel);
            END IF;
            EXECUTE format('DROP TRIGGER IF EXISTS pgnfs_snap_keep ON %s', r.rel);
            EXECUTE format('CREATE TRIGGER pgnfs_snap_keep BEFORE INSERT OR UPDATE OR DELETE ON %s'
                           ' FOR EACH ROW EXECUTE FUNCTION pgnfs_snap_keep_inv(%L)',
                           r.rel, r.inode::text);
            detail := detail || ': made';
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;
