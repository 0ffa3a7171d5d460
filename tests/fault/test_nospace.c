/*
 * test_nospace.c -- PostgreSQL out of disk space: the file data lives in a
 * tablespace on a small tmpfs; writes that do not fit answer
 * NFS3ERR_NOSPC (not IO, not JUKEBOX), change nothing, nothing already
 * stored is damaged, the rest of the file system keeps working, and
 * writes succeed again once the tmpfs is grown (space returns).
 *
 * Needs root (mount). The program makes a private mount namespace first,
 * so the tmpfs is seen only by this test, its server and its PostgreSQL,
 * and disappears with them however the test ends. Not root, or no mount
 * namespace: it says so and exits 77 (ctest: skipped), never passes
 * silently.
 *
 * The server's per-file tables (storage layouts inversion and hybrid) go
 * to the tablespace too (default_tablespace of the database; the server
 * is restarted so its sessions see it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "fault.h"

enum { NS_FILES = 3, NS_KEEP = 200000, NS_PIECE = 65536, NS_SMALL_MB = 12, NS_BIG_MB = 64 };

static char *ns_dir; /* the tmpfs mount point */

/* Run SQL as the cluster's superuser; aborts on error. */
static void ns_sql(const char *sql)
{
    PGconn *pg = PQconnectdb(tl_server_conninfo(pt.server));

    if (PQstatus(pg) != CONNECTION_OK)
        g_error("cannot connect to the server's database: %s", PQerrorMessage(pg));
    PGresult *r = PQexec(pg, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
        g_error("%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
    PQfinish(pg);
}

static void ns_mount_size(unsigned mb, bool remount)
{
    char *opts = g_strdup_printf("size=%um,mode=0700", mb);

    if (mount("tmpfs", ns_dir, "tmpfs", remount ? MS_REMOUNT : 0, opts) != 0)
        g_error("mount tmpfs on %s (%s): %s", ns_dir, opts, g_strerror(errno));
    g_free(opts);
}

static void test_nospace(void)
{
    nr_ctx *c = pt_open(NULL);
    unsigned char *buf = g_malloc(NS_KEEP);
    nr_fh keep[NS_FILES];
    struct stat st;

    /* A tablespace on a small tmpfs, owned by the cluster's user, holding
     * allfiles (and new per-file tables). */
    ns_dir = g_build_filename(tl_server_data_dir(pt.server), "..", "tmpfs-ts", NULL);
    g_assert_cmpint(g_mkdir_with_parents(ns_dir, 0700), ==, 0);
    ns_mount_size(NS_SMALL_MB, false);
    char *pgdir = g_build_filename(tl_server_data_dir(pt.server), "pg", NULL);
    g_assert_cmpint(stat(pgdir, &st), ==, 0);
    g_assert_cmpint(chown(ns_dir, st.st_uid, st.st_gid), ==, 0);
    char *sql = g_strdup_printf("CREATE TABLESPACE fault_ts LOCATION '%s'", ns_dir);
    ns_sql(sql);
    g_free(sql);
    ns_sql("ALTER TABLE allfiles SET TABLESPACE fault_ts");
    ns_sql("ALTER DATABASE pgnfs SET default_tablespace = fault_ts");
    nr_close(c);
    g_assert_true(pt_restart());
    c = pt_open(NULL);

    /* Files stored before the disk fills. */
    nr_fh dir = pt_fresh_dir();
    for (unsigned i = 0; i < NS_FILES; i++) {
        char name[16];
        snprintf(name, sizeof name, "keep%u", i);
        keep[i] = pt_create(c, &dir, name, 0644);
        ft_pattern(buf, NS_KEEP, 1000 + i);
        for (uint32_t off = 0; off < NS_KEEP; off += NS_PIECE)
            pt_write(c, &keep[i], off, buf + off, MIN(NS_PIECE, NS_KEEP - off));
    }

    /* Fill it: 64 KiB writes until NOSPC. */
    nr_fh fill = pt_create(c, &dir, "fill", 0644);
    uint64_t filled = 0;
    unsigned limit = 4 * NS_SMALL_MB * 1024 * 1024 / NS_PIECE;
    int stat = NFS3_OK;
    for (unsigned n = 0; n < limit; n++) {
        ft_pattern(buf, NS_PIECE, 5000 + n);
        stat = nr_write(c, &fill, filled, buf, NS_PIECE, FILE_SYNC, NULL);
        if (stat != NFS3_OK)
            break;
        filled += NS_PIECE;
    }
    pt_stat(c, stat, NFS3ERR_NOSPC);
    g_test_message("the tablespace (%u MiB) took %" G_GUINT64_FORMAT " bytes of file data "
                   "before NFS3ERR_NOSPC",
                   NS_SMALL_MB, filled);
    g_assert_cmpuint(filled, >, 0);

    /* Full: more writes, anywhere, answer NOSPC and change nothing. */
    for (unsigned n = 0; n < 5; n++) {
        ft_pattern(buf, NS_PIECE, 9000 + n);
        pt_stat(c, nr_write(c, &fill, filled, buf, NS_PIECE, FILE_SYNC, NULL), NFS3ERR_NOSPC);
        pt_stat(c, nr_write(c, &keep[n % NS_FILES], NS_KEEP + 1000, buf, NS_PIECE, UNSTABLE, NULL),
                NFS3ERR_NOSPC);
    }
    g_assert_cmpuint(pt_getattr(c, &fill).size, ==, filled);
    /* Metadata still works (it lives elsewhere); nothing stored is damaged. */
    nr_fh sub = pt_mkdir(c, &dir, "still-works", 0755);
    pt_create(c, &sub, "empty", 0644);
    for (unsigned i = 0; i < NS_FILES; i++) {
        g_assert_cmpuint(pt_getattr(c, &keep[i]).size, ==, NS_KEEP);
        ft_pattern(buf, NS_KEEP, 1000 + i);
        for (uint32_t off = 0; off < NS_KEEP; off += NS_PIECE) {
            READ3res rd;
            uint32_t n = MIN(NS_PIECE, NS_KEEP - off);
            pt_ok(c, nr_read(c, &keep[i], off, n, &rd));
            g_assert_cmpmem(rd.READ3res_u.resok.data.data_val, rd.READ3res_u.resok.data.data_len,
                            buf + off, n);
            ft_verified_add(n);
            nr_arena_clear(c);
        }
    }

    /* Space returns: writes succeed again (at once, or after a retry). */
    ns_mount_size(NS_BIG_MB, true);
    ft_pattern(buf, NS_PIECE, 7777);
    int again = NFS3ERR_NOSPC;
    for (int i = 0; i < 50 && again != NFS3_OK; i++) {
        again = nr_write(c, &fill, filled, buf, NS_PIECE, FILE_SYNC, NULL);
        if (again != NFS3_OK)
            g_usleep(100000);
    }
    pt_ok(c, again);
    READ3res rd;
    pt_ok(c, nr_read(c, &fill, filled, NS_PIECE, &rd));
    g_assert_cmpmem(rd.READ3res_u.resok.data.data_val, rd.READ3res_u.resok.data.data_len, buf,
                    NS_PIECE);
    ft_verified_add(NS_PIECE);
    g_assert_cmpuint(pt_getattr(c, &fill).size, ==, filled + NS_PIECE);
    /* And the fill file's earlier data is whole. */
    for (uint64_t off = 0; off < filled; off += NS_PIECE) {
        ft_pattern(buf, NS_PIECE, 5000 + off / NS_PIECE);
        pt_ok(c, nr_read(c, &fill, off, NS_PIECE, &rd));
        g_assert_cmpmem(rd.READ3res_u.resok.data.data_val, rd.READ3res_u.resok.data.data_len, buf,
                        NS_PIECE);
        ft_verified_add(NS_PIECE);
        nr_arena_clear(c);
    }
    nr_close(c);
    g_free(buf);
    g_free(pgdir);
}

int main(int argc, char **argv)
{
    bool listing = false;

    for (int i = 1; i < argc; i++)
        listing |= strcmp(argv[i], "-l") == 0;
    if (!listing)
        ft_private_mounts_or_skip("fault/nospace");
    ft_init(&argc, &argv, NULL);
    g_test_add_func("/fault/nospace", test_nospace);
    int rc = ft_run();
    /* The server and its PostgreSQL are gone: let the directory go too. */
    if (ns_dir && umount2(ns_dir, MNT_DETACH) != 0)
        g_printerr("umount %s: %s\n", ns_dir, g_strerror(errno));
    return rc;
}
