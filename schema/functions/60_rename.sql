-- 60_rename.sql -- RENAME (RFC 1813 3.3.14).

-- Rename p_fname in directory (p_fdir, p_fdgen) to p_tname in directory
-- (p_tdir, p_tdgen). Locks: both directories in inode order, then the
-- objects in inode order; a directory that changes parent also takes a
-- transaction advisory lock that serializes such moves (as Linux's
-- per-file-system rename mutex), so the ancestor walk sees a stable tree.
-- Checks, in Linux's order: directories exist (ESTALE) and are ones
-- (ENOTDIR); search permission on both (EACCES); the source exists
-- (ENOENT); source and target the same file: success, nothing changes; a
-- directory moved into itself or its own subtree (EINVAL); write and search
-- permission on the source directory (EACCES) and the sticky rule for the
-- source (EPERM); with a target: write and search permission on the target
-- directory (EACCES), the sticky rule for the target (EPERM), directory
-- over non-directory (ENOTDIR), non-directory over directory (EISDIR);
-- without: write and search permission on the target directory (EACCES); a
-- directory that changes parent needs write permission on itself, for its
-- ".." (EACCES); a directory target must be empty (ENOTEMPTY).
-- Effects: the target's name goes (and the target with its last name),
-- the source gets the new name with a new readdir cookie, the moved
-- object's ctime moves, directories' nlink follow their subdirectories,
-- both directories' mtime and ctime move.
-- Returns rows: role pre and post the source directory before and after,
-- pre2 and post2 the target directory before and after; on a success that moved
-- something also role obj, the moved object after (its ctime moved), and
-- for a replaced target role gone (its attributes before) when it is gone or
-- role victim (after: nlink and ctime changed) when other names keep it.
CREATE OR REPLACE FUNCTION pgnfs_rename(
    p_fdir bigint, p_fdgen int, p_fname bytea, p_tdir bigint, p_tdgen int, p_tname bytea,
    c_uid bigint, c_gid bigint, c_groups bigint[], now bigint)
RETURNS SETOF pgnfs_result LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    fd   fileatt;
    td   fileatt;
    fdp  fileatt;
    tdp  fileatt;
    s    fileatt;
    t    fileatt;
    sino bigint;
    ncookie bigint;
    tino bigint;
    st   int := 0;
    fdn  int := 0;
    tdn  int := 0;
    same boolean := p_fdir = p_tdir;
BEGIN
    IF same THEN
        SELECT * INTO fd FROM fileatt
         WHERE inode = p_fdir AND generation = p_fdgen AND p_fdgen = p_tdgen FOR UPDATE;
        td := fd;
    ELSIF p_fdir < p_tdir THEN
        SELECT * INTO fd FROM fileatt WHERE inode = p_fdir AND generation = p_fdgen FOR UPDATE;
        SELECT * INTO td FROM fileatt WHERE inode = p_tdir AND generation = p_tdgen FOR UPDATE;
    ELSE
        SELECT * INTO td FROM fileatt WHERE inode = p_tdir AND generation = p_tdgen FOR UPDATE;
        SELECT * INTO fd FROM fileatt WHERE inode = p_fdir AND generation = p_fdgen FOR UPDATE;
    END IF;
    IF fd.inode IS NULL OR td.inode IS NULL THEN
        IF fd.inode IS NOT NULL THEN
            RETURN NEXT pgnfs_res(pgnfs_estale(), pgnfs_role_pre(), fd);
            RETURN NEXT pgnfs_res(pgnfs_estale(), pgnfs_role_post(), fd);
        END IF;
        IF td.inode IS NOT NULL THEN
            RETURN NEXT pgnfs_res(pgnfs_estale(), pgnfs_role_pre2(), td);
            RETURN NEXT pgnfs_res(pgnfs_estale(), pgnfs_role_post2(), td);
        END IF;
        RETURN NEXT pgnfs_res(pgnfs_estale(), pgnfs_role_none(), NULL);
        RETURN;
    END IF;

    IF fd.type <> pgnfs_t_dir() OR td.type <> pgnfs_t_dir() THEN
        st := pgnfs_enotdir();
    ELSIF NOT pgnfs_may_f(fd, c_uid, c_gid, c_groups, pgnfs_want_x())
          OR NOT pgnfs_may_f(td, c_uid, c_gid, c_groups, pgnfs_want_x()) THEN
        st := pgnfs_eacces();
    ELSE
        SELECT n.inode INTO sino FROM naming n WHERE n.parent = p_fdir AND n.name = p_fname;
        IF NOT FOUND THEN
            st := pgnfs_enoent();
        END IF;
    END IF;
    IF st = 0 THEN
        SELECT n.inode INTO tino FROM naming n WHERE n.parent = p_tdir AND n.name = p_tname;
        IF tino = sino THEN
            RETURN NEXT pgnfs_res(0, pgnfs_role_pre(), fd);
            RETURN NEXT pgnfs_res(0, pgnfs_role_post(), fd);
            RETURN NEXT pgnfs_res(0, pgnfs_role_pre2(), td);
            RETURN NEXT pgnfs_res(0, pgnfs_role_post2(), td);
            RETURN;
        END IF;
        IF tino IS NULL OR sino < tino THEN
            SELECT * INTO s FROM fileatt WHERE inode = sino FOR UPDATE;
            IF tino IS NOT NULL THEN
                SELECT * INTO t FROM fileatt WHERE inode = tino FOR UPDATE;
            END IF;
        ELSE
            SELECT * INTO t FROM fileatt WHERE inode = tino FOR UPDATE;
            SELECT * INTO s FROM fileatt WHERE inode = sino FOR UPDATE;
        END IF;
        IF s.type = pgnfs_t_dir() AND NOT same THEN
            PERFORM pg_advisory_xact_lock(pgnfs_rename_lock_key());
            IF pgnfs_is_ancestor(sino, p_tdir) THEN
                st := pgnfs_einval();
            END IF;
        END IF;
        IF st <> 0 THEN
            NULL;
        ELSIF NOT pgnfs_may_f(fd, c_uid, c_gid, c_groups, pgnfs_want_wx()) THEN
            st := pgnfs_eacces();
        ELSIF fd.mode & pgnfs_s_isvtx() <> 0 AND c_uid <> 0 AND c_uid <> fd.uid
              AND c_uid <> s.uid THEN
            st := pgnfs_eperm();
        ELSIF NOT pgnfs_may_f(td, c_uid, c_gid, c_groups, pgnfs_want_wx()) THEN
            st := pgnfs_eacces();
        ELSIF tino IS NOT NULL AND td.mode & pgnfs_s_isvtx() <> 0 AND c_uid <> 0 AND c_uid <> td.uid
              AND c_uid <> t.uid THEN
            st := pgnfs_eperm();
        ELSIF tino IS NOT NULL AND s.type = pgnfs_t_dir() AND t.type <> pgnfs_t_dir() THEN
            st := pgnfs_enotdir();
        ELSIF tino IS NOT NULL AND s.type <> pgnfs_t_dir() AND t.type = pgnfs_t_dir() THEN
            st := pgnfs_eisdir();
        ELSIF s.type = pgnfs_t_dir() AND NOT same
              AND NOT pgnfs_may_f(s, c_uid, c_gid, c_groups, pgnfs_want_w()) THEN
            st := pgnfs_eacces();
        ELSIF tino IS NOT NULL AND t.type = pgnfs_t_dir()
              AND EXISTS (SELECT 1 FROM naming n WHERE n.parent = tino ORDER BY n.name LIMIT 1) THEN
            st := pgnfs_enotempty();
        END IF;
    END IF;
    IF st <> 0 THEN
        RETURN NEXT pgnfs_res(st, pgnfs_role_pre(), fd);
        RETURN NEXT pgnfs_res(st, pgnfs_role_post(), fd);
        RETURN NEXT pgnfs_res(st, pgnfs_role_pre2(), td);
        RETURN NEXT pgnfs_res(st, pgnfs_role_post2(), td);
        RETURN;
    END IF;

    IF tino IS NOT NULL THEN
        DELETE FROM naming WHERE parent = p_tdir AND name = p_tname;
        IF t.type = pgnfs_t_dir() THEN
            tdn := tdn - 1;
        END IF;
        -- As in pgnfs_remove: the target goes when no name is left.
        DELETE FROM fileatt x WHERE x.inode = tino
           AND NOT EXISTS (SELECT 1 FROM naming n WHERE n.inode = tino);
        IF FOUND THEN
            IF t.type = pgnfs_t_reg() THEN
                PERFORM pgnfs_file_drop(tino);
            END IF;
            RETURN NEXT pgnfs_res(0, pgnfs_role_gone(), t);
        ELSE
            UPDATE fileatt SET nlink = nlink - 1, ctime = pgnfs_next_ctime(ctime, now),
                               change = change + 1
             WHERE inode = tino
            RETURNING * INTO t;
            RETURN NEXT pgnfs_res(0, pgnfs_role_victim(), t);
        END IF;
    END IF;
    -- Into another directory the name moves as a delete and an insert: on
    -- Citus naming is distributed by parent, whose value an UPDATE may not
    -- change. The new cookie is drawn first: Citus evaluates no volatile
    -- function inside an UPDATE of a distributed table.
    ncookie := nextval('pgnfs_cookie_seq');
    IF same THEN
        UPDATE naming SET name = p_tname, cookie = ncookie
         WHERE parent = p_fdir AND name = p_fname;
    ELSE
        DELETE FROM naming WHERE parent = p_fdir AND name = p_fname;
        INSERT INTO naming (parent, name, inode, cookie) VALUES (p_tdir, p_tname, sino, ncookie);
    END IF;
    UPDATE fileatt SET ctime = pgnfs_next_ctime(ctime, now), change = change + 1
     WHERE inode = sino
    RETURNING * INTO s;
    RETURN NEXT pgnfs_res(0, pgnfs_role_obj(), s);
    IF s.type = pgnfs_t_dir() AND NOT same THEN
        fdn := fdn - 1;
        tdn := tdn + 1;
    END IF;
    UPDATE fileatt SET nlink = nlink + CASE WHEN same THEN fdn + tdn ELSE fdn END, mtime = now,
                       ctime = pgnfs_next_ctime(ctime, now), change = change + 1
     WHERE inode = p_fdir
    RETURNING * INTO fdp;
    IF same THEN
        tdp := fdp;
    ELSE
        UPDATE fileatt SET nlink = nlink + tdn, mtime = now, ctime = pgnfs_next_ctime(ctime, now),
                           change = change + 1
         WHERE inode = p_tdir
        RETURNING * INTO tdp;
    END IF;
    RETURN NEXT pgnfs_res(0, pgnfs_role_pre(), fd);
    RETURN NEXT pgnfs_res(0, pgnfs_role_post(), fdp);
    RETURN NEXT pgnfs_res(0, pgnfs_role_pre2(), td);
    RETURN NEXT pgnfs_res(0, pgnfs_role_post2(), tdp);
END
$$;
