-- 004_xform.sql -- transformation chains on file data (xform/, xf.h).
--
-- A chain is an ordered list of transformations (compress, encrypt,
-- checksum, plug-ins) that a guarded file's chunks pass through when they
-- are stored and fetched. fileatt.chain names a file's or directory's
-- chain by id (the first 8 bytes of SHA-256 of its canonical text, as
-- xf_chain_id says); NULL or 0 is "none": an unguarded file, whose data
-- takes the plain path. A directory's chain is the one its new files and
-- subdirectories get when they are created (pgnfs_xf_inherit, made by
-- pgnfs_xf_enable the first time a chain is set anywhere, so a file
-- system that never uses chains pays nothing for them).
--
-- Each stored chunk of a guarded file is the chain's header and payload
-- (xf.h "stored chunk format"); the file's size is its plain size and
-- fileatt.used what PostgreSQL stores, so compression shows.

-- The file's chain (NULL or 0: none). Nullable without a default so that
-- adding it rewrites nothing and the functions that build a fileatt row
-- field by field need no change.
ALTER TABLE fileatt ADD COLUMN chain bigint;

-- The canonical text of every chain a file may name: the server makes
-- the chain from it when it meets the id first.
CREATE TABLE pgnfs_xform_chain (
    id   bigint PRIMARY KEY CHECK (id <> 0),
    text text NOT NULL UNIQUE
);

-- Nonce epochs: every process that encrypts takes one no process ever
-- took before (a random 32-bit value inserted here), so that with the
-- process's own counter no nonce repeats under the file system's key.
CREATE TABLE pgnfs_xform_epoch (
    epoch bigint PRIMARY KEY CHECK (epoch BETWEEN 1 AND 4294967295),
    taken timestamptz NOT NULL DEFAULT now()
);

-- The id of the key (never the key) the file system's data is encrypted
-- under, recorded at the first start with a key: a server with another
-- key is refused.
ALTER TABLE pgnfs_fs ADD COLUMN xform_key_id bigint;
