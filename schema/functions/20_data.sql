-- 20_data.sql -- file data operations the metadata functions need inside
-- their own transaction: truncation (setattr, create over a file) and
-- dropping all data of a file whose last name went (remove, rename over).
--
-- Storage layout "single": every file's chunks in the table allfiles, chunk
-- n holding bytes [n * chunk_size, (n + 1) * chunk_size). Invariant kept by
-- every writer: no stored byte lies at or beyond the file's size, so a file
-- that grows again reads zeros where it was cut. The other layouts
-- (inversion, hybrid) are added with their own issue; mkfs and open refuse
-- them until then, so these functions serve "single" only.

-- Cut the data of file ino to new_size bytes. Returns the number of stored
-- bytes removed (for fileatt.used).
CREATE OR REPLACE FUNCTION pgnfs_data_truncate(ino bigint, new_size bigint)
RETURNS bigint LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    cs      int;
    last    bigint;
    keep    int;
    removed bigint;
    oldlen  int;
BEGIN
    SELECT chunk_size INTO cs FROM pgnfs_fs;
    last := CASE WHEN new_size = 0 THEN -1 ELSE (new_size - 1) / cs END;
    WITH gone AS (DELETE FROM allfiles WHERE inode = ino AND chunk > last
                  RETURNING length(data) AS len)
    SELECT coalesce(sum(len), 0) INTO removed FROM gone;
    IF last < 0 THEN
        RETURN removed;
    END IF;
    keep := (new_size - last * cs)::int;
    SELECT length(data) INTO oldlen FROM allfiles WHERE inode = ino AND chunk = last;
    IF oldlen > keep THEN
        UPDATE allfiles SET data = substring(data FROM 1 FOR keep)
         WHERE inode = ino AND chunk = last;
        removed := removed + oldlen - keep;
    END IF;
    RETURN removed;
END
$$;

-- Stored bytes of chunks first .. last of file ino.
CREATE OR REPLACE FUNCTION pgnfs_data_stored(ino bigint, first bigint, last bigint)
RETURNS bigint LANGUAGE sql STABLE
AS $$
SELECT coalesce(sum(length(data)), 0)::bigint FROM allfiles
 WHERE inode = ino AND chunk BETWEEN first AND last
$$;

-- Drop all data of file ino.
CREATE OR REPLACE FUNCTION pgnfs_data_drop(ino bigint)
RETURNS void LANGUAGE sql VOLATILE
AS $$ DELETE FROM allfiles WHERE inode = ino $$;

-- n zero bytes (to pad a chunk written past its stored end).
CREATE OR REPLACE FUNCTION pgnfs_zeros(n int)
RETURNS bytea LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT decode(repeat('00', greatest(n, 0)), 'hex') $$;
