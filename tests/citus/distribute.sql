-- distribute.sql -- spread a pgnfs file system (made by `pgnfs mkfs` on a
-- Citus coordinator, layout single) over the Citus workers. Run once, on
-- the coordinator, before any server serves it (tests/citus/citus.sh).
-- ARCHITECTURE.md ("Storage on Citus") says why these keys.
--
--   fileatt   by inode
--   allfiles  by inode, co-located with fileatt: a file's chunks sit with
--             its attributes, so a write (chunks + size) is one shard
--   naming    by parent, co-located with fileatt: a directory's entries
--             sit with the directory's own row, so a create, a remove or a
--             rename inside one directory changes one shard for the names
--             and the parent (the new inode's row may be on another)
--
-- Everything else stays a local table of the coordinator, which runs the
-- functions: the file system's facts, locks, frontends, the invalidation
-- log, chains.
--
-- Foreign keys between distributed tables must contain the distribution
-- column, and local tables may not reference distributed ones: file
-- systems made before migration 006 still have such keys (naming.inode
-- and the lock tables' inode -> fileatt.inode); they go (the functions
-- keep them true, and pgnfs fsck checks names that point nowhere and
-- locks of files that are gone).
\set ON_ERROR_STOP on
BEGIN;
ALTER TABLE naming DROP CONSTRAINT IF EXISTS naming_inode_fkey;
ALTER TABLE pgnfs_nlm_lock DROP CONSTRAINT IF EXISTS pgnfs_nlm_lock_inode_fkey;
ALTER TABLE pgnfs_nlm_share DROP CONSTRAINT IF EXISTS pgnfs_nlm_share_inode_fkey;
ALTER TABLE pgnfs_nlm_wait DROP CONSTRAINT IF EXISTS pgnfs_nlm_wait_inode_fkey;
-- Citus distributes no table with triggers: the invalidation triggers of
-- several frontends go, so one server (coherence single) serves a
-- distributed file system (ARCHITECTURE.md says what several would need);
-- so do the copy-on-write triggers of snapshots (Citus has no snapshot
-- across shards: a distributed file system takes none) and those that
-- transformation chains and links add when first used.
DROP TRIGGER IF EXISTS pgnfs_inval_fileatt ON fileatt;
DROP TRIGGER IF EXISTS pgnfs_inval_naming ON naming;
DROP TRIGGER IF EXISTS pgnfs_snap_keep ON fileatt;
DROP TRIGGER IF EXISTS pgnfs_snap_keep ON naming;
DROP TRIGGER IF EXISTS pgnfs_snap_keep ON allfiles;
DROP TRIGGER IF EXISTS pgnfs_snap_born ON fileatt;
DROP TRIGGER IF EXISTS pgnfs_snap_born ON naming;
DROP TRIGGER IF EXISTS pgnfs_snap_born ON allfiles;
-- and the stamp of born (011_snap_cheap.sql), a local sequence's value.
ALTER TABLE fileatt ALTER COLUMN born DROP DEFAULT;
ALTER TABLE naming ALTER COLUMN born DROP DEFAULT;
ALTER TABLE allfiles ALTER COLUMN born DROP DEFAULT;
DROP TRIGGER IF EXISTS pgnfs_xf_inherit ON naming;
DROP TRIGGER IF EXISTS pgnfs_xf_follow ON fileatt;
DROP TRIGGER IF EXISTS pgnfs_xf_forget ON fileatt;
COMMIT;
SELECT create_distributed_table('fileatt', 'inode');
SELECT create_distributed_table('allfiles', 'inode', colocate_with => 'fileatt');
SELECT create_distributed_table('naming', 'parent', colocate_with => 'fileatt');
SELECT logicalrelid::regclass AS "table", partkey_col AS key, colocationid,
       (SELECT count(*) FROM pg_dist_shard s WHERE s.logicalrelid = p.logicalrelid) AS shards
  FROM (SELECT logicalrelid, column_to_column_name(logicalrelid, partkey) AS partkey_col,
               colocationid FROM pg_dist_partition) p
 ORDER BY 1;
