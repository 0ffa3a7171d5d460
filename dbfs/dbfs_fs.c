/*
 * dbfs_fs.c -- the life cycle of a file system: mkfs (create the schema and
 * the root directory), open (read the facts, upgrade the schema and the
 * functions), close.
 *
 * NOTES
 *   Both run on a connection of their own, outside pipeline mode, in one
 *   transaction that holds an advisory lock (DBFS_ADM_LOCK_KEY), so two
 *   servers starting together, or a mkfs and a server, do not race.
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

#include "dbfs_int.h"
#include "schema_files.h"
#include "store.h"

/* The advisory lock mkfs and open hold ("pgnfs" in ASCII). */
#define DBFS_ADM_LOCK_KEY INT64_C(0x70676e6673)

/* An administrative session: a plain connection and which of the admin
 * statements it has prepared. */
typedef struct {
    PGconn *pg;
    bool prepared[DBFS_ST_COUNT];
} dbfs_adm;

static void dbfs_notice(void *arg, const char *msg)
{
    (void)arg;
    g_debug("database notice: %.*s", (int)strcspn(msg, "\n"), msg);
}

/* Map a failed result of an admin step to an errno, logging why. */
static int dbfs_adm_error(const PGresult *res, PGconn *pg, const char *what)
{
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;

    if (!state) {
        const char *m = PQerrorMessage(pg);

        g_warning("%s: %.*s", what, (int)strcspn(m, "\n"), m);
        return PQstatus(pg) == CONNECTION_OK ? -EIO : -EAGAIN;
    }
    g_warning("%s: SQLSTATE %s: %s", what, state, msg ? msg : "no message");
    if (strncmp(state, "08", 2) == 0 || strncmp(state, "57P0", 4) == 0 ||
        strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0 || strcmp(state, "53300") == 0)
        return -EAGAIN;
    if (strcmp(state, "53100") == 0)
        return -ENOSPC;
    return -EIO;
}

static int dbfs_adm_connect(dbfs_adm *a, const char *conninfo)
{
    /* Defaults first: the conninfo (expanded dbname) overrides them. */
    const char *const keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
    const char *const vals[] = {"10", "pgnfs", conninfo, NULL};

    memset(a, 0, sizeof *a);
    a->pg = PQconnectdbParams(keys, vals, 1);
    if (!a->pg || PQstatus(a->pg) != CONNECTION_OK) {
        const char *m = a->pg ? PQerrorMessage(a->pg) : "out of memory";

        g_warning("cannot connect to the database: %.*s", (int)strcspn(m, "\n"), m);
        PQfinish(a->pg);
        a->pg = NULL;
        return -EAGAIN;
    }
    PQsetNoticeProcessor(a->pg, dbfs_notice, NULL);
    return 0;
}

/* Run admin statement id; *res (caller clears) on success. */
static int dbfs_adm_exec(dbfs_adm *a, dbfs_stmt id, const dbfs_params *p, PGresult **res)
{
    PGresult *r;
    ExecStatusType st;

    *res = NULL;
    if (!a->prepared[id]) {
        r = PQprepare(a->pg, dbfs_stmts[id].name, dbfs_stmts[id].sql, 0, NULL);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            int rc = dbfs_adm_error(r, a->pg, dbfs_stmts[id].name);

            PQclear(r);
            return rc;
        }
        PQclear(r);
        a->prepared[id] = true;
    }
    r = PQexecPrepared(a->pg, dbfs_stmts[id].name, p ? p->n : 0, p ? p->values : NULL,
                       p ? p->lengths : NULL, p ? p->formats : NULL, 1);
    st = PQresultStatus(r);
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
        int rc = dbfs_adm_error(r, a->pg, dbfs_stmts[id].name);

        PQclear(r);
        return rc;
    }
    *res = r;
    return 0;
}

/* Run admin statement id, discarding its rows. */
static int dbfs_adm_run(dbfs_adm *a, dbfs_stmt id, const dbfs_params *p)
{
    PGresult *r;
    int rc = dbfs_adm_exec(a, id, p, &r);

    PQclear(r);
    return rc;
}

/* Run a script (a schema file, or a fixed command) by name. */
static int dbfs_adm_script(dbfs_adm *a, const char *name, const char *sql)
{
    PGresult *r = PQexec(a->pg, sql);
    ExecStatusType st = PQresultStatus(r);
    int rc = 0;

    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && st != PGRES_EMPTY_QUERY)
        rc = dbfs_adm_error(r, a->pg, name);
    PQclear(r);
    return rc;
}

/* BEGIN, and take the advisory lock. */
static int dbfs_adm_begin(dbfs_adm *a)
{
    dbfs_params p;
    int rc = dbfs_adm_script(a, "BEGIN", "BEGIN");

    if (rc != 0)
        return rc;
    dbfs_params_init(&p);
    dbfs_param_i8(&p, DBFS_ADM_LOCK_KEY);
    return dbfs_adm_run(a, DBFS_ST_ADM_LOCK, &p);
}

/* End the session: COMMIT if rc is 0 (returning COMMIT's status), else
 * ROLLBACK (returning rc); the connection is closed either way. */
static int dbfs_adm_finish(dbfs_adm *a, int rc)
{
    if (a->pg && PQtransactionStatus(a->pg) != PQTRANS_IDLE) {
        if (rc == 0)
            rc = dbfs_adm_script(a, "COMMIT", "COMMIT");
        else
            dbfs_adm_script(a, "ROLLBACK", "ROLLBACK");
    }
    PQfinish(a->pg);
    a->pg = NULL;
    return rc;
}

/* Does the database hold a file system? 1 yes, 0 no, or a negative errno. */
static int dbfs_adm_exists(dbfs_adm *a)
{
    PGresult *r;
    int rc = dbfs_adm_exec(a, DBFS_ST_ADM_EXISTS, NULL, &r);

    if (rc != 0)
        return rc;
    rc = PQntuples(r) == 1 && PQgetlength(r, 0, 0) == 1 && PQgetvalue(r, 0, 0)[0] != 0;
    PQclear(r);
    return rc;
}

/* Apply the function files and record their digest. */
static int dbfs_adm_functions(dbfs_adm *a)
{
    dbfs_params p;
    int rc;

    for (unsigned i = 0; i < schema_nfiles; i++) {
        if (schema_files[i].version != 0)
            continue;
        rc = dbfs_adm_script(a, schema_files[i].name, schema_files[i].sql);
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

/*
 * dbfs_mkfs -- see dbfs.h. In one transaction under the advisory lock:
 * drop an existing file system (force only), apply the migrations, record
 * the facts (random fsid, 32-byte handle secret from RAND_bytes), make the
 * root (inode 1, random generation, nlink 2), apply the function files and
 * record their digest. -EINVAL for a chunk size that is not a power of two
 * from 1024 to 1048576, a hybrid threshold outside 1..2^40, or a
 * storage/encoding this build lacks.
 */
int dbfs_mkfs(const char *conninfo, const dbfs_mkfs_opts *opts)
{
    dbfs_adm a = {0};
    dbfs_params p;
    unsigned char secret[DBFS_SECRET_LEN];
    unsigned char rnd[12];
    uint32_t chunk = opts->chunk_size ? opts->chunk_size : DBFS_CHUNK_SIZE_DEFAULT;
    const char *storage = dbfs_storage_name(opts->storage);
    const char *encoding = dbfs_encoding_name(opts->encoding);
    uint64_t fsid = 0;
    uint32_t gen = 0;
    int rc;

    uint64_t threshold = opts->hybrid_threshold ? opts->hybrid_threshold : DBFS_HYBRID_THRESHOLD;

    if (chunk < 1024 || chunk > 1048576 || (chunk & (chunk - 1)) != 0) {
        g_warning("mkfs: chunk size %u is not a power of two from 1024 to 1048576", chunk);
        return -EINVAL;
    }
    if (threshold > (UINT64_C(1) << 40)) {
        g_warning("mkfs: hybrid threshold %" PRIu64 " is outside 1..2^40", threshold);
        return -EINVAL;
    }
    if (!store_for(opts->storage) ||
        (opts->encoding != DBFS_ENC_BINARY && opts->encoding != DBFS_ENC_BASE64)) {
        g_warning("mkfs: storage \"%s\" with encoding \"%s\" is not available in this build",
                  storage, encoding);
        return -EINVAL;
    }
    if (RAND_bytes(secret, sizeof secret) != 1 || RAND_bytes(rnd, sizeof rnd) != 1) {
        g_warning("mkfs: the random number generator failed");
        return -EIO;
    }
    for (int i = 0; i < 8; i++)
        fsid = fsid << 8 | rnd[i];
    for (int i = 8; i < 12; i++)
        gen = gen << 8 | rnd[i];
    gen = (gen & 0x7fffffff) ? (gen & 0x7fffffff) : 1;
    rc = dbfs_adm_connect(&a, conninfo);
    if (rc != 0)
        return rc;
    rc = dbfs_adm_begin(&a);
    if (rc != 0)
        goto out;
    rc = dbfs_adm_exists(&a);
    if (rc < 0)
        goto out;
    if (rc == 1 && !opts->force) {
        g_message("mkfs: the database already holds a file system (use force to replace it)");
        rc = -EEXIST;
        goto out;
    }
    if (rc == 1) {
        rc = dbfs_adm_script(&a, "dropping the old file system", dbfs_sql_drop_all);
        if (rc != 0)
            goto out;
    }
    for (unsigned i = 0; i < schema_nfiles; i++) {
        if (schema_files[i].version == 0)
            continue;
        rc = dbfs_adm_script(&a, schema_files[i].name, schema_files[i].sql);
        if (rc != 0)
            goto out;
    }
    dbfs_params_init(&p);
    dbfs_param_i4(&p, schema_version);
    dbfs_param_i8(&p, (int64_t)fsid);
    dbfs_param_bytes(&p, storage, strlen(storage));
    dbfs_param_i4(&p, (int32_t)chunk);
    dbfs_param_bytes(&p, encoding, strlen(encoding));
    dbfs_param_bytes(&p, secret, sizeof secret);
    rc = dbfs_adm_run(&a, DBFS_ST_ADM_FS_INSERT, &p);
    if (rc != 0)
        goto out;
    dbfs_params_init(&p);
    dbfs_param_i8(&p, (int64_t)threshold);
    rc = dbfs_adm_run(&a, DBFS_ST_ADM_SET_THRESHOLD, &p);
    if (rc != 0)
        goto out;

    dbfs_params_init(&p);
    dbfs_param_i4(&p, (int32_t)gen);
    dbfs_param_i4(&p, (int32_t)((opts->root_mode ? opts->root_mode : 0755) & 07777));
    dbfs_param_i8(&p, opts->root_uid);
    dbfs_param_i8(&p, opts->root_gid);
    dbfs_param_i8(&p, dbfs_now_ns());
    rc = dbfs_adm_run(&a, DBFS_ST_ADM_ROOT_INSERT, &p);
    if (rc != 0)
        goto out;
    rc = dbfs_adm_functions(&a);
out:
    rc = dbfs_adm_finish(&a, rc);
    if (rc == 0)
        g_debug("mkfs: created a file system (storage %s, chunk size %u, schema version %d)",
                storage, chunk, schema_version);
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

/*
 * Read the facts of the file system into *info and upgrade what is older
 * than this build. Called inside the locked transaction.
 */
static int dbfs_adm_attach(dbfs_adm *a, dbfs_info *info)
{
    PGresult *r = NULL;
    char storage[32], encoding[32], digest[128];
    int version;
    bool functions_current;
    int rc = dbfs_adm_exists(a);

    if (rc < 0)
        return rc;
    if (rc == 0) {
        g_message("the database holds no pgnfs file system: run pgnfs mkfs first");
        return -ENOENT;
    }
    rc = dbfs_adm_exec(a, DBFS_ST_ADM_FACTS, NULL, &r);
    if (rc != 0)
        return rc;
    if (PQntuples(r) != 1 || PQnfields(r) != 8 || PQgetlength(r, 0, 5) != DBFS_SECRET_LEN ||
        PQgetisnull(r, 0, 7)) {
        g_warning("the file system's facts (table pgnfs_fs) or its root directory are damaged");
        rc = -EIO;
        goto out;
    }
    version = dbfs_get_i4(r, 0, 0);
    memset(info, 0, sizeof *info);
    info->fsid = (uint64_t)dbfs_get_i8(r, 0, 1);
    dbfs_get_text(r, 2, storage, sizeof storage);
    info->chunk_size = (uint32_t)dbfs_get_i4(r, 0, 3);
    dbfs_get_text(r, 4, encoding, sizeof encoding);
    memcpy(info->secret, PQgetvalue(r, 0, 5), DBFS_SECRET_LEN);
    dbfs_get_text(r, 6, digest, sizeof digest);
    info->root_gen = (uint32_t)dbfs_get_i4(r, 0, 7);
    functions_current = strcmp(digest, schema_functions_digest) == 0;

    if (version > schema_version) {
        g_warning("the file system's schema is version %d, newer than this build's %d: run a "
                  "newer pgnfs",
                  version, schema_version);
        rc = -EPROTO;
        goto out;
    }
    if (dbfs_storage_parse(storage, &info->storage) != 0 ||
        dbfs_encoding_parse(encoding, &info->encoding) != 0 || info->chunk_size < 1024 ||
        info->chunk_size > 1048576 || (info->chunk_size & (info->chunk_size - 1)) != 0) {
        g_warning("the file system uses storage \"%s\" with encoding \"%s\" and chunk size "
                  "%u, which this build cannot serve: run a newer pgnfs",
                  storage, encoding, info->chunk_size);
        rc = -EPROTO;
        goto out;
    }
    for (unsigned i = 0; i < schema_nfiles; i++) {
        dbfs_params p;

        if (schema_files[i].version <= version)
            continue;
        g_message("upgrading the schema to version %d (%s)", schema_files[i].version,
                  schema_files[i].name);
        rc = dbfs_adm_script(a, schema_files[i].name, schema_files[i].sql);
        if (rc != 0)
            goto out;
        dbfs_params_init(&p);
        dbfs_param_i4(&p, schema_files[i].version);
        rc = dbfs_adm_run(a, DBFS_ST_ADM_SET_VERSION, &p);
        if (rc != 0)
            goto out;
        version = schema_files[i].version;
        functions_current = false;
    }
    info->schema_version = version;
    if (!functions_current) {
        g_message("installing the database functions of this build");
        rc = dbfs_adm_functions(a);
        if (rc != 0)
            goto out;
    }
    PQclear(r);
    rc = dbfs_adm_exec(a, DBFS_ST_ADM_THRESHOLD, NULL, &r);
    if (rc != 0)
        goto out;
    if (PQntuples(r) != 1 || PQgetisnull(r, 0, 0)) {
        g_warning("the file system's facts (table pgnfs_fs) are damaged: no hybrid threshold");
        rc = -EIO;
        goto out;
    }
    info->hybrid_threshold = (uint64_t)dbfs_get_i8(r, 0, 0);
out:
    PQclear(r);
    return rc;
}

/*
 * dbfs_open -- see dbfs.h. Under the advisory lock: read the facts,
 * refuse a newer schema or a layout this build cannot serve (-EPROTO,
 * logged), apply newer migrations, re-apply the function files when their
 * digest differs from this build's. *out is the caller's (dbfs_close()).
 */
int dbfs_open(const dbfs_config *cfg, dbfs **out)
{
    dbfs_adm a = {0};
    dbfs *fs = NULL;
    int rc;

    *out = NULL;
    fs = calloc(1, sizeof *fs);
    if (!fs)
        return -ENOMEM;
    g_mutex_init(&fs->fsstat_memo.lock);
    fs->conninfo = strdup(cfg->conninfo);
    fs->space_path = cfg->space_path ? strdup(cfg->space_path) : NULL;
    fs->relatime = cfg->relatime;
    if (!fs->conninfo || (cfg->space_path && !fs->space_path)) {
        rc = -ENOMEM;
        goto err;
    }
    rc = dbfs_adm_connect(&a, cfg->conninfo);
    if (rc != 0)
        goto err;
    rc = dbfs_adm_begin(&a);
    if (rc == 0)
        rc = dbfs_adm_attach(&a, &fs->info);
    rc = dbfs_adm_finish(&a, rc);
    if (rc != 0)
        goto err;
    fs->store = store_for(fs->info.storage);
    rc = dbfs_cache_open(fs, cfg);
    if (rc != 0)
        goto err;
    rc = dbfs_chunks_open(fs, cfg);
    if (rc != 0)
        goto err;
    rc = dbfs_wb_open(fs, cfg);
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
    dbfs_cache_close(fs);
    dbfs_chunks_close(fs);
    free(fs->conninfo);
    free(fs->space_path);
    g_mutex_clear(&fs->fsstat_memo.lock);
    free(fs);
}

/* dbfs_get_info -- the facts of fs, owned by fs. Cannot fail. */
const dbfs_info *dbfs_get_info(const dbfs *fs)
{
    return &fs->info;
}
