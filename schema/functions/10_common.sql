-- 10_common.sql -- helpers shared by the pgnfs metadata functions.
--
-- The function files are applied in file-name order by `pgnfs mkfs` and by a
-- server that finds them out of date (pgnfs_fs.functions_digest), each with
-- CREATE OR REPLACE. Helpers written in LANGUAGE sql are checked when they
-- are created, so they come first, after the named numbers of
-- 05_const.sql (statuses, roles, types, mode bits, "want" masks).

-- Is the caller (c_gid plus supplementary c_groups) a member of group g?
CREATE OR REPLACE FUNCTION pgnfs_in_group(g bigint, c_gid bigint, c_groups bigint[])
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT g = c_gid OR coalesce(g = ANY (c_groups), false) $$;

-- The permission rule, the same as dbfs_perm_allows() in C (a test checks
-- they agree): root may read and write anything and execute anything with an
-- x bit, and search any directory; the owner gets the user bits; a member of
-- the file's group the group bits; everybody else the other bits.
CREATE OR REPLACE FUNCTION pgnfs_may(f_type smallint, f_mode int, f_uid bigint, f_gid bigint,
                                     c_uid bigint, c_gid bigint, c_groups bigint[], want int)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT CASE
    WHEN c_uid = 0 THEN (want & pgnfs_want_x()) = 0 OR f_type = pgnfs_t_dir()
                        OR (f_mode & pgnfs_s_ixany()) <> 0
    WHEN c_uid = f_uid THEN ((f_mode >> pgnfs_s_user_shift()) & want & pgnfs_want_rwx())
                            = (want & pgnfs_want_rwx())
    WHEN pgnfs_in_group(f_gid, c_gid, c_groups)
        THEN ((f_mode >> pgnfs_s_group_shift()) & want & pgnfs_want_rwx())
             = (want & pgnfs_want_rwx())
    ELSE (f_mode & want & pgnfs_want_rwx()) = (want & pgnfs_want_rwx())
END
$$;

-- pgnfs_may on a fileatt row.
CREATE OR REPLACE FUNCTION pgnfs_may_f(f fileatt, c_uid bigint, c_gid bigint, c_groups bigint[],
                                       want int)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT pgnfs_may(f.type, f.mode, f.uid, f.gid, c_uid, c_gid, c_groups, want) $$;

-- Read and write of a regular file's data (READ, WRITE, SETATTR of the
-- size), as Linux knfsd allows them (nfsd_permission() with
-- NFSD_MAY_OWNER_OVERRIDE, and its read-if-exec rule); the same rule as
-- dbfs_perm_may_io() in C (a test checks they agree). The owner always may
-- (a file created 0444 stays writable through the descriptor that created
-- it; a chmod 000 does not stop the reads of an open file); otherwise the
-- permission rule; and whoever may execute a regular file may read it,
-- since a client runs a program by READing it (RFC 1813 4.4): a program of
-- mode 0711 runs for everybody. ACCESS does not use this: it reports the
-- mode bits as they are.
CREATE OR REPLACE FUNCTION pgnfs_may_io(f fileatt, c_uid bigint, c_gid bigint, c_groups bigint[],
                                        want int)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT c_uid = f.uid OR pgnfs_may_f(f, c_uid, c_gid, c_groups, want)
       OR (want = pgnfs_want_r() AND f.type = pgnfs_t_reg()
           AND pgnfs_may_f(f, c_uid, c_gid, c_groups, pgnfs_want_x()))
$$;

-- A mode with setuid cleared, and setgid too when group-execute is set: what
-- Linux does to a regular file on a write by a non-root caller and on chown.
CREATE OR REPLACE FUNCTION pgnfs_kill_priv(m int)
RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT m & ~(pgnfs_s_isuid() | CASE WHEN m & pgnfs_s_ixgrp() <> 0 THEN pgnfs_s_isgid() ELSE 0 END)
$$;

-- The next ctime: the server's time, but always later than the old one, so
-- every change moves ctime even when two changes share a clock tick.
CREATE OR REPLACE FUNCTION pgnfs_next_ctime(old bigint, now bigint)
RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT greatest(now, old + 1) $$;

-- A fresh generation number for a new inode: random in 1 .. 2^31-1.
CREATE OR REPLACE FUNCTION pgnfs_new_generation()
RETURNS int LANGUAGE sql VOLATILE PARALLEL SAFE
AS $$ SELECT 1 + floor(random() * 2147483646)::int $$;

-- One result row (see the type pgnfs_result in 001_base.sql). A single
-- ROW() of the declared type, so the planner inlines it into the calling
-- expression (an SQL function whose SELECT lists the columns one by one
-- would not be inlined, and PL/pgSQL costs a function call per row).
CREATE OR REPLACE FUNCTION pgnfs_res(st int, r int, f fileatt)
RETURNS pgnfs_result LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT ROW(st, r::smallint, f.inode, f.generation, f.type, f.mode, f.nlink, f.uid, f.gid,
           f.size, f.rdev_major, f.rdev_minor, f.atime, f.mtime, f.ctime, f.change,
           f.used)::pgnfs_result
$$;

-- Is a directory empty? The functions ask EXISTS (SELECT 1 FROM naming n
-- WHERE n.parent = dir ORDER BY n.name LIMIT 1): the ORDER BY of naming's
-- primary key keeps the plan an index scan. Without it the generic plan a
-- PL/pgSQL function keeps may be a sequential scan, chosen because most
-- names share few parents (one big directory), that reads the whole table
-- to learn that a new directory is empty.

-- The helpers below read or change tables, so they are PL/pgSQL: an SQL
-- function that cannot be inlined (a FROM clause, a subquery, an UPDATE)
-- is parsed and planned again in every transaction that calls it, and
-- every NFS operation is a transaction of its own; PL/pgSQL keeps its
-- plans for the session.

-- The directory's entry changed: mtime and ctime move, nlink changes by dn
-- (subdirectories added or removed). Returns the new row.
CREATE OR REPLACE FUNCTION pgnfs_dir_touch(dir bigint, dn int, now bigint)
RETURNS fileatt LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    d fileatt;
BEGIN
    UPDATE fileatt SET nlink = nlink + dn, mtime = now, ctime = pgnfs_next_ctime(ctime, now),
                       change = change + 1
     WHERE inode = dir
    RETURNING * INTO d;
    RETURN d;
END
$$;

-- Is directory anc the directory dir itself or one of its ancestors? Walks
-- the names upwards (a directory has exactly one name) to the root, one
-- lookup per level: a recursive query over naming is one Citus cannot
-- distribute (naming is distributed by parent, the walk goes by inode).
-- A name seen twice (a cycle, which fsck reports) ends the walk.
CREATE OR REPLACE FUNCTION pgnfs_is_ancestor(anc bigint, dir bigint)
RETURNS boolean LANGUAGE plpgsql STABLE
AS $$
DECLARE
    cur bigint := dir;
    seen bigint[] := '{}';
BEGIN
    LOOP
        IF cur = anc THEN
            RETURN true;
        END IF;
        IF cur IS NULL OR cur = pgnfs_root_ino() OR cur = ANY (seen) THEN
            RETURN false;
        END IF;
        seen := seen || cur;
        SELECT n.parent INTO cur FROM naming n WHERE n.inode = cur LIMIT 1;
    END LOOP;
END
$$;
