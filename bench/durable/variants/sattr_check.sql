-- sattr_check.sql: SETATTR's checks as one SQL expression the planner inlines
-- (instead of a PL/pgSQL IF per rule in pgnfs_sattr_eval), the new values
-- computed in the UPDATE, and no nested PL/pgSQL call; same rules and results.
-- (bench/durable/sqlcost -c label=NAME,build=DIR,sql=THIS: a variant measured in
-- bench/results/durable.md, "Fewer statements, fewer expressions"; for a build
-- with migration 011)
CREATE OR REPLACE FUNCTION pgnfs_sattr_check(
    f fileatt, c_uid bigint, c_gid bigint, c_groups bigint[],
    s_set int, s_uid bigint, s_gid bigint, s_size bigint)
RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT CASE
    WHEN (s_set & pgnfs_set_size() <> 0 AND s_size < 0)
         OR (s_set & pgnfs_set_uid() <> 0 AND s_uid NOT BETWEEN 0 AND 4294967295)
         OR (s_set & pgnfs_set_gid() <> 0 AND s_gid NOT BETWEEN 0 AND 4294967295)
        THEN pgnfs_einval()
    WHEN s_set & pgnfs_set_size() <> 0 AND f.type = pgnfs_t_dir() THEN pgnfs_eisdir()
    WHEN s_set & pgnfs_set_size() <> 0 AND f.type <> pgnfs_t_reg() THEN pgnfs_einval()
    WHEN s_set & pgnfs_set_size() <> 0
         AND NOT pgnfs_may_io(f, c_uid, c_gid, c_groups, pgnfs_want_w()) THEN pgnfs_eacces()
    WHEN s_set & pgnfs_set_uid() <> 0 AND c_uid <> 0 AND NOT (c_uid = f.uid AND s_uid = f.uid)
        THEN pgnfs_eperm()
    WHEN s_set & pgnfs_set_gid() <> 0 AND c_uid <> 0
         AND NOT (c_uid = f.uid AND (s_gid = f.gid OR pgnfs_in_group(s_gid, c_gid, c_groups)))
        THEN pgnfs_eperm()
    WHEN s_set & pgnfs_set_mode() <> 0 AND c_uid <> 0 AND c_uid <> f.uid THEN pgnfs_eperm()
    WHEN s_set & (pgnfs_set_atime() | pgnfs_set_mtime()) <> 0 AND c_uid <> 0 AND c_uid <> f.uid
        THEN pgnfs_eperm()
    WHEN s_set & (pgnfs_set_atime_now() | pgnfs_set_mtime_now()) <> 0 AND c_uid <> 0
         AND c_uid <> f.uid AND NOT pgnfs_may_f(f, c_uid, c_gid, c_groups, pgnfs_want_w())
        THEN pgnfs_eacces()
    ELSE 0
END
$$;

CREATE OR REPLACE FUNCTION pgnfs_sattr_mode(
    f fileatt, c_uid bigint, c_gid bigint, c_groups bigint[], s_set int, s_mode int, s_gid bigint)
RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT CASE WHEN s_set & pgnfs_set_mode() <> 0 AND f.type <> pgnfs_t_lnk()
            THEN s_mode & pgnfs_s_mask()
                 & ~CASE WHEN c_uid <> 0
                          AND NOT pgnfs_in_group(CASE WHEN s_set & pgnfs_set_gid() <> 0
                                                      THEN s_gid ELSE f.gid END,
                                                 c_gid, c_groups)
                         THEN pgnfs_s_isgid() ELSE 0 END
            ELSE f.mode END
$$;

CREATE OR REPLACE FUNCTION pgnfs_sattr_kills(f_type smallint, c_uid bigint, s_set int)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT (s_set & (pgnfs_set_uid() | pgnfs_set_gid()) <> 0 AND f_type <> pgnfs_t_dir())
       OR (s_set & pgnfs_set_size() <> 0 AND c_uid <> 0)
$$;

CREATE OR REPLACE FUNCTION pgnfs_sattr_cut(f fileatt, new_size bigint)
RETURNS bigint LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    IF f.rdev_major = pgnfs_xf_link_rdev() AND f.type = pgnfs_t_reg() THEN
        RAISE EXCEPTION 'setattr: transformation link' USING ERRCODE = pgnfs_errcode(pgnfs_xf_elink());
    END IF;
    IF new_size < f.size THEN
        RETURN pgnfs_data_truncate(f.inode, new_size);
    END IF;
    RETURN 0;
END
$$;
CREATE OR REPLACE FUNCTION pgnfs_setattr(
    p_ino bigint, p_gen int, c_uid bigint, c_gid bigint, c_groups bigint[], now bigint,
    s_set int, s_mode int, s_uid bigint, s_gid bigint, s_size bigint,
    s_atime bigint, s_mtime bigint, p_guard bigint)
RETURNS SETOF pgnfs_result LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    f  fileatt;
    p  fileatt;
    st int;
    m  int;
BEGIN
    SELECT * INTO f FROM fileatt WHERE inode = p_ino AND generation = p_gen FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NEXT pgnfs_res(pgnfs_estale(), pgnfs_role_none(), NULL);
        RETURN;
    END IF;
    st := CASE WHEN p_guard IS NOT NULL AND f.ctime <> p_guard THEN pgnfs_ebadmsg()
               ELSE pgnfs_sattr_check(f, c_uid, c_gid, c_groups, s_set, s_uid, s_gid, s_size) END;
    IF st <> 0 THEN
        RETURN NEXT pgnfs_res(st, pgnfs_role_pre(), f);
        RETURN NEXT pgnfs_res(st, pgnfs_role_post(), f);
        RETURN;
    END IF;
    m := pgnfs_sattr_mode(f, c_uid, c_gid, c_groups, s_set, s_mode, s_gid);
    UPDATE fileatt
       SET mode = CASE WHEN pgnfs_sattr_kills(f.type, c_uid, s_set) THEN pgnfs_kill_priv(m) ELSE m END,
           uid = CASE WHEN s_set & pgnfs_set_uid() <> 0 THEN s_uid ELSE f.uid END,
           gid = CASE WHEN s_set & pgnfs_set_gid() <> 0 THEN s_gid ELSE f.gid END,
           size = CASE WHEN s_set & pgnfs_set_size() <> 0 THEN s_size ELSE f.size END,
           atime = CASE WHEN s_set & pgnfs_set_atime() <> 0 THEN s_atime
                        WHEN s_set & pgnfs_set_atime_now() <> 0 THEN now ELSE f.atime END,
           mtime = CASE WHEN s_set & pgnfs_set_mtime() <> 0 THEN s_mtime
                        WHEN s_set & (pgnfs_set_mtime_now() | pgnfs_set_size()) <> 0 THEN now
                        ELSE f.mtime END,
           ctime = pgnfs_next_ctime(f.ctime, now), change = f.change + 1,
           used = used - CASE WHEN s_set & pgnfs_set_size() <> 0 AND s_size <> f.size
                              THEN pgnfs_sattr_cut(f, s_size) ELSE 0 END
     WHERE inode = p_ino
    RETURNING * INTO p;
    RETURN NEXT pgnfs_res(0, pgnfs_role_pre(), f);
    RETURN NEXT pgnfs_res(0, pgnfs_role_post(), p);
END
$$;
