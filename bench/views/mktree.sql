-- mktree.sql -- the tree of mkdirs.sql + mkfiles.sql made set-wise, in one
-- transaction (a million files in seconds, where pgnfs_create one file at
-- a time takes a quarter of an hour here): /bench/dM/dL/fK, :per_dir
-- regular files per leaf directory, 100 leaves per middle directory, the
-- same names, sizes (set in the size attribute: sparse, no data) and
-- owners, and link counts as NFS would make them. The rows du and find
-- read are what NFS would have made; change counters and the like are not
-- (bench/views/run --fast).
\set ON_ERROR_STOP on
SET synchronous_commit = off;
-- The rows are consistent by construction: no foreign-key check per row.
SET session_replication_role = replica;
BEGIN;
SELECT (extract(epoch FROM clock_timestamp()) * 1e9)::bigint AS now \gset
SELECT ceil(:files::numeric / :per_dir)::int AS leaves \gset
SELECT ceil(:leaves::numeric / 100)::int AS mids \gset
SELECT nextval('pgnfs_inode_seq') AS top \gset
INSERT INTO fileatt (inode, generation, type, mode, nlink, uid, gid, size, atime, mtime, ctime)
VALUES (:top, 1, 2, 493, 2 + :mids, 0, 0, 0, :now, :now, :now);
INSERT INTO naming (parent, name, inode) VALUES (1, convert_to('bench', 'UTF8'), :top);
UPDATE fileatt SET nlink = nlink + 1 WHERE inode = 1;
CREATE TEMP TABLE m AS
SELECT m, nextval('pgnfs_inode_seq') AS ino FROM generate_series(0, :mids - 1) m;
INSERT INTO fileatt (inode, generation, type, mode, nlink, uid, gid, size, atime, mtime, ctime)
SELECT ino, 1, 2, 493, 2 + least(100, :leaves - m * 100), 0, 0, 0, :now, :now, :now FROM m;
INSERT INTO naming (parent, name, inode) SELECT :top, convert_to('d' || m, 'UTF8'), ino FROM m;
CREATE TEMP TABLE l AS
SELECT l, m.ino AS mid, nextval('pgnfs_inode_seq') AS ino
  FROM generate_series(0, :leaves - 1) l JOIN m ON m.m = l / 100;
INSERT INTO fileatt (inode, generation, type, mode, nlink, uid, gid, size, atime, mtime, ctime)
SELECT ino, 1, 2, 493, 2, 0, 0, 0, :now, :now, :now FROM l;
INSERT INTO naming (parent, name, inode) SELECT mid, convert_to('d' || l % 100, 'UTF8'), ino FROM l;
CREATE TEMP TABLE f AS
SELECT l.ino AS dir, i, l.l * :per_dir + i AS k, nextval('pgnfs_inode_seq') AS ino
  FROM l, generate_series(0, least(:per_dir, :files - l.l * :per_dir) - 1) i;
INSERT INTO fileatt (inode, generation, type, mode, nlink, uid, gid, size, atime, mtime, ctime)
SELECT ino, 1, 1, 420, 1, 1000 + k % 7, 1000 + k % 7, k::bigint * 7919 % 1048577, :now, :now, :now
  FROM f;
INSERT INTO naming (parent, name, inode) SELECT dir, convert_to('f' || i, 'UTF8'), ino FROM f;
COMMIT;
