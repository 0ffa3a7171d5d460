-- mktree.sql -- a tree of :files regular files for bench/snapshot/run,
-- made set-wise inside the database (a million rows in seconds, where
-- pgnfs_create one file at a time takes a quarter of an hour here):
-- /bench/dK/fI, 1000 files per directory, sizes spread over 0 .. 1 MiB
-- set in the size attribute (sparse: no data), link counts as NFS would
-- make them. What a snapshot's creation must not depend on is the number
-- of rows, so rows are all this needs to be.
\set ON_ERROR_STOP on
SET synchronous_commit = off;
-- The rows are consistent by construction: no foreign-key check per row
-- (planned while the tables were empty, each would scan them whole).
SET session_replication_role = replica;
BEGIN;
SELECT (extract(epoch FROM clock_timestamp()) * 1e9)::bigint AS now \gset
SELECT ceil(:files::numeric / 1000)::int AS dirs \gset
SELECT nextval('pgnfs_inode_seq') AS top \gset
INSERT INTO fileatt (inode, generation, type, mode, nlink, uid, gid, size, atime, mtime, ctime)
VALUES (:top, 1, 2, 493, 2 + :dirs, 0, 0, 0, :now, :now, :now);
INSERT INTO naming (parent, name, inode) VALUES (1, convert_to('bench', 'UTF8'), :top);
UPDATE fileatt SET nlink = nlink + 1 WHERE inode = 1;
CREATE TEMP TABLE d AS
SELECT k, nextval('pgnfs_inode_seq') AS ino FROM generate_series(0, :dirs - 1) k;
INSERT INTO fileatt (inode, generation, type, mode, nlink, uid, gid, size, atime, mtime, ctime)
SELECT ino, 1, 2, 493, 2, 0, 0, 0, :now, :now, :now FROM d;
INSERT INTO naming (parent, name, inode) SELECT :top, convert_to('d' || k, 'UTF8'), ino FROM d;
CREATE TEMP TABLE f AS
SELECT d.ino AS dir, i, nextval('pgnfs_inode_seq') AS ino
  FROM d, generate_series(0, least(999, :files - 1 - d.k * 1000)) i;
INSERT INTO fileatt (inode, generation, type, mode, nlink, uid, gid, size, atime, mtime, ctime)
SELECT ino, 1, 1, 420, 1, 1000 + ino % 7, 1000, ino * 7919 % 1048577, :now, :now, :now FROM f;
INSERT INTO naming (parent, name, inode) SELECT dir, convert_to('f' || i, 'UTF8'), ino FROM f;
COMMIT;
VACUUM ANALYZE fileatt;
VACUUM ANALYZE naming;
