-- 001_base.sql -- the pgnfs file system: file-system facts, inodes, names, data.
--
-- Applied once, in one transaction, by `pgnfs mkfs`. Later versions add files
-- 002_..., 003_... that upgrade a file system in place; each file ends by
-- recording its number in pgnfs_fs.schema_version.
--
-- Conventions
--   * Times are nanoseconds since the Unix epoch (bigint): NFS carries
--     nanoseconds and timestamptz keeps only microseconds.
--   * Names are bytea: NFS names are byte strings, not text in the database's
--     encoding. The view pgnfs_tree shows them as text where they are UTF-8.
--   * uid, gid are unsigned 32-bit on the wire, stored as bigint.
--   * type: 1 regular, 2 directory, 3 block device, 4 character device,
--     5 symbolic link, 6 socket, 7 fifo.
--   * mode holds the permission bits and setuid/setgid/sticky (07777) only.

CREATE TABLE pgnfs_fs (
    id             int PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    schema_version int NOT NULL,
    fsid           bigint NOT NULL,
    storage        text NOT NULL DEFAULT 'single'
                   CHECK (storage IN ('single', 'inversion', 'hybrid')),
    chunk_size     int NOT NULL DEFAULT 8192
                   CHECK (chunk_size BETWEEN 1024 AND 1048576),
    encoding       text NOT NULL DEFAULT 'binary'
                   CHECK (encoding IN ('binary', 'base64')),
    handle_secret  bytea NOT NULL CHECK (length(handle_secret) >= 32),
    created        timestamptz NOT NULL DEFAULT now(),
    -- The digest of the function files (schema/functions/*.sql) last applied:
    -- a server whose build carries another digest re-applies them at start.
    functions_digest text
);

-- Inode numbers are never reused; generation guards handles all the same
-- (a file system restored from a dump, or recreated with mkfs --force).
CREATE SEQUENCE pgnfs_inode_seq START 2;      -- inode 1 is the root directory
-- Directory cookies: every name gets a fresh, increasing one. 1 and 2 are
-- "." and "..", so real entries start at 3.
CREATE SEQUENCE pgnfs_cookie_seq START 3;

CREATE TABLE fileatt (
    inode      bigint PRIMARY KEY,
    generation int NOT NULL,
    type       smallint NOT NULL CHECK (type BETWEEN 1 AND 7),
    mode       int NOT NULL CHECK (mode BETWEEN 0 AND 4095),
    nlink      int NOT NULL CHECK (nlink >= 0),
    uid        bigint NOT NULL CHECK (uid BETWEEN 0 AND 4294967295),
    gid        bigint NOT NULL CHECK (gid BETWEEN 0 AND 4294967295),
    size       bigint NOT NULL DEFAULT 0 CHECK (size >= 0),
    rdev_major int NOT NULL DEFAULT 0,
    rdev_minor int NOT NULL DEFAULT 0,
    atime      bigint NOT NULL,
    mtime      bigint NOT NULL,
    ctime      bigint NOT NULL,
    -- Incremented by every change to the row: lets caches order updates.
    change     bigint NOT NULL DEFAULT 1,
    -- Bytes of file data stored (holes and trimmed tails not counted):
    -- kept by the data operations, reported as NFS "used".
    used       bigint NOT NULL DEFAULT 0 CHECK (used >= 0),
    -- The client's verifier of an EXCLUSIVE create (RFC 1813 3.3.8).
    createverf bigint,
    -- The target of a symbolic link.
    target     bytea CHECK ((type = 5) = (target IS NOT NULL))
);

CREATE TABLE naming (
    parent bigint NOT NULL REFERENCES fileatt (inode),
    name   bytea NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    inode  bigint NOT NULL REFERENCES fileatt (inode),
    cookie bigint NOT NULL DEFAULT nextval('pgnfs_cookie_seq'),
    PRIMARY KEY (parent, name)
);
CREATE UNIQUE INDEX naming_parent_cookie ON naming (parent, cookie);
CREATE INDEX naming_inode ON naming (inode);

-- File data in chunks of pgnfs_fs.chunk_size bytes. A missing chunk, or the
-- part of a chunk past its stored length, reads as zeros (sparse files).
CREATE TABLE allfiles (
    inode bigint NOT NULL,
    chunk bigint NOT NULL CHECK (chunk >= 0),
    data  bytea NOT NULL,
    PRIMARY KEY (inode, chunk)
);
-- Chunk data is mostly incompressible: skip pglz, keep TOAST out of line.
ALTER TABLE allfiles ALTER COLUMN data SET STORAGE EXTERNAL;

-- What the metadata functions (schema/functions/) return: one row per object
-- they report on. status is 0 or a positive (Linux) errno and is the same in
-- every row of one call; role says which object and phase the attributes
-- describe: 0 none (attributes NULL), 1 the object, 2 the (first) directory
-- or, for setattr, the object before the change, 3 the same after it,
-- 4 and 5 the second directory (rename) before and after.
CREATE TYPE pgnfs_result AS (
    status     int,
    role       smallint,
    inode      bigint,
    generation int,
    type       smallint,
    mode       int,
    nlink      int,
    uid        bigint,
    gid        bigint,
    size       bigint,
    rdev_major int,
    rdev_minor int,
    atime      bigint,
    mtime      bigint,
    ctime      bigint,
    change     bigint,
    used       bigint
);
