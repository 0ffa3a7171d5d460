-- mkfiles.sql -- the leaf directories and files of a bench/views tree
-- (after mkdirs.sql), through the file system's own function pgnfs_create,
-- as MKDIR and CREATE call it: :files regular files, :per_dir in each leaf
-- directory /bench/dM/dL (100 leaves per middle directory), sizes spread
-- over 0 .. 1 MiB set through the size attribute (sparse: no data is
-- written, so the build is the metadata that du and find read), owners
-- uid 1000 .. 1006. This run makes the leaves L with L % :parts = :part,
-- so that several can run side by side. One statement (and transaction)
-- per leaf directory: the directory, then its files.
\set ON_ERROR_STOP on
SET synchronous_commit = off;
-- Plans made while the tables were small would scan them whole later on.
SET plan_cache_mode = force_custom_plan;

-- mk(dir, name, type, size, owner): one pgnfs_create as root, setting mode,
-- owner and (files) size; the new inode.
CREATE FUNCTION pg_temp.mk(d bigint, n text, t smallint, sz bigint, u bigint)
RETURNS bigint LANGUAGE sql VOLATILE AS $$
SELECT r.inode FROM pgnfs_create(d, (SELECT generation FROM fileatt WHERE inode = d),
                                 convert_to(n, 'UTF8'), 0, 0, '{}'::bigint[],
                                 (extract(epoch FROM clock_timestamp()) * 1e9)::bigint,
                                 t, 1, 0, NULL, 0, 0,
                                 CASE WHEN t = 1 THEN 8 | 1 | 2 | 4 ELSE 1 | 2 | 4 END,
                                 CASE WHEN t = 1 THEN 420 ELSE 493 END, u, u, sz, 0, 0) r
 WHERE r.role = 1 AND r.status = 0
$$;

SELECT n.inode AS top FROM naming n WHERE n.parent = 1 AND n.name = convert_to('bench', 'UTF8')
\gset
SELECT ceil(:files::numeric / :per_dir)::int AS leaves \gset

SELECT format('WITH l AS (SELECT pg_temp.mk(n.inode, %L, 2::smallint, 0, 0) AS ino'
              '             FROM naming n WHERE n.parent = %s AND n.name = convert_to(%L, ''UTF8''))'
              ' SELECT count(pg_temp.mk(l.ino, ''f'' || i, 1::smallint,'
              '                         ((%s + i)::bigint * 7919 %% 1048577), 1000 + (%s + i) %% 7))'
              '   FROM l, generate_series(0, %s) i',
              format('d%s', l % 100), :top, format('d%s', l / 100), l * :per_dir, l * :per_dir,
              least(:per_dir, :files - l * :per_dir) - 1)
  FROM generate_series(0, :leaves - 1) l
 WHERE l % :parts = :part
\gexec
