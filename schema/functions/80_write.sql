-- 80_write.sql -- the checking half of WRITE (RFC 1813 3.3.7).
--
-- A write is one pipeline in one implicit transaction: this function, the
-- chunk statements, and an UPDATE of the size and times (dbfs_data.c). The
-- function must stop the transaction when the write is not allowed, before
-- any chunk is stored, so it raises instead of returning a status: SQLSTATE
-- 'PN' followed by the three-digit Linux errno, which dbfs maps back.

-- Lock file (p_ino, p_gen) for a write by the caller of chunks p_first ..
-- p_last and return its attributes before the write (role 2). The bytes
-- those chunks hold now leave fileatt.used; the statement that ends the
-- write adds back what they hold then. Raises PN116 (ESTALE) if the file is
-- gone, PN021 (EISDIR) for a directory, PN022 (EINVAL) for another
-- non-regular file, PN013 (EACCES) without write permission (the owner
-- always may).
CREATE OR REPLACE FUNCTION pgnfs_write_begin(
    p_ino bigint, p_gen int, c_uid bigint, c_gid bigint, c_groups bigint[],
    p_first bigint, p_last bigint)
RETURNS SETOF pgnfs_result LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    f fileatt;
BEGIN
    SELECT * INTO f FROM fileatt WHERE inode = p_ino AND generation = p_gen FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'write: stale file handle' USING ERRCODE = 'PN116';
    ELSIF f.type = 2 THEN
        RAISE EXCEPTION 'write: is a directory' USING ERRCODE = 'PN021';
    ELSIF f.type <> 1 THEN
        RAISE EXCEPTION 'write: not a regular file' USING ERRCODE = 'PN022';
    ELSIF NOT pgnfs_may_io(f, c_uid, c_gid, c_groups, 2) THEN
        RAISE EXCEPTION 'write: permission denied' USING ERRCODE = 'PN013';
    END IF;
    IF p_first <= p_last THEN
        UPDATE fileatt SET used = used - pgnfs_data_stored(p_ino, p_first, p_last)
         WHERE inode = p_ino;
    END IF;
    RETURN NEXT pgnfs_res(0, 2, f);
END
$$;
