-- chkfn.sql: the foreign keys dropped, fileatt's CHECKs as one calling a PL/pgSQL function
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
CREATE FUNCTION pgnfs_fileatt_ok(t smallint, m int, n int, u bigint, g bigint, s bigint,
                                 us bigint, tg bytea)
RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $f$
BEGIN
    RETURN t BETWEEN 1 AND 7 AND m BETWEEN 0 AND 4095 AND n >= 0
           AND u BETWEEN 0 AND 4294967295 AND g BETWEEN 0 AND 4294967295 AND s >= 0
           AND us >= 0 AND (t = 5) = (tg IS NOT NULL);
END $f$;
ALTER TABLE fileatt ADD CONSTRAINT fileatt_ok
    CHECK (pgnfs_fileatt_ok(type, mode, nlink, uid, gid, size, used, target));
