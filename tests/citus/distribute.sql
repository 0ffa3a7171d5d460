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
-- column: naming.parent -> fileatt.inode does (co-located), naming.inode
-- -> fileatt.inode does not, and local tables may not reference
-- distributed ones; those go (the functions keep them true, and pgnfs fsck
-- checks names that point nowhere and locks of files that are gone).
\set ON_ERROR_STOP on
BEGIN;
ALTER TABLE naming DROP CONSTRAINT naming_inode_fkey;
ALTER TABLE pgnfs_nlm_lock DROP CONSTRAINT pgnfs_nlm_lock_inode_fkey;
ALTER TABLE pgnfs_nlm_share DROP CONSTRAINT pgnfs_nlm_share_inode_fkey;
ALTER TABLE pgnfs_nlm_wait DROP CONSTRAINT pgnfs_nlm_wait_inode_fkey;
-- Citus distributes no table with triggers: the invalidation triggers of
-- several frontends go, so one server (coherence single) serves a
-- distributed file system (ARCHITECTURE.md says what several would need).
DROP TRIGGER pgnfs_inval_fileatt ON fileatt;
DROP TRIGGER pgnfs_inval_naming ON naming;
COMMIT;
SELECT create_distributed_table('fileatt', 'inode');
SELECT create_distributed_table('allfiles', 'inode', colocate_with => 'fileatt');
SELECT create_distributed_table('naming', 'parent', colocate_with => 'fileatt');
SELECT logicalrelid::regclass AS "table", partkey_col AS key, colocationid,
       (SELECT count(*) FROM pg_dist_shard s WHERE s.logicalrelid = p.logicalrelid) AS shards
  FROM (SELECT logicalrelid, column_to_column_name(logicalrelid, partkey) AS partkey_col,
               colocationid FROM pg_dist_partition) p
 ORDER BY 1;
