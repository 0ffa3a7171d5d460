/*
 * td.c -- helpers shared by the dbfs test programs (see td.h).
 *
 * NOTES
 *   Helpers fail the test (g_error, which aborts) on any unexpected answer;
 *   the fixtures of tests/lib remove what was started when the program
 *   ends, however it ends. Memory: td_fs owns its strings and handles until
 *   td_close().
 */
#include "td.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "testlib.h"

void td_check_rc(int rc, int want, const char *expr, const char *file, int line)
{
    if (rc == want)
        return;
    g_error("%s:%d: %s returned %d (%s), expected %d (%s)", file, line, expr, rc,
            rc < 0 ? g_strerror(-rc) : "ok", want, want < 0 ? g_strerror(-want) : "ok");
}

/* td_open_opts with the encoding too (base64: always a made file system). */
static void td_open_with(td_fs *t, uint32_t chunk_size, bool base64, bool relatime)
{
    dbfs_config cfg = {0};

    memset(t, 0, sizeof *t);
    if (chunk_size == 0 && !base64) {
        t->conninfo = tl_fresh_fs();
    } else {
        dbfs_mkfs_opts o = {.root_mode = 0777};

        tl_mkfs_opts(&o); /* the run's storage variant, then this chunk size */
        if (chunk_size != 0)
            o.chunk_size = chunk_size;
        if (base64)
            o.encoding = DBFS_ENC_BASE64;
        t->conninfo = tl_fresh_db();
        td_rc(dbfs_mkfs(t->conninfo, &o), 0);
    }
    cfg.conninfo = t->conninfo;
    cfg.relatime = relatime;
    td_rc(dbfs_open(&cfg, &t->fs), 0);
    td_rc(dbfs_conn_open(t->fs, &t->c), 0);
    t->root = (dbfs_fh){DBFS_ROOT_INO, dbfs_get_info(t->fs)->root_gen, 0};
    t->trips_mark = dbfs_conn_round_trips(t->c);
}

void td_open_opts(td_fs *t, uint32_t chunk_size, bool relatime)
{
    td_open_with(t, chunk_size, false, relatime);
}

void td_open_base64(td_fs *t, uint32_t chunk_size)
{
    td_open_with(t, chunk_size, true, false);
}

void td_open(td_fs *t)
{
    td_open_opts(t, 0, true);
}

void td_close(td_fs *t)
{
    dbfs_conn_close(t->c);
    dbfs_close(t->fs);
    g_free(t->conninfo);
    memset(t, 0, sizeof *t);
}

dbfs_cache_figures td_cache(const dbfs *fs, const char *name)
{
    dbfs_cache_figures f[DBFS_CACHES_MAX];
    unsigned n = dbfs_cache_stats(fs, f, DBFS_CACHES_MAX);

    for (unsigned i = 0; i < n; i++)
        if (strcmp(f[i].name, name) == 0)
            return f[i];
    g_error("no %s row in dbfs_cache_stats", name);
}

dbfs_cred td_root(void)
{
    dbfs_cred c = {0};
    return c;
}

dbfs_cred td_user(uint32_t uid, uint32_t gid, uint32_t n, const uint32_t *groups)
{
    dbfs_cred c = {.uid = uid, .gid = gid, .ngroups = n};

    g_assert_cmpuint(n, <=, DBFS_NGROUPS_MAX);
    for (uint32_t i = 0; i < n; i++)
        c.groups[i] = groups[i];
    return c;
}

dbfs_attr td_mkdir(td_fs *t, const dbfs_cred *cr, dbfs_fh dir, const char *name, uint32_t mode)
{
    dbfs_sattr sa = {.set = DBFS_SET_MODE, .mode = mode};
    dbfs_attr a;
    dbfs_wcc w;

    td_rc(dbfs_mkdir(t->c, cr, dir, name, &sa, &a, &w), 0);
    return a;
}

dbfs_attr td_create(td_fs *t, const dbfs_cred *cr, dbfs_fh dir, const char *name, uint32_t mode)
{
    dbfs_sattr sa = {.set = DBFS_SET_MODE, .mode = mode};
    dbfs_attr a;
    dbfs_wcc w;

    td_rc(dbfs_create(t->c, cr, dir, name, DBFS_CREATE_GUARDED, &sa, 0, &a, &w), 0);
    return a;
}

dbfs_attr td_lookup(td_fs *t, const dbfs_cred *cr, dbfs_fh dir, const char *name)
{
    dbfs_attr a;
    dbfs_attr_opt d;

    td_rc(dbfs_lookup(t->c, cr, dir, name, &a, &d), 0);
    return a;
}

dbfs_attr td_getattr(td_fs *t, dbfs_fh fh)
{
    dbfs_attr a;

    td_rc(dbfs_getattr(t->c, fh, &a), 0);
    return a;
}

void td_write(td_fs *t, const dbfs_cred *cr, dbfs_fh fh, uint64_t off, const void *data,
              uint32_t len)
{
    dbfs_stable st;
    dbfs_wcc w;

    td_rc(dbfs_write(t->c, cr, fh, off, data, len, DBFS_FILE_SYNC, &st, &w), 0);
    g_assert_cmpint(st, ==, DBFS_FILE_SYNC);
}

void td_read(td_fs *t, const dbfs_cred *cr, dbfs_fh fh, uint64_t off, void *buf, uint32_t len)
{
    uint32_t n = 0;
    bool eof;
    dbfs_attr_opt a;

    td_rc(dbfs_read(t->c, cr, fh, off, len, buf, &n, &eof, &a), 0);
    g_assert_cmpuint(n, ==, len);
}

void td_chmod(td_fs *t, const dbfs_cred *cr, dbfs_fh fh, uint32_t mode)
{
    dbfs_sattr sa = {.set = DBFS_SET_MODE, .mode = mode};
    dbfs_wcc w;

    td_rc(dbfs_setattr(t->c, cr, fh, &sa, NULL, &w), 0);
}

void td_chown(td_fs *t, const dbfs_cred *cr, dbfs_fh fh, uint32_t uid, uint32_t gid)
{
    dbfs_sattr sa = {.set = DBFS_SET_UID | DBFS_SET_GID, .uid = uid, .gid = gid};
    dbfs_wcc w;

    td_rc(dbfs_setattr(t->c, cr, fh, &sa, NULL, &w), 0);
}

uint64_t td_trips(td_fs *t)
{
    uint64_t now = dbfs_conn_round_trips(t->c);
    uint64_t d = now - t->trips_mark;

    t->trips_mark = now;
    return d;
}

long td_sql(const char *conninfo, const char *sql)
{
    PGconn *pg = PQconnectdb(conninfo);
    PGresult *r;
    long v = 0;

    if (PQstatus(pg) != CONNECTION_OK)
        g_error("cannot connect to %s: %s", conninfo, PQerrorMessage(pg));
    r = PQexec(pg, sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK && PQresultStatus(r) != PGRES_COMMAND_OK)
        g_error("%s: %s", sql, PQresultErrorMessage(r));
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0)
        v = atol(PQgetvalue(r, 0, 0));
    PQclear(r);
    PQfinish(pg);
    return v;
}
