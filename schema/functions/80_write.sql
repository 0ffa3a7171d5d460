-- 80_write.sql -- WRITE (RFC 1813 3.3.7) in one statement, for every
-- storage layout and encoding.
--
-- The function must stop the transaction when the write is not allowed,
-- before any chunk is stored, so it raises instead of returning a status:
-- SQLSTATE 'PN' followed by the three-digit Linux errno, which dbfs maps
-- back.

-- Lock file (p_ino, p_gen) for a write by the caller and return its row.
-- Raises PN116 (ESTALE) if the file is gone, PN021 (EISDIR) for a
-- directory, PN022 (EINVAL) for another non-regular file, PN013 (EACCES)
-- without write permission (the owner always may), PN077 for a guarded
-- file unless p_guarded (the plain writes: its chunks are written by
-- pgnfs_xf_write, 25_xform.sql, which passes true), PN067 for a
-- transformation link (27_xform_link.sql).
DROP FUNCTION IF EXISTS pgnfs_write_check(bigint, int, bigint, bigint, bigint[]);
CREATE OR REPLACE FUNCTION pgnfs_write_check(
    p_ino bigint, p_gen int, c_uid bigint, c_gid bigint, c_groups bigint[], p_guarded boolean)
RETURNS fileatt LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    f fileatt;
BEGIN
    SELECT * INTO f FROM fileatt WHERE inode = p_ino AND generation = p_gen FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'write: stale file handle' USING ERRCODE = pgnfs_errcode(pgnfs_estale());
    ELSIF f.type = pgnfs_t_dir() THEN
        RAISE EXCEPTION 'write: is a directory' USING ERRCODE = pgnfs_errcode(pgnfs_eisdir());
    ELSIF f.type <> pgnfs_t_reg() THEN
        RAISE EXCEPTION 'write: not a regular file' USING ERRCODE = pgnfs_errcode(pgnfs_einval());
    ELSIF NOT pgnfs_may_io(f, c_uid, c_gid, c_groups, pgnfs_want_w()) THEN
        RAISE EXCEPTION 'write: permission denied' USING ERRCODE = pgnfs_errcode(pgnfs_eacces());
    ELSIF f.chain <> 0 AND NOT p_guarded THEN
        -- A guarded file: its chunks are transformed in the server (25_xform.sql).
        RAISE EXCEPTION 'write: guarded file' USING ERRCODE = pgnfs_errcode(pgnfs_xf_eguarded());
    ELSIF f.rdev_major = pgnfs_xf_link_rdev() THEN
        -- A transformation link: the server writes its base (27_xform_link.sql).
        RAISE EXCEPTION 'write: transformation link' USING ERRCODE = pgnfs_errcode(pgnfs_xf_elink());
    END IF;
    RETURN f;
END
$$;

-- Write p_len bytes at p_off into file (p_ino, p_gen) for the caller at
-- time p_now (ns). p_data holds the pieces of the chunks touched, one after
-- the other, each encoded on its own when p_b64 (see pgnfs_data_put);
-- p_cs is the file system's chunk size. Placement: a file whose data is in
-- allfiles moves to its own table when the write makes it larger than
-- p_threshold bytes (0: any data, the inversion layout; NULL: never, the
-- single layout). Updates size, mtime, ctime, change and used, and clears
-- setuid/setgid when p_kill (a non-root writer). A zero-length write only
-- checks. Returns rows: role pre the attributes before, role post after.
-- Raises as pgnfs_write_check does.
CREATE OR REPLACE FUNCTION pgnfs_write(
    p_ino bigint, p_gen int, c_uid bigint, c_gid bigint, c_groups bigint[],
    p_off bigint, p_len bigint, p_data bytea, p_now bigint, p_kill boolean,
    p_cs int, p_b64 boolean, p_threshold bigint)
RETURNS SETOF pgnfs_result LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    f     fileatt;
    nf    fileatt;
    tab   boolean;
    delta bigint;
BEGIN
    f := pgnfs_write_check(p_ino, p_gen, c_uid, c_gid, c_groups, false);
    IF p_len = 0 THEN
        RETURN NEXT pgnfs_res(0, pgnfs_role_pre(), f);
        RETURN NEXT pgnfs_res(0, pgnfs_role_post(), f);
        RETURN;
    END IF;
    tab := pgnfs_data_tab(p_ino);
    IF NOT tab AND p_threshold IS NOT NULL AND greatest(f.size, p_off + p_len) > p_threshold THEN
        PERFORM pgnfs_data_totable(p_ino);
        tab := true;
    END IF;
    delta := pgnfs_data_put(p_ino, tab, p_off, p_len, p_data, p_cs, p_b64, f.size);
    UPDATE fileatt
       SET size = greatest(size, p_off + p_len), mtime = p_now,
           ctime = pgnfs_next_ctime(ctime, p_now), change = change + 1, used = used + delta,
           mode = CASE WHEN p_kill THEN pgnfs_kill_priv(mode) ELSE mode END
     WHERE inode = p_ino
    RETURNING * INTO nf;
    RETURN NEXT pgnfs_res(0, pgnfs_role_pre(), f);
    RETURN NEXT pgnfs_res(0, pgnfs_role_post(), nf);
END
$$;

-- The single layout's WRITE is a pipeline instead (store_single.c), which
-- costs less than this function for data that is always in allfiles: this
-- function checks and locks (role pre: the attributes before), one statement
-- per chunk piece stores, and an UPDATE (dbfs_sql.c, pgnfs_write_end) sets
-- size, times and used. The bytes the chunks p_first .. p_last hold now
-- leave fileatt.used here; the UPDATE adds back what they hold then.
CREATE OR REPLACE FUNCTION pgnfs_write_begin(
    p_ino bigint, p_gen int, c_uid bigint, c_gid bigint, c_groups bigint[],
    p_first bigint, p_last bigint)
RETURNS SETOF pgnfs_result LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    f fileatt;
    s bigint;
BEGIN
    f := pgnfs_write_check(p_ino, p_gen, c_uid, c_gid, c_groups, false);
    -- An append (nothing stored from p_first on) changes nothing here.
    IF p_first <= p_last AND p_first * (SELECT chunk_size FROM pgnfs_fs) < f.size THEN
        s := pgnfs_data_stored_all(p_ino, p_first, p_last);
        IF s <> 0 THEN
            UPDATE fileatt SET used = used - s WHERE inode = p_ino;
        END IF;
    END IF;
    RETURN NEXT pgnfs_res(0, pgnfs_role_pre(), f);
END
$$;
