-- remove_onestmt.sql: REMOVE's name, file (or its nlink) and directory changed
-- by one statement (a WITH of the DELETEs and UPDATEs, as CREATE's), and
-- pgnfs_file_drop's look-ups (own table? locks?) and the chunks' DELETE in one
-- statement instead of three nested PL/pgSQL calls; same results.
-- (bench/durable/sqlcost -c label=NAME,build=DIR,sql=THIS: a variant measured in
-- bench/results/durable.md, "Fewer statements, fewer expressions"; for a build
-- with migration 011)
CREATE OR REPLACE FUNCTION pgnfs_file_drop(ino bigint)
RETURNS void LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    tab   boolean;
    locks boolean;
BEGIN
    WITH t AS (SELECT EXISTS (SELECT 1 FROM pgnfs_filetab t WHERE t.inode = ino) AS tab),
    a AS (DELETE FROM allfiles a WHERE a.inode = ino AND NOT (SELECT t.tab FROM t))
    SELECT t.tab, EXISTS (SELECT 1 FROM pgnfs_nlm_lock l WHERE l.inode = ino
               UNION ALL SELECT 1 FROM pgnfs_nlm_wait w WHERE w.inode = ino
               UNION ALL SELECT 1 FROM pgnfs_nlm_share s WHERE s.inode = ino)
      INTO tab, locks FROM t;
    IF tab THEN
        PERFORM pgnfs_data_drop(ino);
    END IF;
    IF locks THEN
        DELETE FROM pgnfs_nlm_lock l WHERE l.inode = ino;
        DELETE FROM pgnfs_nlm_wait w WHERE w.inode = ino;
        DELETE FROM pgnfs_nlm_share s WHERE s.inode = ino;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION pgnfs_remove(
    p_dir bigint, p_dgen int, p_name bytea, p_rmdir boolean,
    c_uid bigint, c_gid bigint, c_groups bigint[], now bigint)
RETURNS SETOF pgnfs_result LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    d   fileatt;
    f   fileatt;
    r   record;
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

    WITH n AS (DELETE FROM naming WHERE parent = p_dir AND name = p_name),
    o AS (SELECT EXISTS (SELECT 1 FROM naming n WHERE n.inode = ino
                          AND NOT (n.parent = p_dir AND n.name = p_name)) AS other),
    g AS (DELETE FROM fileatt x WHERE x.inode = ino AND NOT (SELECT o.other FROM o)),
    v AS (UPDATE fileatt x SET nlink = x.nlink - 1, ctime = pgnfs_next_ctime(x.ctime, now),
                               change = x.change + 1
           WHERE x.inode = ino AND (SELECT o.other FROM o) RETURNING x)
    UPDATE fileatt x SET nlink = x.nlink + CASE WHEN f.type = pgnfs_t_dir() THEN -1 ELSE 0 END,
                         mtime = now, ctime = pgnfs_next_ctime(x.ctime, now), change = x.change + 1
     WHERE x.inode = p_dir
    RETURNING x AS d, (SELECT v.x FROM v) AS v INTO r;
    IF r.v IS NULL THEN
        IF f.type = pgnfs_t_reg() THEN
            PERFORM pgnfs_file_drop(ino);
        END IF;
        RETURN NEXT pgnfs_res(0, pgnfs_role_gone(), f);
    ELSE
        RETURN NEXT pgnfs_res(0, pgnfs_role_victim(), r.v);
    END IF;
    RETURN NEXT pgnfs_res(0, pgnfs_role_pre(), d);
    RETURN NEXT pgnfs_res(0, pgnfs_role_post(), r.d);
END
$$;
