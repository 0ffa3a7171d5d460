-- 011_snap_cheap.sql -- copy-on-write that costs (almost) nothing for the
-- rows no snapshot sees: while snapshots exist, a row written after the
-- newest one (every row of a file made since) used to pay a PL/pgSQL
-- trigger call and a read of pgnfs_snap_state on every INSERT, UPDATE and
-- DELETE of fileatt, naming and allfiles.
--
-- The epoch moves to a sequence, pgnfs_snap_epoch_seq: taking a snapshot
-- takes its id from nextval (functions/21_snap.sql, pgnfs_snap_create),
-- and pg_sequence_last_value of it (a built-in C function: no query, no
-- PL/pgSQL) is
--   - the DEFAULT of born: an INSERT is stamped without a trigger;
--   - the bound in the WHEN clause of the copy-on-write triggers, now
--     BEFORE UPDATE OR DELETE only: the function is entered only for a row
--     with coalesce(born, 0) below it, and decides there against the
--     newest live snapshot as before.
-- Why that is enough (21_snap.sql, invariants): a row version needs a copy
-- only when some live snapshot sees it, i.e. coalesce(born, 0) < newest,
-- and newest <= epoch <= the sequence's last value at all times (nextval
-- is seen at once, before the taking transaction commits, and never goes
-- back), so every such row enters the function. A stamp s (the sequence's
-- last value when the row was written) is >= newest (no live snapshot sees
-- the row) and below every id nextval gives later (every later snapshot
-- does). The sequence may run ahead of pgnfs_snap_state.epoch (a taking
-- transaction that rolled back, or the values PostgreSQL logs ahead before
-- a crash): ids then skip values, which nothing needs consecutive.
--
-- An INSERT that gives born itself as NULL (INSERT ... SELECT of a whole
-- row variable) is stamped by a second trigger, BEFORE INSERT WHEN
-- (NEW.born IS NULL), which no INSERT that leaves born to its DEFAULT
-- enters; it is enabled and disabled with pgnfs_snap_keep.
--
-- Per-file tables (inversion, hybrid) keep their one trigger: re-making it
-- on each of them is not O(1), and a chunk of a file's own table is large
-- beside what the call costs.

CREATE SEQUENCE IF NOT EXISTS pgnfs_snap_epoch_seq MINVALUE 0 START 0 NO CYCLE;
SELECT setval('pgnfs_snap_epoch_seq',
              greatest(s.epoch, coalesce(pg_sequence_last_value('pgnfs_snap_epoch_seq'), 0)),
              true)
  FROM pgnfs_snap_state s;

-- functions/21_snap.sql (applied in this same transaction, after the
-- migrations) gives it its body.
CREATE OR REPLACE FUNCTION pgnfs_snap_born() RETURNS trigger LANGUAGE plpgsql
AS $$ BEGIN RAISE EXCEPTION 'pgnfs: functions/21_snap.sql is missing'; END $$;

ALTER TABLE fileatt ALTER COLUMN born
    SET DEFAULT pg_sequence_last_value('pgnfs_snap_epoch_seq'::regclass);
ALTER TABLE naming ALTER COLUMN born
    SET DEFAULT pg_sequence_last_value('pgnfs_snap_epoch_seq'::regclass);
ALTER TABLE allfiles ALTER COLUMN born
    SET DEFAULT pg_sequence_last_value('pgnfs_snap_epoch_seq'::regclass);

-- The triggers again, in their new shape, enabled as before: exactly while
-- a snapshot exists.
DO $$
DECLARE
    t   text;
    fn  text;
    off boolean := NOT EXISTS (SELECT 1 FROM pgnfs_snapshots);
BEGIN
    FOREACH t IN ARRAY ARRAY['fileatt', 'naming', 'allfiles'] LOOP
        fn := 'pgnfs_snap_keep_' || t;
        EXECUTE format('DROP TRIGGER IF EXISTS pgnfs_snap_keep ON %I', t);
        EXECUTE format('CREATE TRIGGER pgnfs_snap_keep BEFORE UPDATE OR DELETE ON %I FOR EACH ROW'
                       ' WHEN (coalesce(OLD.born, 0)'
                       '       < pg_sequence_last_value(''pgnfs_snap_epoch_seq''::regclass))'
                       ' EXECUTE FUNCTION %I()', t, fn);
        EXECUTE format('DROP TRIGGER IF EXISTS pgnfs_snap_born ON %I', t);
        EXECUTE format('CREATE TRIGGER pgnfs_snap_born BEFORE INSERT ON %I FOR EACH ROW'
                       ' WHEN (NEW.born IS NULL) EXECUTE FUNCTION pgnfs_snap_born()', t);
        IF off THEN
            EXECUTE format('ALTER TABLE %I DISABLE TRIGGER pgnfs_snap_keep', t);
            EXECUTE format('ALTER TABLE %I DISABLE TRIGGER pgnfs_snap_born', t);
        END IF;
    END LOOP;
END
$$;
