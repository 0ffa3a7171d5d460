-- 009_xform_links.sql -- in-database transformation stages and
-- transformation links (functions/26_xform_sql.sql, 27_xform_link.sql).
--
-- In-database stages: a chain may end in stages "sql:forward=F:inverse=G",
-- PostgreSQL functions bytea -> bytea that the database applies to a
-- guarded chunk's value (forward before it is stored, inverse before the
-- server reads it). pgnfs_xform_chain records their names, parsed from the
-- chain's text, and fileatt.chain_sql marks the files whose chain has such
-- stages, so that the read statements apply the inverses only to those
-- (CASE WHEN f.chain_sql ...: nothing for any other file).
--
-- Transformation links: a link is a regular file whose row carries the
-- marker rdev_major = pgnfs_xf_link_rdev() (a regular file has no device
-- number otherwise: MKNOD sets it for devices only) and whose data is
-- another file's (its base) seen through a chain; pgnfs_xform_link says
-- which. fileatt.xlinked marks a base, so that the trigger keeping its
-- links' attributes in step with it runs for bases only.
--
-- Every column is nullable without a default, so adding it rewrites
-- nothing and the functions that build a fileatt row field by field need
-- no change.

ALTER TABLE fileatt ADD COLUMN chain_sql boolean;
ALTER TABLE fileatt ADD COLUMN xlinked boolean;

-- The in-database stages of a chain, in chain order (NULL or empty: none).
ALTER TABLE pgnfs_xform_chain ADD COLUMN sql_forward text[];
ALTER TABLE pgnfs_xform_chain ADD COLUMN sql_inverse text[];

CREATE TABLE pgnfs_xform_link (
    inode      bigint PRIMARY KEY,  -- the link (a fileatt row)
    base       bigint NOT NULL,     -- the file it presents
    chain      bigint NOT NULL REFERENCES pgnfs_xform_chain (id),
    writable   boolean NOT NULL,    -- every stage has an inverse usable on its own
    preserves  boolean NOT NULL,    -- length-preserving: the link's size is the base's
    -- A chain that changes lengths: the end offset of each chunk's output
    -- (the link's bytes are the outputs one after the other; 8 bytes
    -- little-endian each), computed at the first access after the base
    -- changed, and the base's ctime then.
    map        bytea,
    map_ctime  bigint
);
CREATE INDEX pgnfs_xform_link_base ON pgnfs_xform_link (base);
