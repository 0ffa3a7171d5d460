-- 95_views.sql -- the file system as SQL: views and functions in the schema
-- "pgnfs" for reading the tree (paths, attributes, contents) in SQL, and the
-- read-only roles that may use them and nothing else.
--
--   pgnfs.files     every name of every file: path, inode, type, size, used,
--                   mode, uid, gid, nlink, atime, mtime, ctime (then name,
--                   parent, target). A file with hard links appears once per
--                   path; the root is '/'.
--   pgnfs.dirs      every directory: path, inode, parent, depth, mode, uid,
--                   gid, nlink, atime, mtime, ctime.
--   pgnfs.content   the bytes of every regular file: (path, offset, data),
--                   one row per chunk, holes and short chunks filled with
--                   zeros, so string_agg(data, '' ORDER BY offset) is the file.
--   pgnfs.tree(p)   the rows of pgnfs.files under directory p (p included),
--                   found from p downwards: use it rather than
--                   "files WHERE path LIKE 'p/%'", which computes every path.
--   pgnfs.lookup(p) the inode of path p (NULL if none).
--   pgnfs.path(i)   a path of inode i (NULL if it has no name).
--   pgnfs.chunks(i) the bytes of inode i as (offset, data) rows, like content.
--   pgnfs.cat(i)    the bytes of inode i as one bytea.
--   pgnfs.sha256(i) the SHA-256 of the bytes of inode i.
--
-- Paths are text: a name that is not valid UTF-8 (or, in a database whose
-- encoding is neither UTF8 nor SQL_ASCII, not ASCII) shows in PostgreSQL's
-- bytea "escape" form (\ooo for such bytes, \\ for a backslash). Times are
-- timestamptz (microseconds; the tables keep nanoseconds). type is 'file',
-- 'dir', 'block', 'char', 'symlink', 'socket' or 'fifo'.
--
-- How it is fast
--   Paths are not stored (a rename of a directory would have to rewrite
--   every path beneath it). pgnfs.files computes them in one statement:
--   first the names of the directories alone (a partial index on fileatt
--   finds them), their paths by a recursive CTE over that small set, then
--   one join of every name with its directory's path and its attributes:
--   hash joins over naming and fileatt, one pass each, however deep the
--   tree. pgnfs.tree(p) does the same from p down, so the paths and rows
--   it makes are only those under p.
--   Both are plain SQL that the planner inlines: a WHERE on their columns
--   applies while the rows are made, not after they are all collected.
--   pgnfs.files runs in parallel (the directories' paths come from a
--   function each worker calls) and is a security barrier view, so that a
--   LIKE on path is applied to its rows rather than inside its joins
--   (see there).
--
-- Privileges
--   The views read the tables with the rights of their owner (the file
--   system's owner), so the role pgnfs_reader needs SELECT on this schema
--   only: it gets USAGE on the schema, SELECT on its views and EXECUTE on
--   its functions, and nothing on the file system's own tables or
--   functions. The functions that must read a table a view cannot name
--   (a file's own table inv<inode>) are SECURITY DEFINER with a fixed
--   search_path and only read. pgnfs_ro is a login role in pgnfs_reader
--   (`pgnfs sql --read-only` connects as it). Roles belong to the whole
--   cluster: this file creates them when the file system's owner may create
--   roles, and grants them this database's views either way once they exist
--   (pgnfs_views_roles(); `pgnfs sql --read-only` calls it again).
--
-- For snapshots: every view and function here reads the live tables
-- fileatt and naming through the two views pgnfs.attr_live and
-- pgnfs.names_live, and the data through pgnfs.chunks; the snapshot
-- section below has the same shapes filtered by a snapshot's span
-- (pgnfs.attr_at, names_at, chunks_in) and files_at(name) = the query of
-- pgnfs.files over those.
--
-- This is a function file: applied by mkfs and again whenever a server
-- finds the functions out of date, in one transaction; everything here is
-- idempotent, and views are dropped and made again (their columns may
-- change between versions), their grants with them (a query running on
-- them holds that up until it ends).

-- Until this transaction ends, names without a schema mean the file
-- system's own schema (where pgnfs_fs is), also for a role named pgnfs
-- (whose default search_path would start with the schema made here).
SELECT set_config('search_path', quote_ident(n.nspname), true)
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.oid = 'pgnfs_fs'::regclass;

CREATE SCHEMA IF NOT EXISTS pgnfs;
COMMENT ON SCHEMA pgnfs IS 'the pgnfs file system as SQL views (read only); see pgnfs.files';

-- Directories found without reading every file's row. type never changes,
-- so the index costs only a mkdir/rmdir an entry, and no HOT update.
CREATE INDEX IF NOT EXISTS fileatt_dirs ON fileatt (inode) WHERE type = 2;

DROP VIEW IF EXISTS pgnfs.content, pgnfs.files, pgnfs.dirs, pgnfs.dirpaths, pgnfs.names_live,
    pgnfs.attr_live, pgnfs.snapshots, pgnfs.attr_versions, pgnfs.names_versions CASCADE;
DROP FUNCTION IF EXISTS pgnfs.tree(text), pgnfs.dirs_under(bigint, text), pgnfs.dirpaths_all(),
    pgnfs.dirs_at(text), pgnfs.content_at(text), pgnfs.diff(text, text) CASCADE;

-- A file type's name.
CREATE OR REPLACE FUNCTION pgnfs.type_name(t smallint)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT CASE t WHEN 1 THEN 'file' WHEN 2 THEN 'dir' WHEN 3 THEN 'block' WHEN 4 THEN 'char'
              WHEN 5 THEN 'symlink' WHEN 6 THEN 'socket' WHEN 7 THEN 'fifo' END
$$;

-- What "files WHERE type = 'file'" keeps, known to the planner: without
-- statistics on the type's name it guesses 0.5% of the rows and fetches
-- each one's name by index (1M files: 2.4 s for the 10 largest instead of
-- 1.1). Statistics change nothing on the write path (ANALYZE makes them).
CREATE STATISTICS IF NOT EXISTS fileatt_type_name ON (pgnfs.type_name(type)) FROM fileatt;

-- A time in nanoseconds as timestamptz (to_timestamp rounds to the
-- microsecond exactly: the float holds integer microseconds).
CREATE OR REPLACE FUNCTION pgnfs.ns_time(ns bigint)
RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT to_timestamp(((ns - ns % 1000) / 1000)::float8 / 1000000) $$;

-- A name (bytes) as text: itself when it is valid in the database's
-- encoding, else its bytea escape form. Built for the database's encoding:
-- convert_from(x, 'UTF8') checks UTF-8 and, in a UTF8 or SQL_ASCII
-- database, needs no conversion; any other encoding takes ASCII only (a
-- UTF-8 name could hold a character it lacks). A name whose escape form
-- is as long as it is has nothing escaped (no NUL, no byte over 127, no
-- backslash): it is its own text, the common case, and costs one encode.
-- STABLE, not IMMUTABLE, as convert_from is: else the planner would not
-- inline it, and a call per name costs more than the name.
DO $$
DECLARE
    ok text := CASE WHEN current_setting('server_encoding') IN ('UTF8', 'SQL_ASCII')
        THEN '^(?:[0-7][0-9a-f]|(?:c[2-9a-f]|d[0-9a-f])[89ab][0-9a-f]'
             '|e0[ab][0-9a-f][89ab][0-9a-f]|(?:e[1-9a-c]|e[ef])(?:[89ab][0-9a-f]){2}'
             '|ed[89][0-9a-f][89ab][0-9a-f]|f0(?:9[0-9a-f]|[ab][0-9a-f])(?:[89ab][0-9a-f]){2}'
             '|f[1-3](?:[89ab][0-9a-f]){3}|f48[0-9a-f](?:[89ab][0-9a-f]){2})*$'
        ELSE '^(?:[0-7][0-9a-f])*$' END;
BEGIN
    EXECUTE format($f$
        CREATE OR REPLACE FUNCTION pgnfs.name_text(x bytea)
        RETURNS text LANGUAGE sql STABLE PARALLEL SAFE
        AS $b$
        SELECT CASE WHEN octet_length(encode(x, 'escape')) = octet_length(x)
                    THEN encode(x, 'escape')
                    WHEN encode(x, 'hex') ~ %L
                    THEN convert_from(x, 'UTF8') ELSE encode(x, 'escape') END
        $b$ $f$, ok);
END
$$;

-- The "used" of a file as NFS reports it: the bytes stored for a regular
-- file (fileatt.used, encoded), the size for the others.
CREATE OR REPLACE FUNCTION pgnfs.used(t smallint, size bigint, used bigint)
RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN t = 1 THEN used ELSE size END $$;

-- The path of a name in the directory whose path is dir.
CREATE OR REPLACE FUNCTION pgnfs.path_join(dir text, name bytea)
RETURNS text LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN dir = '/' THEN '/' ELSE dir || '/' END || pgnfs.name_text(name) $$;

-- The live tables, as every view below reads them (see "For snapshots").
CREATE VIEW pgnfs.attr_live AS
SELECT f.inode, f.type, f.mode, f.nlink, f.uid, f.gid, f.size, f.used, f.atime, f.mtime,
       f.ctime, f.target
  FROM fileatt f;
CREATE VIEW pgnfs.names_live AS
SELECT n.parent, n.name, n.inode FROM naming n;

-- The directories under directory top (whose path is top_path), top
-- included (none if top is not a directory), with their paths and depth below top. The recursion runs over
-- the names of directories only (a directory has one name), found through
-- the partial index fileatt_dirs, one index probe of naming each; it stops
-- at depth 4096 should a damaged tree hold a cycle. Plain SQL: inlined.
CREATE OR REPLACE FUNCTION pgnfs.dirs_under(top bigint, top_path text)
RETURNS TABLE (inode bigint, parent bigint, path text, depth int)
LANGUAGE sql STABLE
AS $$
WITH RECURSIVE e AS MATERIALIZED (
    SELECT n.parent, n.name, n.inode
      FROM pgnfs.attr_live f
     CROSS JOIN LATERAL (SELECT n.parent, n.name, n.inode FROM pgnfs.names_live n
                          WHERE n.inode = f.inode OFFSET 0) n
     WHERE f.type = 2
), d(inode, parent, path, depth) AS (
    SELECT f.inode, NULL::bigint, top_path, 0 FROM pgnfs.attr_live f
     WHERE f.inode = top AND f.type = 2
    UNION ALL
    SELECT e.inode, e.parent, pgnfs.path_join(d.path, e.name), d.depth + 1
      FROM d JOIN e ON e.parent = d.inode
     WHERE d.depth < 4096
)
SELECT inode, parent, path, depth FROM d
$$;

-- Every directory with its path (the root, inode 1, is '/').
CREATE VIEW pgnfs.dirpaths AS
SELECT inode, parent, path, depth FROM pgnfs.dirs_under(1, '/');

-- Every directory with its path, for pgnfs.files: dirpaths behind a
-- function call the planner cannot look into, so that the statement using
-- it may run in parallel (a recursive CTE may not: it would keep the join
-- of a million names with their attributes in one process). PARALLEL SAFE:
-- it only reads; each worker makes the ~1% of rows that are directories.
CREATE OR REPLACE FUNCTION pgnfs.dirpaths_all()
RETURNS TABLE (inode bigint, path text)
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY DEFINER ROWS 10000
AS $$
BEGIN
    RETURN QUERY SELECT d.inode, d.path FROM pgnfs.dirs_under(1, '/') d;
END
$$;

-- A security barrier view: a condition that is not leakproof, as LIKE on
-- path, is applied to the view's rows instead of inside its joins. That is
-- what makes "files WHERE path LIKE '/a/%'" fast: inside the joins such a
-- condition would be estimated to keep 0.5% of the names and so have each
-- one's attributes fetched by index, one probe a name, where a hash join of
-- the two tables costs a third. Leakproof conditions (=, <, > on inode,
-- name, type, uid, size...) still go inside. (The outer SELECT keeps the
-- barrier: a bare UNION ALL view would be flattened through it.)
CREATE VIEW pgnfs.files WITH (security_barrier) AS
SELECT * FROM (
SELECT '/'::text AS path, f.inode, pgnfs.type_name(f.type) AS type, f.size,
       pgnfs.used(f.type, f.size, f.used) AS used,
       f.mode, f.uid, f.gid, f.nlink, pgnfs.ns_time(f.atime) AS atime,
       pgnfs.ns_time(f.mtime) AS mtime, pgnfs.ns_time(f.ctime) AS ctime,
       NULL::text AS name, NULL::bigint AS parent, NULL::text AS target
  FROM pgnfs.attr_live f WHERE f.inode = 1
UNION ALL
SELECT pgnfs.path_join(d.path, n.name), f.inode, pgnfs.type_name(f.type), f.size,
       pgnfs.used(f.type, f.size, f.used), f.mode, f.uid, f.gid, f.nlink, pgnfs.ns_time(f.atime), pgnfs.ns_time(f.mtime),
       pgnfs.ns_time(f.ctime), pgnfs.name_text(n.name), n.parent, pgnfs.name_text(f.target)
  FROM pgnfs.dirpaths_all() d
  JOIN pgnfs.names_live n ON n.parent = d.inode
  JOIN pgnfs.attr_live f ON f.inode = n.inode
) u;
COMMENT ON VIEW pgnfs.files IS
    'every name of every file (hard links once per path); under one directory use pgnfs.tree(path)';

CREATE VIEW pgnfs.dirs AS
SELECT d.path, d.inode, d.parent, d.depth, f.mode, f.uid, f.gid, f.nlink,
       pgnfs.ns_time(f.atime) AS atime, pgnfs.ns_time(f.mtime) AS mtime,
       pgnfs.ns_time(f.ctime) AS ctime
  FROM pgnfs.dirpaths d JOIN pgnfs.attr_live f ON f.inode = d.inode;
COMMENT ON VIEW pgnfs.dirs IS 'every directory with its path';

-- The inode of path p: '/'-separated names from the root ('' and '.'
-- skipped, so '/a//b/' is '/a/b'); NULL if a name is missing or a
-- component before the last is not a directory.
CREATE OR REPLACE FUNCTION pgnfs.lookup(p text)
RETURNS bigint LANGUAGE plpgsql STABLE STRICT SECURITY DEFINER
AS $$
DECLARE
    ino bigint := 1;
    t   smallint := 2;
    c   text;
BEGIN
    FOREACH c IN ARRAY string_to_array(p, '/') LOOP
        CONTINUE WHEN c = '' OR c = '.';
        IF t <> 2 THEN
            RETURN NULL;
        END IF;
        SELECT n.inode, f.type INTO ino, t
          FROM naming n JOIN fileatt f ON f.inode = n.inode
         WHERE n.parent = ino AND n.name = convert_to(c, 'UTF8');
        IF NOT FOUND THEN
            RETURN NULL;
        END IF;
    END LOOP;
    RETURN ino;
END
$$;

-- p as pgnfs.files spells it: '/' then the names joined by '/'.
CREATE OR REPLACE FUNCTION pgnfs.path_clean(p text)
RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
SELECT '/' || coalesce(string_agg(c, '/' ORDER BY i), '')
  FROM unnest(string_to_array(p, '/')) WITH ORDINALITY AS u(c, i)
 WHERE c <> '' AND c <> '.'
$$;

-- A path of inode i (the first name by name at each step up; NULL when
-- it has none). Walks up the names, so it costs the depth.
CREATE OR REPLACE FUNCTION pgnfs.path(i bigint)
RETURNS text LANGUAGE plpgsql STABLE STRICT SECURITY DEFINER
AS $$
DECLARE
    cur   bigint := i;
    up    bigint;
    nm    bytea;
    parts text[] := '{}';
BEGIN
    IF NOT EXISTS (SELECT 1 FROM fileatt f WHERE f.inode = i) THEN
        RETURN NULL;
    END IF;
    FOR depth IN 1 .. 4096 LOOP
        EXIT WHEN cur = 1;
        SELECT n.parent, n.name INTO up, nm FROM naming n WHERE n.inode = cur
         ORDER BY n.parent, n.name LIMIT 1;
        IF NOT FOUND THEN
            RETURN NULL;
        END IF;
        parts := pgnfs.name_text(nm) || parts;
        cur := up;
    END LOOP;
    RETURN '/' || array_to_string(parts, '/');
END
$$;

-- The rows of pgnfs.files under directory top (top included; none if top
-- is not a directory's path): the directories under top (dirs_under),
-- then every name in them with its attributes.
CREATE FUNCTION pgnfs.tree(top text)
RETURNS SETOF pgnfs.files LANGUAGE sql STABLE
AS $$
SELECT pgnfs.path_clean(top), f.inode, pgnfs.type_name(f.type), f.size,
       pgnfs.used(f.type, f.size, f.used), f.mode, f.uid, f.gid, f.nlink, pgnfs.ns_time(f.atime), pgnfs.ns_time(f.mtime),
       pgnfs.ns_time(f.ctime), NULL::text, NULL::bigint, NULL::text
  FROM pgnfs.attr_live f WHERE f.inode = pgnfs.lookup(top) AND f.type = 2
UNION ALL
SELECT pgnfs.path_join(d.path, n.name), f.inode, pgnfs.type_name(f.type), f.size,
       pgnfs.used(f.type, f.size, f.used), f.mode, f.uid, f.gid, f.nlink, pgnfs.ns_time(f.atime), pgnfs.ns_time(f.mtime),
       pgnfs.ns_time(f.ctime), pgnfs.name_text(n.name), n.parent, pgnfs.name_text(f.target)
  FROM pgnfs.dirs_under(pgnfs.lookup(top), pgnfs.path_clean(top)) d
  JOIN pgnfs.names_live n ON n.parent = d.inode
  JOIN pgnfs.attr_live f ON f.inode = n.inode
$$;
COMMENT ON FUNCTION pgnfs.tree(text) IS
    'the rows of pgnfs.files under a directory, walking down from it (fast)';

-- The bytes of inode i, a chunk a row: offset, and the chunk's bytes
-- decoded (base64), a missing chunk or the part past a chunk's stored end
-- as zeros, up to the file's size; wherever the chunks live (allfiles, or
-- the file's own table). Nothing for a file that is not regular or empty.
CREATE OR REPLACE FUNCTION pgnfs.chunks(i bigint)
RETURNS TABLE ("offset" bigint, data bytea)
LANGUAGE plpgsql STABLE STRICT SECURITY DEFINER
AS $$
#variable_conflict use_column
DECLARE
    cs   int;
    b64  boolean;
    sz   bigint;
    tab  oid;
    chn  bigint;
BEGIN
    SELECT fs.chunk_size, fs.encoding = 'base64' INTO cs, b64 FROM pgnfs_fs fs;
    SELECT f.size, coalesce(f.chain, 0) INTO sz, chn FROM fileatt f WHERE f.inode = i AND f.type = 1;
    IF NOT FOUND OR sz = 0 THEN
        RETURN;
    END IF;
    -- A guarded file's chunks are stored transformed (compressed,
    -- encrypted): only the server can turn them back into its bytes.
    IF chn <> 0 THEN
        RAISE EXCEPTION 'inode % is stored through a transformation chain; read it over NFS', i
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'pgnfs.content leaves such files out; pgnfs xform show names the chain';
    END IF;
    SELECT t.tab INTO tab FROM pgnfs_filetab t WHERE t.inode = i;
    IF NOT FOUND THEN
        RETURN QUERY
            SELECT g.c * cs, pgnfs.chunk_fill(a.data, b64, least(cs::bigint, sz - g.c * cs)::int)
              FROM generate_series(0::bigint, (sz - 1) / cs) AS g(c)
              LEFT JOIN allfiles a ON a.inode = i AND a.chunk = g.c
             ORDER BY g.c;
    ELSE
        RETURN QUERY EXECUTE format(
            'SELECT g.c * $1, pgnfs.chunk_fill(t.data, $2, least($1::bigint, $3 - g.c * $1)::int)'
            '  FROM generate_series(0::bigint, ($3 - 1) / $1) AS g(c)'
            '  LEFT JOIN %s t ON t.chunk = g.c ORDER BY g.c', tab::regclass)
            USING cs, b64, sz;
    END IF;
END
$$;

-- A stored chunk value as n file bytes: decoded, cut or padded with zeros.
CREATE OR REPLACE FUNCTION pgnfs.chunk_fill(v bytea, b64 boolean, n int)
RETURNS bytea LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT CASE WHEN length(d) >= n THEN substring(d FROM 1 FOR n)
            ELSE d || decode(repeat('00', n - length(d)), 'hex') END
  FROM (SELECT coalesce(CASE WHEN b64 THEN decode(convert_from(v, 'SQL_ASCII'), 'base64')
                             ELSE v END, ''::bytea) AS d) AS x
$$;

-- The whole content of inode i (empty for an empty or non-regular file).
CREATE OR REPLACE FUNCTION pgnfs.cat(i bigint)
RETURNS bytea LANGUAGE sql STABLE STRICT
AS $$ SELECT coalesce(string_agg(c.data, ''::bytea ORDER BY c."offset"), ''::bytea)
        FROM pgnfs.chunks(i) c $$;

-- The SHA-256 of the content of inode i.
-- Is inode i stored through a transformation chain (compressed,
-- encrypted)? PL/pgSQL, so that no view depends on the column.
CREATE OR REPLACE FUNCTION pgnfs.guarded(i bigint)
RETURNS boolean LANGUAGE plpgsql STABLE STRICT SECURITY DEFINER
AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM fileatt f WHERE f.inode = i AND coalesce(f.chain, 0) <> 0);
END
$$;

CREATE OR REPLACE FUNCTION pgnfs.sha256(i bigint)
RETURNS bytea LANGUAGE sql STABLE STRICT
AS $$ SELECT sha256(pgnfs.cat(i)) $$;

CREATE VIEW pgnfs.content AS
SELECT f.path, c."offset", c.data
  FROM pgnfs.files f CROSS JOIN LATERAL pgnfs.chunks(f.inode) c
 WHERE f.type = 'file'
   AND NOT pgnfs.guarded(f.inode);
COMMENT ON VIEW pgnfs.content IS
    'the bytes of every regular file stored untransformed, a chunk a row; for one file use pgnfs.chunks(pgnfs.lookup(path))';

-- --- snapshots (008_snapshots.sql, functions/21_snap.sql) -----------------
--
--   pgnfs.snapshots        the live snapshots: name, id, created, scheduled.
--   pgnfs.files_at(s)      pgnfs.files as snapshot s (its name) saw it;
--   pgnfs.dirs_at(s)       pgnfs.dirs, likewise;
--   pgnfs.tree_at(s, p)    pgnfs.tree(p), likewise;
--   pgnfs.lookup_at(s, p)  pgnfs.lookup(p), likewise;
--   pgnfs.chunks_at(s, i), pgnfs.cat_at(s, i), pgnfs.sha256_at(s, i),
--   pgnfs.content_at(s)    the bytes as snapshot s saw them;
--   pgnfs.diff(a, b)       what changed from snapshot a to snapshot b (NULL:
--                          the live file system): one row per path added,
--                          removed or modified (attributes or bytes).
-- The same queries as the live ones, over pgnfs.attr_at(k) and
-- pgnfs.names_at(k) in place of attr_live and names_live: the live rows
-- born before snapshot k and the kept rows it sees. An unknown snapshot
-- name raises an error.

CREATE VIEW pgnfs.snapshots AS
SELECT s.name, s.id, s.created, s.scheduled FROM pgnfs_snapshots s;
COMMENT ON VIEW pgnfs.snapshots IS 'the live snapshots; read one with pgnfs.files_at(name)';

-- Every version of every row, with the span of snapshots that see it:
-- [born, died) (live rows: died is the largest bigint).
CREATE VIEW pgnfs.attr_versions AS
SELECT f.inode, f.type, f.mode, f.nlink, f.uid, f.gid, f.size, f.used, f.atime, f.mtime,
       f.ctime, f.target, f.chain, coalesce(f.born, 0) AS born,
       9223372036854775807::bigint AS died
  FROM fileatt f
UNION ALL
SELECT h.inode, h.type, h.mode, h.nlink, h.uid, h.gid, h.size, h.used, h.atime, h.mtime,
       h.ctime, h.target, h.chain, coalesce(h.born, 0), h.died
  FROM pgnfs_snap_fileatt h;
CREATE VIEW pgnfs.names_versions AS
SELECT n.parent, n.name, n.inode, coalesce(n.born, 0) AS born,
       9223372036854775807::bigint AS died
  FROM naming n
UNION ALL
SELECT h.parent, h.name, h.inode, coalesce(h.born, 0), h.died FROM pgnfs_snap_naming h;

-- The id of snapshot s (an error if there is none of that name).
CREATE OR REPLACE FUNCTION pgnfs.snap_id(s text)
RETURNS bigint LANGUAGE plpgsql STABLE SECURITY DEFINER
AS $$
DECLARE
    k bigint;
BEGIN
    SELECT x.id INTO k FROM pgnfs_snapshots x WHERE x.name = s;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no snapshot named %', coalesce(s, 'NULL')
              USING ERRCODE = 'no_data_found', HINT = 'SELECT * FROM pgnfs.snapshots lists them';
    END IF;
    RETURN k;
END
$$;

-- attr_live and names_live as snapshot k saw them.
CREATE OR REPLACE FUNCTION pgnfs.attr_at(k bigint)
RETURNS TABLE (inode bigint, type smallint, mode int, nlink int, uid bigint, gid bigint,
               size bigint, used bigint, atime bigint, mtime bigint, ctime bigint,
               target bytea)
LANGUAGE sql STABLE
AS $$
SELECT v.inode, v.type, v.mode, v.nlink, v.uid, v.gid, v.size, v.used, v.atime, v.mtime,
       v.ctime, v.target
  FROM pgnfs.attr_versions v WHERE v.born < k AND v.died >= k
$$;
CREATE OR REPLACE FUNCTION pgnfs.names_at(k bigint)
RETURNS TABLE (parent bigint, name bytea, inode bigint)
LANGUAGE sql STABLE
AS $$
SELECT v.parent, v.name, v.inode FROM pgnfs.names_versions v WHERE v.born < k AND v.died >= k
$$;

-- dirs_under as snapshot k saw the tree.
CREATE OR REPLACE FUNCTION pgnfs.dirs_under_at(k bigint, top bigint, top_path text)
RETURNS TABLE (inode bigint, parent bigint, path text, depth int)
LANGUAGE sql STABLE
AS $$
WITH RECURSIVE e AS MATERIALIZED (
    SELECT n.parent, n.name, n.inode
      FROM pgnfs.attr_at(k) f JOIN pgnfs.names_at(k) n ON n.inode = f.inode
     WHERE f.type = 2
), d(inode, parent, path, depth) AS (
    SELECT f.inode, NULL::bigint, top_path, 0 FROM pgnfs.attr_at(k) f
     WHERE f.inode = top AND f.type = 2
    UNION ALL
    SELECT e.inode, e.parent, pgnfs.path_join(d.path, e.name), d.depth + 1
      FROM d JOIN e ON e.parent = d.inode
     WHERE d.depth < 4096
)
SELECT inode, parent, path, depth FROM d
$$;

-- The inode of path p as snapshot k saw it (NULL: none).
CREATE OR REPLACE FUNCTION pgnfs.lookup_in(k bigint, p text)
RETURNS bigint LANGUAGE plpgsql STABLE SECURITY DEFINER
AS $$
DECLARE
    ino bigint := 1;
    t   smallint := 2;
    c   text;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pgnfs_snap_attr(k, 1)) THEN
        RETURN NULL;
    END IF;
    FOREACH c IN ARRAY string_to_array(p, '/') LOOP
        CONTINUE WHEN c = '' OR c = '.';
        IF t <> 2 THEN
            RETURN NULL;
        END IF;
        SELECT n.inode, f.type INTO ino, t
          FROM pgnfs_snap_name(k, ino, convert_to(c, 'UTF8')) n
          JOIN pgnfs_snap_attr(k, n.inode) f ON true;
        IF NOT FOUND THEN
            RETURN NULL;
        END IF;
    END LOOP;
    RETURN ino;
END
$$;

CREATE OR REPLACE FUNCTION pgnfs.lookup_at(s text, p text)
RETURNS bigint LANGUAGE sql STABLE
AS $$ SELECT pgnfs.lookup_in(pgnfs.snap_id(s), p) $$;

-- The rows of pgnfs.files under directory top (top included) as snapshot
-- k saw them (what files_at and tree_at return).
CREATE OR REPLACE FUNCTION pgnfs.tree_in(k bigint, top text)
RETURNS SETOF pgnfs.files LANGUAGE sql STABLE
AS $$
WITH t AS MATERIALIZED (SELECT pgnfs.lookup_in(k, top) AS ino, pgnfs.path_clean(top) AS path)
SELECT t.path, f.inode, pgnfs.type_name(f.type), f.size,
       pgnfs.used(f.type, f.size, f.used), f.mode, f.uid, f.gid, f.nlink, pgnfs.ns_time(f.atime),
       pgnfs.ns_time(f.mtime), pgnfs.ns_time(f.ctime), NULL::text, NULL::bigint, NULL::text
  FROM t JOIN pgnfs.attr_at(k) f ON f.inode = t.ino AND f.type = 2
UNION ALL
SELECT pgnfs.path_join(d.path, n.name), f.inode, pgnfs.type_name(f.type), f.size,
       pgnfs.used(f.type, f.size, f.used), f.mode, f.uid, f.gid, f.nlink, pgnfs.ns_time(f.atime),
       pgnfs.ns_time(f.mtime), pgnfs.ns_time(f.ctime), pgnfs.name_text(n.name), n.parent,
       pgnfs.name_text(f.target)
  FROM t CROSS JOIN LATERAL pgnfs.dirs_under_at(k, t.ino, t.path) d
  JOIN pgnfs.names_at(k) n ON n.parent = d.inode
  JOIN pgnfs.attr_at(k) f ON f.inode = n.inode
$$;

-- (The id is found once, in a subquery of its own: tree_in is inlined,
-- and an argument that calls a function would be called in every row.)
CREATE FUNCTION pgnfs.files_at(s text)
RETURNS SETOF pgnfs.files LANGUAGE sql STABLE
AS $$ SELECT t.* FROM (SELECT pgnfs.snap_id(s) AS k OFFSET 0) x
      CROSS JOIN LATERAL pgnfs.tree_in(x.k, '/') t $$;
COMMENT ON FUNCTION pgnfs.files_at(text) IS 'pgnfs.files as the snapshot of that name saw it';

CREATE FUNCTION pgnfs.tree_at(s text, top text)
RETURNS SETOF pgnfs.files LANGUAGE sql STABLE
AS $$ SELECT t.* FROM (SELECT pgnfs.snap_id(s) AS k OFFSET 0) x
      CROSS JOIN LATERAL pgnfs.tree_in(x.k, top) t $$;

CREATE FUNCTION pgnfs.dirs_at(s text)
RETURNS TABLE (path text, inode bigint, parent bigint, depth int, mode int, uid bigint,
               gid bigint, nlink int, atime timestamptz, mtime timestamptz, ctime timestamptz)
LANGUAGE sql STABLE
AS $$
WITH k AS MATERIALIZED (SELECT pgnfs.snap_id(s) AS id)
SELECT d.path, d.inode, d.parent, d.depth, f.mode, f.uid, f.gid, f.nlink,
       pgnfs.ns_time(f.atime), pgnfs.ns_time(f.mtime), pgnfs.ns_time(f.ctime)
  FROM k CROSS JOIN LATERAL pgnfs.dirs_under_at(k.id, 1, '/') d
  JOIN pgnfs.attr_at(k.id) f ON f.inode = d.inode
$$;

-- The bytes of inode i as snapshot s saw them, as pgnfs.chunks gives the
-- live ones (a guarded file raises: only the server decodes it).
CREATE OR REPLACE FUNCTION pgnfs.chunks_in(k bigint, i bigint)
RETURNS TABLE ("offset" bigint, data bytea)
LANGUAGE plpgsql STABLE STRICT SECURITY DEFINER
AS $$
#variable_conflict use_column
DECLARE
    cs  int;
    b64 boolean;
    sz  bigint;
    chn bigint;
BEGIN
    SELECT fs.chunk_size, fs.encoding = 'base64' INTO cs, b64 FROM pgnfs_fs fs;
    SELECT f.size, coalesce(f.chain, 0) INTO sz, chn FROM pgnfs_snap_attr(k, i) f WHERE f.type = 1;
    IF NOT FOUND OR sz = 0 THEN
        RETURN;
    END IF;
    IF chn <> 0 THEN
        RAISE EXCEPTION 'inode % is stored through a transformation chain; read it over NFS', i
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'read it under /.snapshots over NFS';
    END IF;
    RETURN QUERY
        SELECT g.c * cs, pgnfs.chunk_fill(d.data, b64, least(cs::bigint, sz - g.c * cs)::int)
          FROM generate_series(0::bigint, (sz - 1) / cs) AS g(c)
          LEFT JOIN pgnfs_snap_data(k, i, 0, (sz - 1) / cs) d ON d.chunk = g.c
         ORDER BY g.c;
END
$$;

CREATE OR REPLACE FUNCTION pgnfs.chunks_at(s text, i bigint)
RETURNS TABLE ("offset" bigint, data bytea) LANGUAGE sql STABLE
AS $$ SELECT * FROM pgnfs.chunks_in(pgnfs.snap_id(s), i) $$;

CREATE OR REPLACE FUNCTION pgnfs.cat_at(s text, i bigint)
RETURNS bytea LANGUAGE sql STABLE
AS $$ SELECT coalesce(string_agg(c.data, ''::bytea ORDER BY c."offset"), ''::bytea)
        FROM pgnfs.chunks_at(s, i) c $$;

CREATE OR REPLACE FUNCTION pgnfs.sha256_at(s text, i bigint)
RETURNS bytea LANGUAGE sql STABLE
AS $$ SELECT sha256(pgnfs.cat_at(s, i)) $$;

-- Is inode i stored through a transformation chain at snapshot k?
CREATE OR REPLACE FUNCTION pgnfs.guarded_in(k bigint, i bigint)
RETURNS boolean LANGUAGE plpgsql STABLE STRICT SECURITY DEFINER
AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM pgnfs_snap_attr(k, i) f WHERE coalesce(f.chain, 0) <> 0);
END
$$;

CREATE FUNCTION pgnfs.content_at(s text)
RETURNS TABLE (path text, "offset" bigint, data bytea) LANGUAGE sql STABLE
AS $$
WITH k AS MATERIALIZED (SELECT pgnfs.snap_id(s) AS id)
SELECT f.path, c."offset", c.data
  FROM k CROSS JOIN LATERAL pgnfs.tree_in(k.id, '/') f
  CROSS JOIN LATERAL pgnfs.chunks_in(k.id, f.inode) c
 WHERE f.type = 'file' AND NOT pgnfs.guarded_in(k.id, f.inode)
$$;

-- What changed from snapshot a to snapshot b (NULL: to the live file
-- system), by path: 'added', 'removed', or 'modified' (the same path with
-- another file, type, size, mode, owner, link count, times or target; a
-- directory whose entries changed is modified too).
CREATE FUNCTION pgnfs.diff(a text, b text DEFAULT NULL)
RETURNS TABLE (change text, path text, type text, inode bigint)
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
    ka bigint := pgnfs.snap_id(a);
    kb bigint := CASE WHEN b IS NULL THEN 9223372036854775807 ELSE pgnfs.snap_id(b) END;
BEGIN
    RETURN QUERY
    WITH x AS (SELECT * FROM pgnfs.tree_in(ka, '/')),
         y AS (SELECT * FROM pgnfs.tree_in(kb, '/') WHERE b IS NOT NULL
               UNION ALL
               SELECT * FROM pgnfs.files WHERE b IS NULL)
    SELECT CASE WHEN x.path IS NULL THEN 'added' WHEN y.path IS NULL THEN 'removed'
                ELSE 'modified' END,
           coalesce(y.path, x.path), coalesce(y.type, x.type), coalesce(y.inode, x.inode)
      FROM x FULL JOIN y ON y.path = x.path
     WHERE x.path IS NULL OR y.path IS NULL
        OR (x.inode, x.type, x.size, x.mode, x.uid, x.gid, x.nlink, x.mtime, x.ctime)
           IS DISTINCT FROM (y.inode, y.type, y.size, y.mode, y.uid, y.gid, y.nlink, y.mtime,
                             y.ctime)
        OR x.target IS DISTINCT FROM y.target
     ORDER BY 2;
END
$$;
COMMENT ON FUNCTION pgnfs.diff(text, text) IS
    'paths added, removed or modified from snapshot a to snapshot b (NULL: the live tree)';

-- The functions that read tables run as their owner: pin what they see.
DO $$
DECLARE
    home name := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                   WHERE c.oid = 'pgnfs_fs'::regclass);
    f    regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
              WHERE p.pronamespace = 'pgnfs'::regnamespace AND p.prosecdef LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, %I, pg_temp', f, home);
    END LOOP;
END
$$;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA pgnfs FROM PUBLIC;

-- Create the read-only roles if they are missing and this user may, and
-- grant them this database's views. Returns whether pgnfs_reader exists
-- (and so holds the grants).
CREATE OR REPLACE FUNCTION pgnfs_views_roles()
RETURNS boolean LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    may boolean := (SELECT r.rolsuper OR r.rolcreaterole FROM pg_roles r
                     WHERE r.rolname = current_user);
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = 'pgnfs_reader') THEN
        IF NOT may THEN
            RETURN false;
        END IF;
        CREATE ROLE pgnfs_reader NOLOGIN;
        COMMENT ON ROLE pgnfs_reader IS 'reads the views of schema pgnfs, changes nothing';
    END IF;
    IF may AND NOT EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = 'pgnfs_ro') THEN
        CREATE ROLE pgnfs_ro LOGIN IN ROLE pgnfs_reader;
        ALTER ROLE pgnfs_ro SET search_path = pgnfs, public;
        ALTER ROLE pgnfs_ro SET default_transaction_read_only = on;
        COMMENT ON ROLE pgnfs_ro IS 'logs in to read the views of schema pgnfs (pgnfs sql --read-only)';
    END IF;
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO pgnfs_reader', current_database());
    GRANT USAGE ON SCHEMA pgnfs TO pgnfs_reader;
    GRANT SELECT ON ALL TABLES IN SCHEMA pgnfs TO pgnfs_reader;
    GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA pgnfs TO pgnfs_reader;
    RETURN true;
END
$$;
REVOKE ALL ON FUNCTION pgnfs_views_roles() FROM PUBLIC;
SELECT pgnfs_views_roles();
