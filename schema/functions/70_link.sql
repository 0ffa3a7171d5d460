-- 70_link.sql -- LINK (RFC 1813 3.3.15).

-- Give file (p_ino, p_gen) the name p_name in directory (p_dir, p_dgen).
-- Checks, in Linux's order: both exist (ESTALE); the directory is one
-- (ENOTDIR); search permission (EACCES); the name is free (EEXIST); write
-- permission on the directory (EACCES); the file is not a directory (EISDIR,
-- as Linux nfsd answers LINK of a directory); the link count has room
-- (EMLINK). The file's ctime moves.
-- Returns rows: role obj the file, pre and post the directory before and after.
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
        RETURN NEXT pgnfs_res(pgnfs_estale(), pgnfs_role_none(), NULL);
        RETURN;
    END IF;
    SELECT * INTO f FROM fileatt WHERE inode = p_ino AND generation = p_gen FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NEXT pgnfs_res(pgnfs_estale(), pgnfs_role_pre(), d);
        RETURN NEXT pgnfs_res(pgnfs_estale(), pgnfs_role_post(), d);
        RETURN;
    END IF;
    IF d.type <> pgnfs_t_dir() THEN
        st := pgnfs_enotdir();
    ELSIF NOT pgnfs_may_f(d, c_uid, c_gid, c_groups, pgnfs_want_x()) THEN
        st := pgnfs_eacces();
    ELSIF EXISTS (SELECT 1 FROM naming n WHERE n.parent = p_dir AND n.name = p_name) THEN
        st := pgnfs_eexist();
    ELSIF NOT pgnfs_may_f(d, c_uid, c_gid, c_groups, pgnfs_want_wx()) THEN
        st := pgnfs_eacces();
    ELSIF f.type = pgnfs_t_dir() THEN
        st := pgnfs_eisdir();
    ELSIF f.nlink >= pgnfs_nlink_max() THEN
        st := pgnfs_emlink();
    END IF;
    IF st <> 0 THEN
        RETURN NEXT pgnfs_res(st, pgnfs_role_obj(), f);
        RETURN NEXT pgnfs_res(st, pgnfs_role_pre(), d);
        RETURN NEXT pgnfs_res(st, pgnfs_role_post(), d);
        RETURN;
    END IF;

    INSERT INTO naming (parent, name, inode) VALUES (p_dir, p_name, p_ino);
    UPDATE fileatt SET nlink = nlink + 1, ctime = pgnfs_next_ctime(ctime, now),
                       change = change + 1
     WHERE inode = p_ino
    RETURNING * INTO f;
    UPDATE fileatt SET mtime = now, ctime = pgnfs_next_ctime(ctime, now), change = change + 1
     WHERE inode = p_dir
    RETURNING * INTO dp;
    RETURN NEXT pgnfs_res(0, pgnfs_role_obj(), f);
    RETURN NEXT pgnfs_res(0, pgnfs_role_pre(), d);
    RETURN NEXT pgnfs_res(0, pgnfs_role_post(), dp);
END
$$;
