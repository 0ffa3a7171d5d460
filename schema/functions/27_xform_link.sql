-- 27_xform_link.sql -- transformation links (009_xform_links.sql, dbfs_xf_link.c).
--
-- A link is a regular file (a fileatt row and a name, as NFS clients see
-- it) whose bytes are another file's, its base, seen through a chain:
-- reading it gives the base's plain bytes after every stage's forward,
-- chunk by chunk (each chunk's output, the headers left out); writing it
-- stores the inverse into the base, where every stage has an inverse that
-- needs nothing but the bytes (length-preserving, no per-chunk metadata,
-- no nonce: identity, increment, such plug-ins). The server does both
-- (dbfs_xf_link.c); the database keeps what a link is and its attributes:
--
--   - its row has rdev_major = pgnfs_xf_link_rdev() (dbfs knows a link
--     from its attributes alone and never caches them, as they follow the
--     base), rdev_minor = 1 when its size is current, 0 when it must be
--     computed (a chain that changes lengths: at the first access after
--     the base changed, dbfs_xf_link_size, pgnfs_xf_link_map);
--   - the base is marked fileatt.xlinked, and a trigger (pgnfs_xf_follow,
--     made with the first link) gives its links its size (length-
--     preserving chains), mtime and a new ctime and change whenever its
--     size or times move, in the same transaction; another
--     (pgnfs_xf_forget) drops a link's pgnfs_xform_link row with its
--     fileatt row;
--   - the plain write path refuses a link before it stores anything
--     (pgnfs_write_check, pgnfs_sattr_store: PN067), and the server takes
--     the link's path.
-- The base is named by inode, so renaming or moving it (or the link)
-- changes nothing; the link's own mode, owner and times are set as any
-- file's. When the base's last name goes, the link is left dangling:
-- reads and writes answer EIO (logged), pgnfs fsck reports it, rm removes
-- it.

CREATE OR REPLACE FUNCTION pgnfs_xf_link_rdev() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 5265484 $$;  -- 0x50584c, "PXL"
CREATE OR REPLACE FUNCTION pgnfs_xf_elink() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 67 $$;  -- ENOLINK: a transformation link, served by the server's link path

-- Is row f a transformation link?
CREATE OR REPLACE FUNCTION pgnfs_xf_is_link(f fileatt)
RETURNS boolean LANGUAGE sql IMMUTABLE
AS $$ SELECT f.type = 1 AND f.rdev_major = 5265484 $$;

-- Trigger on fileatt (bases only): the links follow their base.
CREATE OR REPLACE FUNCTION pgnfs_xf_follow()
RETURNS trigger LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    UPDATE fileatt l
       SET size = CASE WHEN k.preserves THEN NEW.size ELSE l.size END,
           rdev_minor = CASE WHEN k.preserves THEN 1 ELSE 0 END,
           mtime = NEW.mtime, ctime = pgnfs_next_ctime(l.ctime, NEW.ctime),
           change = l.change + 1
      FROM pgnfs_xform_link k
     WHERE k.base = NEW.inode AND l.inode = k.inode;
    RETURN NULL;
END
$$;

-- Trigger on fileatt (links only): a link's inode went, so does its row.
CREATE OR REPLACE FUNCTION pgnfs_xf_forget()
RETURNS trigger LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    DELETE FROM pgnfs_xform_link k WHERE k.inode = OLD.inode;
    RETURN NULL;
END
$$;

-- Make the links' triggers (the first time a link is made: a file system
-- without links pays nothing for them).
CREATE OR REPLACE FUNCTION pgnfs_xf_link_enable()
RETURNS void LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger t
                    WHERE t.tgrelid = 'fileatt'::regclass AND t.tgname = 'pgnfs_xf_follow') THEN
        CREATE TRIGGER pgnfs_xf_follow AFTER UPDATE ON fileatt FOR EACH ROW
            WHEN (OLD.xlinked AND (OLD.size <> NEW.size OR OLD.mtime <> NEW.mtime
                                   OR OLD.ctime <> NEW.ctime))
            EXECUTE FUNCTION pgnfs_xf_follow();
        CREATE TRIGGER pgnfs_xf_forget AFTER DELETE ON fileatt FOR EACH ROW
            WHEN (OLD.type = 1 AND OLD.rdev_major = 5265484)
            EXECUTE FUNCTION pgnfs_xf_forget();
    END IF;
END
$$;

-- Make link p_name in directory p_dir presenting regular file p_base
-- through chain p_chain (p_text its canonical text; the server checked
-- that a link can use it and says whether writable and length-preserving)
-- at time p_now. The link takes the base's owner and mode (without the
-- write bits when it is not writable, and never setuid or setgid), and
-- its size when the chain preserves lengths (else its size is computed at
-- first access). Raises PN002 (no base or directory), PN022 (the base is
-- no regular file, or a link), PN020 (p_dir is no directory), PN017 (the
-- name exists). Returns the link's inode.
CREATE OR REPLACE FUNCTION pgnfs_xf_link(p_base bigint, p_dir bigint, p_name bytea,
                                         p_chain bigint, p_text text, p_writable boolean,
                                         p_preserves boolean, p_now bigint)
RETURNS bigint LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    b  fileatt;
    d  fileatt;
    nf fileatt;
BEGIN
    SELECT * INTO b FROM fileatt WHERE inode = p_base FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no inode %', p_base USING ERRCODE = pgnfs_errcode(pgnfs_enoent());
    ELSIF b.type <> pgnfs_t_reg() OR pgnfs_xf_is_link(b) THEN
        RAISE EXCEPTION 'the base must be a regular file, not a transformation link'
              USING ERRCODE = pgnfs_errcode(pgnfs_einval());
    END IF;
    SELECT * INTO d FROM fileatt WHERE inode = p_dir FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no inode %', p_dir USING ERRCODE = pgnfs_errcode(pgnfs_enoent());
    ELSIF d.type <> pgnfs_t_dir() THEN
        RAISE EXCEPTION 'not a directory' USING ERRCODE = pgnfs_errcode(pgnfs_enotdir());
    ELSIF EXISTS (SELECT 1 FROM naming n WHERE n.parent = p_dir AND n.name = p_name) THEN
        RAISE EXCEPTION 'the name exists' USING ERRCODE = pgnfs_errcode(pgnfs_eexist());
    END IF;
    PERFORM pgnfs_xf_chain_put(p_chain, p_text);
    PERFORM pgnfs_xf_link_enable();
    nf.inode := nextval('pgnfs_inode_seq');
    nf.generation := pgnfs_new_generation();
    nf.type := pgnfs_t_reg();
    nf.mode := b.mode & CASE WHEN p_writable THEN 511 ELSE 365 END;  -- 0777, 0555
    nf.nlink := 1;
    nf.uid := b.uid;
    nf.gid := b.gid;
    nf.size := CASE WHEN p_preserves THEN b.size ELSE 0 END;
    nf.rdev_major := pgnfs_xf_link_rdev();
    nf.rdev_minor := CASE WHEN p_preserves THEN 1 ELSE 0 END;
    nf.atime := p_now;
    nf.mtime := b.mtime;
    nf.ctime := p_now;
    nf.change := 1;
    nf.used := 0;
    nf.chain := 0;  -- not NULL: a link never inherits its directory's chain
    INSERT INTO fileatt SELECT nf.*;
    INSERT INTO naming (parent, name, inode) VALUES (p_dir, p_name, nf.inode);
    PERFORM pgnfs_dir_touch(p_dir, 0, p_now);
    UPDATE fileatt SET xlinked = true WHERE inode = p_base;
    INSERT INTO pgnfs_xform_link (inode, base, chain, writable, preserves)
    VALUES (nf.inode, p_base, p_chain, p_writable, p_preserves);
    RETURN nf.inode;
END
$$;

-- A link's size computed (dbfs_xf_link_size): its chunk map p_map as of
-- the base's ctime p_ctime, and p_size. Recorded only while the base still
-- has that ctime (else the next access computes again). Returns the
-- link's attributes (role post), new ctime and change when the size moved.
CREATE OR REPLACE FUNCTION pgnfs_xf_link_map(p_ino bigint, p_map bytea, p_ctime bigint,
                                             p_size bigint, p_now bigint)
RETURNS SETOF pgnfs_result LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    f fileatt;
    k pgnfs_xform_link;
BEGIN
    SELECT * INTO f FROM fileatt WHERE inode = p_ino FOR UPDATE;
    SELECT * INTO k FROM pgnfs_xform_link x WHERE x.inode = p_ino;
    IF f.inode IS NULL OR k.inode IS NULL THEN
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM fileatt b WHERE b.inode = k.base AND b.ctime = p_ctime) THEN
        UPDATE pgnfs_xform_link x SET map = p_map, map_ctime = p_ctime WHERE x.inode = p_ino;
        IF f.size <> p_size OR f.rdev_minor <> 1 THEN
            UPDATE fileatt
               SET size = p_size, rdev_minor = 1, ctime = pgnfs_next_ctime(ctime, p_now),
                   change = change + 1
             WHERE inode = p_ino
            RETURNING * INTO f;
        END IF;
    END IF;
    RETURN NEXT pgnfs_res(0, pgnfs_role_post(), f);
END
$$;
