-- plres.sql: pgnfs_res back in PL/pgSQL
-- (bench/durable/sqlcost -c label=NAME,build=DIR,sql=THIS: a schema variant
-- measured in bench/results/durable.md; for a build with migration 006)
CREATE OR REPLACE FUNCTION pgnfs_res(st int, r int, f fileatt)
RETURNS pgnfs_result LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
BEGIN
    RETURN ROW(st, r::smallint, f.inode, f.generation, f.type, f.mode, f.nlink, f.uid, f.gid,
               f.size, f.rdev_major, f.rdev_minor, f.atime, f.mtime, f.ctime, f.change,
               f.used)::pgnfs_result;
END
$$;
