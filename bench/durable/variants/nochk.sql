-- nochk.sql: the foreign keys and fileatt's eight CHECKs dropped
-- (bench/durable/sqlcost -c label=NAME,build=DIR,sql=THIS: a schema variant
-- measured in bench/results/durable.md; for a build before migration 006)
ALTER TABLE naming DROP CONSTRAINT naming_parent_fkey, DROP CONSTRAINT naming_inode_fkey;
ALTER TABLE pgnfs_nlm_lock DROP CONSTRAINT pgnfs_nlm_lock_inode_fkey;
ALTER TABLE pgnfs_nlm_wait DROP CONSTRAINT pgnfs_nlm_wait_inode_fkey;
ALTER TABLE pgnfs_nlm_share DROP CONSTRAINT pgnfs_nlm_share_inode_fkey;
ALTER TABLE fileatt DROP CONSTRAINT fileatt_type_check, DROP CONSTRAINT fileatt_mode_check,
    DROP CONSTRAINT fileatt_nlink_check, DROP CONSTRAINT fileatt_uid_check,
    DROP CONSTRAINT fileatt_gid_check, DROP CONSTRAINT fileatt_size_check,
    DROP CONSTRAINT fileatt_used_check, DROP CONSTRAINT fileatt_check;
