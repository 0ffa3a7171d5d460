-- 50_remove.sql -- REMOVE and RMDIR (RFC 1813 3.3.12, 3.3.13).

-- Remove name p_name from directory (p_dir, p_dgen); p_rmdir says which of
-- the two calls this is. Checks, in Linux's order: the directory exists
-- (ESTALE) and is one (ENOTDIR); search permission (EACCES); the name
-- exists (ENOENT); write and search permission (EACCES); a sticky directory
-- lets only root, its owner or the entry's owner remove (EPERM); rmdir needs
-- a directory (ENOTDIR), remove a non-directory (EISDIR); rmdir needs it
-- empty (ENOTEMPTY). The file and its data go with its last name.
-- Returns rows: role pre and post the directory before and after; on success
-- also the object: role gone (its attributes before) when it is gone, victim
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
        RETURN NEXT pgnfs_res(pgnfs_estale(), pgnfs_role_none(), NULL);
        RETURN;
    END IF;
    IF d.type <> pgnfs_t_dir() THEN
        st := pgnfs_enotdir();
    ELSIF NOT pgnfs_may_f(d, c_uid, c_gid, c_groups, pgnfs_want_x()) THEN
        st := pgnfs_eacces();
    ELSE
        SELECT n.inode INTO ino FROM naming n WHERE n.parent = p_dir AND n.name = p_name;
        IF NOT FOUND THEN
            st := pgnfs_enoent();
        ELSIF NOT pgnfs_may_f(d, c_uid, c_gid, c_groups, pgnfs_want_wx()) THEN
            st := pgnfs_eacces();
        ELSE
            SELECT * INTO f FROM fileatt WHERE inode = ino FOR UPDATE;
            IF d.mode & pgnfs_s_isvtx() <> 0 AND c_uid <> 0 AND c_uid <> d.uid
               AND c_uid <> f.uid THEN
                st := pgnfs_eperm();
            ELSIF p_rmdir AND f.type <> pgnfs_t_dir() THEN
                st := pgnfs_enotdir();
            ELSIF NOT p_rmdir AND f.type = pgnfs_t_dir() THEN
                st := pgnfs_eisdir();
            ELSIF p_rmdir AND EXISTS (SELECT 1 FROM naming n WHERE n.parent = ino ORDER BY n.name LIMIT 1) THEN
                st := pgnfs_enotempty();
            END IF;
        END IF;
    END IF;
    IF st <> 0 THEN
        RETURN NEXT pgnfs_res(st, pgnfs_role_pre(), d);
        RETURN NEXT pgnfs_res(st, pgnfs_role_post(), d);
        RETURN;
    END IF;

    DELETE FROM naming WHERE parent = p_dir AND name = p_name;
    -- The file goes with its last name: the names decide, not nlink (no
    -- foreign key stops a delete that would leave a name behind).
    DELETE FROM fileatt x WHERE x.inode = ino
       AND NOT EXISTS (SELECT 1 FROM naming n WHERE n.inode = ino);
    IF FOUND THEN
        IF f.type = pgnfs_t_reg() THEN
            PERFORM pgnfs_file_drop(ino);
        END IF;
        RETURN NEXT pgnfs_res(0, pgnfs_role_gone(), f);
    ELSE
        UPDATE fileatt SET nlink = nlink - 1, ctime = pgnfs_next_ctime(ctime, now),
                           change = change + 1
         WHERE inode = ino
        RETURNING * INTO f;
        RETURN NEXT pgnfs_res(0, pgnfs_role_victim(), f);
    END IF;
    UPDATE fileatt SET nlink = nlink + CASE WHEN f.type = pgnfs_t_dir() THEN -1 ELSE 0 END,
                       mtime = now, ctime = pgnfs_next_ctime(ctime, now), change = change + 1
     WHERE inode = p_dir
    RETURNING * INTO dp;
    RETURN NEXT pgnfs_res(0, pgnfs_role_pre(), d);
    RETURN NEXT pgnfs_res(0, pgnfs_role_post(), dp);
END
$$;

-- The last name of regular file ino went, and its fileatt row with it:
-- drop its data (pgnfs_data_drop: the one place that knows the layouts and
-- what snapshots keep) and the locks, blocked requests and share reservations held on it (looked
-- for first: almost no file has any, and one query that finds none costs
-- less than three deletes).
CREATE OR REPLACE FUNCTION pgnfs_file_drop(ino bigint)
RETURNS void LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    PERFORM pgnfs_data_drop(ino);
    IF EXISTS (SELECT 1 FROM pgnfs_nlm_lock l WHERE l.inode = ino
               UNION ALL SELECT 1 FROM pgnfs_nlm_wait w WHERE w.inode = ino
               UNION ALL SELECT 1 FROM pgnfs_nlm_share s WHERE s.inode = ino) THEN
        DELETE FROM pgnfs_nlm_lock l WHERE l.inode = ino;
        DELETE FROM pgnfs_nlm_wait w WHERE w.inode = ino;
        DELETE FROM pgnfs_nlm_share s WHERE s.inode = ino;
    END IF;
END
$$;
