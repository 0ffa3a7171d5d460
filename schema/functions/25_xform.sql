-- 25_xform.sql -- transformation chains (004_xform.sql): the chain a new
-- file or directory inherits, and the writes of guarded files.
--
-- A guarded file's chunks are transformed in the server (dbfs_xf.c): the
-- database stores what xf_encode produced, one whole value per chunk, and
-- never merges or cuts such a value itself. So the plain write path refuses
-- a guarded file before it stores anything (pgnfs_write_check raises
-- pgnfs_xf_eguarded() unless told the write is the guarded path's), and so does a truncation that would have to cut a
-- guarded chunk (pgnfs_data_truncate); the server then takes the guarded
-- path:
--
--   1. pgnfs_xf_old: the file's change counter, size and chain, and the
--      stored values of the chunks it must merge with (no lock, one
--      snapshot);
--   2. the server decodes them, overlays the write, encodes whole chunks;
--   3. pgnfs_xf_write, one transaction: lock and check as a write does,
--      refuse (pgnfs_xf_echanged()) when the change counter or the chain is
--      no longer what step 1 saw (the server runs again from step 1), and
--      replace the chunks.
-- Step 3 stores nothing unless the file is exactly as step 1 read it, so
-- the read-modify-write is atomic as if it held the lock throughout.

-- The statuses of this file (Linux errno numbers, dbfs_err.c).
CREATE OR REPLACE FUNCTION pgnfs_xf_eguarded() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 77 $$;  -- EBADFD: the file is guarded, take the guarded path
CREATE OR REPLACE FUNCTION pgnfs_xf_echanged() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 78 $$;  -- EREMCHG: the file changed since step 1, start again

-- A regular file's rdev_minor (unused otherwise) under chain p_chain: 1
-- when guarded, the server's hint to write it the guarded way at once
-- (dbfs_xf_seen); the database checks every write whatever it says.
CREATE OR REPLACE FUNCTION pgnfs_xf_hint(p_type smallint, p_chain bigint)
RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN p_type = 1 AND coalesce(p_chain, 0) <> 0 THEN 1 ELSE 0 END $$;

-- Is file ino guarded?
CREATE OR REPLACE FUNCTION pgnfs_xf_guarded(ino bigint)
RETURNS boolean LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN coalesce((SELECT f.chain <> 0 FROM fileatt f WHERE f.inode = ino), false);
END
$$;

-- The plain length a stored guarded chunk holds (the header's field at
-- byte 16, little-endian; a base64 value is decoded as far as needed).
CREATE OR REPLACE FUNCTION pgnfs_xf_plain_len(x bytea, b64 boolean)
RETURNS bigint LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
    h bytea := CASE WHEN b64 THEN decode(convert_from(substring(x FROM 1 FOR 32), 'SQL_ASCII'),
                                         'base64')
                    ELSE x END;
BEGIN
    IF length(h) < 20 THEN
        RETURN NULL;
    END IF;
    RETURN get_byte(h, 16)::bigint + get_byte(h, 17)::bigint * 256
           + get_byte(h, 18)::bigint * 65536 + get_byte(h, 19)::bigint * 16777216;
END
$$;

-- Might stored chunk old of file ino hold more than keep plain bytes
-- although it stores no more than keep (a compressed guarded chunk)?
CREATE OR REPLACE FUNCTION pgnfs_xf_may_hold(ino bigint, old bytea, keep int, cs int)
RETURNS boolean LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN old IS NOT NULL AND keep < cs AND pgnfs_xf_guarded(ino);
END
$$;

-- May pgnfs_data_truncate cut stored chunk old of file ino to its first
-- keep bytes? Yes for an unguarded file. A guarded chunk is never cut in
-- SQL: no when it holds no more than keep plain bytes (nothing to cut),
-- else raise pgnfs_xf_eguarded() (the server cuts it first: dbfs_xf_cut).
CREATE OR REPLACE FUNCTION pgnfs_xf_may_cut(ino bigint, old bytea, keep int, b64 boolean)
RETURNS boolean LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    IF NOT pgnfs_xf_guarded(ino) THEN
        RETURN true;
    ELSIF pgnfs_xf_plain_len(pgnfs_xf_sql_fetch(ino, -1, old), b64) > keep THEN
        RAISE EXCEPTION 'truncate: guarded file % must be cut by the server', ino
              USING ERRCODE = pgnfs_errcode(pgnfs_xf_eguarded());
    END IF;
    RETURN false;
END
$$;

-- Record a chain's canonical text under its id (the server computed both;
-- the same id with another text is refused: PN022), with its in-database
-- stages (26_xform_sql.sql), which must be usable (else PN022 and why).
CREATE OR REPLACE FUNCTION pgnfs_xf_chain_put(p_id bigint, p_text text)
RETURNS void LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    t   text;
    s   record;
    why text;
BEGIN
    IF p_id = 0 THEN
        RETURN;
    END IF;
    SELECT * INTO s FROM pgnfs_xf_sql_parse(p_text);
    IF cardinality(s.fwd) > 0 AND NOT EXISTS (SELECT 1 FROM pgnfs_xform_chain c
                                                WHERE c.id = p_id) THEN
        why := pgnfs_xf_sql_problem(p_text);
        IF why IS NOT NULL THEN
            RAISE EXCEPTION 'chain "%": %', p_text, why
                  USING ERRCODE = pgnfs_errcode(pgnfs_einval());
        END IF;
    END IF;
    INSERT INTO pgnfs_xform_chain (id, text, sql_forward, sql_inverse)
    VALUES (p_id, p_text, nullif(s.fwd, '{}'), nullif(s.inv, '{}')) ON CONFLICT DO NOTHING;
    SELECT c.text INTO t FROM pgnfs_xform_chain c WHERE c.id = p_id;
    IF t IS DISTINCT FROM p_text THEN
        RAISE EXCEPTION 'chain id % is recorded for "%", not "%"', p_id, t, p_text
              USING ERRCODE = pgnfs_errcode(pgnfs_einval());
    END IF;
END
$$;

-- Trigger on naming: a file or directory made in this transaction (its
-- row never changed since: change = 1; no chain of its own yet) gets the
-- chain of the directory it is made in. An empty regular file linked
-- into a guarded directory may take its chain too, which is harmless: it
-- holds no data.
CREATE OR REPLACE FUNCTION pgnfs_xf_inherit()
RETURNS trigger LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    pc bigint;
    ps boolean;
BEGIN
    SELECT f.chain, f.chain_sql INTO pc, ps FROM fileatt f WHERE f.inode = NEW.parent;
    IF coalesce(pc, 0) <> 0 THEN
        UPDATE fileatt f SET chain = pc, chain_sql = ps,
               rdev_minor = CASE WHEN f.type = pgnfs_t_reg() THEN 1 ELSE 0 END
         WHERE f.inode = NEW.inode AND f.chain IS NULL AND f.change = 1 AND f.size = 0
           AND f.type IN (pgnfs_t_reg(), pgnfs_t_dir());
    END IF;
    RETURN NULL;
END
$$;

-- Make chains inherited from now on (the first time any chain is set: a
-- file system that never uses chains has no trigger and pays nothing).
CREATE OR REPLACE FUNCTION pgnfs_xf_enable()
RETURNS void LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger t
                    WHERE t.tgrelid = 'naming'::regclass AND t.tgname = 'pgnfs_xf_inherit') THEN
        CREATE TRIGGER pgnfs_xf_inherit AFTER INSERT ON naming
            FOR EACH ROW EXECUTE FUNCTION pgnfs_xf_inherit();
    END IF;
END
$$;

-- Set the chain of file or directory ino (admin: pgnfs xform set). A
-- regular file must hold no data (the server rewrites one that does, in
-- C, through pgnfs_xf_write). p_chain 0 clears it.
CREATE OR REPLACE FUNCTION pgnfs_xf_set(p_ino bigint, p_chain bigint, p_text text)
RETURNS void LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    f fileatt;
BEGIN
    SELECT * INTO f FROM fileatt WHERE inode = p_ino FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no inode %', p_ino USING ERRCODE = pgnfs_errcode(pgnfs_enoent());
    ELSIF f.type NOT IN (pgnfs_t_reg(), pgnfs_t_dir()) THEN
        RAISE EXCEPTION 'inode % is neither a file nor a directory', p_ino
              USING ERRCODE = pgnfs_errcode(pgnfs_einval());
    ELSIF f.rdev_major = pgnfs_xf_link_rdev() AND f.type = pgnfs_t_reg() THEN
        RAISE EXCEPTION 'inode % is a transformation link: it has no chain of its own', p_ino
              USING ERRCODE = pgnfs_errcode(pgnfs_einval());
    ELSIF f.type = pgnfs_t_reg() AND f.used <> 0 THEN
        RAISE EXCEPTION 'file % holds data', p_ino
              USING ERRCODE = pgnfs_errcode(pgnfs_enotempty());
    END IF;
    PERFORM pgnfs_xf_chain_put(p_chain, p_text);
    IF p_chain <> 0 THEN
        PERFORM pgnfs_xf_enable();
    END IF;
    UPDATE fileatt SET chain = p_chain, chain_sql = pgnfs_xf_chain_sql(p_chain),
                       rdev_minor = pgnfs_xf_hint(type, p_chain), change = change + 1
     WHERE inode = p_ino;
END
$$;

-- (The lock and checks of a guarded write are pgnfs_write_check's, 80_write.sql.)
DROP FUNCTION IF EXISTS pgnfs_xf_check(bigint, int, bigint, bigint, bigint[]);

-- The canonical text of chain p_id (NULL if unknown): what the read
-- statements return beside a chain the server may not hold yet
-- (dbfs_sql.c DBFS_SQL_XF_TEXT). PL/pgSQL so that it is never inlined: a
-- read that does not call it does not touch pgnfs_xform_chain.
CREATE OR REPLACE FUNCTION pgnfs_xf_chain_text(p_id bigint)
RETURNS text LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN (SELECT x.text FROM pgnfs_xform_chain x WHERE x.id = p_id);
END
$$;

-- Step 1: file (p_ino, p_gen)'s change counter, size and chain, with the
-- stored values of chunks p_want that exist (one row per chunk found; one
-- row with a NULL chunk when none is; no row when the file is gone).
CREATE OR REPLACE FUNCTION pgnfs_xf_old(p_ino bigint, p_gen int, p_want bigint[])
RETURNS TABLE (change bigint, size bigint, chain bigint, chunk bigint, data bytea)
LANGUAGE plpgsql VOLATILE
AS $$
#variable_conflict use_column
DECLARE
    f     fileatt;
    k     bigint;
    got   boolean := false;
    r     record;
BEGIN
    SELECT * INTO f FROM fileatt x WHERE x.inode = p_ino AND x.generation = p_gen;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    change := f.change;
    size := f.size;
    chain := coalesce(f.chain, 0);
    FOREACH k IN ARRAY coalesce(p_want, '{}') LOOP
        IF k * (SELECT fs.chunk_size FROM pgnfs_fs fs) < f.size THEN
            FOR r IN SELECT * FROM pgnfs_data_read(p_ino, k, k) LOOP
                chunk := r.chunk;
                data := CASE WHEN f.chain_sql
                             THEN pgnfs_xf_sql_apply(f.chain, false, p_ino, r.chunk, r.data)
                             ELSE r.data END;
                got := true;
                RETURN NEXT;
            END LOOP;
        END IF;
    END LOOP;
    IF NOT got THEN
        chunk := NULL;
        data := NULL;
        RETURN NEXT;
    END IF;
END
$$;

-- Insert chunks p_chunks with values p_vals of file p_ino (into its own
-- table when tab, else allfiles); returns the bytes stored. One row at a
-- time: INSERT ... SELECT FROM unnest(...) materializes the whole array
-- first, on disk past work_mem (a write-back flush is megabytes).
CREATE OR REPLACE FUNCTION pgnfs_xf_put(p_ino bigint, tab boolean, p_chunks bigint[],
                                        p_vals bytea[])
RETURNS bigint LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    n   text := pgnfs_inv_name(p_ino);
    sum bigint := 0;
BEGIN
    FOR i IN 1 .. coalesce(cardinality(p_chunks), 0) LOOP
        IF tab THEN
            EXECUTE format('INSERT INTO %I (chunk, data) VALUES ($1, $2)', n)
                USING p_chunks[i], p_vals[i];
        ELSE
            INSERT INTO allfiles (inode, chunk, data) VALUES (p_ino, p_chunks[i], p_vals[i]);
        END IF;
        sum := sum + length(p_vals[i]);
    END LOOP;
    RETURN sum;
END
$$;

-- Step 3: replace chunks p_chunks of guarded file (p_ino, p_gen) with the
-- values p_vals (whole stored values), make the size at least p_size, and
-- move times, change, used as a write does (setuid/setgid cleared when
-- p_kill). Placement as pgnfs_write (p_threshold). Refuses with
-- pgnfs_xf_echanged() when the file's change counter is not p_change
-- (NULL: not compared; the server overwrote whole chunks) or its chain
-- not p_chain. No chunk and no growth: only checks. Returns
-- rows: role pre the attributes before, role post after.
CREATE OR REPLACE FUNCTION pgnfs_xf_write(
    p_ino bigint, p_gen int, c_uid bigint, c_gid bigint, c_groups bigint[],
    p_change bigint, p_chain bigint, p_chunks bigint[], p_vals bytea[], p_size bigint,
    p_now bigint, p_kill boolean, p_threshold bigint)
RETURNS SETOF pgnfs_result LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    f      fileatt;
    nf     fileatt;
    tab    boolean;
    n      text := pgnfs_inv_name(p_ino);
    oldsum bigint;
    newsum bigint;
BEGIN
    f := pgnfs_write_check(p_ino, p_gen, c_uid, c_gid, c_groups, true);
    IF f.change <> p_change OR coalesce(f.chain, 0) <> p_chain THEN
        -- (p_change NULL: the server needs no old bytes and checks only the chain)
        RAISE EXCEPTION 'write: file % changed while its chunks were transformed', p_ino
              USING ERRCODE = pgnfs_errcode(pgnfs_xf_echanged());
    END IF;
    IF cardinality(p_chunks) = 0 AND p_size <= f.size THEN
        RETURN NEXT pgnfs_res(0, pgnfs_role_pre(), f);
        RETURN NEXT pgnfs_res(0, pgnfs_role_post(), f);
        RETURN;
    END IF;
    IF f.chain_sql THEN
        p_vals := pgnfs_xf_sql_store(p_chain, p_ino, p_chunks, p_vals);
    END IF;
    tab := pgnfs_data_tab(p_ino);
    IF NOT tab AND p_threshold IS NOT NULL AND greatest(f.size, p_size) > p_threshold THEN
        PERFORM pgnfs_data_totable(p_ino);
        tab := true;
    END IF;
    IF NOT tab THEN
        WITH gone AS (DELETE FROM allfiles a WHERE a.inode = p_ino AND a.chunk = ANY (p_chunks)
                      RETURNING length(a.data) AS len)
        SELECT coalesce(sum(len), 0) INTO oldsum FROM gone;
    ELSE
        EXECUTE format('WITH gone AS (DELETE FROM %I t WHERE t.chunk = ANY ($1)'
                       ' RETURNING length(t.data) AS len) SELECT coalesce(sum(len), 0) FROM gone',
                       n) INTO oldsum USING p_chunks;
    END IF;
    newsum := pgnfs_xf_put(p_ino, tab, p_chunks, p_vals);
    UPDATE fileatt
       SET size = greatest(size, p_size), mtime = p_now,
           ctime = pgnfs_next_ctime(ctime, p_now), change = change + 1,
           used = used - oldsum + newsum,
           mode = CASE WHEN p_kill THEN pgnfs_kill_priv(mode) ELSE mode END
     WHERE inode = p_ino
    RETURNING * INTO nf;
    RETURN NEXT pgnfs_res(0, pgnfs_role_pre(), f);
    RETURN NEXT pgnfs_res(0, pgnfs_role_post(), nf);
END
$$;

-- The single layout's guarded write is a pipeline of plain statements
-- instead (dbfs_xf_write.c), as its plain write is (pgnfs_write_begin,
-- 80_write.sql): this function checks and locks as pgnfs_xf_write does
-- (refusing with pgnfs_xf_echanged() when the change counter is not
-- p_change, NULL: not compared, or the chain not p_chain), and takes the
-- bytes chunks p_first .. p_last hold now out of fileatt.used; one upsert
-- per chunk stores its whole value, and pgnfs_write_end sets size, times
-- and used. Only for chains without in-database stages (the server stores
-- exactly what it encoded). Returns role pre: the attributes before.
CREATE OR REPLACE FUNCTION pgnfs_xf_write_begin(
    p_ino bigint, p_gen int, c_uid bigint, c_gid bigint, c_groups bigint[],
    p_change bigint, p_chain bigint, p_first bigint, p_last bigint)
RETURNS SETOF pgnfs_result LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    f fileatt;
    s bigint;
BEGIN
    f := pgnfs_write_check(p_ino, p_gen, c_uid, c_gid, c_groups, true);
    IF f.change <> p_change OR coalesce(f.chain, 0) <> p_chain OR f.chain_sql THEN
        RAISE EXCEPTION 'write: file % changed while its chunks were transformed', p_ino
              USING ERRCODE = pgnfs_errcode(pgnfs_xf_echanged());
    END IF;
    -- An append (nothing stored from p_first on) changes nothing here.
    IF p_first * (SELECT chunk_size FROM pgnfs_fs) < f.size THEN
        s := pgnfs_data_stored_all(p_ino, p_first, p_last);
        IF s <> 0 THEN
            UPDATE fileatt SET used = used - s WHERE inode = p_ino;
        END IF;
    END IF;
    RETURN NEXT pgnfs_res(0, pgnfs_role_pre(), f);
END
$$;

-- pgnfs xform set on a file that holds data: replace every chunk of file
-- p_ino with p_vals (the same plain bytes under chain p_new, which the
-- admin tool encoded) and set its chain, in the transaction that locked
-- the file (pgnfs_xf_lock) and read the old chunks: after a crash the file
-- is wholly in its old chain or wholly in its new one. used follows; the
-- size and times do not change (the bytes do not), change does.
CREATE OR REPLACE FUNCTION pgnfs_xf_rechain(p_ino bigint, p_new bigint, p_text text,
                                            p_chunks bigint[], p_vals bytea[])
RETURNS void LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    n      text := pgnfs_inv_name(p_ino);
    newsum bigint;
BEGIN
    PERFORM pgnfs_xf_chain_put(p_new, p_text);
    IF p_new <> 0 THEN
        PERFORM pgnfs_xf_enable();
    END IF;
    IF pgnfs_xf_chain_sql(p_new) THEN
        p_vals := pgnfs_xf_sql_store(p_new, p_ino, p_chunks, p_vals);
    END IF;
    IF pgnfs_data_tab(p_ino) THEN
        EXECUTE format('DELETE FROM %I', n);
        newsum := pgnfs_xf_put(p_ino, true, p_chunks, p_vals);
    ELSE
        DELETE FROM allfiles a WHERE a.inode = p_ino;
        newsum := pgnfs_xf_put(p_ino, false, p_chunks, p_vals);
    END IF;
    UPDATE fileatt SET chain = p_new, chain_sql = pgnfs_xf_chain_sql(p_new), used = newsum,
                       rdev_minor = pgnfs_xf_hint(type, p_new), change = change + 1
     WHERE inode = p_ino;
END
$$;
