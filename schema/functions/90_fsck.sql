-- 90_fsck.sql -- the checks and repairs of `pgnfs fsck` (dbfs/dbfs_fsck.c).
--
-- pgnfs_fsck(check, repair) runs one check and returns one row per problem
-- found: (problem, ino, detail, repaired). With repair = false it only
-- looks; with repair = true it first locks the tables of the file system
-- against writers (SHARE ROW EXCLUSIVE: readers go on, writers wait for the
-- end of the check's transaction) and fixes what it finds. dbfs_fsck() runs
-- the checks in the order below, each as one statement (one transaction),
-- and, after repairs, all of them again without repairing, to see that
-- nothing is left.
--
--   check        invariant                                   repair
--   root         inode 1 exists and is a directory           none (left)
--   attributes   type 1-7, mode within 07777, uid and gid    type guessed from
--                32-bit unsigned, size >= 0, a target for    what it holds; mode
--                symbolic links and only for them (what      masked; owner 65534;
--                fileatt's CHECKs said before 006)           size from the data;
--                                                            target '' / none
--   names        every name's inode and parent exist, the    the name is removed
--                parent is a directory, no name is the root's
--   bad-names    no name holds a NUL or '/' byte, is empty,  renamed in its
--                or is "." or ".." (no client can use it)    directory, '_' for
--                                                            the bad bytes
--   dir-links    a directory has exactly one name            the oldest name stays
--   dir-cycles   every named directory is reachable from     the cycle's smallest
--                the root (walking up never loops)           directory moves to
--                                                            /lost+found
--   orphans      every inode but the root has a name         linked into /lost+found
--                                                            as "#<inode>"
--   nlink        nlink = names (directories: 2 + subdirs)    nlink set
--   data-tables  per-file tables inv<inode> belong to a      dropped / listed /
--                regular file listed in pgnfs_filetab, a     unlisted / merged
--                listed file has its table, and its chunks
--                all live there
--   data-orphans chunks in allfiles belong to a regular file deleted
--   data-eof     no stored byte at or past a file's size     pgnfs_data_truncate()
--   used         fileatt.used = the bytes stored (encoded)   used set
--   lock-orphans locks, blocked requests and share           deleted
--                reservations are on files that exist
--   snapshots    kept rows and tables, triggers and state    see 91_fsck_snap.sql
--                agree with the live snapshots
--
-- Check mode runs in the caller's transaction (dbfs_fsck sets REPEATABLE
-- READ: one snapshot per check, no locks, a running server is not held
-- up). Repair mode runs in READ COMMITTED after the lock, so every
-- statement sees what committed before the lock was granted. Repairs bump
-- fileatt.change of what they touch; a server's caches do not see changes
-- made in SQL, so a repair belongs with the server stopped (pgnfs fsck says
-- so).
--
-- Per-file table names come from pgnfs_inv_name() (20_data.sql), built
-- from the numeric inode only, and are quoted with format('%I').

-- A name (bytea) for messages: printable bytes as they are, others escaped.
CREATE OR REPLACE FUNCTION pgnfs_fsck_show(n bytea)
RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT '"' || encode(n, 'escape') || '"' $$;

-- What a file type number is, for messages.
CREATE OR REPLACE FUNCTION pgnfs_fsck_type(t smallint)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT CASE t WHEN pgnfs_t_reg() THEN 'file' WHEN pgnfs_t_dir() THEN 'directory'
              WHEN pgnfs_t_blk() THEN 'block device' WHEN pgnfs_t_chr() THEN 'character device'
              WHEN pgnfs_t_lnk() THEN 'symbolic link' WHEN pgnfs_t_sock() THEN 'socket'
              WHEN pgnfs_t_fifo() THEN 'fifo' ELSE 'type ' || t END
$$;

-- Repair mode: keep writers out until the check's transaction ends.
CREATE OR REPLACE FUNCTION pgnfs_fsck_lock(p_repair boolean)
RETURNS void LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    IF p_repair THEN
        LOCK TABLE fileatt, naming, allfiles, pgnfs_filetab IN SHARE ROW EXCLUSIVE MODE;
    END IF;
END
$$;

-- The inode of /lost+found, made (root's, mode 0700) if it is not there.
-- NULL if "lost+found" in the root is something other than a directory.
CREATE OR REPLACE FUNCTION pgnfs_fsck_lost_found()
RETURNS bigint LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    lf  bigint;
    t   smallint;
    now bigint := (extract(epoch FROM clock_timestamp()) * pgnfs_ns_per_sec())::bigint;
BEGIN
    SELECT n.inode, f.type INTO lf, t FROM naming n JOIN fileatt f ON f.inode = n.inode
     WHERE n.parent = pgnfs_root_ino() AND n.name = convert_to('lost+found', 'UTF8');
    IF FOUND THEN
        RETURN CASE WHEN t = pgnfs_t_dir() THEN lf END;
    END IF;
    lf := nextval('pgnfs_inode_seq');
    INSERT INTO fileatt (inode, generation, type, mode, nlink, uid, gid, size, atime, mtime,
                         ctime)
    VALUES (lf, pgnfs_new_generation(), pgnfs_t_dir(),
            pgnfs_want_rwx() << pgnfs_s_user_shift(), 2, -- mode 0700, nlink 2
            0, 0, 0, now, now, now);
    INSERT INTO naming (parent, name, inode)
    VALUES (pgnfs_root_ino(), convert_to('lost+found', 'UTF8'), lf);
    UPDATE fileatt SET nlink = nlink + 1, mtime = now, ctime = pgnfs_next_ctime(ctime, now),
                       change = change + 1
     WHERE inode = pgnfs_root_ino();
    RETURN lf;
END
$$;

-- Link inode ino into /lost+found as "#<ino>" (replacing no name). Returns
-- the detail to report: where it went, or why it could not.
CREATE OR REPLACE FUNCTION pgnfs_fsck_reconnect(ino bigint)
RETURNS text LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    lf bigint := pgnfs_fsck_lost_found();
BEGIN
    IF lf IS NULL THEN
        RETURN NULL;
    END IF;
    INSERT INTO naming (parent, name, inode) VALUES (lf, convert_to('#' || ino, 'UTF8'), ino);
    UPDATE fileatt SET change = change + 1 WHERE inode = lf;
    RETURN '/lost+found/#' || ino;
END
$$;

-- root: inode 1 exists and is a directory.
CREATE OR REPLACE FUNCTION pgnfs_fsck_root(p_repair boolean)
RETURNS TABLE (problem text, ino bigint, detail text, repaired boolean)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    t smallint;
BEGIN
    PERFORM pgnfs_fsck_lock(p_repair);
    problem := 'root';
    ino := pgnfs_root_ino();
    repaired := false;
    SELECT f.type INTO t FROM fileatt f WHERE f.inode = pgnfs_root_ino();
    IF NOT FOUND THEN
        detail := 'the root directory (inode 1) is missing: restore from a backup';
        RETURN NEXT;
    ELSIF t <> pgnfs_t_dir() THEN
        detail := format('the root (inode 1) is a %s, not a directory: restore from a backup',
                         pgnfs_fsck_type(t));
        RETURN NEXT;
    END IF;
END
$$;

-- attributes: the values fileatt's CHECK constraints allowed before 006
-- (the functions keep them; SQL by hand may not). nlink and used are the
-- checks "nlink" and "used".
CREATE OR REPLACE FUNCTION pgnfs_fsck_attributes(p_repair boolean)
RETURNS TABLE (problem text, ino bigint, detail text, repaired boolean)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    r     record;
    t     smallint;
    fixed text[];
    cs    bigint;
    sz    bigint;
BEGIN
    PERFORM pgnfs_fsck_lock(p_repair);
    SELECT fs.chunk_size INTO cs FROM pgnfs_fs fs;
    FOR r IN SELECT f.inode, f.type, f.mode, f.uid, f.gid, f.size, f.target IS NOT NULL AS hastarget
               FROM fileatt f
              WHERE f.type NOT BETWEEN pgnfs_t_reg() AND pgnfs_t_fifo()
                 OR f.mode NOT BETWEEN 0 AND pgnfs_s_mask()
                 OR f.uid NOT BETWEEN 0 AND 4294967295 OR f.gid NOT BETWEEN 0 AND 4294967295
                 OR f.size < 0 OR (f.type = pgnfs_t_lnk()) <> (f.target IS NOT NULL)
              ORDER BY f.inode
    LOOP
        problem := 'attributes';
        ino := r.inode;
        detail := format('%s %s has', pgnfs_fsck_type(r.type), r.inode);
        fixed := '{}';
        t := r.type;
        IF r.type NOT BETWEEN pgnfs_t_reg() AND pgnfs_t_fifo() THEN
            detail := detail || format(' no valid type (%s)', r.type);
            -- What it holds tells: names under it, a target, or else data.
            t := CASE WHEN EXISTS (SELECT 1 FROM naming n WHERE n.parent = r.inode)
                           OR r.inode = pgnfs_root_ino() THEN pgnfs_t_dir()
                      WHEN r.hastarget THEN pgnfs_t_lnk()
                      ELSE pgnfs_t_reg() END;
            fixed := fixed || format('made a %s', pgnfs_fsck_type(t));
        END IF;
        IF r.mode NOT BETWEEN 0 AND pgnfs_s_mask() THEN
            detail := detail || format(' mode %s (not within 07777)', r.mode);
            fixed := fixed || format('mode %s', r.mode & pgnfs_s_mask());
        END IF;
        IF r.uid NOT BETWEEN 0 AND 4294967295 OR r.gid NOT BETWEEN 0 AND 4294967295 THEN
            detail := detail || format(' owner %s:%s (not 32-bit unsigned)', r.uid, r.gid);
            fixed := fixed || 'owner 65534:65534 (nobody)'::text;
        END IF;
        IF r.size < 0 THEN
            detail := detail || format(' size %s', r.size);
            SELECT coalesce(max(c.chunk * cs + c.bytes), 0) INTO sz
              FROM pgnfs_fsck_chunks() c WHERE c.ino = r.inode;
            fixed := fixed || format('size %s (the end of its data)', sz);
        END IF;
        IF (t = pgnfs_t_lnk()) <> r.hastarget THEN
            detail := detail || CASE WHEN r.hastarget THEN ' a target, as no symbolic link'
                                     ELSE ' no target, as a symbolic link' END;
            fixed := fixed || CASE WHEN r.hastarget THEN 'target removed'
                                   ELSE 'target ""' END;
        END IF;
        repaired := p_repair;
        IF p_repair THEN
            UPDATE fileatt f
               SET type = t, mode = f.mode & pgnfs_s_mask(),
                   uid = CASE WHEN f.uid NOT BETWEEN 0 AND 4294967295
                                OR f.gid NOT BETWEEN 0 AND 4294967295 THEN 65534 ELSE f.uid END,
                   gid = CASE WHEN f.uid NOT BETWEEN 0 AND 4294967295
                                OR f.gid NOT BETWEEN 0 AND 4294967295 THEN 65534 ELSE f.gid END,
                   size = CASE WHEN f.size < 0 THEN sz
                               WHEN t = pgnfs_t_lnk() AND f.target IS NULL THEN 0
                               ELSE f.size END,
                   target = CASE WHEN t <> pgnfs_t_lnk() THEN NULL
                                 ELSE coalesce(f.target, ''::bytea) END,
                   change = f.change + 1
             WHERE f.inode = r.inode;
            detail := detail || ': ' || array_to_string(fixed, ', ');
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;

-- names: each name's inode and parent exist, the parent is a directory,
-- and no name leads to the root.
CREATE OR REPLACE FUNCTION pgnfs_fsck_names(p_repair boolean)
RETURNS TABLE (problem text, ino bigint, detail text, repaired boolean)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    r record;
BEGIN
    PERFORM pgnfs_fsck_lock(p_repair);
    FOR r IN SELECT n.parent, n.name, n.inode, f.inode IS NULL AS nofile,
                    p.inode IS NULL AS noparent, p.type AS ptype
               FROM naming n
               LEFT JOIN fileatt f ON f.inode = n.inode
               LEFT JOIN fileatt p ON p.inode = n.parent
              WHERE f.inode IS NULL OR p.inode IS NULL OR p.type <> pgnfs_t_dir()
                 OR n.inode = pgnfs_root_ino()
              ORDER BY n.parent, n.name
    LOOP
        problem := 'names';
        ino := r.inode;
        detail := format('name %s in directory %s ', pgnfs_fsck_show(r.name), r.parent)
                  || CASE WHEN r.inode = pgnfs_root_ino() THEN 'leads to the root'
                          WHEN r.nofile THEN format('points to inode %s, which does not exist',
                                                    r.inode)
                          WHEN r.noparent THEN 'is in a directory that does not exist'
                          ELSE format('is in a %s, not a directory', pgnfs_fsck_type(r.ptype))
                     END;
        repaired := p_repair;
        IF p_repair THEN
            DELETE FROM naming n WHERE n.parent = r.parent AND n.name = r.name;
            detail := detail || ': name removed';
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;

-- The names a client cannot use: empty, "." or "..", or holding a NUL or
-- '/' byte. (Versions that decoded names as C strings could be made to
-- store the part of a name before a NUL; SQL can store anything the
-- table's CHECK lets through.)
CREATE OR REPLACE FUNCTION pgnfs_fsck_name_fault(n bytea)
RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
SELECT CASE WHEN length(n) = 0 THEN 'is empty'
            WHEN n IN ('\x2e'::bytea, '\x2e2e'::bytea) THEN 'is "." or ".."'
            WHEN position('\x00'::bytea IN n) > 0 AND position('\x2f'::bytea IN n) > 0
                 THEN 'holds NUL and ''/'' bytes'
            WHEN position('\x00'::bytea IN n) > 0 THEN 'holds a NUL byte'
            WHEN position('\x2f'::bytea IN n) > 0 THEN 'holds a ''/'' byte'
       END
$$;

-- bad-names: every name is one a client can look up (pgnfs_fsck_name_fault
-- finds none). A repair renames the entry in place (same directory, inode
-- and cookie): NUL and '/' bytes become '_', an empty name, "." and ".."
-- get a '_' in front, and when that name is taken "~<n>" is appended with
-- the smallest n that makes it free (the name cut to keep within 255
-- bytes). The directory's mtime and ctime and the file's ctime move, as for
-- a RENAME, so clients see the change.
CREATE OR REPLACE FUNCTION pgnfs_fsck_bad_names(p_repair boolean)
RETURNS TABLE (problem text, ino bigint, detail text, repaired boolean)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    r     record;
    base  bytea;
    fixed bytea;
    sfx   bytea;
    k     integer;
    now   bigint;
BEGIN
    PERFORM pgnfs_fsck_lock(p_repair);
    FOR r IN SELECT nm.parent, nm.name, nm.inode, pgnfs_fsck_name_fault(nm.name) AS fault
               FROM naming nm
              WHERE pgnfs_fsck_name_fault(nm.name) IS NOT NULL
              ORDER BY nm.parent, nm.name
    LOOP
        problem := 'bad-names';
        ino := r.inode;
        detail := format('name %s in directory %s %s', pgnfs_fsck_show(r.name), r.parent, r.fault);
        repaired := p_repair;
        IF p_repair THEN
            base := r.name;
            FOR i IN 0 .. length(base) - 1 LOOP
                IF get_byte(base, i) IN (0, 47) THEN
                    base := set_byte(base, i, 95);
                END IF;
            END LOOP;
            IF length(base) = 0 OR base IN ('\x2e'::bytea, '\x2e2e'::bytea) THEN
                base := '\x5f'::bytea || base;
            END IF;
            fixed := base;
            k := 0;
            WHILE EXISTS (SELECT 1 FROM naming x WHERE x.parent = r.parent AND x.name = fixed) LOOP
                k := k + 1;
                sfx := convert_to('~' || k, 'UTF8');
                fixed := substring(base FROM 1 FOR 255 - length(sfx)) || sfx;
            END LOOP;
            UPDATE naming nm SET name = fixed WHERE nm.parent = r.parent AND nm.name = r.name;
            now := (extract(epoch FROM clock_timestamp()) * pgnfs_ns_per_sec())::bigint;
            UPDATE fileatt f SET mtime = CASE WHEN f.inode = r.parent THEN now ELSE f.mtime END,
                                 ctime = pgnfs_next_ctime(f.ctime, now), change = f.change + 1
             WHERE f.inode IN (r.parent, r.inode);
            detail := detail || format(': renamed to %s', pgnfs_fsck_show(fixed));
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;

-- dir-links: a directory has one name (hard links to directories break
-- "..", the nlink rule and rmdir).
CREATE OR REPLACE FUNCTION pgnfs_fsck_dir_links(p_repair boolean)
RETURNS TABLE (problem text, ino bigint, detail text, repaired boolean)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    r    record;
    keep record;
BEGIN
    PERFORM pgnfs_fsck_lock(p_repair);
    FOR r IN SELECT n.inode, count(*) AS names FROM naming n
               JOIN fileatt f ON f.inode = n.inode AND f.type = pgnfs_t_dir()
              GROUP BY n.inode HAVING count(*) > 1 ORDER BY n.inode
    LOOP
        problem := 'dir-links';
        ino := r.inode;
        detail := format('directory %s has %s names', r.inode, r.names);
        repaired := p_repair;
        IF p_repair THEN
            SELECT n.parent, n.name, n.cookie INTO keep FROM naming n
             WHERE n.inode = r.inode ORDER BY n.cookie LIMIT 1;
            DELETE FROM naming n WHERE n.inode = r.inode AND n.cookie <> keep.cookie;
            detail := detail || format(': kept the oldest, %s in directory %s',
                                       pgnfs_fsck_show(keep.name), keep.parent);
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;

-- dir-cycles: a named directory that the root does not reach lies on a
-- cycle of names, or hangs below a directory without a name (an orphan,
-- reported by the next check). Each cycle is reported once, by its
-- smallest inode, which a repair moves into /lost+found.
CREATE OR REPLACE FUNCTION pgnfs_fsck_dir_cycles(p_repair boolean)
RETURNS TABLE (problem text, ino bigint, detail text, repaired boolean)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    d     bigint;
    cur   bigint;
    par   bigint;
    path  bigint[];
    cyc   bigint[];
    whereto text;
BEGIN
    PERFORM pgnfs_fsck_lock(p_repair);
    FOR d IN WITH RECURSIVE r(i) AS (
                 SELECT pgnfs_root_ino()
                 UNION
                 SELECT n.inode FROM naming n JOIN r ON n.parent = r.i
                   JOIN fileatt f ON f.inode = n.inode AND f.type = pgnfs_t_dir())
             SELECT f.inode FROM fileatt f
              WHERE f.type = pgnfs_t_dir() AND f.inode <> pgnfs_root_ino()
                AND EXISTS (SELECT 1 FROM naming n WHERE n.inode = f.inode)
                AND NOT EXISTS (SELECT 1 FROM r WHERE r.i = f.inode)
              ORDER BY f.inode
    LOOP
        path := ARRAY[d];
        cur := d;
        cyc := NULL;
        LOOP
            SELECT n.parent INTO par FROM naming n WHERE n.inode = cur ORDER BY n.cookie LIMIT 1;
            EXIT WHEN NOT FOUND;
            IF par = ANY (path) THEN
                cyc := path[array_position(path, par):];
                EXIT;
            END IF;
            path := path || par;
            cur := par;
        END LOOP;
        CONTINUE WHEN cyc IS NULL OR d <> (SELECT min(x) FROM unnest(cyc) AS x);
        problem := 'dir-cycles';
        ino := d;
        detail := format('directories %s name each other in a cycle the root does not reach',
                         array_to_string(cyc, ' -> '));
        repaired := false;
        IF p_repair AND pgnfs_fsck_lost_found() IS NULL THEN
            detail := detail || ': left (/lost+found is not a directory)';
        ELSIF p_repair THEN
            DELETE FROM naming n WHERE n.inode = d;
            whereto := pgnfs_fsck_reconnect(d);
            detail := detail || format(': directory %s moved to %s', d, whereto);
            repaired := true;
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;

-- orphans: every inode but the root has a name.
CREATE OR REPLACE FUNCTION pgnfs_fsck_orphans(p_repair boolean)
RETURNS TABLE (problem text, ino bigint, detail text, repaired boolean)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    r       record;
    whereto text;
BEGIN
    PERFORM pgnfs_fsck_lock(p_repair);
    FOR r IN SELECT f.inode, f.type, f.size FROM fileatt f
              WHERE f.inode <> pgnfs_root_ino()
                AND NOT EXISTS (SELECT 1 FROM naming n WHERE n.inode = f.inode)
              ORDER BY f.inode
    LOOP
        problem := 'orphans';
        ino := r.inode;
        detail := format('%s %s (%s bytes) has no name', pgnfs_fsck_type(r.type), r.inode,
                         r.size);
        repaired := false;
        IF p_repair THEN
            whereto := pgnfs_fsck_reconnect(r.inode);
            IF whereto IS NOT NULL THEN
                detail := detail || ': linked as ' || whereto;
                repaired := true;
            ELSE
                detail := detail || ': left (/lost+found is not a directory)';
            END IF;
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;

-- nlink: the number of names of a non-directory; 2 + its subdirectories
-- for a directory. (A non-directory without any name is an orphan.)
CREATE OR REPLACE FUNCTION pgnfs_fsck_nlink(p_repair boolean)
RETURNS TABLE (problem text, ino bigint, detail text, repaired boolean)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    r record;
BEGIN
    PERFORM pgnfs_fsck_lock(p_repair);
    FOR r IN WITH names AS (SELECT n.inode, count(*) AS c FROM naming n GROUP BY n.inode),
                  subdirs AS (SELECT n.parent, count(*) AS c FROM naming n
                                JOIN fileatt s ON s.inode = n.inode AND s.type = pgnfs_t_dir()
                               GROUP BY n.parent)
             SELECT f.inode, f.type, f.nlink, w.want
               FROM fileatt f
               LEFT JOIN names nm ON nm.inode = f.inode
               LEFT JOIN subdirs sd ON sd.parent = f.inode,
                    LATERAL (SELECT CASE WHEN f.type = pgnfs_t_dir() THEN 2 + coalesce(sd.c, 0)
                                         ELSE coalesce(nm.c, 0) END AS want) w
              WHERE f.nlink <> w.want AND (f.type = pgnfs_t_dir() OR nm.c IS NOT NULL)
              ORDER BY f.inode
    LOOP
        problem := 'nlink';
        ino := r.inode;
        detail := format('%s %s has nlink %s, should be %s', pgnfs_fsck_type(r.type), r.inode,
                         r.nlink, r.want);
        repaired := p_repair;
        IF p_repair THEN
            UPDATE fileatt f SET nlink = r.want, change = f.change + 1 WHERE f.inode = r.inode;
            detail := detail || ': set';
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;

-- data-tables: per-file tables and pgnfs_filetab agree with the files.
CREATE OR REPLACE FUNCTION pgnfs_fsck_data_tables(p_repair boolean)
RETURNS TABLE (problem text, ino bigint, detail text, repaired boolean)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    r     record;
    n     text;
    moved bigint;
BEGIN
    PERFORM pgnfs_fsck_lock(p_repair);
    problem := 'data-tables';
    -- Tables named like a file's own table.
    FOR r IN SELECT c.relname::text AS tab, substring(c.relname FROM 4)::bigint AS tino,
                    f.inode IS NOT NULL AS isfile,
                    EXISTS (SELECT 1 FROM pgnfs_filetab t WHERE t.inode = f.inode) AS listed,
                    EXISTS (SELECT 1 FROM allfiles a WHERE a.inode = f.inode) AS inall
               FROM pg_class c
               LEFT JOIN fileatt f ON f.inode = substring(c.relname FROM 4)::bigint
                    AND f.type = pgnfs_t_reg()
              WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'
                AND c.relname ~ '^inv[0-9]{1,18}$'
              ORDER BY 2
    LOOP
        ino := r.tino;
        repaired := p_repair;
        IF NOT r.isfile THEN
            detail := format('table %s belongs to no regular file', r.tab);
            IF p_repair THEN
                EXECUTE format('DROP TABLE %I', r.tab);
                DELETE FROM pgnfs_filetab t WHERE t.inode = r.tino;
                detail := detail || ': dropped';
            END IF;
            RETURN NEXT;
        ELSIF NOT r.listed THEN
            detail := format('table %s of file %s is not listed in pgnfs_filetab', r.tab, r.tino);
            IF p_repair THEN
                -- Its chunks join whatever allfiles holds (allfiles wins a
                -- chunk both have: it is what reads returned), then the
                -- table is the file's.
                EXECUTE format('INSERT INTO %I (chunk, data) SELECT a.chunk, a.data'
                               ' FROM allfiles a WHERE a.inode = $1'
                               ' ON CONFLICT (chunk) DO UPDATE SET data = EXCLUDED.data',
                               r.tab) USING r.tino;
                DELETE FROM allfiles a WHERE a.inode = r.tino;
                INSERT INTO pgnfs_filetab (inode, tab) VALUES (r.tino, r.tab::regclass::oid);
                detail := detail || ': listed';
            END IF;
            RETURN NEXT;
        END IF;
    END LOOP;
    -- Listed files: the file exists, the table exists, no chunk elsewhere.
    FOR r IN SELECT t.inode, f.inode IS NOT NULL AS isfile,
                    to_regclass(quote_ident(pgnfs_inv_name(t.inode))) IS NOT NULL AS hastab,
                    EXISTS (SELECT 1 FROM allfiles a WHERE a.inode = t.inode) AS inall
               FROM pgnfs_filetab t
               LEFT JOIN fileatt f ON f.inode = t.inode AND f.type = pgnfs_t_reg()
              ORDER BY t.inode
    LOOP
        ino := r.inode;
        repaired := p_repair;
        n := pgnfs_inv_name(r.inode);
        IF NOT r.isfile AND NOT r.hastab THEN
            detail := format('pgnfs_filetab lists %s, which is no regular file and has no table',
                             r.inode);
            IF p_repair THEN
                DELETE FROM pgnfs_filetab t WHERE t.inode = r.inode;
                detail := detail || ': unlisted';
            END IF;
            RETURN NEXT;
        ELSIF r.isfile AND NOT r.hastab THEN
            detail := format('file %s is listed in pgnfs_filetab but table %s is missing: its '
                             'data is lost', r.inode, n);
            IF p_repair THEN
                DELETE FROM pgnfs_filetab t WHERE t.inode = r.inode;
                detail := detail || ': unlisted (the file reads as zeros)';
            END IF;
            RETURN NEXT;
        ELSIF r.isfile AND r.inall THEN
            detail := format('file %s has chunks both in %s and in allfiles', r.inode, n);
            IF p_repair THEN
                EXECUTE format('WITH m AS (INSERT INTO %I (chunk, data) SELECT a.chunk, a.data'
                               ' FROM allfiles a WHERE a.inode = $1 ON CONFLICT (chunk)'
                               ' DO NOTHING RETURNING 1) SELECT count(*) FROM m', n)
                    INTO moved USING r.inode;
                DELETE FROM allfiles a WHERE a.inode = r.inode;
                detail := detail || format(': %s chunks moved into %s, the others (shadowed) '
                                           'dropped', moved, n);
            END IF;
            RETURN NEXT;
        END IF;
    END LOOP;
END
$$;

-- data-orphans: chunks in allfiles of an inode that is no regular file.
CREATE OR REPLACE FUNCTION pgnfs_fsck_data_orphans(p_repair boolean)
RETURNS TABLE (problem text, ino bigint, detail text, repaired boolean)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    r record;
BEGIN
    PERFORM pgnfs_fsck_lock(p_repair);
    FOR r IN SELECT a.inode, count(*) AS chunks, sum(length(a.data)) AS bytes, f.type
               FROM allfiles a LEFT JOIN fileatt f ON f.inode = a.inode
              WHERE f.inode IS NULL OR f.type <> pgnfs_t_reg()
              GROUP BY a.inode, f.type ORDER BY a.inode
    LOOP
        problem := 'data-orphans';
        ino := r.inode;
        detail := format('%s chunks (%s bytes) of inode %s, ', r.chunks, r.bytes, r.inode)
                  || CASE WHEN r.type IS NULL THEN 'which does not exist'
                          ELSE format('a %s', pgnfs_fsck_type(r.type)) END;
        repaired := p_repair;
        IF p_repair THEN
            DELETE FROM allfiles a WHERE a.inode = r.inode;
            detail := detail || ': deleted';
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;

-- Every stored chunk of the regular files, wherever it lives (allfiles, or
-- the file's own table when pgnfs_filetab lists it and the table exists):
-- the file, the chunk, the stored bytes and the file bytes it holds.
CREATE OR REPLACE FUNCTION pgnfs_fsck_chunks()
RETURNS TABLE (ino bigint, chunk bigint, stored bigint, bytes bigint)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    b64 boolean;
    t   bigint;
BEGIN
    SELECT fs.encoding = 'base64' INTO b64 FROM pgnfs_fs fs;
    RETURN QUERY SELECT a.inode, a.chunk, length(a.data)::bigint,
                        pgnfs_chunk_len(a.data, b64)::bigint
                   FROM allfiles a
                  WHERE NOT EXISTS (SELECT 1 FROM pgnfs_filetab ft WHERE ft.inode = a.inode);
    FOR t IN SELECT ft.inode FROM pgnfs_filetab ft
              WHERE to_regclass(quote_ident(pgnfs_inv_name(ft.inode))) IS NOT NULL
              ORDER BY ft.inode
    LOOP
        RETURN QUERY EXECUTE format('SELECT $1::bigint, x.chunk, length(x.data)::bigint,'
                                    ' pgnfs_chunk_len(x.data, $2)::bigint FROM %I x',
                                    pgnfs_inv_name(t)) USING t, b64;
    END LOOP;
END
$$;

-- data-eof: no stored byte at or beyond a file's size.
CREATE OR REPLACE FUNCTION pgnfs_fsck_data_eof(p_repair boolean)
RETURNS TABLE (problem text, ino bigint, detail text, repaired boolean)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    r       record;
    cs      bigint;
    removed bigint;
BEGIN
    PERFORM pgnfs_fsck_lock(p_repair);
    SELECT fs.chunk_size INTO cs FROM pgnfs_fs fs;
    FOR r IN SELECT c.ino, f.size, count(*) AS chunks,
                    max(c.chunk * cs + c.bytes) AS stored_end
               FROM pgnfs_fsck_chunks() c
               JOIN fileatt f ON f.inode = c.ino AND f.type = pgnfs_t_reg()
                    AND coalesce(f.chain, 0) = 0 -- guarded chunks: dbfs_xf_fsck
              WHERE c.chunk * cs + c.bytes > f.size
              GROUP BY c.ino, f.size ORDER BY c.ino
    LOOP
        problem := 'data-eof';
        ino := r.ino;
        detail := format('file %s of %s bytes stores data up to byte %s (%s chunks reach past '
                         'its end)', r.ino, r.size, r.stored_end, r.chunks);
        repaired := p_repair;
        IF p_repair THEN
            removed := pgnfs_data_truncate(r.ino, r.size);
            UPDATE fileatt f SET used = greatest(f.used - removed, 0), change = f.change + 1
             WHERE f.inode = r.ino;
            detail := detail || format(': cut (%s stored bytes removed)', removed);
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;

-- used: fileatt.used is what the file's chunks store (0 for other types).
CREATE OR REPLACE FUNCTION pgnfs_fsck_used(p_repair boolean)
RETURNS TABLE (problem text, ino bigint, detail text, repaired boolean)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    r record;
BEGIN
    PERFORM pgnfs_fsck_lock(p_repair);
    FOR r IN WITH s AS (SELECT c.ino, sum(c.stored) AS stored FROM pgnfs_fsck_chunks() c
                         GROUP BY c.ino)
             SELECT f.inode, f.type, f.used,
                    CASE WHEN f.type = pgnfs_t_reg() THEN coalesce(s.stored, 0) ELSE 0 END AS want
               FROM fileatt f LEFT JOIN s ON s.ino = f.inode
              WHERE f.used <> CASE WHEN f.type = pgnfs_t_reg() THEN coalesce(s.stored, 0) ELSE 0 END
              ORDER BY f.inode
    LOOP
        problem := 'used';
        ino := r.inode;
        detail := format('%s %s says it uses %s bytes, it stores %s', pgnfs_fsck_type(r.type),
                         r.inode, r.used, r.want);
        repaired := p_repair;
        IF p_repair THEN
            UPDATE fileatt f SET used = r.want, change = f.change + 1 WHERE f.inode = r.inode;
            detail := detail || ': set';
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;

-- lock-orphans: every lock, blocked request and share reservation is on a
-- file that exists (the lock tables lost their ON DELETE CASCADE keys in
-- 006; pgnfs_file_drop deletes them with the file).
CREATE OR REPLACE FUNCTION pgnfs_fsck_lock_orphans(p_repair boolean)
RETURNS TABLE (problem text, ino bigint, detail text, repaired boolean)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    r record;
BEGIN
    PERFORM pgnfs_fsck_lock(p_repair);
    IF p_repair THEN
        LOCK TABLE pgnfs_nlm_lock, pgnfs_nlm_wait, pgnfs_nlm_share IN SHARE ROW EXCLUSIVE MODE;
    END IF;
    FOR r IN WITH o AS (SELECT l.inode, 1 AS locks, 0 AS waits, 0 AS shares FROM pgnfs_nlm_lock l
                        UNION ALL SELECT w.inode, 0, 1, 0 FROM pgnfs_nlm_wait w
                        UNION ALL SELECT s.inode, 0, 0, 1 FROM pgnfs_nlm_share s)
             SELECT o.inode, sum(o.locks) AS locks, sum(o.waits) AS waits,
                    sum(o.shares) AS shares
               FROM o WHERE NOT EXISTS (SELECT 1 FROM fileatt f WHERE f.inode = o.inode)
              GROUP BY o.inode ORDER BY o.inode
    LOOP
        problem := 'lock-orphans';
        ino := r.inode;
        detail := format('%s locks, %s blocked requests and %s share reservations on inode %s,'
                         ' which does not exist', r.locks, r.waits, r.shares, r.inode);
        repaired := p_repair;
        IF p_repair THEN
            DELETE FROM pgnfs_nlm_lock l WHERE l.inode = r.inode;
            DELETE FROM pgnfs_nlm_wait w WHERE w.inode = r.inode;
            DELETE FROM pgnfs_nlm_share s WHERE s.inode = r.inode;
            detail := detail || ': deleted';
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;

-- One check by name (the names dbfs_fsck.c runs, in its order).
CREATE OR REPLACE FUNCTION pgnfs_fsck(p_check text, p_repair boolean)
RETURNS TABLE (problem text, ino bigint, detail text, repaired boolean)
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    CASE p_check
    WHEN 'root' THEN RETURN QUERY SELECT * FROM pgnfs_fsck_root(p_repair);
    WHEN 'attributes' THEN RETURN QUERY SELECT * FROM pgnfs_fsck_attributes(p_repair);
    WHEN 'names' THEN RETURN QUERY SELECT * FROM pgnfs_fsck_names(p_repair);
    WHEN 'bad-names' THEN RETURN QUERY SELECT * FROM pgnfs_fsck_bad_names(p_repair);
    WHEN 'dir-links' THEN RETURN QUERY SELECT * FROM pgnfs_fsck_dir_links(p_repair);
    WHEN 'dir-cycles' THEN RETURN QUERY SELECT * FROM pgnfs_fsck_dir_cycles(p_repair);
    WHEN 'orphans' THEN RETURN QUERY SELECT * FROM pgnfs_fsck_orphans(p_repair);
    WHEN 'nlink' THEN RETURN QUERY SELECT * FROM pgnfs_fsck_nlink(p_repair);
    WHEN 'data-tables' THEN RETURN QUERY SELECT * FROM pgnfs_fsck_data_tables(p_repair);
    WHEN 'data-orphans' THEN RETURN QUERY SELECT * FROM pgnfs_fsck_data_orphans(p_repair);
    WHEN 'data-eof' THEN RETURN QUERY SELECT * FROM pgnfs_fsck_data_eof(p_repair);
    WHEN 'used' THEN RETURN QUERY SELECT * FROM pgnfs_fsck_used(p_repair);
    WHEN 'lock-orphans' THEN RETURN QUERY SELECT * FROM pgnfs_fsck_lock_orphans(p_repair);
    WHEN 'snapshots' THEN RETURN QUERY SELECT * FROM pgnfs_fsck_snapshots(p_repair);
    ELSE RAISE EXCEPTION 'fsck: no check named %', p_check USING ERRCODE = 'PN022';
    END CASE;
END
$$;
