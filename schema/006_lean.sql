-- 006_lean.sql -- the durable path without foreign keys to fileatt and
-- without fileatt's CHECK constraints.
--
-- Every change of the file system is one call of a function of
-- schema/functions/, and what the database spent on it was mostly the
-- machinery around the few rows it touches (bench/results/durable.md):
-- the foreign keys, two from naming and three ON DELETE CASCADE keys of
-- the lock tables, ran their own queries through triggers at every insert
-- of a name and every delete of an inode; fileatt's eight CHECK
-- constraints were read back from their stored text (parsed and planned)
-- by every statement that wrote a row of it, whichever columns it set.
-- The functions make the same checks themselves, more cheaply, and
-- `pgnfs fsck` finds and repairs what SQL run by hand may leave behind.
--
-- Foreign keys:
--
--   key (dropped here)            the functions                  fsck check
--   naming.parent -> fileatt      create, link, rename lock the  names
--                                 directory's row (FOR UPDATE)
--                                 before they insert or move a
--                                 name into it; rmdir deletes
--                                 only an empty directory
--   naming.inode -> fileatt       create inserts the inode       names
--                                 first; link and rename lock
--                                 it; remove and rename delete
--                                 an inode only when no name is
--                                 left (not trusting nlink)
--   pgnfs_nlm_lock/_wait/_share   remove and rename delete the   lock-orphans
--   .inode -> fileatt CASCADE     lock rows of a file whose
--                                 last name goes, when it has
--                                 any; the lock functions lock
--                                 the file's row (FOR KEY SHARE)
--                                 before they store a lock
--
-- The keys are found by what they reference rather than by name, so a
-- file system whose constraints were renamed upgrades all the same.
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT c.conrelid::regclass AS tab, c.conname
               FROM pg_constraint c
              WHERE c.contype = 'f' AND c.confrelid = 'fileatt'::regclass
                AND c.conrelid IN ('naming'::regclass, 'pgnfs_nlm_lock'::regclass,
                                   'pgnfs_nlm_wait'::regclass, 'pgnfs_nlm_share'::regclass)
    LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.tab, r.conname);
    END LOOP;
END
$$;

-- fileatt's CHECK constraints. The values the functions store are computed
-- (modes masked to 07777, link counts and used bytes kept by the functions
-- that change them) or come from dbfs, which checks them (sizes, uid and
-- gid are 32-bit unsigned on the wire); the functions refuse the rest with
-- EINVAL (pgnfs_create: the type, a target only and always for a symbolic
-- link; pgnfs_sattr_eval: sizes, uid, gid). fsck's check "attributes"
-- finds values out of range; "nlink" and "used" find wrong counts.
-- naming's CHECK on the length of a name stays: one small expression, on
-- the rarer writes of names only.
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT c.conname FROM pg_constraint c
              WHERE c.contype = 'c' AND c.conrelid = 'fileatt'::regclass
    LOOP
        EXECUTE format('ALTER TABLE fileatt DROP CONSTRAINT %I', r.conname);
    END LOOP;
END
$$;
