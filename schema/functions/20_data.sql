-- 20_data.sql -- file data in every storage layout and encoding: placing,
-- storing, reading, truncating and dropping the chunks of a file.
--
-- Chunk n of a file holds bytes [n * chunk_size, (n + 1) * chunk_size).
-- Where the chunks live (see 002_storage.sql): in allfiles (inode, chunk,
-- data), or, for a file listed in pgnfs_filetab, in its own table
-- inv<inode> (chunk, data). Only the layouts "inversion" and "hybrid" list
-- files there; "single" never does, so every function below serves every
-- layout by looking at pgnfs_filetab.
--
-- Encodings: a stored value is the chunk's bytes (binary) or the ASCII text
-- of its base64 encoding without line breaks (base64); pgnfs_fs.encoding
-- says which, and callers that know it pass it as b64. Partial updates of a
-- base64 chunk decode, merge and encode inside the statement, so a write is
-- still one statement.
--
-- Invariants every function keeps:
--   1. No stored byte lies at or beyond the file's size; a missing chunk, or
--      the part of a chunk past its stored end, reads as zeros.
--   2. fileatt.used = the sum of length(data) over the file's stored
--      chunks (what the database stores, encoded).
--   3. A file's chunks are all in one place: allfiles, or inv<inode> when
--      pgnfs_filetab lists it (and then that table exists).
-- Every writer of a file's chunks holds the file's fileatt row lock, so
-- writers of one file never race each other.
--
-- Per-file table names are built from the numeric inode only
-- (pgnfs_inv_name) and quoted with format('%I'); no other value is ever
-- written into SQL text.

-- n zero bytes (to pad a chunk written past its stored end).
CREATE OR REPLACE FUNCTION pgnfs_zeros(n int)
RETURNS bytea LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT decode(repeat('00', greatest(n, 0)), 'hex') $$;

-- The bytes of a stored base64 value, and the stored value of some bytes.
CREATE OR REPLACE FUNCTION pgnfs_b64_dec(x bytea)
RETURNS bytea LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT decode(convert_from(x, 'SQL_ASCII'), 'base64') $$;

CREATE OR REPLACE FUNCTION pgnfs_b64_enc(x bytea)
RETURNS bytea LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT convert_to(translate(encode(x, 'base64'), E'\n', ''), 'SQL_ASCII') $$;

-- The number of file bytes a stored value holds (reads only the last two
-- bytes of a base64 value, which TOAST fetches without the rest).
CREATE OR REPLACE FUNCTION pgnfs_chunk_len(x bytea, b64 boolean)
RETURNS int LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
SELECT CASE WHEN NOT b64 THEN length(x)
            WHEN length(x) = 0 THEN 0
            ELSE length(x) / 4 * 3
                 - (CASE WHEN substring(x FROM length(x) - 1) = '\x3d3d'::bytea THEN 2
                         WHEN substring(x FROM length(x)) = '\x3d'::bytea THEN 1
                         ELSE 0 END)
       END
$$;

-- Stored chunk old with piece written at byte at (old may be shorter than
-- at: zeros fill the gap). whole: the piece is the entire chunk.
CREATE OR REPLACE FUNCTION pgnfs_chunk_merge(old bytea, at int, piece bytea, b64 boolean,
                                             whole boolean)
RETURNS bytea LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
    o bytea;
    p bytea;
BEGIN
    IF whole OR old IS NULL THEN
        IF whole OR at = 0 THEN
            RETURN piece;
        ELSIF b64 THEN
            RETURN pgnfs_b64_enc(pgnfs_zeros(at) || pgnfs_b64_dec(piece));
        END IF;
        RETURN pgnfs_zeros(at) || piece;
    END IF;
    o := CASE WHEN b64 THEN pgnfs_b64_dec(old) ELSE old END;
    p := CASE WHEN b64 THEN pgnfs_b64_dec(piece) ELSE piece END;
    IF length(o) >= at THEN
        o := overlay(o PLACING p FROM at + 1);
    ELSE
        o := o || pgnfs_zeros(at - length(o)) || p;
    END IF;
    RETURN CASE WHEN b64 THEN pgnfs_b64_enc(o) ELSE o END;
END
$$;

-- Stored chunk old cut to its first keep file bytes (old when it holds no
-- more than that; NULL stays NULL).
CREATE OR REPLACE FUNCTION pgnfs_chunk_cut(old bytea, keep int, b64 boolean)
RETURNS bytea LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT CASE WHEN old IS NULL OR pgnfs_chunk_len(old, b64) <= keep THEN old
            WHEN b64 THEN pgnfs_b64_enc(substring(pgnfs_b64_dec(old) FROM 1 FOR keep))
            ELSE substring(old FROM 1 FOR keep) END
$$;

-- The name of file ino's own table.
CREATE OR REPLACE FUNCTION pgnfs_inv_name(ino bigint)
RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT 'inv' || ino::text $$;

-- Is file ino's data in its own table?
--
-- Helpers that read tables are PL/pgSQL, not SQL: an SQL function that
-- cannot be inlined (one with a FROM clause, a subquery or an UPDATE) is
-- parsed and planned again in every transaction that calls it, while
-- PL/pgSQL keeps its plans for the session; every NFS operation is a
-- transaction of its own, so that parse was paid on every one.
CREATE OR REPLACE FUNCTION pgnfs_data_tab(ino bigint)
RETURNS boolean LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM pgnfs_filetab t WHERE t.inode = ino);
END
$$;

-- Give file ino its own table and move its chunks there from allfiles
-- (fileatt.used does not change: the same values move). The caller holds
-- the file's row lock and has checked that pgnfs_data_tab(ino) is false.
CREATE OR REPLACE FUNCTION pgnfs_data_totable(ino bigint)
RETURNS void LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    n text := pgnfs_inv_name(ino);
BEGIN
    -- born and the trigger: snapshots (21_snap.sql).
    EXECUTE format('CREATE TABLE %I (chunk bigint PRIMARY KEY CHECK (chunk >= 0),'
                   ' data bytea NOT NULL, born bigint)', n);
    EXECUTE format('ALTER TABLE %I ALTER COLUMN data SET STORAGE EXTERNAL', n);
    EXECUTE format('CREATE TRIGGER pgnfs_snap_keep BEFORE INSERT OR UPDATE OR DELETE ON %I'
                   ' FOR EACH ROW EXECUTE FUNCTION pgnfs_snap_keep_inv(%L)', n, ino::text);
    EXECUTE format('INSERT INTO %I (chunk, data) SELECT a.chunk, a.data FROM allfiles a'
                   ' WHERE a.inode = $1', n) USING ino;
    DELETE FROM allfiles a WHERE a.inode = ino;
    INSERT INTO pgnfs_filetab (inode, tab, made) VALUES (ino, n::regclass::oid, pgnfs_snap_epoch());
END
$$;

-- Move file ino's chunks back from its own table into allfiles and drop
-- the table (a hybrid file truncated to at most the threshold), or keep it
-- for the snapshots that see its rows (pgnfs_snap_retire).
CREATE OR REPLACE FUNCTION pgnfs_data_fromtable(ino bigint)
RETURNS void LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    n text := pgnfs_inv_name(ino);
BEGIN
    EXECUTE format('INSERT INTO allfiles (inode, chunk, data) SELECT $1, t.chunk, t.data'
                   ' FROM %I t', n) USING ino;
    IF NOT pgnfs_snap_retire(ino) THEN
        EXECUTE format('DROP TABLE %I', n);
        DELETE FROM pgnfs_filetab t WHERE t.inode = ino;
    END IF;
END
$$;

-- Store the pieces of a write of p_len (> 0) bytes at p_off into file
-- ino's chunks (in its own table when tab). p_data holds the pieces of
-- the chunks touched one after the other, each encoded on its own when
-- p_b64 (a piece of n bytes takes 4 * ceil(n / 3) then). p_size is the
-- file's size before the write: no chunk at or past it is stored
-- (invariant 1), so an append needs to read nothing. Returns the change of
-- the stored bytes (for fileatt.used). The caller holds the file's row
-- lock, so no other writer touches these chunks.
--
-- At most three statements whatever the number of chunks, so a table of
-- its own costs at most three EXECUTEs (each parsed and planned) per
-- write, and an append one: a SELECT of the stored lengths of the chunks
-- that may exist and of the (at most two) partially written ones, which
-- are merged here; an UPDATE of the existing chunks and an INSERT of the
-- new ones, each from arrays. (INSERT ... ON CONFLICT costs far more to
-- plan; see bench/results/paper-tabcost.md.)
CREATE OR REPLACE FUNCTION pgnfs_data_put(ino bigint, tab boolean, p_off bigint, p_len bigint,
                                          p_data bytea, p_cs int, p_b64 boolean, p_size bigint)
RETURNS bigint LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    first  bigint := p_off / p_cs;
    last   bigint := (p_off + p_len - 1) / p_cs;
    stored bigint := least(last, (p_size - 1) / p_cs - (p_size = 0)::int); -- last that may exist
    at0    int := (p_off % p_cs)::int;
    n0     bigint := least(p_cs - at0, p_len);
    e0     int := (CASE WHEN p_b64 THEN 4 * ((n0 + 2) / 3) ELSE n0 END)::int;
    ec     int := CASE WHEN p_b64 THEN 4 * ((p_cs + 2) / 3) ELSE p_cs END;
    nl     bigint := p_len - n0 - (last - first - 1) * p_cs; -- the last piece, if not first
    n      text := pgnfs_inv_name(ino);
    oldsum bigint := 0;
    newsum bigint := 0;
    oldf   bytea;
    oldl   bytea;
    have   bigint[] := '{}';
    uc     bigint[] := '{}';
    uv     bytea[] := '{}';
    ic     bigint[] := '{}';
    iv     bytea[] := '{}';
    v      bytea;
    r      record;
    cur    refcursor;
BEGIN
    -- What is stored now: lengths, and the values partial pieces merge with.
    IF first <= stored THEN
        IF NOT tab THEN
            OPEN cur FOR SELECT a.chunk, length(a.data) AS len,
                                CASE WHEN a.chunk IN (first, last) THEN a.data END AS data
                           FROM allfiles a
                          WHERE a.inode = ino AND a.chunk BETWEEN first AND stored;
        ELSE
            OPEN cur FOR EXECUTE format('SELECT t.chunk, length(t.data) AS len,'
                                        ' CASE WHEN t.chunk IN ($1, $2) THEN t.data END AS data'
                                        ' FROM %I t WHERE t.chunk BETWEEN $1 AND $3', n)
                USING first, last, stored;
        END IF;
        LOOP
            FETCH cur INTO r;
            EXIT WHEN NOT FOUND;
            oldsum := oldsum + r.len;
            have := have || r.chunk;
            IF r.chunk = first THEN
                oldf := r.data;
            END IF;
            IF r.chunk = last THEN
                oldl := r.data;
            END IF;
        END LOOP;
        CLOSE cur;
    END IF;
    -- The new values, for the chunks there (update) and not (insert).
    FOR i IN 1 .. last - first + 1 LOOP
        IF i = 1 THEN
            v := pgnfs_chunk_merge(oldf, at0, substring(p_data FROM 1 FOR e0), p_b64,
                                   at0 = 0 AND n0 = p_cs);
        ELSE
            v := substring(p_data FROM e0 + (i - 2) * ec + 1 FOR ec);
            IF i = last - first + 1 AND nl < p_cs THEN
                v := pgnfs_chunk_merge(oldl, 0, v, p_b64, false);
            END IF;
        END IF;
        newsum := newsum + length(v);
        IF first + i - 1 = ANY (have) THEN
            uc := uc || (first + i - 1);
            uv := uv || v;
        ELSE
            ic := ic || (first + i - 1);
            iv := iv || v;
        END IF;
    END LOOP;
    IF NOT tab THEN
        IF cardinality(uc) > 0 THEN
            UPDATE allfiles a SET data = u.v FROM unnest(uc, uv) AS u(c, v)
             WHERE a.inode = ino AND a.chunk = u.c;
        END IF;
        IF cardinality(ic) > 0 THEN
            INSERT INTO allfiles (inode, chunk, data)
            SELECT ino, u.c, u.v FROM unnest(ic, iv) AS u(c, v);
        END IF;
    ELSE
        IF cardinality(uc) > 0 THEN
            EXECUTE format('UPDATE %I t SET data = u.v'
                           ' FROM unnest($1::bigint[], $2::bytea[]) AS u(c, v)'
                           ' WHERE t.chunk = u.c', n) USING uc, uv;
        END IF;
        IF cardinality(ic) > 0 THEN
            EXECUTE format('INSERT INTO %I (chunk, data)'
                           ' SELECT u.c, u.v FROM unnest($1::bigint[], $2::bytea[]) AS u(c, v)', n)
                USING ic, iv;
        END IF;
    END IF;
    RETURN newsum - oldsum;
END
$$;

-- Chunks first .. last of file ino, in chunk order, wherever they live.
-- STABLE: runs in the snapshot of the statement that calls it, so the
-- attributes and the chunks a read returns belong together. A table is not
-- MVCC: if the file's table was dropped after the statement's snapshot was
-- taken (the file was removed, or a hybrid file moved back to allfiles),
-- or dropped and made again under the same name (moved back and out
-- again: its rows are all newer than the snapshot), the snapshot cannot be
-- served, and the function raises a serialization failure (40001), which
-- dbfs answers by running the read again in a new snapshot. The table read
-- is checked after the read, when the read's lock keeps it from going.
CREATE OR REPLACE FUNCTION pgnfs_data_read(ino bigint, first bigint, last bigint)
RETURNS TABLE (chunk bigint, data bytea) LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
    want oid;
    n    text := pgnfs_inv_name(ino);
BEGIN
    IF first > last THEN
        RETURN;
    END IF;
    SELECT t.tab INTO want FROM pgnfs_filetab t WHERE t.inode = ino;
    IF NOT FOUND THEN
        RETURN QUERY SELECT a.chunk, a.data FROM allfiles a
                      WHERE a.inode = ino AND a.chunk BETWEEN first AND last
                      ORDER BY a.chunk;
        RETURN;
    END IF;
    BEGIN
        RETURN QUERY EXECUTE format('SELECT t.chunk, t.data FROM %I t'
                                    ' WHERE t.chunk BETWEEN $1 AND $2 ORDER BY t.chunk', n)
                     USING first, last;
    EXCEPTION WHEN undefined_table THEN
        RAISE EXCEPTION 'read: the table of file % went away; read again', ino
              USING ERRCODE = 'serialization_failure';
    END;
    IF to_regclass(n) IS DISTINCT FROM want::regclass THEN
        RAISE EXCEPTION 'read: the table of file % was made again; read again', ino
              USING ERRCODE = 'serialization_failure';
    END IF;
END
$$;

-- Stored bytes of chunks first .. last of file ino, wherever they live.
CREATE OR REPLACE FUNCTION pgnfs_data_stored(ino bigint, first bigint, last bigint)
RETURNS bigint LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN (SELECT coalesce(sum(length(d.data)), 0)::bigint
              FROM pgnfs_data_read(ino, first, last) d);
END
$$;

-- The same for a file whose chunks are in allfiles (every file of the
-- single layout): what the single layout's pipelined write uses.
CREATE OR REPLACE FUNCTION pgnfs_data_stored_all(ino bigint, first bigint, last bigint)
RETURNS bigint LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN (SELECT coalesce(sum(length(a.data)), 0)::bigint FROM allfiles a
             WHERE a.inode = ino AND a.chunk BETWEEN first AND last);
END
$$;

-- Cut the data of file ino to new_size bytes: chunks past the end go, the
-- last one is trimmed (a guarded file's by the server: pgnfs_xf_may_cut;
-- a base64 chunk cut inside its last group keeps its length, so "trimmed"
-- is any change, not a shorter value); a hybrid file cut to at most the threshold moves
-- back to allfiles. Returns the number of stored bytes removed (for
-- fileatt.used). Called with the file's row locked (setattr, create over).
CREATE OR REPLACE FUNCTION pgnfs_data_truncate(ino bigint, new_size bigint)
RETURNS bigint LANGUAGE plpgsql VOLATILE
AS $$
#variable_conflict use_column
DECLARE
    fs      pgnfs_fs;
    b64     boolean;
    last    bigint;
    keep    int;
    removed bigint;
    old     bytea;
    cut     bytea;
    n       text;
BEGIN
    SELECT * INTO fs FROM pgnfs_fs;
    b64 := fs.encoding = 'base64';
    last := CASE WHEN new_size = 0 THEN -1 ELSE (new_size - 1) / fs.chunk_size END;
    keep := CASE WHEN last < 0 THEN 0 ELSE (new_size - last * fs.chunk_size)::int END;
    IF NOT pgnfs_data_tab(ino) THEN
        WITH gone AS (DELETE FROM allfiles a WHERE a.inode = ino AND a.chunk > last
                      RETURNING length(a.data) AS len)
        SELECT coalesce(sum(len), 0) INTO removed FROM gone;
        IF last >= 0 THEN
            SELECT a.data INTO old FROM allfiles a WHERE a.inode = ino AND a.chunk = last;
            cut := pgnfs_chunk_cut(old, keep, b64);
            IF (cut IS DISTINCT FROM old OR pgnfs_xf_may_hold(ino, old, keep, fs.chunk_size))
               AND pgnfs_xf_may_cut(ino, old, keep, b64) THEN
                UPDATE allfiles a SET data = cut WHERE a.inode = ino AND a.chunk = last;
                removed := removed + length(old) - length(cut);
            END IF;
        END IF;
        RETURN removed;
    END IF;
    n := pgnfs_inv_name(ino);
    EXECUTE format('WITH gone AS (DELETE FROM %I t WHERE t.chunk > $1'
                   ' RETURNING length(t.data) AS len) SELECT coalesce(sum(len), 0) FROM gone', n)
        INTO removed USING last;
    IF last >= 0 THEN
        EXECUTE format('SELECT t.data FROM %I t WHERE t.chunk = $1', n) INTO old USING last;
        cut := pgnfs_chunk_cut(old, keep, b64);
        IF (cut IS DISTINCT FROM old OR pgnfs_xf_may_hold(ino, old, keep, fs.chunk_size))
           AND pgnfs_xf_may_cut(ino, old, keep, b64) THEN
            EXECUTE format('UPDATE %I t SET data = $2 WHERE t.chunk = $1', n) USING last, cut;
            removed := removed + length(old) - length(cut);
        END IF;
    END IF;
    IF fs.storage = 'hybrid' AND new_size <= fs.hybrid_threshold THEN
        PERFORM pgnfs_data_fromtable(ino);
    END IF;
    RETURN removed;
END
$$;

-- Drop all data of file ino (its last link went): its own table (kept
-- instead while a snapshot sees its rows: pgnfs_snap_retire), or its rows
-- in allfiles.
CREATE OR REPLACE FUNCTION pgnfs_data_drop(ino bigint)
RETURNS void LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    IF pgnfs_data_tab(ino) THEN
        IF NOT pgnfs_snap_retire(ino) THEN
            EXECUTE format('DROP TABLE IF EXISTS %I', pgnfs_inv_name(ino));
            DELETE FROM pgnfs_filetab t WHERE t.inode = ino;
        END IF;
    ELSE
        DELETE FROM allfiles a WHERE a.inode = ino;
    END IF;
END
$$;

-- Every stored chunk of the file system, whatever the layout: the file,
-- the chunk number, the stored bytes and the file bytes it holds (for
-- tests and consistency checks; reads everything).
CREATE OR REPLACE FUNCTION pgnfs_data_chunks()
RETURNS TABLE (inode bigint, chunk bigint, stored int, bytes int) LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
    b64 boolean;
    ino bigint;
BEGIN
    SELECT fs.encoding = 'base64' INTO b64 FROM pgnfs_fs fs;
    RETURN QUERY SELECT a.inode, a.chunk, length(a.data), pgnfs_chunk_len(a.data, b64)
                   FROM allfiles a;
    FOR ino IN SELECT t.inode FROM pgnfs_filetab t ORDER BY t.inode LOOP
        RETURN QUERY EXECUTE format('SELECT $1::bigint, t.chunk, length(t.data),'
                                    ' pgnfs_chunk_len(t.data, $2) FROM %I t',
                                    pgnfs_inv_name(ino)) USING ino, b64;
    END LOOP;
END
$$;
