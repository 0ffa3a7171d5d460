/*
 * dbfs_sql.c -- every SQL statement dbfs runs, in one table of named
 * prepared statements.
 *
 * NOTES
 *   Parameters are typed by casts in the text, so binary values need no
 *   type list; results are requested in binary. Attribute columns always
 *   come in the order of DBFS_ATTR_COLS (parsed by dbfs_get_attr()).
 *   Metadata changes are PL/pgSQL functions (schema/functions/), each
 *   called by one statement here; the schema scripts themselves, run by
 *   mkfs and open, are the only SQL not in this table.
 *
 *   Credentials travel as three parameters: uid int8, gid int8, groups
 *   int8[] (dbfs_param_cred()). Times are int8 nanoseconds.
 */
#include "dbfs_sql.h"
#include "dbfs_sql_num.h"

/* The attribute columns, optionally qualified: DBFS_ATTR_COLS("f."). */
#define DBFS_ATTR_COLS(p)                                                                          \
    p "inode, " p "generation, " p "type, " p "mode, " p "nlink, " p "uid, " p "gid, " p           \
      "size, " p "rdev_major, " p "rdev_minor, " p "atime, " p "mtime, " p "ctime, " p             \
      "change, " p "used"

/* A snapshot read's condition: snapshot $k is still there. */
#define DBFS_SQL_SNAP_LIVE(k)                                                                      \
    " AND EXISTS (SELECT 1 FROM pgnfs_snapshots s WHERE s.id = $" k "::int8)"
/* A chunk's stored value (p.data) as the server reads it: through the
 * inverses of its chain's in-database stages when it has some
 * (26_xform_sql.sql); for any other file the value itself. */
#define DBFS_SQL_XF_FETCH(p)                                                                       \
    " CASE WHEN f.chain_sql THEN pgnfs_xf_sql_apply(f.chain, false, f.inode, " p ".chunk, " p      \
    ".data) ELSE " p ".data END"

/* After the chain id: its text when $5 (the server may not hold the chain
 * yet, dbfs_xf_want_text), so that a cold chain costs no round trip of
 * its own; NULL otherwise and for an unguarded file. Through a PL/pgSQL
 * function, which costs nothing unless called: a subquery here would be
 * set up, and its table locked, by every read. */
#define DBFS_SQL_XF_TEXT                                                                           \
    ", CASE WHEN f.chain <> 0 AND $5::bool THEN pgnfs_xf_chain_text(f.chain) END"

/* The worker session's settings on PostgreSQL and Citus alike (see
 * DBFS_ST_SESSION). */
#define DBFS_SQL_SESSION                                                                           \
    "SELECT set_config('default_transaction_isolation', 'read committed', false),"                 \
    " CASE WHEN current_setting('synchronous_commit') = 'off'"                                     \
    " THEN set_config('synchronous_commit', 'on', false) END"

#define DBFS_CRED_ARGS(a, b, c) "$" #a "::int8, $" #b "::int8, $" #c "::int8[]"

/* Statements with a .citus text: on a Citus coordinator (schema
 * distributed by tests/citus/distribute.sql: fileatt and allfiles by inode,
 * naming by parent) a join of naming with fileatt on naming.inode spans
 * shards, which Citus plans only when each table is read on its own (CTEs
 * it runs first); on PostgreSQL that form can plan worse (a listing's
 * merge join over all of fileatt), so PostgreSQL keeps the joins. */
const dbfs_stmt_def dbfs_stmts[DBFS_ST_COUNT] = {
    /* Run once per worker session: dbfs's functions lock what they change
     * and rely on READ COMMITTED (each statement sees what committed before
     * it, after a lock wait), whatever the database's default; and a write
     * answers FILE_SYNC, so commits must be durable. Every statement here
     * and in the functions finds its rows by key, so one generic plan fits
     * every call: planned once, not at each of a session's first five
     * calls as PostgreSQL's default does (200-350 us of planning each, a
     * cold file's first LOOKUP, READ and atime update paid three). On
     * Citus the planner's own choices are left as they are. */
    [DBFS_ST_SESSION] = {"pgnfs_session",
                         DBFS_SQL_SESSION ", set_config('plan_cache_mode', 'force_generic_plan',"
                                          " false)",
                         .citus = DBFS_SQL_SESSION},
    /* The transaction it ends (a batch of an async export's change: added
     * by dbfs_batch_sync after the batch's own statements) commits without
     * waiting for its WAL to reach the disk. is_local: this transaction
     * only; PostgreSQL reads the setting when it commits, at the Sync. */
    [DBFS_ST_ASYNC_COMMIT] = {"pgnfs_async_commit",
                              "SELECT set_config('synchronous_commit', 'off', true)"},
    [DBFS_ST_GETATTR] = {"pgnfs_getattr",
                         "SELECT " DBFS_ATTR_COLS(
                             "") " FROM fileatt"
                                 " WHERE inode = $1::int8 AND generation = $2::int4"},
    /* The directory, and the entry's file when the name exists. */
    [DBFS_ST_LOOKUP] =
        {"pgnfs_lookup",
         "SELECT " DBFS_ATTR_COLS("d.") ", " DBFS_ATTR_COLS(
             "f.") " FROM fileatt d"
                   " LEFT JOIN naming n ON n.parent = d.inode AND n.name = $3::bytea"
                   " LEFT JOIN fileatt f ON f.inode = n.inode"
                   " WHERE d.inode = $1::int8 AND d.generation = $2::int4",
         .citus =
             "WITH d AS (SELECT * FROM fileatt WHERE inode = $1::int8 AND generation = $2::int4),"
             " n AS (SELECT inode FROM naming WHERE parent = $1::int8 AND name = $3::bytea),"
             " f AS (SELECT * FROM fileatt WHERE inode = (SELECT inode FROM n))"
             " SELECT " DBFS_ATTR_COLS("d.") ", " DBFS_ATTR_COLS(
                 "f.") " FROM d LEFT JOIN f ON true"},
    /* A directory and its parent (NULLs for the root, which has no name).
     * Three single-table parts: on Citus a name is found by its inode on
     * every shard (naming is distributed by parent), which a join with
     * fileatt could not do; PostgreSQL inlines them into one plan. */
    [DBFS_ST_PARENT] =
        {"pgnfs_parent",
         "WITH d AS (SELECT * FROM fileatt WHERE inode = $1::int8 AND generation = $2::int4),"
         " up AS (SELECT parent FROM naming WHERE inode = $1::int8 LIMIT 1),"
         " p AS (SELECT * FROM fileatt WHERE inode = (SELECT parent FROM up))"
         " SELECT " DBFS_ATTR_COLS("d.") ", " DBFS_ATTR_COLS(
             "p.") " FROM d LEFT JOIN p ON d.type = " DBFS_SQL_T_DIR " LIMIT 1",
         .citus =
             "WITH d AS (SELECT * FROM fileatt WHERE inode = $1::int8 AND generation = $2::int4),"
             " up AS (SELECT parent FROM naming WHERE inode = $1::int8 LIMIT 1),"
             " p AS (SELECT * FROM fileatt WHERE inode = (SELECT parent FROM up))"
             " SELECT " DBFS_ATTR_COLS("d.") ", " DBFS_ATTR_COLS(
                 "p.") " FROM d"
                       " LEFT JOIN p ON d.type = " DBFS_SQL_T_DIR " LIMIT 1"},
    [DBFS_ST_READLINK] = {"pgnfs_readlink",
                          "SELECT " DBFS_ATTR_COLS(
                              "") ", target FROM fileatt"
                                  " WHERE inode = $1::int8 AND generation = $2::int4"},
    /* Entries after cookie $2, at most $3. */
    [DBFS_ST_READDIR] = {"pgnfs_readdir", "SELECT n.cookie, n.inode, n.name FROM naming n"
                                          " WHERE n.parent = $1::int8 AND n.cookie > $2::int8"
                                          " ORDER BY n.cookie LIMIT $3::int8"},
    [DBFS_ST_READDIRPLUS] =
        {"pgnfs_readdirplus",
         "SELECT n.cookie, n.inode, n.name, " DBFS_ATTR_COLS(
             "f.") " FROM naming n JOIN fileatt f ON f.inode = n.inode"
                   " WHERE n.parent = $1::int8 AND n.cookie > $2::int8"
                   " ORDER BY n.cookie LIMIT $3::int8",
         .citus = "WITH n AS (SELECT cookie, inode, name FROM naming WHERE parent = $1::int8"
                  " AND cookie > $2::int8 ORDER BY cookie LIMIT $3::int8)"
                  " SELECT n.cookie, n.inode, n.name, " DBFS_ATTR_COLS(
                      "f.") " FROM n"
                            " JOIN fileatt f ON f.inode = n.inode ORDER BY n.cookie"},
    /* A directory's whole listing (the listing cache, dbfs_dirlist.c): its
     * change counter and parent, and every entry, in one snapshot; at most
     * $3 rows (an empty directory gives one row of NULL entry columns). */
    [DBFS_ST_LISTING] =
        {"pgnfs_listing",
         "SELECT d.change, p.inode, p.generation, n.cookie, n.inode, f.generation,"
         " n.name FROM fileatt d"
         " LEFT JOIN fileatt p ON p.inode = coalesce((SELECT pn.parent FROM naming pn"
         " WHERE pn.inode = d.inode LIMIT 1), d.inode)"
         " LEFT JOIN naming n ON n.parent = d.inode"
         " LEFT JOIN fileatt f ON f.inode = n.inode"
         " WHERE d.inode = $1::int8 AND d.generation = $2::int4 AND d.type = " DBFS_SQL_T_DIR
         " ORDER BY n.cookie LIMIT $3::int8",
         .citus = "WITH d AS (SELECT change FROM fileatt WHERE inode = $1::int8 AND generation = "
                  "$2::int4"
                  " AND type = " DBFS_SQL_T_DIR "),"
                  " up AS (SELECT parent FROM naming WHERE inode = $1::int8 LIMIT 1),"
                  " p AS (SELECT inode, generation FROM fileatt"
                  "  WHERE inode = coalesce((SELECT parent FROM up), $1::int8)),"
                  " n AS (SELECT cookie, inode, name FROM naming WHERE parent = $1::int8),"
                  " f AS (SELECT n.inode, a.generation FROM n JOIN fileatt a ON a.inode = n.inode)"
                  " SELECT d.change, p.inode, p.generation, n.cookie, n.inode, f.generation, n.name"
                  " FROM d LEFT JOIN p ON true LEFT JOIN n ON true LEFT JOIN f ON f.inode = n.inode"
                  " ORDER BY n.cookie LIMIT $3::int8"},
    [DBFS_ST_SETATTR] = {"pgnfs_setattr",
                         "SELECT * FROM pgnfs_setattr($1::int8, $2::int4, " DBFS_CRED_ARGS(
                             3, 4,
                             5) ", $6::int8, $7::int4, $8::int4, $9::int8, $10::int8, $11::int8,"
                                " $12::int8, $13::int8, $14::int8)",
                         true},
    [DBFS_ST_CREATE] = {"pgnfs_create",
                        "SELECT * FROM pgnfs_create($1::int8, $2::int4, $3::bytea, " DBFS_CRED_ARGS(
                            4, 5, 6) ", $7::int8, $8::int2, $9::int4, $10::int8, $11::bytea,"
                                     " $12::int4, $13::int4, $14::int4, $15::int4, $16::int8,"
                                     " $17::int8, $18::int8, $19::int8, $20::int8)",
                        true},
    [DBFS_ST_REMOVE] = {"pgnfs_remove",
                        "SELECT * FROM pgnfs_remove($1::int8, $2::int4, $3::bytea, $4::bool, "
                        "" DBFS_CRED_ARGS(5, 6, 7) ", $8::int8)",
                        true},
    [DBFS_ST_RENAME] = {"pgnfs_rename",
                        "SELECT * FROM pgnfs_rename($1::int8, $2::int4, $3::bytea, $4::int8,"
                        " $5::int4, $6::bytea, " DBFS_CRED_ARGS(7, 8, 9) ", $10::int8)",
                        true},
    [DBFS_ST_LINK] = {"pgnfs_link",
                      "SELECT * FROM pgnfs_link($1::int8, $2::int4, $3::int8, $4::int4, $5::bytea, "
                      "" DBFS_CRED_ARGS(6, 7, 8) ", $9::int8)",
                      true},
    [DBFS_ST_WRITE_BEGIN] = {"pgnfs_write_begin",
                             "SELECT * FROM pgnfs_write_begin($1::int8, $2::int4, " DBFS_CRED_ARGS(
                                 3, 4, 5) ", $6::int8, $7::int8)",
                             true},
    /* After the chunks of a write: size, times, change, the stored bytes of
     * the chunks written ($5 .. $6), and setuid/setgid cleared for a
     * non-root writer ($4). The row is locked already. (The single layout's
     * pipelined write: its chunks are in allfiles.) The stored bytes are
     * pgnfs_data_stored_all's query written inline: a PL/pgSQL call costs
     * an executor start of its own (0.17 ms of database time per COMMIT
     * of the proxy workload, bench/perf). */
    [DBFS_ST_WRITE_END] = {"pgnfs_write_end",
                           "UPDATE fileatt SET size = greatest(size, $2::int8), mtime = $3::int8,"
                           " ctime = pgnfs_next_ctime(ctime, $3::int8), change = change + 1,"
                           " used = used + (SELECT coalesce(sum(length(a.data)), 0)::bigint"
                           "                  FROM allfiles a WHERE a.inode = $1::int8"
                           "                   AND a.chunk BETWEEN $5::int8 AND $6::int8),"
                           " mode = CASE WHEN $4::bool THEN pgnfs_kill_priv(mode) ELSE mode END"
                           " WHERE inode = $1::int8 RETURNING " DBFS_ATTR_COLS(""),
                           true},
    /* relatime: atime moves on a permitted read when it is not later than
     * mtime or ctime, or a day old. Lazy: a READ is no change a client
     * waits to see on disk (Linux does not sync atime either), so its
     * transaction does not wait for a WAL flush. */
    [DBFS_ST_ATIME] =
        {"pgnfs_atime",
         "UPDATE fileatt SET atime = $3::int8, change = change + 1"
         " WHERE inode = $1::int8 AND generation = $2::int4 AND type = " DBFS_SQL_T_REG
         " AND (atime <= mtime OR atime <= ctime"
         "      OR atime < $3::int8 - " DBFS_SQL_NS_PER_DAY ")"
         " AND pgnfs_may_io(fileatt, " DBFS_CRED_ARGS(4, 5, 6) ", " DBFS_SQL_MAY_READ ")",
         false, true},
    /* Database size, and the file count (reltuples; counted when the table
     * was never analyzed, which only a young, small table is). */
    [DBFS_ST_FSSTAT] = {"pgnfs_fsstat", "SELECT pg_database_size(current_database())::int8,"
                                        " (SELECT CASE WHEN c.reltuples < 0"
                                        "              THEN (SELECT count(*) FROM fileatt)"
                                        "              ELSE c.reltuples::int8 END"
                                        "    FROM pg_class c WHERE c.oid = 'fileatt'::regclass)"},
    [DBFS_ST_SINGLE_READ] = {"pgnfs_single_read",
                             "SELECT " DBFS_ATTR_COLS("f.") ", a.chunk," DBFS_SQL_XF_FETCH(
                                 "a") ", f.chain" DBFS_SQL_XF_TEXT " FROM fileatt f"
                                      " LEFT JOIN allfiles a ON a.inode = f.inode"
                                      " AND a.chunk BETWEEN $3::int8 AND $4::int8"
                                      " WHERE f.inode = $1::int8 AND f.generation = $2::int4"
                                      " ORDER BY a.chunk"},
    [DBFS_ST_SINGLE_WRITE_FULL] = {"pgnfs_single_write_full",
                                   "INSERT INTO allfiles (inode, chunk, data)"
                                   " VALUES ($1::int8, $2::int8, $3::bytea)"
                                   " ON CONFLICT (inode, chunk) DO UPDATE SET data = EXCLUDED.data",
                                   true},
    /* $3 bytes into the chunk: new chunks start with zeros; stored ones
     * shorter than $3 are padded with zeros, longer ones overlaid. */
    [DBFS_ST_SINGLE_WRITE_PART] =
        {"pgnfs_single_write_part",
         "INSERT INTO allfiles AS a (inode, chunk, data)"
         " VALUES ($1::int8, $2::int8, pgnfs_zeros($3::int4) || $4::bytea)"
         " ON CONFLICT (inode, chunk) DO UPDATE SET data ="
         " CASE WHEN length(a.data) >= $3::int4"
         "      THEN overlay(a.data PLACING $4::bytea FROM $3::int4 + 1)"
         "      ELSE a.data || pgnfs_zeros($3::int4 - length(a.data))"
         "           || $4::bytea END",
         true},
    /* The same for a base64 file system: $4 is the piece's base64 text,
     * merged with the decoded chunk and encoded again (20_data.sql). */
    [DBFS_ST_SINGLE_WRITE_PART64] =
        {"pgnfs_single_write_part64",
         "INSERT INTO allfiles AS a (inode, chunk, data)"
         " VALUES ($1::int8, $2::int8, pgnfs_chunk_merge(NULL, $3::int4, $4::bytea, true, false))"
         " ON CONFLICT (inode, chunk) DO UPDATE SET data ="
         " pgnfs_chunk_merge(a.data, $3::int4, $4::bytea, true, false)",
         true},
    /* A whole WRITE in one statement, every layout and encoding (80_write.sql):
     * $6 offset, $7 length, $8 the encoded pieces, $9 now, $10 clear
     * setuid/setgid, $11 chunk size, $12 base64, $13 the layout's placement
     * threshold (NULL: never a table of its own). */
    [DBFS_ST_WRITE] = {"pgnfs_write",
                       "SELECT * FROM pgnfs_write($1::int8, $2::int4, " DBFS_CRED_ARGS(
                           3, 4, 5) ", $6::int8, $7::int8, $8::bytea, $9::int8, $10::bool,"
                                    " $11::int4, $12::bool, $13::int8)",
                       true},
    /* The read of the layouts with tables of their own (store.h queue_read):
     * the attributes and chunks $3 .. $4, wherever the file's data lives. */
    [DBFS_ST_TAB_READ] = {"pgnfs_tab_read",
                          "SELECT " DBFS_ATTR_COLS("f.") ", d.chunk," DBFS_SQL_XF_FETCH(
                              "d") ", f.chain" DBFS_SQL_XF_TEXT " FROM fileatt f"
                                   " LEFT JOIN LATERAL pgnfs_data_read(f.inode, $3::int8, $4::int8)"
                                   " d ON true WHERE f.inode = $1::int8 AND f.generation = $2::int4"
                                   " ORDER BY d.chunk"},

    /* File locks (85_lock.sql; dbfs_lock.c). Ranges are $lo int8, $hi int8
     * (NULL: to the end); addresses numeric text. Every function returns
     * pgnfs_nlm_res rows (dbfs_lock.c reads them). */
    [DBFS_ST_NLM_LOCK] =
        {"pgnfs_nlm_lock",
         "SELECT * FROM pgnfs_nlm_lock($1::int4, $2::int8, $3::int4, " DBFS_CRED_ARGS(
             4, 5, 6) ", $7::bytea, $8::text::inet, $9::text::inet, $10::int8,"
                      " $11::bytea, $12::int8, $13::int8, $14::bool, $15::bool,"
                      " $16::bool, $17::bool, $18::int4, $19::bytea, $20::int4,"
                      " $21::int4)"},
    [DBFS_ST_NLM_TEST] =
        {"pgnfs_nlm_test",
         "SELECT * FROM pgnfs_nlm_test($1::int4, $2::int8, $3::int4, " DBFS_CRED_ARGS(
             4, 5, 6) ", $7::bytea, $8::int8, $9::bytea, $10::int8, $11::int8,"
                      " $12::bool)"},
    [DBFS_ST_NLM_UNLOCK] = {"pgnfs_nlm_unlock",
                            "SELECT * FROM pgnfs_nlm_unlock($1::int4, $2::int8, $3::int4,"
                            " $4::bytea, $5::int8, $6::bytea, $7::int8, $8::int8)"},
    [DBFS_ST_NLM_CANCEL] = {"pgnfs_nlm_cancel",
                            "SELECT * FROM pgnfs_nlm_cancel($1::int4, $2::int8, $3::int4,"
                            " $4::bytea, $5::int8, $6::bytea, $7::int8, $8::int8, $9::bool)"},
    [DBFS_ST_NLM_SHARE] =
        {"pgnfs_nlm_share",
         "SELECT * FROM pgnfs_nlm_share($1::int4, $2::int8, $3::int4, " DBFS_CRED_ARGS(
             4, 5, 6) ", $7::bytea, $8::text::inet, $9::text::inet, $10::bytea,"
                      " $11::int4, $12::int4, $13::bool)"},
    [DBFS_ST_NLM_UNSHARE] = {"pgnfs_nlm_unshare",
                             "SELECT * FROM pgnfs_nlm_unshare($1::int4, $2::int8, $3::int4,"
                             " $4::bytea, $5::bytea)"},
    [DBFS_ST_NLM_FREE_HOST] = {"pgnfs_nlm_free_host",
                               "SELECT * FROM pgnfs_nlm_free_host($1::int4, $2::bytea, $3::int4)"},
    [DBFS_ST_NLM_START] = {"pgnfs_nlm_start", "SELECT srv, state, grace_ms, host, host(addr),"
                                              " host(local) FROM pgnfs_nlm_start($1::text,"
                                              " $2::int4)"},
    [DBFS_ST_NLM_GRACE_END] = {"pgnfs_nlm_grace_end",
                               "SELECT * FROM pgnfs_nlm_grace_end($1::int4)"},
    [DBFS_ST_NLM_TAKE] = {"pgnfs_nlm_take", "SELECT * FROM pgnfs_nlm_take($1::int4)"},
    [DBFS_ST_NLM_GC] = {"pgnfs_nlm_gc", "SELECT pgnfs_nlm_gc()"},
    [DBFS_ST_NLM_COUNT] = {"pgnfs_nlm_count", "SELECT * FROM pgnfs_nlm_counts($1::int4)"},
    /* Several frontends: the invalidations of this session's changes name
     * its server ($1, its id in pgnfs_frontends), which skips its own. */
    [DBFS_ST_COH_TAG] = {"pgnfs_coh_tag", "SELECT set_config('pgnfs.frontend', $1::text, false)"},

    /* Snapshots (21_snap.sql; dbfs_snap.c): the file system as snapshot
     * $k saw it, the same rows the live statements above return; no row
     * when the snapshot is gone (deleted) or the file did not exist then. */
    [DBFS_ST_SNAP_GETATTR] =
        {"pgnfs_snap_getattr",
         "SELECT " DBFS_ATTR_COLS(
             "a.") " FROM pgnfs_snap_attr($3::int8,"
                   " $1::int8) a WHERE a.generation = $2::int4" DBFS_SQL_SNAP_LIVE("3")},
    [DBFS_ST_SNAP_LOOKUP] = {"pgnfs_snap_lookup",
                             "SELECT " DBFS_ATTR_COLS("d.") ", " DBFS_ATTR_COLS(
                                 "f.") " FROM pgnfs_snap_attr($4::int8, $1::int8) d"
                                       " LEFT JOIN pgnfs_snap_name($4::int8, $1::int8,"
                                       " $3::bytea) n ON true"
                                       " LEFT JOIN LATERAL pgnfs_snap_attr($4::int8, n.inode) f"
                                       " ON true WHERE d.generation = $2::int4" DBFS_SQL_SNAP_LIVE(
                                           "4")},
    [DBFS_ST_SNAP_PARENT] =
        {"pgnfs_snap_parent",
         "SELECT " DBFS_ATTR_COLS("d.") ", " DBFS_ATTR_COLS(
             "p.") " FROM pgnfs_snap_attr($3::int8, $1::int8) d"
                   " LEFT JOIN LATERAL (SELECT x.parent FROM pgnfs_snap_names_of($3::int8,"
                   " d.inode) x WHERE d.type = " DBFS_SQL_T_DIR " LIMIT 1) n ON true"
                   " LEFT JOIN LATERAL pgnfs_snap_attr($3::int8, n.parent) p ON true"
                   " WHERE d.generation = $2::int4" DBFS_SQL_SNAP_LIVE("3")},
    [DBFS_ST_SNAP_READLINK] = {"pgnfs_snap_readlink",
                               "SELECT " DBFS_ATTR_COLS("a.") ", a.target FROM pgnfs_snap_attr("
                                                              "$3::int8, $1::int8) a"
                                                              " WHERE a.generation = $2::int4"
                                                              "" DBFS_SQL_SNAP_LIVE("3")},
    [DBFS_ST_SNAP_READDIR] = {"pgnfs_snap_readdir",
                              "SELECT n.cookie, n.inode, n.name FROM pgnfs_snap_names($4::int8,"
                              " $1::int8) n WHERE n.cookie > $2::int8"
                              " ORDER BY n.cookie LIMIT $3::int8"},
    [DBFS_ST_SNAP_READDIRPLUS] = {"pgnfs_snap_readdirplus",
                                  "SELECT n.cookie, n.inode, n.name, " DBFS_ATTR_COLS(
                                      "f.") " FROM pgnfs_snap_names($4::int8, $1::int8) n"
                                            " JOIN LATERAL pgnfs_snap_attr($4::int8, n.inode) f"
                                            " ON true WHERE n.cookie > $2::int8"
                                            " ORDER BY n.cookie LIMIT $3::int8"},
    [DBFS_ST_SNAP_READ] =
        {"pgnfs_snap_read",
         "SELECT " DBFS_ATTR_COLS(
             "a.") ", d.chunk,"
                   /* in-database stages' inverses, as DBFS_SQL_XF_FETCH */
                   " CASE WHEN a.chain IS NOT NULL AND pgnfs_xf_chain_sql(a.chain)"
                   " THEN pgnfs_xf_sql_apply(a.chain, false, a.inode, d.chunk,"
                   " d.data) ELSE d.data END,"
                   " a.chain FROM pgnfs_snap_attr($5::int8,"
                   " $1::int8) a LEFT JOIN LATERAL pgnfs_snap_data($5::int8,"
                   " a.inode, $3::int8, $4::int8) d ON true"
                   " WHERE a.generation = $2::int4" DBFS_SQL_SNAP_LIVE("5") " ORDER BY d.chunk"},
    /* The directory of snapshots: the export's live root, how many
     * snapshots, the newest's id and time (microseconds). */
    [DBFS_ST_SNAP_DIR] = {"pgnfs_snap_dir",
                          "SELECT " DBFS_ATTR_COLS(
                              "f.") ", (SELECT count(*) FROM pgnfs_snapshots)::int8,"
                                    " (SELECT coalesce(max(s.id), 0) FROM pgnfs_snapshots s)::int8,"
                                    " (SELECT (extract(epoch FROM max(s.created)) * 1000000)::int8"
                                    "  FROM pgnfs_snapshots s) FROM fileatt f"
                                    " WHERE f.inode = $1::int8 AND f.generation = $2::int4"},
    /* The snapshots after id $1, at most $2: id, name, time. */
    [DBFS_ST_SNAP_LIST] = {"pgnfs_snap_list",
                           "SELECT s.id, s.name, (extract(epoch FROM s.created) * 1000000)::int8"
                           " FROM pgnfs_snapshots s WHERE s.id > $1::int8"
                           " ORDER BY s.id LIMIT $2::int8"},
    /* The same with the export's root ($3, generation $4) as each saw
     * it (NULLs where it did not exist then), for READDIRPLUS. */
    [DBFS_ST_SNAP_LIST_PLUS] = {"pgnfs_snap_list_plus",
                                "SELECT s.id, s.name, " DBFS_ATTR_COLS(
                                    "a.") " FROM pgnfs_snapshots s"
                                          " LEFT JOIN LATERAL pgnfs_snap_attr(s.id, $3::int8) a"
                                          " ON a.generation = $4::int4 WHERE s.id > $1::int8"
                                          " ORDER BY s.id LIMIT $2::int8"},
    [DBFS_ST_SNAP_FIND] = {"pgnfs_snap_find",
                           "SELECT s.id, (extract(epoch FROM s.created) * 1000000)::int8"
                           " FROM pgnfs_snapshots s WHERE convert_to(s.name, 'UTF8') = $1::bytea"},

    /* Guarded files (25_xform.sql; dbfs_xf.c, dbfs_xf_write.c): a chain's
     * text by id; the first step of a guarded write (change, size, chain
     * and the stored chunks $3 it merges with); its last (the whole
     * chunks $8 with values $9, size at least $10, change and chain as
     * step one saw them, $6 and $7). */
    [DBFS_ST_XF_CHAIN_TEXT] = {"pgnfs_xf_chain_text",
                               "SELECT text FROM pgnfs_xform_chain WHERE id = $1::int8"},
    [DBFS_ST_XF_OLD] = {"pgnfs_xf_old",
                        "SELECT * FROM pgnfs_xf_old($1::int8, $2::int4, $3::int8[])"},
    [DBFS_ST_XF_WRITE] = {"pgnfs_xf_write",
                          "SELECT * FROM pgnfs_xf_write($1::int8, $2::int4, " DBFS_CRED_ARGS(
                              3, 4, 5) ", $6::int8, $7::int8, $8::int8[], $9::bytea[],"
                                       " $10::int8, $11::int8, $12::bool, $13::int8)",
                          true},
    /* The single layout's guarded write, as a pipeline: check, lock and
     * compare change ($6, NULL: not) and chain ($7); the stored bytes of
     * chunks $8 .. $9 leave used (then one pgnfs_single_write_full per
     * chunk and pgnfs_write_end; dbfs_xf_write.c). */
    [DBFS_ST_XF_WRITE_BEGIN] =
        {"pgnfs_xf_write_begin",
         "SELECT * FROM pgnfs_xf_write_begin($1::int8, $2::int4, " DBFS_CRED_ARGS(
             3, 4, 5) ", $6::int8, $7::int8, $8::int8, $9::int8)",
         true},

    /* A transformation link: its base (generation NULL: gone), chain,
     * whether writable and length-preserving, chunk map as of the base's
     * ctime, the base's ctime and size (27_xform_link.sql). */
    [DBFS_ST_XF_LINK_GET] = {"pgnfs_xf_link_get",
                             "SELECT k.base, b.generation, k.chain, k.writable, k.preserves,"
                             " k.map, k.map_ctime, b.ctime, b.size FROM pgnfs_xform_link k"
                             " LEFT JOIN fileatt b ON b.inode = k.base WHERE k.inode = $1::int8"},
    /* A READ of a link met before (dbfs_xf_link.c), one round trip: the
     * link's attributes, the base's chunks $3 .. $4 as the plain read
     * statements give them, the base's chain, generation (NULL: gone),
     * mode, uid, gid and size. */
    [DBFS_ST_XF_LINK_READ] =
        {"pgnfs_xf_link_read",
         "SELECT " DBFS_ATTR_COLS(
             "l.") ", d.chunk,"
                   " CASE WHEN b.chain_sql THEN pgnfs_xf_sql_apply(b.chain, false, b.inode, "
                   "d.chunk,"
                   " d.data) ELSE d.data END, b.chain, b.generation, b.mode, b.uid, b.gid, b.size"
                   " FROM fileatt l JOIN pgnfs_xform_link k ON k.inode = l.inode"
                   " LEFT JOIN fileatt b ON b.inode = k.base"
                   " LEFT JOIN LATERAL pgnfs_data_read(b.inode, $3::int8, $4::int8) d ON true"
                   " WHERE l.inode = $1::int8 AND l.generation = $2::int4 ORDER BY d.chunk"},
    /* The same for the single layout: the base's chunks from allfiles. */
    [DBFS_ST_XF_LINK_READ_SINGLE] =
        {"pgnfs_xf_link_read_single",
         "SELECT " DBFS_ATTR_COLS(
             "l.") ", a.chunk,"
                   " CASE WHEN b.chain_sql THEN pgnfs_xf_sql_apply(b.chain, false, b.inode, "
                   "a.chunk,"
                   " a.data) ELSE a.data END, b.chain, b.generation, b.mode, b.uid, b.gid, b.size"
                   " FROM fileatt l JOIN pgnfs_xform_link k ON k.inode = l.inode"
                   " LEFT JOIN fileatt b ON b.inode = k.base"
                   " LEFT JOIN allfiles a ON a.inode = b.inode AND a.chunk BETWEEN $3::int8 AND "
                   "$4::int8"
                   " WHERE l.inode = $1::int8 AND l.generation = $2::int4 ORDER BY a.chunk"},
    [DBFS_ST_XF_LINK_MAP] = {"pgnfs_xf_link_map",
                             "SELECT * FROM pgnfs_xf_link_map($1::int8, $2::bytea, $3::int8,"
                             " $4::int8, $5::int8)",
                             true},

    /* mkfs and open. */
    [DBFS_ST_ADM_LOCK] = {"pgnfs_adm_lock", "SELECT pg_advisory_xact_lock($1::int8)"},
    [DBFS_ST_ADM_EXISTS] = {"pgnfs_adm_exists", "SELECT to_regclass('pgnfs_fs') IS NOT NULL"},
    [DBFS_ST_ADM_FACTS] = {"pgnfs_adm_facts",
                           "SELECT schema_version, fsid, storage, chunk_size, encoding,"
                           " handle_secret, functions_digest,"
                           " (SELECT generation FROM fileatt WHERE inode = " DBFS_SQL_ROOT_INO
                           ") FROM pgnfs_fs"},
    [DBFS_ST_ADM_FS_INSERT] = {"pgnfs_adm_fs_insert",
                               "INSERT INTO pgnfs_fs (schema_version, fsid, storage, chunk_size,"
                               " encoding, handle_secret) VALUES ($1::int4, $2::int8, $3::text,"
                               " $4::int4, $5::text, $6::bytea)"},
    [DBFS_ST_ADM_ROOT_INSERT] = {"pgnfs_adm_root_insert",
                                 "INSERT INTO fileatt (inode, generation, type, mode, nlink, uid,"
                                 " gid, size, atime, mtime, ctime)"
                                 " VALUES (" DBFS_SQL_ROOT_INO ", $1::int4, " DBFS_SQL_T_DIR
                                 ", $2::int4, " DBFS_SQL_DIR_NLINK ", $3::int8, $4::int8, 0,"
                                 " $5::int8, $5::int8, $5::int8)"},
    [DBFS_ST_ADM_SET_DIGEST] = {"pgnfs_adm_set_digest",
                                "UPDATE pgnfs_fs SET functions_digest = $1::text"},
    [DBFS_ST_ADM_SET_VERSION] = {"pgnfs_adm_set_version",
                                 "UPDATE pgnfs_fs SET schema_version = $1::int4"},
    [DBFS_ST_ADM_SET_THRESHOLD] = {"pgnfs_adm_set_threshold",
                                   "UPDATE pgnfs_fs SET hybrid_threshold = $1::int8"},
    [DBFS_ST_ADM_THRESHOLD] = {"pgnfs_adm_threshold", "SELECT hybrid_threshold FROM pgnfs_fs"},
    /* Is the database a Citus coordinator (the .citus statements)? */
    [DBFS_ST_ADM_CITUS] = {"pgnfs_adm_citus",
                           "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')"},

    /* pgnfs du / find (dbfs_admin.c). One name in a directory. */
    [DBFS_ST_ADMIN_LOOKUP] = {"pgnfs_admin_lookup",
                              "SELECT f.inode, f.type FROM naming n JOIN fileatt f ON f.inode ="
                              " n.inode WHERE n.parent = $1::int8 AND n.name = $2::bytea"},
    /* No JIT on an admin session: du's and find's statements are costed
     * high (du plans two ways to sum and runs one), so PostgreSQL would
     * compile and optimize them for seconds to save less than that
     * (bench/results/views.md). For this session only. */
    [DBFS_ST_ADMIN_NOJIT] = {"pgnfs_admin_nojit", "SELECT set_config('jit', 'off', false)"},
    /* Disk usage of the tree (dbfs_sql_admin.c). */
    [DBFS_ST_ADMIN_DU] = {"pgnfs_admin_du", dbfs_sql_admin_du},
    /* Entries of a tree by find's tests (dbfs_sql_admin.c). */
    [DBFS_ST_ADMIN_FIND] = {"pgnfs_admin_find", dbfs_sql_admin_find},
    /* The read-only roles of the SQL views: made if missing and allowed,
     * granted this database's views (schema/functions/95_views.sql). */
    [DBFS_ST_VIEWS_ROLES] = {"pgnfs_views_roles", "SELECT pgnfs_views_roles()"},
    /* fsck: the session's isolation ($1: 'repeatable read' to check,
     * 'read committed' to repair, see schema/functions/90_fsck.sql). */
    [DBFS_ST_FSCK_ISOLATION] = {"pgnfs_fsck_isolation",
                                "SELECT set_config('default_transaction_isolation', $1::text,"
                                " false)"},
    /* fsck: one check ($1) by name, repairing when $2. */
    [DBFS_ST_FSCK_CHECK] = {"pgnfs_fsck_check", "SELECT problem, ino, detail, repaired"
                                                " FROM pgnfs_fsck($1::text, $2::bool)"},
    /* The grants other servers make for this one arrive as NOTIFY pgnfs_nlm. */
    [DBFS_ST_NLM_LISTEN] = {"pgnfs_nlm_listen", "LISTEN pgnfs_nlm"},
    /* pgnfs locks: every lock, blocked request and share. */
    [DBFS_ST_NLM_LIST] = {"pgnfs_nlm_list",
                          "SELECT state, inode, path, lo, hi, excl, host, svid, oh, server,"
                          " since FROM pgnfs_nlm_list()"},
    /* The space guard: what the files kept in allfiles store (bytes, and
     * chunks at most: $1 the chunk size), and the page size. */
    [DBFS_ST_SPACE_LIVE] = {"pgnfs_space_live",
                            "SELECT coalesce(sum(f.used), 0)::int8,"
                            " coalesce(sum((f.size + $1::int8 - 1) / $1::int8), 0)::int8,"
                            " current_setting('block_size')::int8"
                            " FROM fileatt f WHERE f.type = " DBFS_SQL_T_REG " AND f.used > 0"
                            " AND NOT EXISTS (SELECT 1 FROM pgnfs_filetab t"
                            "                  WHERE t.inode = f.inode)"},
    /* The space guard: allfiles' TOAST relation in pages, and the dead
     * rows in it that VACUUM has not removed. */
    [DBFS_ST_SPACE_TOAST] = {"pgnfs_space_toast",
                             "SELECT (pg_relation_size(c.reltoastrelid)"
                             "        / current_setting('block_size')::int8)::int8,"
                             " coalesce(s.n_dead_tup, 0)::int8"
                             " FROM pg_class c"
                             " LEFT JOIN pg_stat_all_tables s ON s.relid = c.reltoastrelid"
                             " WHERE c.oid = 'allfiles'::regclass"},

    /* Transformation chains (004_xform.sql): a nonce epoch taken (no row
     * when another process has it), the key id recorded, a file's chain
     * set (25_xform.sql) and read, the guarded files and their chunks. */
    [DBFS_ST_XF_EPOCH] = {"pgnfs_xf_epoch", "INSERT INTO pgnfs_xform_epoch (epoch)"
                                            " VALUES ($1::int8) ON CONFLICT DO NOTHING"
                                            " RETURNING epoch"},
    [DBFS_ST_XF_KEY_ID] = {"pgnfs_xf_key_id", "SELECT xform_key_id FROM pgnfs_fs"},
    [DBFS_ST_XF_SET_KEY_ID] = {"pgnfs_xf_set_key_id", "UPDATE pgnfs_fs SET xform_key_id = $1::int8"
                                                      " WHERE xform_key_id IS NULL"},
    [DBFS_ST_XF_SET] = {"pgnfs_xf_set", "SELECT pgnfs_xf_set($1::int8, $2::int8, $3::text)"},
    [DBFS_ST_XF_GET] = {"pgnfs_xf_get", "SELECT coalesce(f.chain, 0)::int8, c.text, f.type, f.size,"
                                        " f.used FROM fileatt f"
                                        " LEFT JOIN pgnfs_xform_chain c ON c.id = f.chain"
                                        " WHERE f.inode = $1::int8"},
    [DBFS_ST_XF_FILES] = {"pgnfs_xf_files", "SELECT f.inode, f.chain, f.size, c.text FROM fileatt f"
                                            " LEFT JOIN pgnfs_xform_chain c ON c.id = f.chain"
                                            " WHERE f.chain <> 0 ORDER BY f.inode"},
    [DBFS_ST_XF_CHUNKS] = {"pgnfs_xf_chunks",
                           "SELECT d.chunk," DBFS_SQL_XF_FETCH(
                               "d") " FROM fileatt f,"
                                    " pgnfs_data_read(f.inode, 0, 9223372036854775807) d"
                                    " WHERE f.inode = $1::int8"},
    [DBFS_ST_XF_LOCK] = {"pgnfs_xf_lock", "SELECT coalesce(chain, 0)::int8, type, used FROM fileatt"
                                          " WHERE inode = $1::int8 FOR UPDATE"},
    [DBFS_ST_XF_RECHAIN] = {"pgnfs_xf_rechain",
                            "SELECT pgnfs_xf_rechain($1::int8, $2::int8, $3::text,"
                            " $4::int8[], $5::bytea[])"},
    /* pgnfs xform link; the links for pgnfs xform list --links, fsck. */
    [DBFS_ST_XF_LINK_MAKE] = {"pgnfs_xf_link_make",
                              "SELECT pgnfs_xf_link($1::int8, $2::int8, $3::bytea, $4::int8,"
                              " $5::text, $6::bool, $7::bool, $8::int8)"},
    [DBFS_ST_XF_LINKS] = {"pgnfs_xf_links",
                          "SELECT k.inode, k.base, c.text, k.writable, k.preserves,"
                          " pgnfs.path(k.inode),"
                          " CASE WHEN b.inode IS NULL THEN NULL ELSE pgnfs.path(k.base) END"
                          " FROM pgnfs_xform_link k JOIN pgnfs_xform_chain c ON c.id = k.chain"
                          " LEFT JOIN fileatt b ON b.inode = k.base ORDER BY k.inode"},
    /* Why a chain's in-database stages cannot be used, or NULL. */
    [DBFS_ST_XF_SQL_PROBLEM] = {"pgnfs_xf_sql_problem", "SELECT pgnfs_xf_sql_problem($1::text)"},
    /* pgnfs xform apply: the regular files beneath directory $1 whose
     * chain is not their directory's, with that chain (id, text). */
    [DBFS_ST_XF_STRAYS] = {"pgnfs_xf_strays",
                           "WITH RECURSIVE d(inode) AS (SELECT $1::int8 UNION"
                           " SELECT n.inode FROM naming n JOIN d ON n.parent = d.inode"
                           " JOIN fileatt f ON f.inode = n.inode AND f.type = " DBFS_SQL_T_DIR ")"
                           " SELECT DISTINCT ON (f.inode) f.inode, coalesce(p.chain, 0)::int8,"
                           " coalesce(c.text, 'none'), n.name"
                           " FROM d JOIN naming n ON n.parent = d.inode"
                           " JOIN fileatt f ON f.inode = n.inode AND f.type = " DBFS_SQL_T_REG
                           " AND f.rdev_major <> 5265484" /* no link (27_xform_link.sql) */
                           " JOIN fileatt p ON p.inode = n.parent"
                           " LEFT JOIN pgnfs_xform_chain c ON c.id = p.chain"
                           " WHERE coalesce(f.chain, 0) <> coalesce(p.chain, 0)"
                           " ORDER BY f.inode"},
    /* Several frontends (schema/005_frontends.sql). Rows with a heartbeat
     * younger than $1 seconds, and (column 8) whether their session is
     * still connected: live when it is. A solo row whose session is gone
     * may still answer from its caches until its heartbeat is stale. */
    [DBFS_ST_FRONT_LIVE] = {"pgnfs_front_live",
                            "SELECT id, host, address, port, pid, coherence,"
                            " extract(epoch FROM now() - heartbeat)::int8, coalesce(pidns, ''),"
                            " EXISTS (SELECT 1 FROM pg_stat_activity a"
                            "         WHERE a.pid = f.backend_pid), solo"
                            " FROM pgnfs_frontends f"
                            " WHERE heartbeat > now() - make_interval(secs => $1::int8)"
                            " ORDER BY id"},
    /* Register: rows that are not live go (dead servers; a solo one only
     * once its heartbeat is stale), ours comes in. */
    [DBFS_ST_FRONT_INSERT] = {"pgnfs_front_insert",
                              "WITH gone AS (DELETE FROM pgnfs_frontends f"
                              "  WHERE heartbeat <= now() - make_interval(secs => $6::int8)"
                              "     OR (NOT solo AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a"
                              "                    WHERE a.pid = f.backend_pid)))"
                              " INSERT INTO pgnfs_frontends (host, address, port, pid, coherence,"
                              "   backend_pid, solo, pidns)"
                              " VALUES ($1::text, $2::text, $3::int4, $4::int4, $5::text,"
                              "   pg_backend_pid(), $7::bool, $8::text) RETURNING id"},
    [DBFS_ST_FRONT_BEAT] = {"pgnfs_front_beat",
                            "UPDATE pgnfs_frontends SET heartbeat = now(),"
                            " backend_pid = pg_backend_pid(), calls = $2::int8,"
                            " stat_entries = $3::int8, naming_entries = $4::int8,"
                            " buffer_bytes = $5::int8, small_bytes = $6::int8,"
                            " writeback_bytes = $7::int8, invalidations = $8::int8,"
                            " inval_horizon = $9::text::xid8"
                            " WHERE id = $1::int8"
                            /* Shared servers that read the log, besides us, with a
                             * heartbeat younger than $10 s: one that is solo leaves
                             * solo when it sees one. */
                            " RETURNING id, (SELECT count(*) FROM pgnfs_frontends o"
                            "   WHERE o.id <> $1::int8 AND o.coherence = 'shared'"
                            "     AND NOT o.solo"
                            "     AND o.heartbeat > now() - make_interval(secs => $10::int8))"},
    [DBFS_ST_FRONT_DELETE] = {"pgnfs_front_delete",
                              "DELETE FROM pgnfs_frontends WHERE id = $1::int8"},
    /* pgnfs frontends: every row, live ($1 as in LIVE) or not. */
    [DBFS_ST_FRONT_LIST] = {"pgnfs_front_list",
                            "SELECT id, host, address, port, pid, coherence,"
                            " extract(epoch FROM now() - started)::int8,"
                            " extract(epoch FROM now() - heartbeat)::int8, calls,"
                            " stat_entries, naming_entries, buffer_bytes, small_bytes,"
                            " writeback_bytes, invalidations, solo,"
                            " (heartbeat > now() - make_interval(secs => $1::int8)"
                            "  AND EXISTS (SELECT 1 FROM pg_stat_activity a"
                            "              WHERE a.pid = f.backend_pid))"
                            " FROM pgnfs_frontends f ORDER BY id"},
    /* pgnfs stats: the database's place in its replication topology. */
    [DBFS_ST_FRONT_TOPOLOGY] = {"pgnfs_front_topology",
                                "SELECT pg_is_in_recovery(), current_setting('server_version'),"
                                " coalesce(host(inet_server_addr()), 'local socket'),"
                                " coalesce(inet_server_port(), 0),"
                                " current_setting('synchronous_standby_names'),"
                                " (SELECT count(*) FROM pg_stat_replication)::int8,"
                                " (SELECT coalesce(string_agg(coalesce(application_name, '?')"
                                "    || ' ' || coalesce(state, '?') || ' '"
                                "    || coalesce(sync_state, '?'), ', '), '')"
                                "  FROM pg_stat_replication)"},
    /* Snapshot administration (21_snap.sql; dbfs_snap_admin.c). */
    [DBFS_ST_SNAP_CREATE] = {"pgnfs_snap_create",
                             "SELECT id, (extract(epoch FROM created) * 1000000)::int8"
                             " FROM pgnfs_snap_create($1::text, $2::bool)"},
    [DBFS_ST_SNAP_DELETE] = {"pgnfs_snap_delete", "SELECT pgnfs_snap_delete($1::text)"},
    [DBFS_ST_SNAP_RECLAIM] = {"pgnfs_snap_reclaim",
                              "SELECT pos, upto, removed FROM pgnfs_snap_reclaim($1::int8)"},
    [DBFS_ST_SNAP_PENDING] = {"pgnfs_snap_pending",
                              "SELECT reclaim_from IS NOT NULL FROM pgnfs_snap_state"},
    [DBFS_ST_SNAP_LIST_ALL] = {"pgnfs_snap_list_all",
                               "SELECT id, name, (extract(epoch FROM created) * 1000000)::int8,"
                               " scheduled, holds FROM pgnfs_snap_list()"},
    /* What changed from snapshot $1 to $2 (NULL: live), by path. */
    [DBFS_ST_SNAP_DIFF] = {"pgnfs_snap_diff", "SELECT change, path, type"
                                              " FROM pgnfs.diff($1::text, $2::text)"},
    [DBFS_ST_SNAP_TICK] = {"pgnfs_snap_tick",
                           "SELECT name, taken FROM pgnfs_snap_tick($1::int8, $2::int4, $3::text)"},
    /* A frontend's read of the invalidation log (dbfs_coh_log.c): the rows
     * of transactions its last snapshot could not see ($1 its xmax, NULL:
     * none; $2 its in-progress xids) that are not its own ($3), and this
     * snapshot's figures and the trim mark, in one statement (one
     * snapshot). Prepared on the reading session by libpq itself. */
    [DBFS_ST_COH_READ] = {"pgnfs_coh_read",
                          "SELECT 1, l.xid::text, l.kind::text, l.ino, l.name, NULL::text,"
                          "   NULL::text"
                          " FROM pgnfs_inval_log l"
                          " WHERE $1::xid8 IS NOT NULL"
                          "   AND (l.xid >= $1::xid8 OR l.xid = ANY ($2::xid8[]))"
                          "   AND l.origin IS DISTINCT FROM $3::int8"
                          " UNION ALL"
                          " SELECT 0, pg_snapshot_xmax(s)::text, NULL, NULL, NULL,"
                          "   array_to_string(ARRAY(SELECT pg_snapshot_xip(s)), ','),"
                          "   (SELECT below FROM pgnfs_inval_trim)::text"
                          " FROM pg_current_snapshot() s"},
    /* Trim the log below the oldest horizon of the live servers that read
     * it ($1 as in LIVE), none while one of them has not reported one
     * yet; the mark first, in the same transaction. */
    [DBFS_ST_COH_TRIM] = {"pgnfs_coh_trim",
                          "WITH h AS (SELECT min(inval_horizon) AS h,"
                          "   bool_or(inval_horizon IS NULL) AS unknown"
                          "   FROM pgnfs_frontends f"
                          "   WHERE coherence = 'shared' AND NOT solo"
                          "     AND heartbeat > now() - make_interval(secs => $1::int8)"
                          "     AND EXISTS (SELECT 1 FROM pg_stat_activity a"
                          "                 WHERE a.pid = f.backend_pid)),"
                          " t AS (INSERT INTO pgnfs_inval_trim (id, below)"
                          "   SELECT 1, h FROM h WHERE h IS NOT NULL AND NOT unknown"
                          "   ON CONFLICT (id) DO UPDATE"
                          "     SET below = greatest(pgnfs_inval_trim.below, EXCLUDED.below)"
                          "   RETURNING below)"
                          " DELETE FROM pgnfs_inval_log WHERE xid < (SELECT below FROM t)"},
    /* A solo server reads the log now ($2: its horizon); also a heartbeat. */
    [DBFS_ST_COH_ACK] = {"pgnfs_coh_ack",
                         "UPDATE pgnfs_frontends SET solo = false, inval_horizon = $2::text::xid8,"
                         " heartbeat = now(), backend_pid = pg_backend_pid() WHERE id = $1::int8"},
    /* Solo servers other than $1 whose heartbeat is younger than $2 s: a
     * joining server waits until there is none. */
    [DBFS_ST_COH_SOLOS] = {"pgnfs_coh_solos",
                           "SELECT count(*) FROM pgnfs_frontends"
                           " WHERE id <> $1::int8 AND coherence = 'shared' AND solo"
                           "   AND heartbeat > now() - make_interval(secs => $2::int8)"},
    /* A joining server wakes the solo one. */
    [DBFS_ST_COH_JOIN] = {"pgnfs_coh_join", "SELECT pg_notify('pgnfs_join', $1::text)"},
    /* A change made outside every server (an admin tool): the row
     * "everything" in the invalidation log. */
    [DBFS_ST_COH_EVERYTHING] = {"pgnfs_coh_everything",
                                "INSERT INTO pgnfs_inval_log (kind) VALUES ('*')"},
};

const char dbfs_sql_vacuum_data[] = "VACUUM allfiles";
const char dbfs_sql_vacuum_all[] = "VACUUM";
const char dbfs_sql_checkpoint[] = "CHECKPOINT";

const char dbfs_sql_inval_on[] =
    "DO $$ BEGIN\n"
    "  IF EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'pgnfs_inval_fileatt'\n"
    "             AND tgenabled = 'D') THEN\n"
    "    ALTER TABLE fileatt ENABLE TRIGGER pgnfs_inval_fileatt;\n"
    "  END IF;\n"
    "  IF EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'pgnfs_inval_naming'\n"
    "             AND tgenabled = 'D') THEN\n"
    "    ALTER TABLE naming ENABLE TRIGGER pgnfs_inval_naming;\n"
    "  END IF;\n"
    "END $$";
const char dbfs_sql_inval_off[] =
    "DO $$ BEGIN\n"
    "  IF EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'pgnfs_inval_fileatt'\n"
    "             AND tgenabled <> 'D') THEN\n"
    "    ALTER TABLE fileatt DISABLE TRIGGER pgnfs_inval_fileatt;\n"
    "  END IF;\n"
    "  IF EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'pgnfs_inval_naming'\n"
    "             AND tgenabled <> 'D') THEN\n"
    "    ALTER TABLE naming DISABLE TRIGGER pgnfs_inval_naming;\n"
    "  END IF;\n"
    "END $$";
/* The read runs on a generic plan (planned once: a custom plan per read
 * would cost more than the read), which must use the index however the
 * log's statistics look (enable_seqscan off; then the cost figures would
 * start JIT). */
const char dbfs_sql_coh_listen[] = "SET plan_cache_mode = force_generic_plan;"
                                   " SET enable_seqscan = off; SET jit = off;"
                                   " DEALLOCATE ALL; LISTEN pgnfs_join";

/* mkfs --force: every object the schema files create, gone. Tables first
 * (CASCADE takes the functions over their row types), then what remains. */
const char dbfs_sql_drop_all[] =
    /* The SQL views (schema/functions/95_views.sql). */
    "DROP SCHEMA IF EXISTS pgnfs CASCADE;\n"
    "DROP TABLE IF EXISTS pgnfs_nlm_lock, pgnfs_nlm_wait, pgnfs_nlm_share, pgnfs_nlm_owner,"
    " pgnfs_nlm_host, pgnfs_nlm_server CASCADE;\n"
    "DROP TABLE IF EXISTS pgnfs_frontends;\n"
    "DROP TABLE IF EXISTS pgnfs_inval_log, pgnfs_inval_trim;\n"
    "DROP TABLE IF EXISTS allfiles, naming, fileatt, pgnfs_fs CASCADE;\n"
    /* The per-file tables of the inversion and hybrid layouts. */
    "DROP TABLE IF EXISTS pgnfs_filetab;\n"
    /* Transformation chains and links (004_xform.sql, 009_xform_links.sql). */
    "DROP TABLE IF EXISTS pgnfs_xform_link, pgnfs_xform_chain, pgnfs_xform_epoch;\n"
    /* Snapshots (008_snapshots.sql); their kept per-file tables below. */
    "DROP TABLE IF EXISTS pgnfs_snap_state, pgnfs_snapshots, pgnfs_snap_fileatt,"
    " pgnfs_snap_naming, pgnfs_snap_chunks, pgnfs_snap_tab;\n"
    "DO $$ DECLARE t regclass; BEGIN\n"
    "  FOR t IN SELECT c.oid::regclass FROM pg_class c\n"
    "            WHERE c.relnamespace = current_schema()::regnamespace\n"
    "              AND c.relkind = 'r'\n"
    "              AND c.relname ~ '^(inv[0-9]+|pgnfs_snapinv[0-9]+_[0-9]+)$' LOOP\n"
    "    EXECUTE 'DROP TABLE ' || t::text;\n"
    "  END LOOP;\n"
    "END $$;\n"
    "DROP SEQUENCE IF EXISTS pgnfs_inode_seq, pgnfs_cookie_seq, pgnfs_snap_epoch_seq;\n"
    "DROP TYPE IF EXISTS pgnfs_result, pgnfs_nlm_res CASCADE;\n"
    "DO $$ DECLARE f regprocedure; BEGIN\n"
    "  FOR f IN SELECT p.oid::regprocedure FROM pg_proc p\n"
    "            WHERE p.pronamespace = current_schema()::regnamespace\n"
    "              AND p.proname LIKE 'pgnfs\\_%' LOOP\n"
    "    EXECUTE 'DROP FUNCTION ' || f::text || ' CASCADE';\n"
    "  END LOOP;\n"
    "END $$;\n";
