/*
 * test_snap_cheap.c -- the copy-on-write triggers of snapshots in their
 * cheap shape (schema/011_snap_cheap.sql): born stamped by a DEFAULT, the
 * triggers entered only for rows born before the newest snapshot. A row
 * born between two snapshots and changed after the second is still kept
 * for it, rows born after it are not, a row inserted with born NULL is
 * stamped, and a file system of version 10 with a snapshot present is
 * upgraded in place. ctest runs it once per storage layout and encoding
 * (PGNFS_TEST_MKFS).
 */
#include <errno.h>
#include <string.h>

#include "dbfs_snap.h"
#include "dbfs_xform.h"
#include "schema_files.h"
#include "td.h"
#include "testlib.h"

typedef struct {
    td_fs t;
    dbfs_cred root;
} sc_env;

static void sc_open(sc_env *e)
{
    memset(e, 0, sizeof *e);
    td_open(&e->t);
    e->root = td_root();
}

/* Rows and tables kept for snapshots. */
static long sc_kept(sc_env *e)
{
    return td_sql(e->t.conninfo, "SELECT (SELECT count(*) FROM pgnfs_snap_fileatt)"
                                 " + (SELECT count(*) FROM pgnfs_snap_naming)"
                                 " + (SELECT count(*) FROM pgnfs_snap_chunks)"
                                 " + (SELECT count(*) FROM pgnfs_snap_tab)");
}

/* Problems pgnfs fsck finds. */
static unsigned long sc_fsck(sc_env *e)
{
    dbfs_fsck_opts o = {0};
    dbfs_fsck_report rep;

    td_rc(dbfs_fsck(e->t.fs, &o, &rep), 0);
    return rep.found;
}

/* Entry name of the root of snapshot snap: 0 and its attributes in *a,
 * or an error (-ENOENT: not there). */
static int sc_lookup_at(sc_env *e, const char *snap, const char *name, dbfs_attr *a)
{
    uint32_t id;
    dbfs_attr_opt d;

    td_rc(dbfs_snap_find(e->t.c, snap, &id), 0);
    return dbfs_lookup(e->t.c, &e->root, (dbfs_fh){DBFS_ROOT_INO, e->t.root.gen, id}, name, a, &d);
}

/* Root entry name of snapshot snap holds want (5 bytes). */
static void sc_expect_at(sc_env *e, const char *snap, const char *name, const char *want)
{
    dbfs_attr a;
    char got[5];

    td_rc(sc_lookup_at(e, snap, name, &a), 0);
    g_assert_cmpuint(a.size, ==, 5);
    td_read(&e->t, &e->root, td_fh(&a), 0, got, sizeof got);
    g_assert_cmpmem(got, sizeof got, want, sizeof got);
}

static void sc_drop_all(sc_env *e, const char *const *names)
{
    for (; *names; names++)
        td_rc(dbfs_snap_delete(e->t.fs, *names), 0);
    td_rc(dbfs_snap_reclaim(e->t.fs, 0, NULL, NULL, NULL), 0);
    g_assert_cmpint(sc_kept(e), ==, 0);
    g_assert_cmpuint(sc_fsck(e), ==, 0);
}

static void test_between(void)
{
    sc_env e;
    dbfs_attr a;
    char msg[256];
    static const char *const all[] = {"s1", "s2", "s3", NULL};

    sc_open(&e);
    dbfs_attr old = td_create(&e.t, &e.root, e.t.root, "old", 0644);
    td_write(&e.t, &e.root, td_fh(&old), 0, "old-1", 5);
    td_rc(dbfs_snap_create(e.t.fs, "s1", NULL), 0);
    dbfs_attr mid = td_create(&e.t, &e.root, e.t.root, "mid", 0644);
    td_write(&e.t, &e.root, td_fh(&mid), 0, "mid-1", 5);
    dbfs_attr gone = td_create(&e.t, &e.root, e.t.root, "gone", 0644);
    td_write(&e.t, &e.root, td_fh(&gone), 0, "gon-1", 5);
    td_rc(dbfs_snap_create(e.t.fs, "s2", NULL), 0);
    long kept = sc_kept(&e);
    g_assert_cmpint(kept, >, 0); /* the root as s1 saw it */
    /* Born after s2, changed and removed: only the root's row as s2 saw
     * it is kept. */
    dbfs_attr late = td_create(&e.t, &e.root, e.t.root, "late", 0644);
    td_write(&e.t, &e.root, td_fh(&late), 0, "lat-1", 5);
    td_write(&e.t, &e.root, td_fh(&late), 0, "lat-2", 5);
    td_rc(dbfs_remove(e.t.c, &e.root, e.t.root, "late", NULL), 0);
    g_assert_cmpint(sc_kept(&e), ==, kept + 1);
    /* Born between the two, changed or removed after s2: kept for s2. */
    td_write(&e.t, &e.root, td_fh(&mid), 0, "mid-2", 5);
    td_write(&e.t, &e.root, td_fh(&old), 0, "old-2", 5);
    td_rc(dbfs_remove(e.t.c, &e.root, e.t.root, "gone", NULL), 0);
    g_assert_cmpint(sc_kept(&e), >, kept + 1);
    /* A transformation link is inserted as a whole row (born NULL). */
    td_rc(dbfs_xform_link(e.t.fs, "/mid", "/mid.inc", "increment", msg, sizeof msg), 0);
    g_assert_cmpint(td_sql(e.t.conninfo, "SELECT count(*) FROM fileatt WHERE born IS NULL"), ==, 0);

    sc_expect_at(&e, "s1", "old", "old-1");
    td_rc(sc_lookup_at(&e, "s1", "mid", &a), -ENOENT);
    td_rc(sc_lookup_at(&e, "s1", "gone", &a), -ENOENT);
    sc_expect_at(&e, "s2", "old", "old-1");
    sc_expect_at(&e, "s2", "mid", "mid-1");
    sc_expect_at(&e, "s2", "gone", "gon-1");
    td_rc(sc_lookup_at(&e, "s2", "late", &a), -ENOENT);
    td_rc(sc_lookup_at(&e, "s2", "mid.inc", &a), -ENOENT);
    g_assert_cmpint(td_sql(e.t.conninfo, "SELECT count(*) FROM pgnfs.files_at('s2')"
                                         " WHERE path IN ('/mid.inc', '/late', '/mid')"),
                    ==, 1);
    td_rc(dbfs_snap_create(e.t.fs, "s3", NULL), 0);
    sc_expect_at(&e, "s3", "mid", "mid-2");
    sc_expect_at(&e, "s3", "old", "old-2");
    td_rc(sc_lookup_at(&e, "s3", "mid.inc", &a), 0);
    td_rc(sc_lookup_at(&e, "s3", "gone", &a), -ENOENT);
    g_assert_cmpuint(sc_fsck(&e), ==, 0);
    sc_drop_all(&e, all);
    td_close(&e.t);
}

static void test_upgrade(void)
{
    sc_env e;
    dbfs_config cfg = {0};
    dbfs_attr a;
    dbfs_snap_row r;
    static const char *const all[] = {"s", "t", NULL};

    sc_open(&e);
    dbfs_attr f = td_create(&e.t, &e.root, e.t.root, "f", 0644);
    td_write(&e.t, &e.root, td_fh(&f), 0, "old-1", 5);
    td_rc(dbfs_snap_create(e.t.fs, "s", &r), 0);
    g_assert_cmpuint(r.id, ==, 1);
    dbfs_conn_close(e.t.c);
    dbfs_close(e.t.fs);
    /* Back to version 10: the triggers of 008, no DEFAULT, no sequence. */
    td_sql(
        e.t.conninfo,
        "DO $$ DECLARE t text; BEGIN"
        "  FOREACH t IN ARRAY ARRAY['fileatt', 'naming', 'allfiles'] LOOP"
        "    EXECUTE format('DROP TRIGGER pgnfs_snap_keep ON %I', t);"
        "    EXECUTE format('DROP TRIGGER pgnfs_snap_born ON %I', t);"
        "    EXECUTE format('ALTER TABLE %I ALTER COLUMN born DROP DEFAULT', t);"
        "    EXECUTE format('CREATE TRIGGER pgnfs_snap_keep BEFORE INSERT OR UPDATE OR DELETE' ||"
        "                   ' ON %I FOR EACH ROW EXECUTE FUNCTION %I()', t,"
        "                   'pgnfs_snap_keep_' || t);"
        "  END LOOP;"
        " END $$;"
        " DROP FUNCTION pgnfs_snap_born, pgnfs_snap_stamp;"
        " DROP SEQUENCE pgnfs_snap_epoch_seq;"
        " UPDATE pgnfs_fs SET schema_version = 10, functions_digest = 'version 10'");
    cfg.conninfo = e.t.conninfo;
    cfg.relatime = true;
    td_rc(dbfs_open(&cfg, &e.t.fs), 0);
    td_rc(dbfs_conn_open(e.t.fs, &e.t.c), 0);
    g_assert_cmpint(dbfs_get_info(e.t.fs)->schema_version, ==, schema_version);
    g_assert_cmpint(td_sql(e.t.conninfo, "SELECT count(*) FROM pg_trigger WHERE tgenabled <> 'D'"
                                         " AND tgname IN ('pgnfs_snap_keep', 'pgnfs_snap_born')"
                                         " AND tgrelid IN ('fileatt'::regclass,"
                                         " 'naming'::regclass, 'allfiles'::regclass)"),
                    ==, 6);
    td_write(&e.t, &e.root, td_fh(&f), 0, "new-1", 5);
    dbfs_attr g = td_create(&e.t, &e.root, e.t.root, "g", 0644);
    td_write(&e.t, &e.root, td_fh(&g), 0, "g-new", 5);
    sc_expect_at(&e, "s", "f", "old-1");
    td_rc(sc_lookup_at(&e, "s", "g", &a), -ENOENT);
    td_rc(dbfs_snap_create(e.t.fs, "t", &r), 0);
    g_assert_cmpuint(r.id, ==, 2);
    td_write(&e.t, &e.root, td_fh(&g), 0, "g-2nd", 5);
    sc_expect_at(&e, "t", "f", "new-1");
    sc_expect_at(&e, "t", "g", "g-new");
    sc_expect_at(&e, "s", "f", "old-1");
    g_assert_cmpuint(sc_fsck(&e), ==, 0);
    sc_drop_all(&e, all);
    td_close(&e.t);
}

/* fsck sets the epoch sequence when it is behind a row's born. */
static void test_fsck_seq(void)
{
    sc_env e;
    static const char *const all[] = {"s", NULL};

    sc_open(&e);
    td_rc(dbfs_snap_create(e.t.fs, "s", NULL), 0);
    dbfs_attr f = td_create(&e.t, &e.root, e.t.root, "f", 0644);
    td_write(&e.t, &e.root, td_fh(&f), 0, "abcde", 5);
    td_sql(e.t.conninfo, "SELECT setval('pgnfs_snap_epoch_seq', 0, true)");
    dbfs_fsck_opts o = {.repair = true};
    dbfs_fsck_report rep;
    td_rc(dbfs_fsck(e.t.fs, &o, &rep), 0);
    g_assert_cmpuint(rep.found, ==, 1);
    g_assert_cmpuint(rep.left, ==, 0);
    g_assert_cmpint(td_sql(e.t.conninfo, "SELECT pg_sequence_last_value('pgnfs_snap_epoch_seq')"),
                    ==, 1);
    g_assert_cmpuint(sc_fsck(&e), ==, 0);
    sc_drop_all(&e, all);
    td_close(&e.t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/snap-cheap/between", test_between);
    g_test_add_func("/snap-cheap/upgrade", test_upgrade);
    g_test_add_func("/snap-cheap/fsck-seq", test_fsck_seq);
    return g_test_run();
}
