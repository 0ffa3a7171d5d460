-- nodropcheck.sql: NOT A CORRECT SCHEMA, a bound: pgnfs_file_drop deletes the
-- chunks in allfiles only (no look-up of a table of its own, of locks,
-- blocked requests and share reservations): what those look-ups cost.
-- (bench/durable/sqlcost -c label=NAME,build=DIR,sql=THIS: a variant measured in
-- bench/results/durable.md, "Fewer statements, fewer expressions"; for a build
-- with migration 011)
CREATE OR REPLACE FUNCTION pgnfs_file_drop(ino bigint)
RETURNS void LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    DELETE FROM allfiles a WHERE a.inode = ino;
END
$$;
