-- mkdirs.sql -- the directories of a bench/views tree, through the file
-- system's own function pgnfs_create (what MKDIR calls): /bench and its
-- middle directories /bench/dM, one per 100 leaf directories. psql
-- variables: files, per_dir (see mkfiles.sql).
\set ON_ERROR_STOP on
SET synchronous_commit = off;
SELECT ceil(ceil(:files::numeric / :per_dir) / 100)::int AS mids \gset
SELECT count(*) FROM (
    SELECT (pgnfs_create(1, (SELECT generation FROM fileatt WHERE inode = 1),
                         convert_to('bench', 'UTF8'), 0, 0, '{}'::bigint[],
                         (extract(epoch FROM clock_timestamp()) * 1e9)::bigint,
                         2::smallint, 1, 0, NULL, 0, 0, 1, 493, 0, 0, 0, 0, 0)).status) x;
SELECT n.inode AS top FROM naming n WHERE n.parent = 1 AND n.name = convert_to('bench', 'UTF8')
\gset
SELECT count(*) FROM (
    SELECT (pgnfs_create(:top, (SELECT generation FROM fileatt WHERE inode = :top),
                         convert_to('d' || m, 'UTF8'), 0, 0, '{}'::bigint[],
                         (extract(epoch FROM clock_timestamp()) * 1e9)::bigint,
                         2::smallint, 1, 0, NULL, 0, 0, 1, 493, 0, 0, 0, 0, 0)).status
      FROM generate_series(0, :mids - 1) m) x;
