-- 70_link.sql -- LINK (RFC 1813 3.3.15).

-- Give file (p_ino, p_gen) the name p_name in directory (p_dir, p_dgen).
-- Checks, in Linux's order: both exist (ESTALE); the directory is one
-- (ENOTDIR); search permission (EACCES); the name is free (EEXIST); write
-- permission on the directory (EACCES); the file is not a directory (EISDIR,
-- as Linux nfsd answers LINK of a directory); the link count has room
-- (EMLINK). The file's ctime moves.
-- Returns rows: role 1 the file, 2 and 3 the directory before and after.
CREATE OR REPLACE FUNCTION pgnfs_link(
    p_ino bigint, p_gen int, p_dir bigint, p_dgen int, p_name bytea,
    c_uid bigint, c_gid bigint, c_groups bigint[], now bigint)
RETURNS SETOF pgnfs_result LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    d  fileatt;
    dp fileatt;
    f  fileatt;
    st int := 0;
BEGIN
    -- Directories are locked before the files in them, everywhere.
    SELECT * INTO d FROM fileatt WHERE inode = p_dir AND generation = p_dgen FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NEXT pgnfs_res(116, 0, NULL);
        RETURN;
    END IF;
    SELECT * INTO f FROM fileatt WHERE inode = p_ino AND generation = p_gen FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NEXT pgnfs_res(116, 2, d);
        RETURN NEXT pgnfs_res(116, 3, d);
        RETURN;
    END IF;
    IF d.type <> 2 THEN
        st := 20;
    ELSIF NOT pgnfs_may_f(d, c_uid, c_gid, c_groups, 1) THEN
        st := 13;
    ELSIF EXISTS (SELECT 1 FROM naming n WHERE n.parent = p_dir AND n.name = p_name) THEN
        st := 17;
    ELSIF NOT pgnfs_may_f(d, c_uid, c_gid, c_groups, 3) THEN
        st := 13;
    ELSIF f.type = 2 THEN
        st := 21;
    ELSIF f.nlink >= 2147483647 THEN
        st := 31;
    END IF;
    IF st <> 0 THEN
        RETURN NEXT pgnfs_res(st, 1, f);
        RETURN NEXT pgnfs_res(st, 2, d);
        RETURN NEXT pgnfs_res(st, 3, d);
        RETURN;
    END IF;

    INSERT INTO naming (parent, name, inode) VALUES (p_dir, p_name, p_ino);
    UPDATE fileatt SET nlink = nlink + 1, ctime = pgnfs_next_ctime(ctime, now),
                       change = change + 1
     WHERE inode = p_ino
    RETURNING * INTO f;
    dp := pgnfs_dir_touch(p_dir, 0, now);
    RETURN NEXT pgnfs_res(0, 1, f);
    RETURN NEXT pgnfs_res(0, 2, d);
    RETURN NEXT pgnfs_res(0, 3, dp);
END
$$;
