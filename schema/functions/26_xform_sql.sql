-- 26_xform_sql.sql -- in-database transformation stages (xf.h, 009_xform_links.sql).
--
-- A chain names one as "sql:forward=F:inverse=G": F and G are functions
-- NAME(bytea) RETURNS bytea (plain or schema.name, lower case, resolved
-- through the search_path of the session that applies them), G undoing
-- F exactly. In-database stages come after every in-server stage:
--
--   write  plain -> in-server stages (xf_encode) -> F_1 -> ... -> F_k -> stored
--   read   stored -> G_k -> ... -> G_1 -> in-server stages (xf_decode) -> plain
--
-- The functions see binary bytes on every file system (a base64 file
-- system's values are decoded for them and encoded again), and one chunk
-- at a time, so reads and writes stay chunk-granular; they run inside the
-- statement that reads or stores the chunk, so a store is still one
-- transaction. Nothing a stage does can corrupt stored data:
--   - a chain is recorded (pgnfs xform set, [xform] root_chain) only when
--     each F and G exists with that signature and G(F(x)) = x on probe
--     bytes (pgnfs_xf_sql_problem says why not);
--   - every value stored is first checked to come back through G_k..G_1
--     exactly (pgnfs_xf_sql_store), else nothing is stored;
--   - a function that is missing, fails or returns NULL fails the read or
--     the store with PN005 (EIO) and a message naming the file, the chunk,
--     the chain and the function (logged by the server), and a wrong
--     inverse gives bytes the in-server header check refuses.

CREATE OR REPLACE FUNCTION pgnfs_xf_eio() RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 5 $$;

-- The in-database stages of a chain's canonical text, in chain order.
CREATE OR REPLACE FUNCTION pgnfs_xf_sql_parse(p_text text, OUT fwd text[], OUT inv text[])
LANGUAGE plpgsql IMMUTABLE STRICT
AS $$
DECLARE
    m text[];
BEGIN
    fwd := '{}';
    inv := '{}';
    FOR m IN SELECT regexp_matches(p_text,
                                   '(?:^|,)sql:forward=([a-z0-9_.]+):inverse=([a-z0-9_.]+)', 'g')
    LOOP
        fwd := fwd || m[1];
        inv := inv || m[2];
    END LOOP;
END
$$;

-- The function p_name(bytea) RETURNS bytea as a qualified name to call
-- ("schema"."name"), or NULL when there is none.
CREATE OR REPLACE FUNCTION pgnfs_xf_sql_fn(p_name text)
RETURNS text LANGUAGE plpgsql STABLE
AS $$
DECLARE
    p regprocedure;
    q text;
BEGIN
    IF p_name !~ '^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$' THEN
        RETURN NULL;
    END IF;
    p := to_regprocedure(p_name || '(bytea)');
    IF p IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT format('%I.%I', n.nspname, pr.proname) INTO q
      FROM pg_proc pr JOIN pg_namespace n ON n.oid = pr.pronamespace
     WHERE pr.oid = p AND pr.prorettype = 'bytea'::regtype AND NOT pr.proretset
       AND pr.prokind = 'f';
    RETURN q;
END
$$;

-- v through function p_name; fails with PN005 and a message that names
-- what (the file, chunk and chain) when the function is missing, fails
-- or returns NULL.
CREATE OR REPLACE FUNCTION pgnfs_xf_sql_call(p_name text, v bytea, what text)
RETURNS bytea LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    q text := pgnfs_xf_sql_fn(p_name);
    r bytea;
BEGIN
    IF q IS NULL THEN
        RAISE EXCEPTION '%: in-database stage function %(bytea) RETURNS bytea does not exist',
              what, p_name USING ERRCODE = pgnfs_errcode(pgnfs_xf_eio());
    END IF;
    BEGIN
        EXECUTE format('SELECT %s($1)', q) INTO r USING v;
    EXCEPTION WHEN OTHERS THEN
        RAISE EXCEPTION '%: in-database stage function %(bytea) failed: % (SQLSTATE %)',
              what, p_name, SQLERRM, SQLSTATE USING ERRCODE = pgnfs_errcode(pgnfs_xf_eio());
    END;
    IF r IS NULL THEN
        RAISE EXCEPTION '%: in-database stage function %(bytea) returned NULL', what, p_name
              USING ERRCODE = pgnfs_errcode(pgnfs_xf_eio());
    END IF;
    RETURN r;
END
$$;

-- Stored value v of chunk p_chunk of file p_ino through chain p_chain's
-- in-database stages: forward (F_1 first) or inverse (G_k first). A
-- chain without such stages gives v back. NULL stays NULL.
CREATE OR REPLACE FUNCTION pgnfs_xf_sql_apply(p_chain bigint, p_forward boolean, p_ino bigint,
                                              p_chunk bigint, v bytea)
RETURNS bytea LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    c    pgnfs_xform_chain;
    b64  boolean;
    n    int;
    what text;
BEGIN
    IF v IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT * INTO c FROM pgnfs_xform_chain x WHERE x.id = p_chain;
    n := coalesce(cardinality(c.sql_forward), 0);
    IF n = 0 THEN
        RETURN v;
    END IF;
    b64 := (SELECT fs.encoding = 'base64' FROM pgnfs_fs fs);
    IF b64 THEN
        v := pgnfs_b64_dec(v);
    END IF;
    what := format('file %s chunk %s, chain "%s"', p_ino, p_chunk, c.text);
    IF p_forward THEN
        FOR i IN 1 .. n LOOP
            v := pgnfs_xf_sql_call(c.sql_forward[i], v, what);
        END LOOP;
    ELSE
        FOR i IN REVERSE n .. 1 LOOP
            v := pgnfs_xf_sql_call(c.sql_inverse[i], v, what);
        END LOOP;
    END IF;
    IF b64 THEN
        v := pgnfs_b64_enc(v);
    END IF;
    RETURN v;
END
$$;

-- The values p_vals of chunks p_chunks of file p_ino (as the server encoded
-- them) through chain p_chain's forward stages, each checked to come back
-- whole through the inverse ones: what pgnfs_xf_write and
-- pgnfs_xf_rechain store. Raises PN005 (nothing is stored) when a value
-- does not come back.
CREATE OR REPLACE FUNCTION pgnfs_xf_sql_store(p_chain bigint, p_ino bigint, p_chunks bigint[],
                                              p_vals bytea[])
RETURNS bytea[] LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    out bytea[] := '{}';
    s   bytea;
BEGIN
    FOR i IN 1 .. coalesce(cardinality(p_vals), 0) LOOP
        s := pgnfs_xf_sql_apply(p_chain, true, p_ino, p_chunks[i], p_vals[i]);
        IF pgnfs_xf_sql_apply(p_chain, false, p_ino, p_chunks[i], s) IS DISTINCT FROM p_vals[i] THEN
            RAISE EXCEPTION 'file % chunk %, chain "%": the in-database stages do not give back '
                            'what they would store (an inverse that does not undo its forward);'
                            ' nothing stored', p_ino, p_chunks[i],
                  (SELECT x.text FROM pgnfs_xform_chain x WHERE x.id = p_chain)
                  USING ERRCODE = pgnfs_errcode(pgnfs_xf_eio());
        END IF;
        out := out || s;
    END LOOP;
    RETURN out;
END
$$;

-- The stored value v of chunk p_chunk of file p_ino as the server reads it
-- (its chain's inverses applied when it has in-database stages).
CREATE OR REPLACE FUNCTION pgnfs_xf_sql_fetch(p_ino bigint, p_chunk bigint, v bytea)
RETURNS bytea LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    f fileatt;
BEGIN
    SELECT * INTO f FROM fileatt x WHERE x.inode = p_ino;
    IF v IS NULL OR NOT coalesce(f.chain_sql, false) THEN
        RETURN v;
    END IF;
    RETURN pgnfs_xf_sql_apply(f.chain, false, p_ino, p_chunk, v);
END
$$;

-- Why chain text p_text's in-database stages cannot be used, or NULL when
-- they can (or it has none): each function must exist as NAME(bytea)
-- RETURNS bytea and each inverse give back exactly what its forward made
-- of probe bytes (every byte value, and text).
CREATE OR REPLACE FUNCTION pgnfs_xf_sql_problem(p_text text)
RETURNS text LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    s     record;
    probe bytea := convert_to('pgnfs probe: the quick brown fox', 'UTF8');
    x     bytea;
BEGIN
    FOR i IN 0 .. 255 LOOP
        probe := probe || set_byte('\x00'::bytea, 0, i);
    END LOOP;
    SELECT * INTO s FROM pgnfs_xf_sql_parse(p_text);
    FOR i IN 1 .. coalesce(cardinality(s.fwd), 0) LOOP
        IF pgnfs_xf_sql_fn(s.fwd[i]) IS NULL THEN
            RETURN format('in-database stage %s: no function %s(bytea) RETURNS bytea', i, s.fwd[i]);
        ELSIF pgnfs_xf_sql_fn(s.inv[i]) IS NULL THEN
            RETURN format('in-database stage %s: no function %s(bytea) RETURNS bytea', i, s.inv[i]);
        END IF;
        BEGIN
            x := pgnfs_xf_sql_call(s.inv[i],
                                   pgnfs_xf_sql_call(s.fwd[i], probe, 'probe'), 'probe');
        EXCEPTION WHEN OTHERS THEN
            RETURN format('in-database stage %s: %s', i, SQLERRM);
        END;
        IF x IS DISTINCT FROM probe THEN
            RETURN format('in-database stage %s: %s(%s(x)) is not x', i, s.inv[i], s.fwd[i]);
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

-- Does the recorded chain p_chain have in-database stages? (NULL for none,
-- as fileatt.chain_sql stores it.)
CREATE OR REPLACE FUNCTION pgnfs_xf_chain_sql(p_chain bigint)
RETURNS boolean LANGUAGE plpgsql STABLE
AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM pgnfs_xform_chain x
                WHERE x.id = p_chain AND cardinality(x.sql_forward) > 0) THEN
        RETURN true;
    END IF;
    RETURN NULL;
END
$$;
