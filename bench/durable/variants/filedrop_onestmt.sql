-- filedrop_onestmt.sql: only pgnfs_file_drop of remove_onestmt.sql (one
-- statement instead of three nested PL/pgSQL calls); same results.
-- (bench/durable/sqlcost -c label=NAME,build=DIR,sql=THIS: a variant measured in
-- bench/results/durable.md, "Fewer statements, fewer expressions"; for a build
-- with migration 011)
CREATE OR REPLACE FUNCTION pgnfs_file_drop(ino bigint)
RETURNS void LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    tab   boolean;
    locks boolean;
BEGIN
    WITH t AS (SELECT EXISTS (SELECT 1 FROM pgnfs_filetab t WHERE t.inode = ino) AS tab),
    a AS (DELETE FROM allfiles a WHERE a.inode = ino AND NOT (SELECT t.tab FROM t))
    SELECT t.tab, EXISTS (SELECT 1 FROM pgnfs_nlm_lock l WHERE l.inode = ino
               UNION ALL SELECT 1 FROM pgnfs_nlm_wait w WHERE w.inode = ino
               UNION ALL SELECT 1 FROM pgnfs_nlm_share s WHERE s.inode = ino)
      INTO tab, locks FROM t;
    IF tab THEN
        PERFORM pgnfs_data_drop(ino);
    END IF;
    IF locks THEN
        DELETE FROM pgnfs_nlm_lock l WHERE l.inode = ino;
        DELETE FROM pgnfs_nlm_wait w WHERE w.inode = ino;
        DELETE FROM pgnfs_nlm_share s WHERE s.inode = ino;
    END IF;
END
$$;
