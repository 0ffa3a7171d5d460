/*
 * dbfs_fs.c -- the life cycle of a file system: mkfs (create the schema and
 * the root directory), open (read the facts, upgrade the schema and the
 * functions), close.
 *
 * NOTES
 *   Both run on a session of their own (dbfs_conn.h), in one transaction
 *   (dbfs_txn: run again whole on a serialization failure or deadlock)
 *   that holds an advisory lock (DBFS_ADM_LOCK_KEY), so two servers
 *   starting together, or a mkfs and a server, do not race. Errors are
 *   dbfs_err.h's, as on every path.
 *
 *   Upgrade: a database records its schema version (the migrations it
 *   has) and the digest of the function files it holds (pgnfs_fs). open
 *   applies every newer migration in order, then the function files when
 *   a migration ran or the digest is not this build's (CREATE OR REPLACE:
 *   a function keeps its signature across versions, or a migration drops
 *   the old one first). A newer schema than this build's is refused.
 *
 *   Schema files (migrations NNN_*.sql, then functions/NAME.sql, embedded by
 *   schema/embed.cmake) are scripts run with the simple query protocol;
 *   they take no values. Everything else is a prepared statement of
 *   dbfs_sql.c with binary parameters.
 *
 *   A dbfs owns copies of the strings of its dbfs_config; dbfs_close()
 *   frees them. The dbfs is immutable after dbfs_open() returns.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <openssl/rand.h>

#include "dbfs_atime.h"
#include "dbfs_cache.h"
#include "dbfs_conn.h"
#include "dbfs_data.h"
#include "dbfs_int.h"
#include "dbfs_perm.h"
#include "dbfs_ra.h"
#include "dbfs_small.h"
#include "dbfs_space.h"
#include "dbfs_wb.h"
#include "dbfs_xf.h"
#include "schema_files.h"
#include "store.h"

/* The advisory lock mkfs and open hold ("pgnfs" in ASCII). */
#define DBFS_ADM_LOCK_KEY INT64_C(0x70676e6673)
/* Chunk sizes a file system may have (powers of two; pgnfs_fs's CHECK). */
#define DBFS_CHUNK_SIZE_MIN 1024u
#define DBFS_CHUNK_SIZE_MAX 1048576u
/* The largest hybrid threshold (2^40; pgnfs_fs's CHECK). */
#define DBFS_HYBRID_THRESHOLD_MAX (UINT64_C(1) << 40)
/* Generations are positive int4 (fileatt.generation). */
#define DBFS_GEN_MAX 0x7fffffffu
/* The root directory's mode when mkfs is given none. */
#define DBFS_ROOT_MODE_DEFAULT 0755u

/* Run statement id, discarding its rows. */
static int dbfs_adm_run(dbfs_conn *a, dbfs_stmt id, const dbfs_params *p)
{
    PGresult *r;
    int rc = dbfs_exec(a, id, p, &r);

    PQclear(r);
    return rc;
}

/* Take the advisory lock (inside the transaction: released at its end). */
static int dbfs_adm_lock(dbfs_conn *a)
{
    dbfs_params p;

    dbfs_params_init(&p);
    dbfs_param_i8(&p, DBFS_ADM_LOCK_KEY);
    return dbfs_adm_run(a, DBFS_ST_ADM_LOCK, &p);
}

/* Does the database hold a file system? 1 yes, 0 no, or a negative errno. */
static int dbfs_adm_exists(dbfs_conn *a)
{
    PGresult *r;
    int rc = dbfs_exec(a, DBFS_ST_ADM_EXISTS, NULL, &r);

    if (rc != 0)
        return rc;
    rc = PQntuples(r) == 1 && PQgetlength(r, 0, 0) == 1 && PQgetvalue(r, 0, 0)[0] != 0;
    PQclear(r);
    return rc;
}

/* Apply the function files and record their digest. */
static int dbfs_adm_functions(dbfs_conn *a)
{
    dbfs_params p;
    int rc;

    for (unsigned i = 0; i < schema_nfiles; i++) {
        if (schema_files[i].version != 0)
            continue;
        rc = dbfs_script(a, schema_files[i].name, schema_files[i].sql);
        if (rc != 0)
            return rc;
    }
    dbfs_params_init(&p);
    dbfs_param_bytes(&p, schema_functions_digest, strlen(schema_functions_digest));
    return dbfs_adm_run(a, DBFS_ST_ADM_SET_DIGEST, &p);
}

static const char *dbfs_storage_name(dbfs_storage s)
{
    switch (s) {
    case DBFS_STORAGE_SINGLE:
        return "single";
    case DBFS_STORAGE_INVERSION:
        return "inversion";
    case DBFS_STORAGE_HYBRID:
        return "hybrid";
    }
    return "?";
}

static const char *dbfs_encoding_name(dbfs_encoding e)
{
    return e == DBFS_ENC_BASE64 ? "base64" : "binary";
}

/* The layout named s (as pgnfs_fs.storage says); 0, or -1 if unknown. */
static int dbfs_storage_parse(const char *s, dbfs_storage *out)
{
    static const dbfs_storage all[] = {DBFS_STORAGE_SINGLE, DBFS_STORAGE_INVERSION,
                                       DBFS_STORAGE_HYBRID};

    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(s, dbfs_storage_name(all[i])) == 0 && store_for(all[i])) {
            *out = all[i];
            return 0;
        }
    }
    return -1;
}

/* The encoding named s; 0, or -1 if unknown. */
static int dbfs_encoding_parse(const char *s, dbfs_encoding *out)
{
    if (strcmp(s, "binary") == 0)
        *out = DBFS_ENC_BINARY;
    else if (strcmp(s, "base64") == 0)
        *out = DBFS_ENC_BASE64;
    else
        return -1;
    return 0;
}

/* Is chunk a chunk size a file system may have (a power of two from
 * DBFS_CHUNK_SIZE_MIN to DBFS_CHUNK_SIZE_MAX)? */
static bool dbfs_chunk_size_ok(uint32_t chunk)
{
    return chunk >= DBFS_CHUNK_SIZE_MIN && chunk <= DBFS_CHUNK_SIZE_MAX &&
           (chunk & (chunk - 1)) == 0;
}

/* What mkfs writes: the options with their defaults, and the random facts
 * (drawn once: a transaction run again writes the same ones). */
typedef struct {
    const dbfs_mkfs_opts *opts;
    uint32_t chunk;
    uint64_t threshold;
    const char *storage, *encoding;
    unsigned char secret[DBFS_SECRET_LEN];
    uint64_t fsid;
    uint32_t root_gen;
} dbfs_mkfs_plan;

/* Check the options and draw the random facts. Returns 0, -EINVAL (bad
 * options; logged) or -EIO (no randomness; logged). */
static int dbfs_mkfs_prepare(const dbfs_mkfs_opts *opts, dbfs_mkfs_plan *m)
{
    unsigned char rnd[12];

    memset(m, 0, sizeof *m);
    m->opts = opts;
    m->chunk = opts->chunk_size ? opts->chunk_size : DBFS_CHUNK_SIZE_DEFAULT;
    m->threshold = opts->hybrid_threshold ? opts->hybrid_threshold : DBFS_HYBRID_THRESHOLD;
    m->storage = dbfs_storage_name(opts->storage);
    m->encoding = dbfs_encoding_name(opts->encoding);
    if (!dbfs_chunk_size_ok(m->chunk)) {
        g_warning("mkfs: chunk size %u is not a power of two from %u to %u", m->chunk,
                  DBFS_CHUNK_SIZE_MIN, DBFS_CHUNK_SIZE_MAX);
        return -EINVAL;
    }
    if (m->threshold > DBFS_HYBRID_THRESHOLD_MAX) {
        g_warning("mkfs: hybrid threshold %" PRIu64 " is outside 1..2^40", m->threshold);
        return -EINVAL;
    }
    if (!store_for(opts->storage) ||
        (opts->encoding != DBFS_ENC_BINARY && opts->encoding != DBFS_ENC_BASE64)) {
        g_warning("mkfs: storage \"%s\" with encoding \"%s\" is not available in this build",
                  m->storage, m->encoding);
        return -EINVAL;
    }
    if (RAND_bytes(m->secret, sizeof m->secret) != 1 || RAND_bytes(rnd, sizeof rnd) != 1) {
        g_warning("mkfs: the random number generator failed");
        return -EIO;
    }
    for (int i = 0; i < 8; i++)
        m->fsid = m->fsid << 8 | rnd[i];
    for (int i = 8; i < 12; i++)
        m->root_gen = m->root_gen << 8 | rnd[i];
    m->root_gen &= DBFS_GEN_MAX;
    if (m->root_gen == 0)
        m->root_gen = 1;
    return 0;
}

/* Record the facts of m (pgnfs_fs) and make the root directory. */
static int dbfs_mkfs_facts(dbfs_conn *a, const dbfs_mkfs_plan *m)
{
    const uint32_t mode = m->opts->root_mode ? m->opts->root_mode : DBFS_ROOT_MODE_DEFAULT;
    dbfs_params p;
    int rc;

    dbfs_params_init(&p);
    dbfs_param_i4(&p, schema_version);
    dbfs_param_i8(&p, (int64_t)m->fsid);
    dbfs_param_bytes(&p, m->storage, strlen(m->storage));
    dbfs_param_i4(&p, (int32_t)m->chunk);
    dbfs_param_bytes(&p, m->encoding, strlen(m->encoding));
    dbfs_param_bytes(&p, m->secret, sizeof m->secret);
    rc = dbfs_adm_run(a, DBFS_ST_ADM_FS_INSERT, &p);
    if (rc != 0)
        return rc;
    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)m->threshold);
    rc = dbfs_adm_run(a, DBFS_ST_ADM_SET_THRESHOLD, &p);
    if (rc != 0)
        return rc;
    dbfs_params_init(&p);
    dbfs_param_i4(&p, (int32_t)m->root_gen);
    dbfs_param_i4(&p, (int32_t)(mode & DBFS_MODE_MASK));
    dbfs_param_i8(&p, m->opts->root_uid);
    dbfs_param_i8(&p, m->opts->root_gid);
    dbfs_param_i8(&p, dbfs_now_ns());
    return dbfs_adm_run(a, DBFS_ST_ADM_ROOT_INSERT, &p);
}

/* mkfs's transaction (dbfs_txn): under the advisory lock, refuse or drop
 * an existing file system, apply the migrations, the facts, the root and
 * the functions. */
static int dbfs_mkfs_txn(dbfs_conn *a, void *arg)
{
    const dbfs_mkfs_plan *m = arg;
    int rc = dbfs_adm_lock(a);

    if (rc == 0)
        rc = dbfs_adm_exists(a);
    if (rc < 0)
        return rc;
    if (rc == 1 && !m->opts->force) {
        g_message("mkfs: the database already holds a file system (use force to replace it)");
        return -EEXIST;
    }
    if (rc == 1) {
        rc = dbfs_script(a, "dropping the old file system", dbfs_sql_drop_all);
        if (rc != 0)
            return rc;
    }
    for (unsigned i = 0; i < schema_nfiles; i++) {
        if (schema_files[i].version == 0)
            continue;
        rc = dbfs_script(a, schema_files[i].name, schema_files[i].sql);
        if (rc != 0)
            return rc;
    }
    rc = dbfs_mkfs_facts(a, m);
    if (rc == 0)
        rc = dbfs_adm_functions(a);
    return rc;
}

/*
 * dbfs_mkfs -- see dbfs.h. In one transaction under the advisory lock
 * (run again whole on a serialization failure or deadlock, bounded):
 * drop an existing file system (force only), apply the migrations, record
 * the facts (random fsid, 32-byte handle secret from RAND_bytes), make the
 * root (inode 1, random generation, nlink 2), apply the function files and
 * record their digest. -EINVAL for a chunk size that is not a power of two
 * from 1024 to 1048576, a hybrid threshold outside 1..2^40, or a
 * storage/encoding this build lacks. Other errors as dbfs_err.h's table.
 */
int dbfs_mkfs(const char *conninfo, const dbfs_mkfs_opts *opts)
{
    dbfs_mkfs_plan m;
    dbfs_conn *a;
    int rc = dbfs_mkfs_prepare(opts, &m);

    if (rc == 0)
        rc = dbfs_session_open(conninfo, "pgnfs", &a);
    if (rc != 0)
        return rc;
    rc = dbfs_txn(a, "mkfs", dbfs_mkfs_txn, &m);
    dbfs_conn_close(a);
    if (rc == 0)
        g_debug("mkfs: created a file system (storage %s, chunk size %u, schema version %d)",
                m.storage, m.chunk, schema_version);
    return rc;
}

/* Read the text column col of row 0 into out (NUL-terminated, cut). */
static void dbfs_get_text(const PGresult *r, int col, char *out, size_t size)
{
    size_t len = PQgetisnull(r, 0, col) ? 0 : (size_t)PQgetlength(r, 0, col);

    if (len >= size)
        len = size - 1;
    memcpy(out, PQgetvalue(r, 0, col), len);
    out[len] = 0;
}

/* The facts as DBFS_ST_ADM_FACTS reads them. */
typedef struct {
    dbfs_info info;
    int version; /* the schema version the database has */
    bool functions_current;
} dbfs_facts;

/* Read the facts (one row of DBFS_ST_ADM_FACTS) into *f. Returns 0, or
 * -EIO (damaged; logged). */
static int dbfs_facts_parse(const PGresult *r, dbfs_facts *f)
{
    char storage[32], encoding[32], digest[128];
    dbfs_info *info = &f->info;

    if (PQntuples(r) != 1 || PQnfields(r) != 8 || PQgetlength(r, 0, 5) != DBFS_SECRET_LEN ||
        PQgetisnull(r, 0, 7)) {
        g_warning("the file system's facts (table pgnfs_fs) or its root directory are damaged");
        return -EIO;
    }
    memset(f, 0, sizeof *f);
    f->version = dbfs_get_i4(r, 0, 0);
    info->fsid = (uint64_t)dbfs_get_i8(r, 0, 1);
    dbfs_get_text(r, 2, storage, sizeof storage);
    info->chunk_size = (uint32_t)dbfs_get_i4(r, 0, 3);
    dbfs_get_text(r, 4, encoding, sizeof encoding);
    memcpy(info->secret, PQgetvalue(r, 0, 5), DBFS_SECRET_LEN);
    dbfs_get_text(r, 6, digest, sizeof digest);
    info->root_gen = (uint32_t)dbfs_get_i4(r, 0, 7);
    f->functions_current = strcmp(digest, schema_functions_digest) == 0;
    if (f->version > schema_version) {
        g_warning("the file system's schema is version %d, newer than this build's %d: run a "
                  "newer pgnfs",
                  f->version, schema_version);
        return -EPROTO;
    }
    if (dbfs_storage_parse(storage, &info->storage) != 0 ||
        dbfs_encoding_parse(encoding, &info->encoding) != 0 ||
        !dbfs_chunk_size_ok(info->chunk_size)) {
        g_warning("the file system uses storage \"%s\" with encoding \"%s\" and chunk size "
                  "%u, which this build cannot serve: run a newer pgnfs",
                  storage, encoding, info->chunk_size);
        return -EPROTO;
    }
    return 0;
}

/*
 * Bring the database to this build: every migration newer than its
 * schema version, in order, each recorded (pgnfs_fs.schema_version); then
 * the function files when a migration ran or their digest is not this
 * build's. Old function definitions that a migration's DDL needs stay
 * until the function files replace them, in the same transaction.
 */
static int dbfs_upgrade(dbfs_conn *a, dbfs_facts *f)
{
    int rc;

    for (unsigned i = 0; i < schema_nfiles; i++) {
        dbfs_params p;

        if (schema_files[i].version <= f->version)
            continue;
        g_message("upgrading the schema to version %d (%s)", schema_files[i].version,
                  schema_files[i].name);
        rc = dbfs_script(a, schema_files[i].name, schema_files[i].sql);
        if (rc != 0)
            return rc;
        dbfs_params_init(&p);
        dbfs_param_i4(&p, schema_files[i].version);
        rc = dbfs_adm_run(a, DBFS_ST_ADM_SET_VERSION, &p);
        if (rc != 0)
            return rc;
        f->version = schema_files[i].version;
        f->functions_current = false;
    }
    if (f->functions_current)
        return 0;
    g_message("installing the database functions of this build");
    return dbfs_adm_functions(a);
}

/* The hybrid threshold (a fact of schema version 2 on) into *info, and
 * whether the database is a Citus coordinator. */
static int dbfs_facts_threshold(dbfs_conn *a, dbfs_info *info)
{
    PGresult *r;
    int rc = dbfs_exec(a, DBFS_ST_ADM_THRESHOLD, NULL, &r);

    if (rc != 0)
        return rc;
    if (PQntuples(r) != 1 || PQgetisnull(r, 0, 0)) {
        g_warning("the file system's facts (table pgnfs_fs) are damaged: no hybrid threshold");
        rc = -EIO;
    } else {
        info->hybrid_threshold = (uint64_t)dbfs_get_i8(r, 0, 0);
    }
    PQclear(r);
    if (rc == 0)
        rc = dbfs_exec(a, DBFS_ST_ADM_CITUS, NULL, &r);
    if (rc == 0) {
        info->citus = PQntuples(r) == 1 && PQgetlength(r, 0, 0) == 1 && PQgetvalue(r, 0, 0)[0];
        PQclear(r);
    }
    return rc;
}

/*
 * open's transaction (dbfs_txn; arg: the dbfs_info to fill): under the
 * advisory lock, read the facts and upgrade what is older than this
 * build.
 */
static int dbfs_attach_txn(dbfs_conn *a, void *arg)
{
    dbfs_info *info = arg;
    PGresult *r;
    dbfs_facts f;
    int rc = dbfs_adm_lock(a);

    if (rc == 0)
        rc = dbfs_adm_exists(a);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        g_message("the database holds no pgnfs file system: run pgnfs mkfs first");
        return -ENOENT;
    }
    rc = dbfs_exec(a, DBFS_ST_ADM_FACTS, NULL, &r);
    if (rc != 0)
        return rc;
    rc = dbfs_facts_parse(r, &f);
    PQclear(r);
    if (rc == 0)
        rc = dbfs_upgrade(a, &f);
    if (rc == 0)
        rc = dbfs_facts_threshold(a, &f.info);
    if (rc == 0) {
        f.info.schema_version = f.version;
        *info = f.info;
    }
    return rc;
}

/*
 * dbfs_open -- see dbfs.h. In one transaction under the advisory lock
 * (run again whole on a serialization failure or deadlock): read the facts,
 * refuse a newer schema or a layout this build cannot serve (-EPROTO,
 * logged), apply newer migrations, re-apply the function files when their
 * digest differs from this build's. *out is the caller's (dbfs_close()).
 */
int dbfs_open(const dbfs_config *cfg, dbfs **out)
{
    dbfs_conn *a;
    dbfs *fs = NULL;
    int rc;

    *out = NULL;
    fs = calloc(1, sizeof *fs);
    if (!fs)
        return -ENOMEM;
    g_mutex_init(&fs->fsstat_memo.lock);
    g_mutex_init(&fs->xl_lock);
    g_mutex_init(&fs->renew.lock);
    dbfs_ra_init(fs);
    fs->conninfo = strdup(cfg->conninfo);
    fs->space_path = cfg->space_path ? strdup(cfg->space_path) : NULL;
    fs->relatime = cfg->relatime;
    if (!fs->conninfo || (cfg->space_path && !fs->space_path)) {
        rc = -ENOMEM;
        goto err;
    }
    rc = dbfs_session_open(cfg->conninfo, "pgnfs", &a);
    if (rc != 0)
        goto err;
    rc = dbfs_txn(a, "opening the file system", dbfs_attach_txn, &fs->info);
    if (rc == 0)
        rc = dbfs_xf_open(fs, cfg, a);
    dbfs_conn_close(a);
    if (rc != 0)
        goto err;
    fs->store = store_for(fs->info.storage);
    rc = dbfs_cache_open(fs, cfg);
    if (rc != 0)
        goto err;
    rc = dbfs_chunks_open(fs, cfg);
    if (rc != 0)
        goto err;
    rc = dbfs_small_open(fs, cfg);
    if (rc != 0)
        goto err;
    rc = dbfs_wb_open(fs, cfg);
    if (rc != 0)
        goto err;
    rc = dbfs_atime_open(fs);
    if (rc != 0)
        goto err;
    rc = dbfs_space_open(fs, cfg);
    if (rc != 0)
        goto err;
    *out = fs;
    return 0;
err:
    dbfs_close(fs);
    return rc;
}

/* dbfs_close -- free fs (NULL is ignored); its connections must be closed
 * first. */
void dbfs_close(dbfs *fs)
{
    if (!fs)
        return;
    dbfs_wb_close(fs);
    dbfs_atime_close(fs);
    dbfs_space_close(fs);
    dbfs_cache_close(fs);
    dbfs_chunks_close(fs);
    dbfs_small_close(fs);
    dbfs_xf_close(fs);
    free(fs->conninfo);
    free(fs->space_path);
    g_mutex_clear(&fs->fsstat_memo.lock);
    g_mutex_clear(&fs->xl_lock);
    g_mutex_clear(&fs->renew.lock);
    dbfs_ra_clear(fs);
    free(fs);
}

/* dbfs_get_info -- the facts of fs, owned by fs. Cannot fail. */
const dbfs_info *dbfs_get_info(const dbfs *fs)
{
    return &fs->info;
}
