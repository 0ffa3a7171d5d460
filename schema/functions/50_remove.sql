-- 50_remove.sql -- REMOVE and RMDIR (RFC 1813 3.3.12, 3.3.13).

-- Remove name p_name from directory (p_dir, p_dgen); p_rmdir says which of
-- the two calls this is. Checks, in Linux's order: the directory exists
-- (ESTALE) and is one (ENOTDIR); search permission (EACCES); the name
-- exists (ENOENT); write and search permission (EACCES); a sticky directory
-- lets only root, its owner or the entry's owner remove (EPERM); rmdir needs
-- a directory (ENOTDIR), remove a non-directory (EISDIR); rmdir needs it
-- empty (ENOTEMPTY). The file and its data go with its last name.
-- Returns rows: role 2 and 3 the directory before and after; on success
-- also the object: role 7 (its attributes before) when it is gone, role 6
-- (its attributes after: nlink and ctime changed) when other names keep it
-- (the metadata caches learn both).
CREATE OR REPLACE FUNCTION pgnfs_remove(
    p_dir bigint, p_dgen int, p_name bytea, p_rmdir boolean,
    c_uid bigint, c_gid bigint, c_groups bigint[], now bigint)
RETURNS SETOF pgnfs_result LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    d   fileatt;
    dp  fileatt;
    f   fileatt;
    st  int := 0;
    ino bigint;
BEGIN
    SELECT * INTO d FROM fileatt WHERE inode = p_dir AND generation = p_dgen FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NEXT pgnfs_res(116, 0, NULL);
        RETURN;
    END IF;
    IF d.type <> 2 THEN
        st := 20;
    ELSIF NOT pgnfs_may_f(d, c_uid, c_gid, c_groups, 1) THEN
        st := 13;
    ELSE
        SELECT n.inode INTO ino FROM naming n WHERE n.parent = p_dir AND n.name = p_name;
        IF NOT FOUND THEN
            st := 2;
        ELSIF NOT pgnfs_may_f(d, c_uid, c_gid, c_groups, 3) THEN
            st := 13;
        ELSE
            SELECT * INTO f FROM fileatt WHERE inode = ino FOR UPDATE;
            IF d.mode & 512 <> 0 AND c_uid <> 0 AND c_uid <> d.uid AND c_uid <> f.uid THEN
                st := 1;
            ELSIF p_rmdir AND f.type <> 2 THEN
                st := 20;
            ELSIF NOT p_rmdir AND f.type = 2 THEN
                st := 21;
            ELSIF p_rmdir AND EXISTS (SELECT 1 FROM naming n WHERE n.parent = ino) THEN
                st := 39;
            END IF;
        END IF;
    END IF;
    IF st <> 0 THEN
        RETURN NEXT pgnfs_res(st, 2, d);
        RETURN NEXT pgnfs_res(st, 3, d);
        RETURN;
    END IF;

    DELETE FROM naming WHERE parent = p_dir AND name = p_name;
    IF f.type = 2 OR f.nlink <= 1 THEN
        DELETE FROM fileatt WHERE inode = ino;
        IF f.type = 1 THEN
            PERFORM pgnfs_data_drop(ino);
        END IF;
        RETURN NEXT pgnfs_res(0, 7, f);
    ELSE
        UPDATE fileatt SET nlink = nlink - 1, ctime = pgnfs_next_ctime(ctime, now),
                           change = change + 1
         WHERE inode = ino
        RETURNING * INTO f;
        RETURN NEXT pgnfs_res(0, 6, f);
    END IF;
    dp := pgnfs_dir_touch(p_dir, CASE WHEN f.type = 2 THEN -1 ELSE 0 END, now);
    RETURN NEXT pgnfs_res(0, 2, d);
    RETURN NEXT pgnfs_res(0, 3, dp);
END
$$;
