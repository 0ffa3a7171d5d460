/*
 * test_attr.c -- attributes against a real database: the permission rule
 * in C (dbfs_perm_allows) and in SQL (pgnfs_may) agree, and so does the
 * rule of the data calls (dbfs_perm_may_io, pgnfs_may_io); getattr;
 * setattr's rules for chmod, chown, size and times, setuid/setgid
 * clearing, the guard; access; a program that others may execute but not
 * read runs (READ allowed by the execute bit, as Linux knfsd allows it,
 * with and without the caches, ACCESS still the true bits).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "dbfs_perm.h"
#include "td.h"
#include "testlib.h"

static const uint32_t td_no_groups[1] = {0};

/* The callers of the grid: file owner uid 1000, group 100. */
static const struct {
    const char *what;
    dbfs_cred cred;
} td_callers[] = {
    {"root", {.uid = 0, .gid = 0}},
    {"owner", {.uid = 1000, .gid = 5}},
    {"primary group", {.uid = 2000, .gid = 100}},
    {"supplementary group", {.uid = 2001, .gid = 7, .ngroups = 2, .groups = {8, 100}}},
    {"other", {.uid = 3000, .gid = 7, .ngroups = 1, .groups = {8}}},
};

static void test_perm_agreement(void)
{
    td_fs t;
    PGconn *pg;
    PGresult *r;
    long checked = 0;

    td_open(&t);
    pg = PQconnectdb(t.conninfo);
    g_assert_cmpint(PQstatus(pg), ==, CONNECTION_OK);
    for (size_t k = 0; k < G_N_ELEMENTS(td_callers); k++) {
        const dbfs_cred *cr = &td_callers[k].cred;
        char uid[16], gid[16], groups[64];
        const char *vals[3] = {uid, gid, groups};
        GString *g = g_string_new("{");

        for (uint32_t i = 0; i < cr->ngroups; i++)
            g_string_append_printf(g, "%s%u", i ? "," : "", cr->groups[i]);
        g_string_append(g, "}");
        g_snprintf(uid, sizeof uid, "%u", cr->uid);
        g_snprintf(gid, sizeof gid, "%u", cr->gid);
        g_strlcpy(groups, g->str, sizeof groups);
        g_string_free(g, TRUE);
        /* Every permission mode with and without setuid/setgid/sticky, both
         * file types, every want mask. */
        r = PQexecParams(pg,
                         "SELECT ty, m, w, pgnfs_may(ty::smallint, m, 1000, 100, $1::int8,"
                         " $2::int8, $3::int8[], w),"
                         /* (by name: columns later versions add stay NULL) */
                         " pgnfs_may_io(json_populate_record(NULL::fileatt, json_build_object("
                         " 'inode', 2, 'generation', 1, 'type', ty, 'mode', m, 'nlink', 1,"
                         " 'uid', 1000, 'gid', 100, 'size', 0, 'rdev_major', 0, 'rdev_minor', 0,"
                         " 'atime', 0, 'mtime', 0, 'ctime', 0, 'change', 1, 'used', 0)),"
                         " $1::int8, $2::int8, $3::int8[], w)"
                         " FROM generate_series(1, 2) ty,"
                         "      generate_series(0, 4095, 1) m, generate_series(0, 7) w"
                         " WHERE m < 512 OR m % 64 = 0 OR m % 511 = 0",
                         3, NULL, vals, NULL, NULL, 0);
        g_assert_cmpint(PQresultStatus(r), ==, PGRES_TUPLES_OK);
        for (int i = 0; i < PQntuples(r); i++) {
            dbfs_attr a = {.uid = 1000, .gid = 100};
            unsigned want = (unsigned)atoi(PQgetvalue(r, i, 2));
            bool sql = PQgetvalue(r, i, 3)[0] == 't';
            bool sql_io = PQgetvalue(r, i, 4)[0] == 't';

            a.type = atoi(PQgetvalue(r, i, 0)) == 2 ? DBFS_DIR : DBFS_REG;
            a.mode = (uint32_t)atoi(PQgetvalue(r, i, 1));
            if (dbfs_perm_allows(&a, cr, want) != sql)
                g_error("permission rules disagree: caller %s, type %d, mode %o, want %u: C says "
                        "%d, SQL says %d",
                        td_callers[k].what, a.type, a.mode, want, !sql, sql);
            if (dbfs_perm_may_io(&a, cr, want) != sql_io)
                g_error("data rules disagree: caller %s, type %d, mode %o, want %u: C says %d, "
                        "SQL says %d",
                        td_callers[k].what, a.type, a.mode, want, !sql_io, sql_io);
            checked++;
        }
        PQclear(r);
    }
    PQfinish(pg);
    g_assert_cmpint(checked, >, 5 * 2 * 512 * 8);

    /* A few points of the rule itself. */
    dbfs_attr f = {.type = DBFS_REG, .mode = 0640, .uid = 1000, .gid = 100};
    g_assert_true(dbfs_perm_allows(&f, &td_callers[0].cred, 6));
    g_assert_false(dbfs_perm_allows(&f, &td_callers[0].cred, 1));
    g_assert_true(dbfs_perm_allows(&f, &td_callers[1].cred, 6));
    g_assert_true(dbfs_perm_allows(&f, &td_callers[2].cred, 4));
    g_assert_false(dbfs_perm_allows(&f, &td_callers[2].cred, 2));
    g_assert_true(dbfs_perm_allows(&f, &td_callers[3].cred, 4));
    g_assert_false(dbfs_perm_allows(&f, &td_callers[4].cred, 4));
    f.mode = 0604; /* the owner's bits win over the others' */
    g_assert_false(dbfs_perm_allows(&f, &td_callers[2].cred, 4));
    g_assert_true(dbfs_perm_allows(&f, &td_callers[4].cred, 4));
    f.mode = 0001;
    g_assert_true(dbfs_perm_allows(&f, &td_callers[0].cred, 1));
    f.type = DBFS_DIR;
    f.mode = 0;
    g_assert_true(dbfs_perm_allows(&f, &td_callers[0].cred, 7));
    /* The data calls: the owner always; a read by whoever may execute a
     * regular file (not a directory, not a write). */
    f.type = DBFS_REG;
    g_assert_true(dbfs_perm_may_io(&f, &td_callers[1].cred, DBFS_MAY_READ));
    g_assert_true(dbfs_perm_may_io(&f, &td_callers[1].cred, DBFS_MAY_WRITE));
    g_assert_false(dbfs_perm_may_io(&f, &td_callers[4].cred, DBFS_MAY_READ));
    f.mode = 0001;
    g_assert_true(dbfs_perm_may_io(&f, &td_callers[4].cred, DBFS_MAY_READ));
    g_assert_false(dbfs_perm_may_io(&f, &td_callers[4].cred, DBFS_MAY_WRITE));
    g_assert_false(dbfs_perm_may_io(&f, &td_callers[2].cred, DBFS_MAY_READ));
    f.type = DBFS_DIR;
    g_assert_false(dbfs_perm_may_io(&f, &td_callers[4].cred, DBFS_MAY_READ));
    td_close(&t);
}

static void test_getattr(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_attr a, f;
    const dbfs_info *info;

    td_open(&t);
    info = dbfs_get_info(t.fs);
    g_assert_cmpuint(info->chunk_size, ==, DBFS_CHUNK_SIZE_DEFAULT);
    g_assert_cmpint(info->storage, ==, DBFS_STORAGE_SINGLE);
    g_assert_cmpint(info->encoding, ==, DBFS_ENC_BINARY);
    g_assert_cmpint(info->schema_version, >=, 1);
    g_assert_cmpuint(info->root_gen, !=, 0);
    a = td_getattr(&t, t.root);
    g_assert_cmpuint(a.ino, ==, DBFS_ROOT_INO);
    g_assert_cmpuint(a.gen, ==, info->root_gen);
    g_assert_cmpint(a.type, ==, DBFS_DIR);
    g_assert_cmpuint(a.mode, ==, 0777);
    g_assert_cmpuint(a.uid, ==, 0);
    g_assert_cmpuint(a.nlink, ==, 2);
    td_rc(dbfs_getattr(t.c, (dbfs_fh){DBFS_ROOT_INO, info->root_gen + 1, 0}, &a), -ESTALE);
    td_rc(dbfs_getattr(t.c, (dbfs_fh){4242, 1, 0}, &a), -ESTALE);
    f = td_create(&t, &u, t.root, "f", 0600);
    a = td_getattr(&t, td_fh(&f));
    g_assert_cmpmem(&a, sizeof a, &f, sizeof f);
    td_close(&t);
}

static void test_chmod_chown(void)
{
    td_fs t;
    dbfs_cred root = td_root();
    const uint32_t g50[] = {50};
    dbfs_cred u = td_user(1000, 100, 1, g50);
    dbfs_cred v = td_user(1001, 100, 0, td_no_groups);
    dbfs_attr f, a, d;
    dbfs_sattr sa;
    dbfs_wcc w;

    td_open(&t);
    f = td_create(&t, &u, t.root, "f", 0644);

    /* chmod: owner and root; others EPERM, with wcc. */
    sa = (dbfs_sattr){.set = DBFS_SET_MODE, .mode = 0600};
    td_rc(dbfs_setattr(t.c, &v, td_fh(&f), &sa, NULL, &w), -EPERM);
    g_assert_true(w.have_pre && w.have_post);
    g_assert_cmpuint(w.post.mode, ==, 0644);
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
    g_assert_cmpuint(w.post.mode, ==, 0600);
    g_assert_cmpint(w.post.ctime_ns, >, w.pre_ctime_ns);
    g_assert_cmpint(w.post.mtime_ns, ==, w.pre_mtime_ns);
    td_chmod(&t, &root, td_fh(&f), 0640);

    /* chmod by a non-member of the file's group drops setgid. */
    td_chmod(&t, &u, td_fh(&f), 02755);
    g_assert_cmpuint(td_getattr(&t, td_fh(&f)).mode, ==, 02755); /* u is in 100 */
    td_chown(&t, &root, td_fh(&f), 1000, 77);
    td_chmod(&t, &u, td_fh(&f), 02755);
    g_assert_cmpuint(td_getattr(&t, td_fh(&f)).mode, ==, 0755);
    td_chmod(&t, &root, td_fh(&f), 02755);
    g_assert_cmpuint(td_getattr(&t, td_fh(&f)).mode, ==, 02755);

    /* chown: uid only by root; the owner may "change" to himself. */
    sa = (dbfs_sattr){.set = DBFS_SET_UID, .uid = 1001};
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), -EPERM);
    td_rc(dbfs_setattr(t.c, &v, td_fh(&f), &sa, NULL, &w), -EPERM);
    sa.uid = 1000;
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
    td_rc(dbfs_setattr(t.c, &v, td_fh(&f), &sa, NULL, &w), -EPERM);
    /* gid: the owner to a group he is in (primary or supplementary). */
    sa = (dbfs_sattr){.set = DBFS_SET_GID, .gid = 50};
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
    g_assert_cmpuint(w.post.gid, ==, 50);
    sa.gid = 100;
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
    sa.gid = 51;
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), -EPERM);
    g_assert_cmpuint(w.post.gid, ==, 100);
    td_rc(dbfs_setattr(t.c, &v, td_fh(&f), &sa, NULL, &w), -EPERM);
    sa = (dbfs_sattr){.set = DBFS_SET_UID | DBFS_SET_GID, .uid = 5, .gid = 6};
    td_rc(dbfs_setattr(t.c, &root, td_fh(&f), &sa, NULL, &w), 0);
    g_assert_cmpuint(w.post.uid, ==, 5);
    g_assert_cmpuint(w.post.gid, ==, 6);

    /* A directory keeps setgid through chown. */
    d = td_mkdir(&t, &root, t.root, "d", 02775);
    td_chown(&t, &root, td_fh(&d), 1000, 100);
    a = td_getattr(&t, td_fh(&d));
    g_assert_cmpuint(a.mode, ==, 02775);
    g_assert_cmpuint(a.uid, ==, 1000);
    td_close(&t);
}

static void test_suid_clearing(void)
{
    td_fs t;
    dbfs_cred root = td_root();
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_attr f;
    dbfs_sattr sa;
    dbfs_wcc w;

    td_open(&t);
    f = td_create(&t, &u, t.root, "f", 0644);

    /* chown by root clears setuid, and setgid when group-executable. */
    td_chmod(&t, &root, td_fh(&f), 06755);
    td_chown(&t, &root, td_fh(&f), 1000, 100);
    g_assert_cmpuint(td_getattr(&t, td_fh(&f)).mode, ==, 0755);
    td_chmod(&t, &root, td_fh(&f), 06745);
    td_chown(&t, &root, td_fh(&f), 1000, 100);
    g_assert_cmpuint(td_getattr(&t, td_fh(&f)).mode, ==, 02745);
    /* ... and by the owner setting only the group (to his own). */
    td_chmod(&t, &u, td_fh(&f), 06755);
    sa = (dbfs_sattr){.set = DBFS_SET_GID, .gid = 100};
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
    g_assert_cmpuint(w.post.mode, ==, 0755);
    /* chown and chmod together: the new mode loses the bits. */
    sa = (dbfs_sattr){.set = DBFS_SET_UID | DBFS_SET_MODE, .uid = 1000, .mode = 06711};
    td_rc(dbfs_setattr(t.c, &root, td_fh(&f), &sa, NULL, &w), 0);
    g_assert_cmpuint(w.post.mode, ==, 0711);

    /* A write by a non-root caller clears; by root it does not. */
    td_chmod(&t, &root, td_fh(&f), 06755);
    td_write(&t, &root, td_fh(&f), 0, "x", 1);
    g_assert_cmpuint(td_getattr(&t, td_fh(&f)).mode, ==, 06755);
    td_write(&t, &u, td_fh(&f), 0, "x", 1);
    g_assert_cmpuint(td_getattr(&t, td_fh(&f)).mode, ==, 0755);
    td_chmod(&t, &root, td_fh(&f), 06745);
    td_write(&t, &u, td_fh(&f), 1, "y", 1);
    g_assert_cmpuint(td_getattr(&t, td_fh(&f)).mode, ==, 02745);

    /* So does a size change by a non-root caller. */
    td_chmod(&t, &root, td_fh(&f), 06755);
    sa = (dbfs_sattr){.set = DBFS_SET_SIZE, .size = 1};
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
    g_assert_cmpuint(w.post.mode, ==, 0755);
    td_chmod(&t, &root, td_fh(&f), 06755);
    td_rc(dbfs_setattr(t.c, &root, td_fh(&f), &sa, NULL, &w), 0);
    g_assert_cmpuint(w.post.mode, ==, 06755);
    td_close(&t);
}

static void test_size(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_cred v = td_user(1001, 100, 0, td_no_groups);
    dbfs_attr f, d, l;
    dbfs_sattr sa = {.set = DBFS_SET_SIZE, .size = 100};
    dbfs_wcc w;

    td_open(&t);
    f = td_create(&t, &u, t.root, "f", 0644);
    d = td_mkdir(&t, &u, t.root, "d", 0755);
    td_rc(dbfs_symlink(t.c, &u, t.root, "l", "f", NULL, &l, &w), 0);
    td_rc(dbfs_setattr(t.c, &u, td_fh(&d), &sa, NULL, &w), -EISDIR);
    td_rc(dbfs_setattr(t.c, &u, td_fh(&l), &sa, NULL, &w), -EINVAL);
    td_rc(dbfs_setattr(t.c, &v, td_fh(&f), &sa, NULL, &w), -EACCES);
    g_assert_cmpuint(w.post.size, ==, 0);
    sa.size = (uint64_t)INT64_MAX + 1;
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), -EFBIG);
    sa.size = 100;
    /* The owner may even when the mode says no (owner override). */
    td_chmod(&t, &u, td_fh(&f), 0444);
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
    g_assert_cmpuint(w.pre_size, ==, 0);
    g_assert_cmpuint(w.post.size, ==, 100);
    g_assert_cmpint(w.post.mtime_ns, >, w.pre_mtime_ns);
    g_assert_cmpint(w.post.ctime_ns, >, w.pre_ctime_ns);
    /* A writer who is not the owner may. */
    td_chmod(&t, &u, td_fh(&f), 0666);
    sa.size = 7;
    td_rc(dbfs_setattr(t.c, &v, td_fh(&f), &sa, NULL, &w), 0);
    g_assert_cmpuint(w.post.size, ==, 7);
    sa.size = INT64_MAX;
    td_rc(dbfs_setattr(t.c, &v, td_fh(&f), &sa, NULL, &w), 0);
    g_assert_cmpuint(w.post.size, ==, (uint64_t)INT64_MAX);
    td_close(&t);
}

static void test_times(void)
{
    td_fs t;
    dbfs_cred root = td_root();
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_cred v = td_user(1001, 100, 0, td_no_groups);
    dbfs_attr f;
    dbfs_sattr sa;
    dbfs_wcc w;
    int64_t t0 = 1000000000123456789; /* 2001, with nanoseconds */

    td_open(&t);
    f = td_create(&t, &u, t.root, "f", 0644);

    sa = (dbfs_sattr){.set = DBFS_SET_ATIME | DBFS_SET_MTIME, .atime_ns = t0, .mtime_ns = t0 + 1};
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
    g_assert_cmpint(w.post.atime_ns, ==, t0);
    g_assert_cmpint(w.post.mtime_ns, ==, t0 + 1);
    g_assert_cmpint(w.post.ctime_ns, >, w.pre_ctime_ns);
    td_rc(dbfs_setattr(t.c, &root, td_fh(&f), &sa, NULL, &w), 0);
    /* Client times need the owner or root, even with write permission. */
    td_chmod(&t, &u, td_fh(&f), 0666);
    td_rc(dbfs_setattr(t.c, &v, td_fh(&f), &sa, NULL, &w), -EPERM);
    /* Server times need owner, root or write permission. */
    sa = (dbfs_sattr){.set = DBFS_SET_ATIME_NOW | DBFS_SET_MTIME_NOW};
    td_rc(dbfs_setattr(t.c, &v, td_fh(&f), &sa, NULL, &w), 0);
    g_assert_cmpint(w.post.mtime_ns, >, t0 + 1);
    g_assert_cmpint(w.post.atime_ns, ==, w.post.mtime_ns);
    td_chmod(&t, &u, td_fh(&f), 0644);
    td_rc(dbfs_setattr(t.c, &v, td_fh(&f), &sa, NULL, &w), -EACCES);
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
    /* Mixed: a client time makes it an owner matter. */
    sa = (dbfs_sattr){.set = DBFS_SET_ATIME_NOW | DBFS_SET_MTIME, .mtime_ns = 5};
    td_chmod(&t, &u, td_fh(&f), 0666);
    td_rc(dbfs_setattr(t.c, &v, td_fh(&f), &sa, NULL, &w), -EPERM);

    /* Every successful setattr moves ctime, even an empty one, and the
     * change counter. */
    sa = (dbfs_sattr){.set = 0};
    dbfs_attr before = td_getattr(&t, td_fh(&f));
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, NULL, &w), 0);
    g_assert_cmpint(w.post.ctime_ns, >, before.ctime_ns);
    g_assert_cmpuint(w.post.change, >, before.change);
    g_assert_cmpint(w.post.mtime_ns, ==, before.mtime_ns);
    td_close(&t);
}

static void test_guard(void)
{
    td_fs t;
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_attr f, a;
    dbfs_sattr sa = {.set = DBFS_SET_MODE, .mode = 0600};
    dbfs_wcc w;
    int64_t guard;

    td_open(&t);
    f = td_create(&t, &u, t.root, "f", 0644);
    guard = f.ctime_ns - 1;
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, &guard, &w), -EBADMSG);
    g_assert_true(w.have_pre && w.have_post);
    a = td_getattr(&t, td_fh(&f));
    g_assert_cmpuint(a.mode, ==, 0644);
    g_assert_cmpint(a.ctime_ns, ==, f.ctime_ns);
    guard = f.ctime_ns;
    td_rc(dbfs_setattr(t.c, &u, td_fh(&f), &sa, &guard, &w), 0);
    g_assert_cmpuint(w.post.mode, ==, 0600);
    td_rc(dbfs_setattr(t.c, &u, (dbfs_fh){f.ino, f.gen + 1, 0}, &sa, NULL, &w), -ESTALE);
    g_assert_false(w.have_pre || w.have_post);
    td_close(&t);
}

static void test_access(void)
{
    td_fs t;
    dbfs_cred root = td_root();
    dbfs_cred u = td_user(1000, 100, 0, td_no_groups);
    dbfs_cred g = td_user(1001, 100, 0, td_no_groups);
    dbfs_cred o = td_user(1002, 200, 0, td_no_groups);
    const uint32_t all = 0x3f;
    dbfs_attr f, d, a;
    uint32_t got;

    td_open(&t);
    f = td_create(&t, &u, t.root, "f", 0754);
    d = td_mkdir(&t, &u, t.root, "d", 0751);
    td_rc(dbfs_access(t.c, &u, td_fh(&f), all, &got, &a), 0);
    g_assert_cmpuint(
        got, ==, DBFS_ACCESS_READ | DBFS_ACCESS_MODIFY | DBFS_ACCESS_EXTEND | DBFS_ACCESS_EXECUTE);
    g_assert_cmpuint(a.ino, ==, f.ino);
    td_rc(dbfs_access(t.c, &g, td_fh(&f), all, &got, &a), 0);
    g_assert_cmpuint(got, ==, DBFS_ACCESS_READ | DBFS_ACCESS_EXECUTE);
    td_rc(dbfs_access(t.c, &o, td_fh(&f), all, &got, &a), 0);
    g_assert_cmpuint(got, ==, DBFS_ACCESS_READ);
    td_rc(dbfs_access(t.c, &o, td_fh(&f), DBFS_ACCESS_MODIFY, &got, &a), 0);
    g_assert_cmpuint(got, ==, 0);
    td_rc(dbfs_access(t.c, &root, td_fh(&f), all, &got, &a), 0);
    g_assert_cmpuint(
        got, ==, DBFS_ACCESS_READ | DBFS_ACCESS_MODIFY | DBFS_ACCESS_EXTEND | DBFS_ACCESS_EXECUTE);
    /* Only what was asked for. */
    td_rc(dbfs_access(t.c, &u, td_fh(&f), DBFS_ACCESS_READ, &got, &a), 0);
    g_assert_cmpuint(got, ==, DBFS_ACCESS_READ);

    td_rc(dbfs_access(t.c, &u, td_fh(&d), all, &got, &a), 0);
    g_assert_cmpuint(got, ==,
                     DBFS_ACCESS_READ | DBFS_ACCESS_LOOKUP | DBFS_ACCESS_MODIFY |
                         DBFS_ACCESS_EXTEND | DBFS_ACCESS_DELETE);
    td_rc(dbfs_access(t.c, &g, td_fh(&d), all, &got, &a), 0);
    g_assert_cmpuint(got, ==, DBFS_ACCESS_READ | DBFS_ACCESS_LOOKUP);
    td_rc(dbfs_access(t.c, &o, td_fh(&d), all, &got, &a), 0);
    g_assert_cmpuint(got, ==, DBFS_ACCESS_LOOKUP);

    td_rc(dbfs_access(t.c, &u, (dbfs_fh){f.ino, f.gen + 1, 0}, all, &got, &a), -ESTALE);
    td_close(&t);
}

/* A program another user may execute but not read (mode 0001 or 0010,
 * owner uid 1000): a caller the execute bit admits may READ it (how a
 * client runs it) but not WRITE it, a caller of a class without the bit
 * may not; ACCESS reports the true bits (EXECUTE, not READ); the owner
 * reads and writes a file of mode 0000 that ACCESS says it may not. With
 * relatime, an admitted READ moves atime (the SQL rule agrees). Once
 * without caches (every check in the database path), once with the stat
 * and buffer caches (the cached READ path). */
static void read_if_exec(bool caches)
{
    td_fs t;
    dbfs_cred root = td_root();
    dbfs_cred owner = td_user(1000, 100, 0, td_no_groups);
    dbfs_cred member = td_user(2000, 100, 0, td_no_groups);
    dbfs_cred other = td_user(3000, 200, 0, td_no_groups);
    const uint32_t rx = DBFS_ACCESS_READ | DBFS_ACCESS_EXECUTE;
    char buf[16];
    uint32_t n, got;
    bool eof;
    dbfs_attr_opt ao;
    dbfs_attr a, f;
    dbfs_stable st;
    dbfs_wcc w;

    td_open(&t);
    if (caches) {
        dbfs_config cfg = {.conninfo = t.conninfo,
                           .relatime = true,
                           .stat_cache_entries = 100,
                           .name_cache_entries = 100,
                           .buffer_cache_bytes = 1u << 20};

        dbfs_conn_close(t.c);
        dbfs_close(t.fs);
        td_rc(dbfs_open(&cfg, &t.fs), 0);
        td_rc(dbfs_conn_open(t.fs, &t.c), 0);
    }
    f = td_create(&t, &owner, t.root, "prog", 0755);
    td_write(&t, &owner, td_fh(&f), 0, "#!program", 9);

    /* 0001: others run it; the group (class without x) does not. */
    td_chmod(&t, &owner, td_fh(&f), 0001);
    for (int pass = 0; pass < 2; pass++) { /* the second from the caches, if on */
        td_rc(dbfs_read(t.c, &other, td_fh(&f), 0, sizeof buf, buf, &n, &eof, &ao), 0);
        g_assert_cmpmem(buf, n, "#!program", 9);
        td_rc(dbfs_read(t.c, &member, td_fh(&f), 0, sizeof buf, buf, &n, &eof, &ao), -EACCES);
        g_assert_true(ao.valid);
    }
    td_rc(dbfs_write(t.c, &other, td_fh(&f), 0, "x", 1, DBFS_FILE_SYNC, &st, &w), -EACCES);
    td_rc(dbfs_access(t.c, &other, td_fh(&f), rx, &got, &a), 0);
    g_assert_cmpuint(got, ==, DBFS_ACCESS_EXECUTE);
    td_rc(dbfs_access(t.c, &member, td_fh(&f), rx, &got, &a), 0);
    g_assert_cmpuint(got, ==, 0);

    /* 0010: the group runs it; others do not. The first READ after the
     * chmod is a read like any other: atime moves (relatime: it is due
     * after the change), so the database's rule admitted it too. */
    td_chmod(&t, &owner, td_fh(&f), 0010);
    a = td_getattr(&t, td_fh(&f));
    td_rc(dbfs_read(t.c, &member, td_fh(&f), 0, sizeof buf, buf, &n, &eof, &ao), 0);
    g_assert_cmpint(td_getattr(&t, td_fh(&f)).atime_ns, >, a.atime_ns);
    for (int pass = 0; pass < 2; pass++) {
        td_rc(dbfs_read(t.c, &member, td_fh(&f), 0, sizeof buf, buf, &n, &eof, &ao), 0);
        g_assert_cmpmem(buf, n, "#!program", 9);
        td_rc(dbfs_read(t.c, &other, td_fh(&f), 0, sizeof buf, buf, &n, &eof, &ao), -EACCES);
    }
    td_rc(dbfs_access(t.c, &member, td_fh(&f), rx, &got, &a), 0);
    g_assert_cmpuint(got, ==, DBFS_ACCESS_EXECUTE);
    td_rc(dbfs_access(t.c, &other, td_fh(&f), rx, &got, &a), 0);
    g_assert_cmpuint(got, ==, 0);

    /* 0000: the owner still reads and writes (the owner override); ACCESS
     * tells the owner the truth; nobody else reads; root does. */
    td_chmod(&t, &owner, td_fh(&f), 0000);
    td_rc(dbfs_read(t.c, &owner, td_fh(&f), 0, sizeof buf, buf, &n, &eof, &ao), 0);
    g_assert_cmpmem(buf, n, "#!program", 9);
    td_rc(dbfs_write(t.c, &owner, td_fh(&f), 0, "#", 1, DBFS_FILE_SYNC, &st, &w), 0);
    td_rc(dbfs_access(t.c, &owner, td_fh(&f), 0x3f, &got, &a), 0);
    g_assert_cmpuint(got, ==, 0);
    td_rc(dbfs_read(t.c, &member, td_fh(&f), 0, sizeof buf, buf, &n, &eof, &ao), -EACCES);
    td_rc(dbfs_read(t.c, &other, td_fh(&f), 0, sizeof buf, buf, &n, &eof, &ao), -EACCES);
    td_rc(dbfs_read(t.c, &root, td_fh(&f), 0, sizeof buf, buf, &n, &eof, &ao), 0);
    td_close(&t);
}

static void test_read_if_exec(void)
{
    read_if_exec(false);
}

static void test_read_if_exec_cached(void)
{
    read_if_exec(true);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/attr/perm-agreement", test_perm_agreement);
    g_test_add_func("/attr/getattr", test_getattr);
    g_test_add_func("/attr/chmod-chown", test_chmod_chown);
    g_test_add_func("/attr/suid-clearing", test_suid_clearing);
    g_test_add_func("/attr/size", test_size);
    g_test_add_func("/attr/times", test_times);
    g_test_add_func("/attr/guard", test_guard);
    g_test_add_func("/attr/access", test_access);
    g_test_add_func("/attr/read-if-exec", test_read_if_exec);
    g_test_add_func("/attr/read-if-exec-cached", test_read_if_exec_cached);
    return g_test_run();
}
