-- 30_setattr.sql -- SETATTR (RFC 1813 3.3.2) with Linux's rules, and the
-- evaluation of a set of attributes that CREATE shares.
--
-- The bits of s_set are dbfs.h's DBFS_SET_* (pgnfs_set_*): mode, uid, gid, size,
-- 16 atime (client's), 32 atime (server's), 64 mtime (client's), 128 mtime
-- (server's).

-- Check and apply attributes to a copy of row f, changing nothing stored.
-- status is 0 and nf the new row, or status is an errno and nf = f.
-- Checks (in Linux's order): size needs a regular file (EISDIR, EINVAL) and
-- write permission with the owner override (EACCES); uid only by root, or
-- by the owner to himself (EPERM); gid by root, or by the owner to a group
-- he is in (EPERM); mode by owner or root (EPERM); client times by owner or
-- root (EPERM); server times by owner, root or a writer (EACCES).
-- Effects: mode keeps 07777 and is ignored on symbolic links; a non-root
-- caller outside the (new) group loses setgid in a chmod; uid or gid set on
-- a non-directory clears setuid, and setgid when group-execute is set (even
-- for root); a size set by a non-root caller clears them too; a size set
-- moves mtime; ctime always moves and change counts up.
CREATE OR REPLACE FUNCTION pgnfs_sattr_eval(
    f fileatt, c_uid bigint, c_gid bigint, c_groups bigint[], now bigint,
    s_set int, s_mode int, s_uid bigint, s_gid bigint, s_size bigint,
    s_atime bigint, s_mtime bigint,
    OUT status int, OUT nf fileatt)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    root  boolean := c_uid = 0;
    owner boolean := c_uid = f.uid;
    newgid bigint;
BEGIN
    nf := f;
    status := 0;
    -- Values out of range (dbfs never sends them; fileatt's CHECK
    -- constraints refused them before 006).
    IF (s_set & pgnfs_set_size() <> 0 AND s_size < 0)
       OR (s_set & pgnfs_set_uid() <> 0 AND s_uid NOT BETWEEN 0 AND 4294967295)
       OR (s_set & pgnfs_set_gid() <> 0 AND s_gid NOT BETWEEN 0 AND 4294967295) THEN
        status := pgnfs_einval(); RETURN;
    END IF;
    IF s_set & pgnfs_set_size() <> 0 THEN
        IF f.type = pgnfs_t_dir() THEN
            status := pgnfs_eisdir(); RETURN;
        ELSIF f.type <> pgnfs_t_reg() THEN
            status := pgnfs_einval(); RETURN;
        ELSIF NOT pgnfs_may_io(f, c_uid, c_gid, c_groups, pgnfs_want_w()) THEN
            status := pgnfs_eacces(); RETURN;
        END IF;
    END IF;
    IF s_set & pgnfs_set_uid() <> 0 AND NOT root AND NOT (owner AND s_uid = f.uid) THEN
        status := pgnfs_eperm(); RETURN;
    END IF;
    IF s_set & pgnfs_set_gid() <> 0 AND NOT root
       AND NOT (owner AND (s_gid = f.gid OR pgnfs_in_group(s_gid, c_gid, c_groups))) THEN
        status := pgnfs_eperm(); RETURN;
    END IF;
    IF s_set & pgnfs_set_mode() <> 0 AND NOT root AND NOT owner THEN
        status := pgnfs_eperm(); RETURN;
    END IF;
    IF s_set & (pgnfs_set_atime() | pgnfs_set_mtime()) <> 0 AND NOT root AND NOT owner THEN
        status := pgnfs_eperm(); RETURN;
    END IF;
    IF s_set & (pgnfs_set_atime_now() | pgnfs_set_mtime_now()) <> 0 AND NOT root AND NOT owner
       AND NOT pgnfs_may_f(f, c_uid, c_gid, c_groups, pgnfs_want_w()) THEN
        status := pgnfs_eacces(); RETURN;
    END IF;

    IF s_set & pgnfs_set_mode() <> 0 AND f.type <> pgnfs_t_lnk() THEN
        nf.mode := s_mode & pgnfs_s_mask();
        newgid := CASE WHEN s_set & pgnfs_set_gid() <> 0 THEN s_gid ELSE f.gid END;
        IF NOT root AND NOT pgnfs_in_group(newgid, c_gid, c_groups) THEN
            nf.mode := nf.mode & ~pgnfs_s_isgid();
        END IF;
    END IF;
    IF s_set & pgnfs_set_uid() <> 0 THEN
        nf.uid := s_uid;
    END IF;
    IF s_set & pgnfs_set_gid() <> 0 THEN
        nf.gid := s_gid;
    END IF;
    IF s_set & (pgnfs_set_uid() | pgnfs_set_gid()) <> 0 AND f.type <> pgnfs_t_dir() THEN
        nf.mode := pgnfs_kill_priv(nf.mode);
    END IF;
    IF s_set & pgnfs_set_size() <> 0 THEN
        nf.size := s_size;
        nf.mtime := now;
        IF NOT root THEN
            nf.mode := pgnfs_kill_priv(nf.mode);
        END IF;
    END IF;
    IF s_set & pgnfs_set_atime() <> 0 THEN
        nf.atime := s_atime;
    ELSIF s_set & pgnfs_set_atime_now() <> 0 THEN
        nf.atime := now;
    END IF;
    IF s_set & pgnfs_set_mtime() <> 0 THEN
        nf.mtime := s_mtime;
    ELSIF s_set & pgnfs_set_mtime_now() <> 0 THEN
        nf.mtime := now;
    END IF;
    nf.ctime := pgnfs_next_ctime(f.ctime, now);
    nf.change := f.change + 1;
END
$$;

-- Store row nf (from pgnfs_sattr_eval on old row f) and cut the data if the
-- file shrank. Returns the stored row. Raises PN067 for a new size of a
-- transformation link (the server sets its base's: 27_xform_link.sql).
CREATE OR REPLACE FUNCTION pgnfs_sattr_store(f fileatt, nf fileatt)
RETURNS fileatt LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    p fileatt;
    removed bigint := 0;
BEGIN
    IF nf.size <> f.size AND f.rdev_major = pgnfs_xf_link_rdev() AND f.type = pgnfs_t_reg() THEN
        -- A transformation link's size is its base's (27_xform_link.sql).
        RAISE EXCEPTION 'setattr: transformation link' USING ERRCODE = pgnfs_errcode(pgnfs_xf_elink());
    END IF;
    IF nf.size < f.size THEN
        removed := pgnfs_data_truncate(f.inode, nf.size);
    END IF;
    UPDATE fileatt
       SET mode = nf.mode, uid = nf.uid, gid = nf.gid, size = nf.size, atime = nf.atime,
           mtime = nf.mtime, ctime = nf.ctime, change = nf.change, used = used - removed
     WHERE inode = f.inode
    RETURNING * INTO p;
    RETURN p;
END
$$;

-- SETATTR of file (p_ino, p_gen) for the caller (c_uid, c_gid, c_groups)
-- at time now (ns). p_guard, when not NULL, must equal the current ctime
-- (else EBADMSG and nothing changes). Returns rows: role pre the attributes
-- before, role post after (equal on failure); ESTALE has no attributes.
CREATE OR REPLACE FUNCTION pgnfs_setattr(
    p_ino bigint, p_gen int, c_uid bigint, c_gid bigint, c_groups bigint[], now bigint,
    s_set int, s_mode int, s_uid bigint, s_gid bigint, s_size bigint,
    s_atime bigint, s_mtime bigint, p_guard bigint)
RETURNS SETOF pgnfs_result LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    f fileatt;
    nf fileatt;
    p fileatt;
    r record;
    removed bigint := 0;
BEGIN
    SELECT * INTO f FROM fileatt WHERE inode = p_ino AND generation = p_gen FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NEXT pgnfs_res(pgnfs_estale(), pgnfs_role_none(), NULL);
        RETURN;
    END IF;
    IF p_guard IS NOT NULL AND f.ctime <> p_guard THEN
        RETURN NEXT pgnfs_res(pgnfs_ebadmsg(), pgnfs_role_pre(), f);
        RETURN NEXT pgnfs_res(pgnfs_ebadmsg(), pgnfs_role_post(), f);
        RETURN;
    END IF;
    r := pgnfs_sattr_eval(f, c_uid, c_gid, c_groups, now, s_set, s_mode, s_uid, s_gid, s_size,
                          s_atime, s_mtime);
    IF r.status <> 0 THEN
        RETURN NEXT pgnfs_res(r.status, pgnfs_role_pre(), f);
        RETURN NEXT pgnfs_res(r.status, pgnfs_role_post(), f);
        RETURN;
    END IF;
    -- pgnfs_sattr_store, written out here to save a call.
    nf := r.nf;
    IF nf.size <> f.size AND f.rdev_major = pgnfs_xf_link_rdev() AND f.type = pgnfs_t_reg() THEN
        -- A transformation link's size is its base's (27_xform_link.sql).
        RAISE EXCEPTION 'setattr: transformation link' USING ERRCODE = pgnfs_errcode(pgnfs_xf_elink());
    END IF;
    IF nf.size < f.size THEN
        removed := pgnfs_data_truncate(f.inode, nf.size);
    END IF;
    UPDATE fileatt
       SET mode = nf.mode, uid = nf.uid, gid = nf.gid, size = nf.size, atime = nf.atime,
           mtime = nf.mtime, ctime = nf.ctime, change = nf.change, used = used - removed
     WHERE inode = p_ino
    RETURNING * INTO p;
    RETURN NEXT pgnfs_res(0, pgnfs_role_pre(), f);
    RETURN NEXT pgnfs_res(0, pgnfs_role_post(), p);
END
$$;
