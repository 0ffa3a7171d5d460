/*
 * dbfs_sql_admin.c -- the long statements of pgnfs du and find, which
 * walk a whole tree set-wise (dbfs_admin.c runs them through the table
 * of dbfs_sql.c: DBFS_ST_ADMIN_DU, DBFS_ST_ADMIN_FIND).
 */
#include "dbfs_sql.h"
#include "dbfs_sql_num.h"

/* Disk usage of the tree under $1: every directory at depth <= $2 with
 * the stored bytes ("used"), the sizes and the number of distinct
 * inodes beneath it (itself included); hard links count once per
 * directory. Children come before their parent (du's order). $3 caps
 * the depth, so a damaged tree with a cycle cannot recurse forever.
 * Set-wise, so a million files cost a few passes, not a million
 * lookups: the recursion runs over the names of directories only (e,
 * found through the partial index fileatt_dirs of schema/functions/
 * 95_views.sql when it is there), each directory carrying its
 * ancestors down to depth $2 (anc, unnested into a: directory,
 * ancestor, a few rows per directory). The names are summed per
 * directory first, without paths (p), and only those sums are rolled
 * up to the ancestors. When the tree holds more than a tenth of all
 * directories (big), p is one pass over naming and fileatt (a hash or
 * merge join of the two tables and one sum per parent, not a probe of
 * fileatt per name; a directory outside the tree sums too and is
 * dropped by the join with a); else it reads the tree's directories'
 * names by index (a small tree costs its own size). The branch not
 * taken is never run (a one-time filter); a file with more than one link (m, few:
 * fileatt scanned for them, naming probed by inode) is kept by inode,
 * so that it counts once under each ancestor (a directory or a file
 * with one link has one name). Every listed directory counts once more
 * under itself. bench/results/views.md has the figures. */
const char dbfs_sql_admin_du[] =
    "WITH RECURSIVE e AS MATERIALIZED ("
    "  SELECT n.parent, n.name, n.inode FROM fileatt f CROSS JOIN LATERAL"
    "   (SELECT n.parent, n.name, n.inode FROM naming n WHERE n.inode = f.inode"
    "    OFFSET 0) n WHERE f.type = " DBFS_SQL_T_DIR "),"
    " d(inode, depth, path, anc) AS ("
    "  SELECT f.inode, 0, ''::bytea, ARRAY[f.inode] FROM fileatt f"
    "   WHERE f.inode = $1::int8 AND f.type = " DBFS_SQL_T_DIR "  UNION ALL"
    "  SELECT e.inode, d.depth + 1, d.path || '\\x2f'::bytea || e.name,"
    "         CASE WHEN d.depth + 1 <= $2::int4 THEN d.anc || e.inode ELSE d.anc END"
    "    FROM d JOIN e ON e.parent = d.inode WHERE d.depth < $3::int4),"
    " a AS (SELECT d.inode AS dir, u.anc FROM d, unnest(d.anc) AS u(anc)),"
    " big AS (SELECT (SELECT count(*) FROM d) * 10 > (SELECT count(*) FROM e) AS yes),"
    " p AS (SELECT n.parent AS dir, sum(f.used) AS su, sum(f.size) AS ss, count(*) AS c"
    "         FROM naming n JOIN fileatt f ON f.inode = n.inode"
    "        WHERE (SELECT yes FROM big)"
    "          AND NOT (f.nlink > 1 AND f.type <> " DBFS_SQL_T_DIR ") GROUP BY n.parent"
    "       UNION ALL"
    "       SELECT n.parent, sum(f.used), sum(f.size), count(*)"
    "         FROM d JOIN naming n ON n.parent = d.inode JOIN fileatt f ON f.inode = n.inode"
    "        WHERE NOT (SELECT yes FROM big)"
    "          AND NOT (f.nlink > 1 AND f.type <> " DBFS_SQL_T_DIR ") GROUP BY n.parent),"
    " m AS (SELECT n.parent AS dir, f.inode AS ino, f.used, f.size"
    "         FROM fileatt f JOIN naming n ON n.inode = f.inode"
    "        WHERE f.nlink > 1 AND f.type <> " DBFS_SQL_T_DIR "),"
    " x AS (SELECT a.anc, NULL::int8 AS ino, p.su, p.ss, p.c FROM a JOIN p ON p.dir = a.dir"
    "       UNION ALL"
    "       SELECT a.anc, m.ino, m.used, m.size, 1 FROM a JOIN m ON m.dir = a.dir"
    "       UNION ALL"
    "       SELECT d.inode, NULL, f.used, f.size, 1 FROM d JOIN fileatt f ON f.inode = d.inode"
    "        WHERE d.depth > 0 AND d.inode = d.anc[cardinality(d.anc)]"
    "       UNION ALL"
    "       SELECT $1::int8, CASE WHEN f.nlink > 1 AND f.type <> " DBFS_SQL_T_DIR
    "                        THEN f.inode END, f.used, f.size, 1"
    "         FROM fileatt f WHERE f.inode = $1::int8),"
    " s AS (SELECT x.anc AS dir, x.ino, sum(x.su) AS su, sum(x.ss) AS ss, sum(x.c) AS c,"
    "              max(x.su) AS mu, max(x.ss) AS ms"
    "         FROM x GROUP BY x.anc, x.ino),"
    " t AS (SELECT dir, sum(CASE WHEN ino IS NULL THEN su ELSE mu END)::int8 AS used,"
    "              sum(CASE WHEN ino IS NULL THEN ss ELSE ms END)::int8 AS size,"
    "              sum(CASE WHEN ino IS NULL THEN c ELSE 1 END)::int8 AS n"
    "         FROM s GROUP BY dir)"
    " SELECT * FROM ("
    "  SELECT d.path, d.depth, d.inode, t.used, t.size, t.n FROM d JOIN t ON t.dir = d.inode"
    "   WHERE d.inode = d.anc[cardinality(d.anc)]"
    "  UNION ALL"
    "  SELECT ''::bytea, 0, t.dir, t.used, t.size, t.n FROM t"
    "   WHERE t.dir = $1::int8 AND NOT EXISTS (SELECT 1 FROM d)) r"
    " ORDER BY r.path || '\\xff'::bytea";

/* Every entry of the tree under $1 (named $2) from depth $3 to $4 whose
 * name is LIKE $5 (NULL: any), type is $6 (0: any), size in units of
 * $8 bytes, rounded up, compares with $9 as $7 says (-1 less, 0 equal,
 * 1 more, 2 no test), uid $10 and gid $11 (-1: any); by path. */
const char dbfs_sql_admin_find[] =
    "WITH RECURSIVE t(inode, type, depth, path, name, mode, nlink, uid, gid, size, used,"
    "                 mtime) AS ("
    "  SELECT f.inode, f.type, 0, ''::bytea, $2::bytea, f.mode, f.nlink, f.uid, f.gid,"
    "         f.size, f.used, f.mtime FROM fileatt f WHERE f.inode = $1::int8"
    "  UNION ALL"
    "  SELECT n.inode, f.type, t.depth + 1, t.path || '\\x2f'::bytea || n.name, n.name,"
    "         f.mode, f.nlink, f.uid, f.gid, f.size, f.used, f.mtime"
    "    FROM t JOIN naming n ON n.parent = t.inode JOIN fileatt f ON f.inode = n.inode"
    "   WHERE t.type = " DBFS_SQL_T_DIR " AND t.depth < $4::int4)"
    " SELECT path, depth, inode, type, mode, nlink, uid::int8, gid::int8, size, used, mtime"
    "   FROM t WHERE depth >= $3::int4"
    "    AND ($5::bytea IS NULL OR name LIKE $5::bytea)"
    "    AND ($6::int4 = 0 OR type = $6::int4)"
    "    AND ($7::int4 = 2 OR CASE $7::int4"
    "         WHEN -1 THEN (size + $8::int8 - 1) / $8::int8 < $9::int8"
    "         WHEN 1 THEN (size + $8::int8 - 1) / $8::int8 > $9::int8"
    "         ELSE (size + $8::int8 - 1) / $8::int8 = $9::int8 END)"
    "    AND ($10::int8 < 0 OR uid = $10::int8) AND ($11::int8 < 0 OR gid = $11::int8)"
    "  ORDER BY path";
