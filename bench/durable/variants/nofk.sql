-- nofk.sql: the five foreign keys to fileatt dropped
-- (bench/durable/sqlcost -c label=NAME,build=DIR,sql=THIS: a schema variant
-- measured in bench/results/durable.md; for a build before migration 006)
ALTER TABLE naming DROP CONSTRAINT naming_parent_fkey, DROP CONSTRAINT naming_inode_fkey;
ALTER TABLE pgnfs_nlm_lock DROP CONSTRAINT pgnfs_nlm_lock_inode_fkey;
ALTER TABLE pgnfs_nlm_wait DROP CONSTRAINT pgnfs_nlm_wait_inode_fkey;
ALTER TABLE pgnfs_nlm_share DROP CONSTRAINT pgnfs_nlm_share_inode_fkey;
