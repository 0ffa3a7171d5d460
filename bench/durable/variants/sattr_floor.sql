-- sattr_floor.sql: NOT A CORRECT SCHEMA, a bound: pgnfs_setattr that checks
-- nothing and sets only the mode, ctime and change: its two statements and
-- two result rows, what any PL/pgSQL SETATTR costs before its rules.
-- (bench/durable/sqlcost -c label=NAME,build=DIR,sql=THIS: a variant measured in
-- bench/results/durable.md, "Fewer statements, fewer expressions"; for a build
-- with migration 011)
CREATE OR REPLACE FUNCTION pgnfs_setattr(
    p_ino bigint, p_gen int, c_uid bigint, c_gid bigint, c_groups bigint[], now bigint,
    s_set int, s_mode int, s_uid bigint, s_gid bigint, s_size bigint,
    s_atime bigint, s_mtime bigint, p_guard bigint)
RETURNS SETOF pgnfs_result LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    f fileatt;
    p fileatt;
BEGIN
    SELECT * INTO f FROM fileatt WHERE inode = p_ino AND generation = p_gen FOR UPDATE;
    UPDATE fileatt SET mode = s_mode, ctime = pgnfs_next_ctime(f.ctime, now), change = f.change + 1
     WHERE inode = p_ino
    RETURNING * INTO p;
    RETURN NEXT pgnfs_res(0, pgnfs_role_pre(), f);
    RETURN NEXT pgnfs_res(0, pgnfs_role_post(), p);
END
$$;
